internal import CNice
import Glibc
import ScreencastSupport
import Synchronization

/// The owner of one `GMainContext` and the thread of its own that runs it: libnice's timers (connectivity
/// checks, consent freshness), its sockets and our idle callbacks are dispatched there, never on the caller's
/// thread or the Swift concurrency pool.
///
/// The thread iterates the context until ``stop()`` sets a flag and wakes it (rather than `g_main_loop_run`
/// and `g_main_loop_quit`, which lose a quit that comes before the loop has started). ``stop()`` joins the
/// thread, so when it returns nothing of ours runs there any more and `afterStop` has finished.
///
/// `@unchecked Sendable`: `context` is set once and freed in `deinit`; the GLib calls made on it from other
/// threads (`g_source_attach`, `g_main_context_wakeup`) are documented thread-safe; the thread handle is
/// behind a `Mutex`, the flags are atomics.
final class GLibMainLoop: @unchecked Sendable {
    /// `GMainContext *`, owned (one reference, dropped in `deinit`).
    let context: OpaquePointer
    private let stopRequested = Atomic<Bool>(false)
    /// `pthread_self()` of the loop thread once it runs, 0 before.
    private let loopThreadID = Atomic<UInt>(0)
    private let thread = Mutex<ThreadState>(.notStarted)

    private enum ThreadState {
        case notStarted
        case running(pthread_t)
        case finished
    }

    init() {
        context = g_main_context_new()
    }

    deinit {
        stop()
        g_main_context_unref(context)
    }

    /// Starts the thread called `name` (the kernel keeps 15 bytes). `afterStop` runs on that thread once the
    /// loop has stopped, before the thread ends: the place to free what the loop's callbacks use.
    func start(name: String, afterStop: @escaping @Sendable () -> Void) throws(ICEError) {
        let body = ThreadBody(loop: self, name: name, afterStop: afterStop)
        try thread.withLock { (state: inout ThreadState) throws(ICEError) in
            guard case .notStarted = state else { return }
            let box = Unmanaged.passRetained(body)
            var handle = pthread_t()
            let status = pthread_create(&handle, nil, { raw in
                let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
                body.run()
                return nil
            }, box.toOpaque())
            guard status == 0 else {
                box.release()
                throw .agentFailure("cannot start the ICE thread (pthread_create: \(status))")
            }
            state = .running(handle)
        }
    }

    /// True on the loop's own thread.
    var isCurrentThread: Bool {
        let id = loopThreadID.load(ordering: .acquiring)
        return id != 0 && pthread_equal(id, pthread_self()) != 0
    }

    /// Runs `body` on the loop thread soon (an idle source), never inside the caller's stack. Nothing runs
    /// once the loop has stopped.
    func schedule(_ body: @escaping @Sendable () -> Void) {
        attach(g_idle_source_new(), body)
    }

    /// Runs `body` once on the loop thread after `delay` (a timeout source).
    func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) {
        attach(g_timeout_source_new(UInt32(clamping: GLibMainLoop.milliseconds(delay))), body)
    }

    private func attach(_ source: UnsafeMutablePointer<GSource>?, _ body: @escaping @Sendable () -> Void) {
        guard let source else { return }
        let box = Unmanaged.passRetained(CallbackBox(body))
        // The destroy notify releases the box, whether the source ran or was dropped with the context.
        g_source_set_callback(source, { raw in
            Unmanaged<CallbackBox>.fromOpaque(raw!).takeUnretainedValue().body()
            return 0  // G_SOURCE_REMOVE
        }, box.toOpaque(), { raw in
            Unmanaged<CallbackBox>.fromOpaque(raw!).release()
        })
        g_source_attach(source, context)
        g_source_unref(source)
    }

    /// Stops the loop. From another thread this waits for the loop thread to end (joins it) and returns
    /// true. On the loop thread itself (a callback calling `close()`) it cannot wait: the thread is detached,
    /// ends as soon as the current callback returns, and this returns false.
    @discardableResult
    func stop() -> Bool {
        stopRequested.store(true, ordering: .releasing)
        g_main_context_wakeup(context)
        return thread.withLock { state in
            guard case .running(let handle) = state else { return true }
            state = .finished
            if pthread_equal(handle, pthread_self()) != 0 {
                pthread_detach(handle)
                return false
            }
            pthread_join(handle, nil)
            return true
        }
    }

    fileprivate func runLoop(name: String, afterStop: () -> Void) {
        loopThreadID.store(pthread_self(), ordering: .releasing)
        BackgroundThread.nameCurrentThread(name)
        g_main_context_push_thread_default(context)
        while !stopRequested.load(ordering: .acquiring) {
            g_main_context_iteration(context, 1)
        }
        afterStop()
        g_main_context_pop_thread_default(context)
    }
}

/// What the loop thread runs; keeps the loop alive until the thread ends.
private final class ThreadBody {
    let loop: GLibMainLoop
    let name: String
    let afterStop: @Sendable () -> Void

    init(loop: GLibMainLoop, name: String, afterStop: @escaping @Sendable () -> Void) {
        self.loop = loop
        self.name = name
        self.afterStop = afterStop
    }

    func run() { loop.runLoop(name: name, afterStop: afterStop) }
}

private final class CallbackBox {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

extension GLibMainLoop {
    /// Whole milliseconds of `duration`, rounded down, at least 0 (GLib's timers count milliseconds).
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(0, seconds * 1_000 + attoseconds / 1_000_000_000_000_000)
    }
}
