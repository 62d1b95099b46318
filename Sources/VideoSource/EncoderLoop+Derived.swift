import Media
import ScreencastSupport
import Synchronization

/// Where the main encoder thread hands each new picture it encodes on: to a second encoding (one lock and, while
/// a ``SecondEncoding`` runs, its hub's ``SourceHub/submitForeign(_:kind:)``: a retain of the planes, no copy,
/// and a wake-up) and to the ``PictureSink``s of other encodings (the H.264 one). Nothing else is added to the
/// main encoder's path.
///
/// It keeps the last picture offered (the one the main encoder holds as its `last` anyway), so a second
/// encoding or a picture sink attached while the screen is still starts at once with it, not at the next
/// change. The main encoder offers a new picture before it recycles the previous one, so the tap never pins a
/// recycled buffer.
final class FrameTap: Sendable {
    private struct State {
        var hub: SourceHub?
        var last: (frame: VideoFrame, kind: SourceKind)?
        var next = 0
        var pictureSinks: [(id: Int, sink: any PictureSink)] = []
    }
    private let state = Mutex(State())

    /// Points the tap at `hub` (nil: nowhere) and hands it the last picture offered, if any.
    func attach(_ hub: SourceHub?) {
        let last = state.withLock { s in
            s.hub = hub
            return s.last
        }
        if let hub, let last { hub.submitForeign(last.frame, kind: last.kind) }
    }

    /// Adds a picture sink and hands it the last picture offered, if any.
    func add(_ sink: any PictureSink) -> SinkToken {
        let (id, last) = state.withLock { s in
            s.next += 1
            s.pictureSinks.append((s.next, sink))
            return (s.next, s.last)
        }
        if let last { sink.consume(last.frame) }
        return SinkToken(id: id)
    }

    /// Takes a picture sink out; true when it was there.
    @discardableResult
    func remove(_ token: SinkToken) -> Bool {
        state.withLock { s in
            guard let index = s.pictureSinks.firstIndex(where: { $0.id == token.id }) else { return false }
            s.pictureSinks.remove(at: index)
            return true
        }
    }

    /// Offers `frame` (its planes shared copy-on-write) to the attached hub and the picture sinks, and keeps it
    /// as the last.
    func offer(_ frame: VideoFrame, kind: SourceKind) {
        let (hub, sinks) = state.withLock { s in
            s.last = (frame, kind)
            return (s.hub, s.pictureSinks)
        }
        hub?.submitForeign(frame, kind: kind)
        for entry in sinks { entry.sink.consume(frame) }
    }
}

/// The scale-down divisor of a second encoding (1: the main encoding's size; 2: half width and height), changed
/// from any thread, read by its encoder thread at each picture.
final class DerivedScale: Sendable {
    private let value: Atomic<Int>

    init(divisor: Int) { value = Atomic(max(1, divisor)) }

    var divisor: Int {
        get { value.load(ordering: .relaxed) }
        set { value.store(max(1, newValue), ordering: .relaxed) }
    }

    /// The size a `width`×`height` picture is encoded at: each side divided by `divisor`, rounded down to
    /// even (VP8 and the I420 chroma planes like even sizes), at least 2.
    static func size(width: Int, height: Int, divisor: Int) -> PictureSize {
        let d = max(1, divisor)
        return PictureSize(width: max(2, (width / d) & ~1), height: max(2, (height / d) & ~1))
    }
}

extension EncoderLoop {
    /// A second encoding's first job at every turn: the picture the main encoder handed over still shares that
    /// encoder's buffer, so it is scaled (libyuv box filter; a plain copy at divisor 1) into a buffer of this
    /// hub's pool at once — before the main encoder recycles its buffer, which would then be copied on write —
    /// and submitted as this hub's own pending frame (latest wins, as from a capturer). A source switch upstream
    /// starts a new generation here too, so the next frame is a keyframe.
    func localizeForeign(_ derived: DerivedScale, _ state: inout LoopState) {
        guard let foreign = hub.takeForeign() else { return }
        let (frame, kind) = (foreign.frame, foreign.kind)
        let size = DerivedScale.size(width: frame.width, height: frame.height, divisor: derived.divisor)
        var own = hub.pool.take(width: size.width, height: size.height)
        do throws(MediaError) {
            try frame.picture.scaled(to: size, filter: .box, into: &own)
        } catch {
            hub.pool.recycle(own)
            hub.stats.dropped(.encodeError)
            if let suppressed = state.scaleLog.admit() {
                logger.error("second encoding: scale failed", ["to": size, "error": error, "suppressed": suppressed])
            }
            return
        }
        if size.width != frame.width || size.height != frame.height { hub.stats.downscaled() }
        if hub.active != kind { hub.activate(kind) }
        hub.submit(VideoFrame(picture: own, captureTimestampMicros: frame.captureTimestampMicros, appliedRotation: frame.appliedRotation),
                   from: kind)
    }
}
