import FrameWire
import Media
import ScreencastSupport

/// Wire frame → upright `VideoFrame`: JPEG straight to I420 (libturbojpeg), then the rotation from
/// `Buffer-Orientation` (libyuv), into a pooled buffer.
///
/// - The picture takes the JPEG's own size; a difference from `Buffer-Width`/`Buffer-Height` is logged
///   once per change of the (buffer size, JPEG size) pair, and once when they agree again.
/// - A rotation change is logged once and applies from that frame on.
/// - A body that does not decode (or decodes only with a warning) is reported as the `MediaError`;
///   the caller drops and counts it.
///
/// One thread at a time (it owns a `JPEGDecoder` and scratch storage): not `Sendable`.
final class JPEGFramePipeline {
    private let decoder: JPEGDecoder
    private let pool: FramePool
    private let logger: Logger
    /// Decoded but not yet rotated pictures (rotated frames only).
    private var scratch = I420Buffer()
    private var lastSizes: (buffer: (Int, Int), jpeg: (Int, Int))?
    private var lastRotation: PictureRotation?
    /// Frames whose JPEG size differed from the header's, counted since the pipeline was made.
    private(set) var sizeMismatches = 0

    init(pool: FramePool, logger: Logger, maximumDimension: Int) throws(MediaError) {
        decoder = try JPEGDecoder(maximumDimension: maximumDimension)
        self.pool = pool
        self.logger = logger
    }

    /// Forgets what was logged (a new sender starts with fresh "once per change" state).
    func reset() {
        lastSizes = nil
        lastRotation = nil
    }

    /// Decodes and rotates `frame`; the result's picture comes from the pool.
    func process(_ frame: Frame, captureTimestampMicros: UInt64) -> Result<VideoFrame, MediaError> {
        let header = frame.header
        let rotation = PictureRotation(degrees: header.rotation.degrees) ?? .none
        if rotation != lastRotation {
            if lastRotation != nil || rotation != .none {
                logger.info("rotation", ["degrees": rotation.degrees, "orientation": header.orientation])
            }
            lastRotation = rotation
        }
        var picture = pool.take()
        do throws(MediaError) {
            let info: JPEGInfo
            if rotation == .none {
                info = try decoder.decodeI420(frame.body, into: &picture)
            } else {
                info = try decoder.decodeI420(frame.body, into: &scratch)
                try scratch.rotated(by: rotation, into: &picture)
            }
            noteSizes(buffer: (header.bufferWidth, header.bufferHeight), jpeg: (info.width, info.height))
            return .success(VideoFrame(picture: picture, captureTimestampMicros: captureTimestampMicros,
                                       appliedRotation: rotation))
        } catch {
            pool.recycle(picture)
            return .failure(error)
        }
    }

    private func noteSizes(buffer: (Int, Int), jpeg: (Int, Int)) {
        let mismatch = buffer != jpeg
        if mismatch { sizeMismatches += 1 }
        if let lastSizes, lastSizes.buffer == buffer, lastSizes.jpeg == jpeg { return }
        let wasMismatch = lastSizes.map { $0.buffer != $0.jpeg } ?? false
        lastSizes = (buffer, jpeg)
        if mismatch {
            logger.warning("JPEG size differs from Buffer-Width/Height; using the JPEG's", [
                "buffer": "\(buffer.0)x\(buffer.1)", "jpeg": "\(jpeg.0)x\(jpeg.1)",
            ])
        } else if wasMismatch {
            logger.info("JPEG size matches Buffer-Width/Height again", ["size": "\(jpeg.0)x\(jpeg.1)"])
        }
    }
}
