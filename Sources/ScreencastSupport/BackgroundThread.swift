import Dispatch
import Foundation
import Glibc
import Synchronization

/// Starts blocking loops (encoding, capture, socket readers and writers, the watchdog, GLib main loops) on
/// threads of their own, never on the Swift concurrency pool, named so they show up in `top -H`, `gdb` and
/// `/proc`. Every module's threads start here.
public enum BackgroundThread {
    /// Starts `body` on a new thread called `name` (the kernel keeps 15 bytes); `done` is signalled when
    /// it returns.
    @discardableResult
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            nameCurrentThread(name)
            body()
            done.signal()
        }
        thread.name = name
        thread.start()
        return done
    }

    /// Sets the kernel's name (`comm`) of the calling thread (first 15 bytes of `name`). Foundation's
    /// `Thread.name` does not on Linux and `pthread_setname_np` is not in Swift's Glibc module, so this writes
    /// `/proc/thread-self/comm` (allowed for the calling thread); failure is harmless and ignored.
    public static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}

/// A stop flag a loop can also sleep on: `sleep` returns early (true) once `stop()` was called.
public final class StopSignal: Sendable {
    public init() {}

    private let stopped = Atomic<Bool>(false)
    private let semaphore = DispatchSemaphore(value: 0)

    /// True once ``stop()`` was called.
    public var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// Sets the flag and wakes every ``sleep(micros:)``.
    public func stop() {
        if !stopped.exchange(true, ordering: .acquiringAndReleasing) { semaphore.signal() }
    }

    /// Sleeps `micros` or until stopped; returns true when stopped.
    @discardableResult
    public func sleep(micros: UInt64) -> Bool {
        if isStopped { return true }
        if micros > 0, semaphore.wait(timeout: .now() + .microseconds(Int(min(micros, 3_600_000_000)))) == .success {
            semaphore.signal()  // keep it signalled for everyone else
        }
        return isStopped
    }
}
