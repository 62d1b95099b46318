public import FrameWire
import Media

/// One frame ready to send: a JPEG — or raw I420, per ``format`` — of the captured area (scaled as
/// configured), with its capture time.
public struct CapturedFrame: Sendable {
    /// Why the frame was made.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The area changed (or it is the first frame): freshly grabbed and encoded.
        case change
        /// The area has been static for a while: grabbed again and encoded at the paint-over quality.
        case paintOver = "paint-over"
        /// Nothing changed for the keepalive interval: the previous JPEG again, with a new timestamp.
        case keepalive
    }

    /// The body, `width`×`height` pixels: a JPEG (JFIF, baseline, BT.601 full range), or for
    /// ``CaptureFormat/i420`` the tightly packed BT.601 limited-range I420 planes (Y `width·height` bytes,
    /// then U and V of `((width+1)/2)·((height+1)/2)` bytes each).
    public var body: [UInt8]
    /// What ``body`` is.
    public var format: CaptureFormat
    /// The YCbCr range of ``body``: full for a JPEG, limited for I420 (``CaptureFormat/colorRange``).
    public var colorRange: YCbCrRange { format.colorRange }
    /// For ``CaptureFormat/shm``: the memory holding the picture and where in it (the body is then one LF).
    public var shared: (picture: SharedPicture, reference: SharedPictureReference)?
    /// What changed since the frame before (`Buffer-Damage`, Protocol/frame-wire.md §2.9): rectangles in
    /// frame pixels, even-aligned, at most ``BufferDamage/maxRectangles``; `[]` for a keepalive; nil when
    /// unknown (the first frame, a new area or size, a paint-over).
    public var damage: [DamageRect]?
    /// The body (a JPEG when ``format`` is `.jpeg`); the name older callers use.
    public var jpeg: [UInt8] { body }
    /// Frame width in pixels (after scaling).
    public var width: Int
    /// Frame height in pixels (after scaling).
    public var height: Int
    /// When the pixels were read from the X server (for a keepalive: when it was sent), CLOCK_MONOTONIC µs.
    public var timestampMicros: UInt64
    /// 0 for the first frame delivered by a capture, then 1, 2, … (keepalives count).
    public var index: UInt64
    /// Why the frame was made.
    public var kind: Kind
    /// The JPEG quality used, 1…100 (0 for a raw I420 frame).
    public var quality: Int
    /// The chroma subsampling used (`.yuv420` for a raw I420 frame).
    public var subsampling: JPEGSubsampling
    /// The screen area shown, root-window coordinates, before scaling.
    public var area: CaptureRect
    /// Microseconds spent reading the pixels from the server (0 for a keepalive).
    public var grabMicros: UInt64
    /// Microseconds spent drawing the cursor, scaling and JPEG-encoding or converting to I420 (0 for a
    /// keepalive).
    public var encodeMicros: UInt64

    /// A frame with every field given (the capture makes these; tests may too).
    public init(
        body: [UInt8], format: CaptureFormat = .jpeg, width: Int, height: Int, timestampMicros: UInt64, index: UInt64,
        kind: Kind, quality: Int, subsampling: JPEGSubsampling, area: CaptureRect, grabMicros: UInt64, encodeMicros: UInt64
    ) {
        self.body = body
        self.format = format
        self.width = width
        self.height = height
        self.timestampMicros = timestampMicros
        self.index = index
        self.kind = kind
        self.quality = quality
        self.subsampling = subsampling
        self.area = area
        self.grabMicros = grabMicros
        self.encodeMicros = encodeMicros
    }
}

extension CapturedFrame {
    /// This picture again as a keepalive: stamped `now` (µs) with `index`, no damage (the same picture), no
    /// grab or encode time. Both capture loops repeat their last frame this way.
    func keepalive(now: UInt64, index: UInt64) -> CapturedFrame {
        var frame = self
        frame.kind = .keepalive
        frame.damage = []
        frame.timestampMicros = now
        frame.index = index
        frame.grabMicros = 0
        frame.encodeMicros = 0
        return frame
    }
}

/// Counters of a capture since it started.
public struct CaptureStats: Sendable, Equatable {
    /// Frames delivered, all kinds.
    public var frames = 0
    /// Of those, freshly captured because something changed (the first frame included).
    public var changeFrames = 0
    /// Of those, paint-over refreshes.
    public var paintOverFrames = 0
    /// Of those, keepalive repeats.
    public var keepaliveFrames = 0
    /// Turns of the capture loop that made nothing because nobody read the frames (``ReaderHold``: one per
    /// 100 ms without a call on the socket).
    public var turnsWithoutReader = 0
    /// Damage reports received (inside or outside the captured area).
    public var damageEvents = 0
    /// Total microseconds spent reading pixels from the server (change and paint-over frames).
    public var grabMicros: UInt64 = 0
    /// Total microseconds spent drawing the cursor, scaling and encoding (change and paint-over frames).
    public var encodeMicros: UInt64 = 0
    /// Total body bytes (JPEG or I420) delivered (keepalives included).
    public var jpegBytes = 0
    /// The capture method: `mit-shm` or `get-image` (empty before the first grab).
    public var method = ""
    /// The current captured area (root coordinates).
    public var area = CaptureRect(x: 0, y: 0, width: 0, height: 0)
    /// The current frame width in pixels (after scaling).
    public var frameWidth = 0
    /// The current frame height in pixels (after scaling).
    public var frameHeight = 0

    /// All counters zero.
    public init() {}

    /// Frames that were grabbed and encoded (changes and paint-overs).
    public var encodedFrames: Int { changeFrames + paintOverFrames }
}

extension CaptureStats {
    /// Counts a keepalive repeat of `bytes` body bytes (both capture loops' `repeatLast`).
    mutating func countKeepalive(bytes: Int) {
        frames += 1
        keepaliveFrames += 1
        jpegBytes += bytes
    }

    /// Counts a frame made from a new grab (a change or a paint-over) with a body of `bytes` bytes (every
    /// capture loop's `produce`).
    mutating func countProduced(_ frame: CapturedFrame, paintOver: Bool, bytes: Int) {
        frames += 1
        if paintOver { paintOverFrames += 1 } else { changeFrames += 1 }
        grabMicros += frame.grabMicros
        encodeMicros += frame.encodeMicros
        jpegBytes += bytes
    }
}
