public import Media
import Synchronization

/// Identifies an added sink, for `VideoSource.removeSink(_:)`.
public struct SinkToken: Sendable, Hashable {
    let id: Int
}

/// The sinks of a source. Delivery takes a snapshot of the list (a retain, no copy of frames).
final class SinkRegistry: Sendable {
    private let sinks = Mutex<(next: Int, list: [(Int, any VideoSink)])>((0, []))

    func add(_ sink: any VideoSink) -> SinkToken {
        sinks.withLock { s in
            s.next += 1
            s.list.append((s.next, sink))
            return SinkToken(id: s.next)
        }
    }

    /// Removes and returns the sink (nil if unknown).
    func remove(_ token: SinkToken) -> (any VideoSink)? {
        sinks.withLock { s in
            guard let index = s.list.firstIndex(where: { $0.0 == token.id }) else { return nil }
            return s.list.remove(at: index).1
        }
    }

    /// Lets go of every sink without finishing them.
    func removeAll() -> Int {
        sinks.withLock { s in
            defer { s.list = [] }
            return s.list.count
        }
    }

    func deliver(_ frame: EncodedFrame) {
        let list = sinks.withLock { $0.list }
        for (_, sink) in list { sink.consume(frame) }
    }

    /// Finishes every sink and lets go of them: a sink that holds the source (the viewers ask it for
    /// keyframes) must not keep it alive in a cycle once the source has stopped.
    func finishAll() {
        let list = sinks.withLock { s in
            defer { s.list = [] }
            return s.list
        }
        for (_, sink) in list { sink.finish() }
    }
}
