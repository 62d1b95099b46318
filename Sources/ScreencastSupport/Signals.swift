import Foundation
import Synchronization

/// Turns SIGINT and SIGTERM (or any signals given, such as SIGHUP for a reload) into a callback: a clean
/// shutdown instead of death.
///
/// Race-free: ``blockEarly(_:)`` — called first thing in `main`, before any thread exists — blocks the
/// signals in the main thread, and every thread started later inherits that mask, so a signal can never be
/// delivered to a thread that would let it kill the process (or be ignored). It stays pending until a
/// `ShutdownSignals` thread takes it with `sigwait(3)`: a signal that arrives during start-up is handled as
/// soon as the handler exists, never lost.
public final class ShutdownSignals: Sendable {
    /// Whether the handler is still wanted; shared with the waiting thread.
    private final class Flag: Sendable {
        let value = Atomic<Bool>(true)
    }
    private let active = Flag()

    /// Blocks `signals` (default SIGINT, SIGTERM) in the calling thread and so in every thread it starts.
    /// Call it at the top of `main`, before anything creates a thread.
    public static func blockEarly(_ signals: [Int32] = [SIGINT, SIGTERM]) {
        var set = signalSet(signals)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Starts a thread that waits for `signals` and calls `handler` with each one's number, on that thread.
    /// The handler should only record the request or close things (it must not block for long: hand longer
    /// work, such as re-reading a key file on SIGHUP, to a queue). Pass the same list to ``blockEarly(_:)``.
    /// Also blocks the signals in the calling thread, in case ``blockEarly(_:)`` was not called.
    public init(signals: [Int32] = [SIGINT, SIGTERM], handler: @escaping @Sendable (Int32) -> Void) {
        Self.blockEarly(signals)
        let active = active
        let thread = Thread {
            var set = Self.signalSet(signals)
            while true {
                var number: Int32 = 0
                guard sigwait(&set, &number) == 0 else { continue }
                if active.value.load(ordering: .acquiring) {
                    handler(number)
                } else {
                    // Nobody handles it any more: let the signal do what it does by default.
                    var one = Self.signalSet([number])
                    signal(number, SIG_DFL)
                    pthread_sigmask(SIG_UNBLOCK, &one, nil)
                    raise(number)
                }
            }
        }
        thread.name = "shutdown-signals"
        thread.start()
    }

    /// After deinit the handler is no longer called: a later signal gets its default action (ends the process).
    deinit { active.value.store(false, ordering: .releasing) }

    private static func signalSet(_ signals: [Int32]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        return set
    }
}
