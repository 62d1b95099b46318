import Dispatch
import Synchronization

/// Why the call should stop, and a wait for it: the first reason given wins (a signal, the source's end, a
/// caller); later ones are ignored.
final class StopRequest: Sendable {
    private let reason = Mutex<String?>(nil)
    private let requested = DispatchSemaphore(value: 0)

    /// Records `why` unless a reason is already there, and wakes the waiter.
    func request(_ why: String) {
        let first = reason.withLock { r -> Bool in
            guard r == nil else { return false }
            r = why
            return true
        }
        if first { requested.signal() }
    }

    /// The first reason given, nil while none.
    var current: String? { reason.withLock { $0 } }

    /// Blocks until a stop is requested; returns the reason. Every call returns once one was.
    func wait() -> String {
        requested.wait()
        requested.signal()  // the next waiter passes too
        return current ?? "-"
    }

    /// As ``wait()``, giving up after `seconds`; nil then.
    func wait(seconds: Double) -> String? {
        guard requested.wait(timeout: .now() + seconds) == .success else { return nil }
        requested.signal()
        return current
    }
}
