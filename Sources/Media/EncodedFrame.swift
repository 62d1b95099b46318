/// One compressed VP8 frame, as the encoder hands it to every sink (IVF recorder, RTP packetizer, …).
///
/// `bytes` is the complete VP8 frame (RFC 6386 §9.1: a 3-byte frame tag, for keyframes followed by the
/// start code `9d 01 2a` and the 14-bit width and height), exactly what an IVF frame or the RTP payload
/// descriptor of RFC 7741 carries.
public struct EncodedFrame: Sendable, Equatable {
    /// The VP8 frame.
    public var bytes: [UInt8]
    /// True for a keyframe (decodable on its own); false for an interframe.
    public var isKeyframe: Bool
    /// Capture time of the picture, CLOCK_MONOTONIC microseconds. For a re-encode of a static picture
    /// (idle refinement) it is the time of the re-encode, so timestamps keep increasing.
    public var captureTimestampMicros: UInt64
    /// The RTP timestamp: the capture time on the 90 kHz video clock (RFC 7741 §4.1,
    /// `captureTimestampMicros × 90 / 1000`, modulo 2³²). An RTP sender adds its random offset.
    public var rtpTimestamp: UInt32
    /// Picture width in pixels.
    public var width: Int
    /// Picture height in pixels.
    public var height: Int
    /// The quantizer libvpx used, 0 (best) … 63 (worst) (`VP8E_GET_LAST_QUANTIZER_64`); -1 when unknown.
    public var quantizer: Int
    /// True for a non-reference interframe: encoded with `VP8_EFLAG_NO_UPD_LAST | VP8_EFLAG_NO_UPD_GF |
    /// VP8_EFLAG_NO_UPD_ARF | VP8_EFLAG_NO_UPD_ENTROPY` (libvpx `vp8cx.h`) and reported by libvpx as
    /// `VPX_FRAME_IS_DROPPABLE`. It updates no reference buffer (last, golden, altref) and leaves the
    /// entropy context as it found it, so any receiver may leave it out without affecting the decoding of
    /// any other frame (RFC 7741 §4.2's N bit). A keyframe is never droppable.
    public var isDroppable: Bool

    /// A frame; `rtpTimestamp` is derived from `captureTimestampMicros`. `isDroppable` is forced false for a
    /// keyframe.
    public init(
        bytes: [UInt8], isKeyframe: Bool, captureTimestampMicros: UInt64, width: Int, height: Int,
        quantizer: Int = -1, isDroppable: Bool = false
    ) {
        self.bytes = bytes
        self.isKeyframe = isKeyframe
        self.isDroppable = isDroppable && !isKeyframe
        self.captureTimestampMicros = captureTimestampMicros
        self.rtpTimestamp = EncodedFrame.rtpTimestamp(captureMicros: captureTimestampMicros)
        self.width = width
        self.height = height
        self.quantizer = quantizer
    }

    /// Microseconds on the 90 kHz RTP video clock: `micros × 90 / 1000`, wrapped to 32 bits.
    public static func rtpTimestamp(captureMicros: UInt64) -> UInt32 {
        // micros × 9 / 100; the product stays below 2⁶⁴ for 65 000 years of uptime.
        UInt32(truncatingIfNeeded: (captureMicros &* 9) / 100)
    }
}

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
