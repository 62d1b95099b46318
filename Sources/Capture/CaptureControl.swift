import Dispatch
import Glibc
import Synchronization

/// The stop request: a flag plus a pipe whose read end the capture loop polls, so a stop wakes it at once.
final class CaptureStopSignal: Sendable {
    private let requested = Atomic<Bool>(false)
    private let readEnd: Int32
    private let writeEnd: Int32

    init() throws(CaptureError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw .systemCall(name: "pipe", errno: errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        Glibc.close(readEnd)
        Glibc.close(writeEnd)
    }

    /// True once ``request()`` was called.
    var isRequested: Bool { requested.load(ordering: .acquiring) }

    /// The descriptor that becomes readable on a stop request.
    var pollDescriptor: Int32 { readEnd }

    func request() {
        guard !requested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = Glibc.write(writeEnd, &byte, 1)
    }
}

/// What the capture thread and its owner share: the stop signal, setup result, counters and outcome.
/// `Sendable` through its `Mutex` and semaphores.
final class CaptureControl: Sendable {
    struct State {
        var setupDone = false
        var setupError: CaptureError?
        var outcome: ScreenCapture.Outcome?
        var stats = CaptureStats()
    }

    let stop: CaptureStopSignal
    /// False while nobody reads the frames (the agent's socket has no call): the capture thread then makes none
    /// (``ReaderHold``).
    let readerPresent = Atomic<Bool>(true)
    private let state = Mutex(State())
    private let setupSignal = DispatchSemaphore(value: 0)
    private let finishedSignal = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    private let startSignal = DispatchSemaphore(value: 0)

    init() throws(CaptureError) { stop = try CaptureStopSignal() }

    func setupFinished(_ error: CaptureError?) {
        state.withLock {
            $0.setupDone = true
            $0.setupError = error
            if let error { $0.outcome = .failed(error) }
        }
        setupSignal.signal()
        if error != nil { finishedSignal.signal() }
    }

    func waitForSetup() -> CaptureError? {
        setupSignal.wait()
        return state.withLock { $0.setupError }
    }

    /// Lets the capture thread begin (once; later calls do nothing).
    func go() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        startSignal.signal()
    }

    /// Blocks the capture thread until ``go()``.
    func waitForGo() { startSignal.wait() }

    func publish(_ stats: CaptureStats) { state.withLock { $0.stats = stats } }

    func statsSnapshot() -> CaptureStats { state.withLock { $0.stats } }

    func finish(_ outcome: ScreenCapture.Outcome) {
        state.withLock { $0.outcome = outcome }
        finishedSignal.signal()
    }

    /// Waits for the outcome; later calls return it at once.
    @discardableResult
    func waitUntilFinished(timeout: Double?) -> ScreenCapture.Outcome? {
        if let outcome = state.withLock({ $0.outcome }) { return outcome }
        let result: DispatchTimeoutResult
        if let timeout {
            result = finishedSignal.wait(timeout: .now() + timeout)
        } else {
            finishedSignal.wait()
            result = .success
        }
        guard result == .success else { return nil }
        finishedSignal.signal()  // let other waiters (and deinit) through too
        return state.withLock { $0.outcome }
    }
}
