public import Media
import Synchronization

/// A consumer of the shared source's encoded frames (IVF recorder, RTP sender of a peer, …).
///
/// Sinks are called on the encoder thread, in encode order, and must return quickly (hand the frame to
/// a queue of their own if they do I/O that may block). Adding a sink never re-creates the encoder; a
/// new consumer that needs a keyframe asks with `VideoSource.requestKeyframe()`.
public protocol VideoSink: AnyObject, Sendable {
    /// One encoded frame.
    func consume(_ frame: EncodedFrame)
    /// The source stopped; no frame follows. Flush and close here.
    func finish()
}

/// A consumer of the shared source's pictures themselves (I420, upright, limited range, at most
/// `maximumEncodeSize`), as the VP8 encoder takes them: another encoding of the same track (H.264). Called on
/// the encoder thread with each new picture (unchanged pictures are not offered again); keep the frame (its
/// planes are shared copy-on-write, no copy is made) and return at once: encode on a thread of your own.
public protocol PictureSink: AnyObject, Sendable {
    func consume(_ frame: VideoFrame)
}

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
