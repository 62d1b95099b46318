import Media
import FrameCrypto
import ScreencastSupport
import Sharing
import VideoSource

/// The video track's one VP8 encoding (the shared ``VideoSource`` encodes it) and its two fan-outs: the
/// clear frames, and the frames end-to-end encrypted once for every output that wants them so (the same as the
/// clear ones when the call does not encrypt).
///
/// ```
///  VideoSource ──▶ clear fan-out ──────────────────────────────▶ recorders
///              └─▶ [EncryptingSink: encrypt once] ─▶ protected fan-out ─▶ viewers, SFU leg
/// ```
final class VideoEncoding: Sendable {
    let selection = MediaSelection.videoVP8
    let source: VideoSource
    private let clear = FrameFanOut()
    private let protected = FrameFanOut()
    /// The encryption in front of the protected fan-out; nil when the call does not encrypt.
    let encryption: EncryptingSink?

    /// Where an output's inlet sits: which fan-out and its id there.
    struct Attachment: Sendable {
        let protection: FrameProtection
        let id: Int
        /// Which encoding: VP8 here, H.264 in ``H264Encoding``'s fan-out (always clear).
        var codec = Codec.vp8
    }

    /// Puts the fan-outs behind `source` (the clear one first, so a recorder sees a frame before the network
    /// does) and, with `rotation`, the encryption in front of the protected one.
    init(source: VideoSource, rotation: KeyRotation?, logger: Logger) throws(CallError) {
        self.source = source
        source.addSink(clear)
        if let rotation {
            let sink = try rotation.makeSink(for: [protected], encoder: source, logger: logger.named("e2ee"))
            let settings = rotation.settings
            logger.info("end-to-end encryption on", [
                "key.index": settings.keyIndex, "salt": settings.salt == FrameKey.defaultSalt ? "default" : "custom",
                "file": settings.keyFile,
            ])
            encryption = sink
            source.addSink(sink)
        } else {
            encryption = nil
            source.addSink(protected)
        }
    }

    /// Delivers this encoding to `sink` from the next frame on, as `protection` asks.
    func attach(_ sink: any VideoSink, protection: FrameProtection) -> Attachment {
        Attachment(protection: protection, id: (protection == .clear ? clear : protected).add(sink))
    }

    /// Stops delivering to the sink of `attachment` (it gets no `finish()` from here).
    func detach(_ attachment: Attachment) {
        (attachment.protection == .clear ? clear : protected).remove(attachment.id)
    }
}
