import Dispatch
import Foundation

/// Turns SIGINT and SIGTERM into a callback on a dispatch queue (a clean shutdown instead of death).
///
/// Holds the dispatch sources; keep the value alive for as long as the handler should run.
// @unchecked Sendable: `sources` is set once in init and only cancelled in deinit; dispatch
// sources are thread-safe to cancel.
public final class ShutdownSignals: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    /// Installs the handler; `handler` receives the signal number and runs on `queue`.
    public init(
        signals: [Int32] = [SIGINT, SIGTERM],
        queue: DispatchQueue = DispatchQueue(label: "screencast.signals"),
        handler: @escaping @Sendable (Int32) -> Void
    ) {
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    deinit { sources.forEach { $0.cancel() } }
}
