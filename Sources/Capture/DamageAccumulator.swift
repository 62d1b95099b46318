import FrameWire

/// What changed in the captured area since the last frame, from the X server's DAMAGE reports and the
/// cursor's old and new places, turned into a frame's `Buffer-Damage` (Protocol/frame-wire.md §2.9). Sans-I/O.
///
/// The capture loop leaves out reports the server made before it handled the last grab (their pixels
/// are in the last frame: the rule that keeps them from making another frame, ``CaptureLoop``).
/// "Unknown" (nil: the whole frame) at the start, after ``invalidate()`` (a new area or frame size, a
/// paint-over), and once more than ``maxPending`` reports pile up between two frames (their bounding box
/// would then be most of the screen anyway).
struct DamageAccumulator {
    /// Reports kept between two frames before they become their bounding box.
    static let maxPending = 64
    /// Beyond this share of the picture damaged, an I420 frame is converted whole rather than copied from
    /// the last one and converted where damaged (`screencast-bench --stage damage`: at 1080p a 1920×1016
    /// scroll costs as much either way, the whole damage 30 % more the partial way).
    static let partialConversionLimit = 0.5
    /// Frame pixels added on each side of a rectangle when the frame is scaled (the filter's reach).
    static let scaleMarginPixels = 2

    /// Screen rectangles since the last frame; nil: unknown.
    private var pending: [CaptureRect]?

    init() {}

    /// A change at `rect` (root coordinates); ignored outside `area`.
    mutating func add(_ rect: CaptureRect, area: CaptureRect) {
        guard pending != nil else { return }
        let visible = rect.intersection(area)
        guard !visible.isEmpty else { return }
        pending!.append(visible)
        if pending!.count > Self.maxPending {
            let box = pending!.dropFirst().reduce(pending![0]) { box, r in
                let left = min(box.x, r.x), top = min(box.y, r.y)
                return CaptureRect(x: left, y: top, width: max(box.x + box.width, r.x + r.width) - left,
                                   height: max(box.y + box.height, r.y + r.height) - top)
            }
            pending = [box]
        }
    }

    /// The next frame is the whole picture.
    mutating func invalidate() { pending = nil }

    /// The damage of a frame grabbed now from `area`, scaled to `frameWidth`×`frameHeight`: rectangles in
    /// frame pixels, grown to even edges (I420's 2×2 chroma), at most ``BufferDamage/maxRectangles``; nil when
    /// unknown. Starts collecting afresh for the next frame.
    mutating func take(area: CaptureRect, frameWidth: Int, frameHeight: Int) -> [DamageRect]? {
        defer { pending = [] }
        guard let pending, !area.isEmpty, frameWidth > 0, frameHeight > 0 else { return nil }
        let rects = pending.map { Self.frameRect($0, area: area, frameWidth: frameWidth, frameHeight: frameHeight) }
        return BufferDamage.fitted(rects, width: frameWidth, height: frameHeight)
    }

    /// `rect` (root coordinates, within `area`) in the pixels of a `frameWidth`×`frameHeight` frame of `area`,
    /// even-aligned; scaled outwards with ``scaleMarginPixels`` when the frame is not `area`'s size.
    static func frameRect(_ rect: CaptureRect, area: CaptureRect, frameWidth: Int, frameHeight: Int) -> DamageRect {
        var (left, top) = (rect.x - area.x, rect.y - area.y)
        var (right, bottom) = (left + rect.width, top + rect.height)
        if frameWidth != area.width || frameHeight != area.height {
            let margin = scaleMarginPixels
            left = left * frameWidth / area.width - margin
            top = top * frameHeight / area.height - margin
            right = (right * frameWidth + area.width - 1) / area.width + margin
            bottom = (bottom * frameHeight + area.height - 1) / area.height + margin
        }
        let clipped = DamageRect(x: left, y: top, width: right - left, height: bottom - top)
            .intersection(.whole(width: frameWidth, height: frameHeight))
        return clipped.alignedToChroma(width: frameWidth, height: frameHeight)
    }
}

/// Which parts of a shared-memory slot a frame must write (`--format shm`): the two slots take turns, so
/// the slot written now holds the frame before last, and lacks the changes of the last frame and of this
/// one. Everything until both slots hold a frame of the current memory.
struct SharedSlotRefresh {
    /// Beyond this share of the picture to write, the whole slot is copied in one go (row by row costs
    /// more: `screencast-bench --stage damage`, at 1080p twice a 1280×720 window is the whole copy's cost).
    static let partialCopyLimit = 0.5

    private var filled = [false, false]
    /// The damage of the frame written last (into the other slot); nil: unknown.
    private var previous: [DamageRect]?

    /// A new memory (a new generation): both slots are empty.
    mutating func reset() {
        filled = [false, false]
        previous = nil
    }

    /// The rectangles to write into `slot` of a `width`×`height` memory for a frame with `damage` (a rectangle
    /// inside another dropped); nil: the whole picture.
    mutating func regions(slot: Int, damage: [DamageRect]?, width: Int, height: Int) -> [DamageRect]? {
        defer {
            filled[slot] = true
            previous = damage
        }
        guard filled[slot], let damage, let previous else { return nil }
        let regions = BufferDamage.fitted(previous + damage, width: width, height: height)
        guard Double(BufferDamage.coveredPixels(regions)) <= Self.partialCopyLimit * Double(width * height) else { return nil }
        return regions
    }
}
