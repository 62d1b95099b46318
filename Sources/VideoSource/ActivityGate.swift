import Dispatch
import ScreencastSupport
import Synchronization

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
