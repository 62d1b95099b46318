import Dispatch
import Foundation
import Glibc
import Synchronization

/// Starts the module's blocking loops (encoding, capturer pacing, the watchdog) on threads of their
/// own, never on the Swift concurrency pool, named so they show up in `top -H` and `/proc`.
enum BackgroundThread {
    /// Starts `body` on a new thread called `name` (the kernel keeps 15 bytes); `done` is signalled when
    /// it returns.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            if fd >= 0 {
                let bytes = Array(name.utf8.prefix(15))
                _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                close(fd)
            }
            body()
            done.signal()
        }
        thread.name = name
        thread.start()
        return done
    }
}

/// A stop flag a loop can also sleep on: `sleep` returns early (true) once `stop()` was called.
final class StopSignal: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let semaphore = DispatchSemaphore(value: 0)

    var isStopped: Bool { stopped.load(ordering: .acquiring) }

    func stop() {
        if !stopped.exchange(true, ordering: .acquiringAndReleasing) { semaphore.signal() }
    }

    /// Sleeps `micros` or until stopped; returns true when stopped.
    @discardableResult
    func sleep(micros: UInt64) -> Bool {
        if isStopped { return true }
        if micros > 0, semaphore.wait(timeout: .now() + .microseconds(Int(min(micros, 3_600_000_000)))) == .success {
            semaphore.signal()  // keep it signalled for everyone else
        }
        return isStopped
    }
}

/// Pauses a capturer while its source is not the active one.
final class ActivityGate: Sendable {
    private let active = Mutex(false)
    private let changed = DispatchSemaphore(value: 0)

    var isActive: Bool { active.withLock { $0 } }

    func set(_ value: Bool) {
        let flipped = active.withLock { current -> Bool in
            defer { current = value }
            return current != value
        }
        if flipped { changed.signal() }
    }

    /// Blocks until active or stopped (polling the stop flag every 100 ms); returns false when stopped.
    func waitUntilActive(or stop: StopSignal) -> Bool {
        while !stop.isStopped {
            if isActive { return true }
            _ = changed.wait(timeout: .now() + .milliseconds(100))
        }
        return false
    }
}

/// Lets a `DispatchSemaphore` sit in a `Mutex` (it is thread-safe itself).
struct DispatchSemaphoreBox: Sendable {
    let semaphore: DispatchSemaphore
    init(_ semaphore: DispatchSemaphore) { self.semaphore = semaphore }
}
