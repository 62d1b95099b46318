import Media
import Synchronization
import VideoSource

/// One encoding's frames to every output that consumes them, in the order they were added; outputs come and
/// go while frames flow. Delivery takes a snapshot of the list (a retain, no copy of frames), so a sink added
/// or removed during a delivery takes effect from the next frame.
final class FrameFanOut: VideoSink {
    private let sinks = Mutex<(next: Int, list: [(id: Int, sink: any VideoSink)])>((0, []))

    /// Adds `sink` at the end; returns its id for ``remove(_:)``.
    func add(_ sink: any VideoSink) -> Int {
        sinks.withLock { s in
            s.next += 1
            s.list.append((s.next, sink))
            return s.next
        }
    }

    /// Takes the sink out (no `finish()`); returns it, nil when unknown.
    @discardableResult
    func remove(_ id: Int) -> (any VideoSink)? {
        sinks.withLock { s in
            guard let index = s.list.firstIndex(where: { $0.id == id }) else { return nil }
            return s.list.remove(at: index).sink
        }
    }

    /// How many sinks it feeds now.
    var count: Int { sinks.withLock { $0.list.count } }

    func consume(_ frame: EncodedFrame) {
        let list = sinks.withLock { $0.list }
        for entry in list { entry.sink.consume(frame) }
    }

    /// The encoding ended: every sink finishes, and is let go (a sink that holds the source must not keep it
    /// alive in a cycle).
    func finish() {
        let list = sinks.withLock { s in
            defer { s.list = [] }
            return s.list
        }
        for entry in list { entry.sink.finish() }
    }
}
