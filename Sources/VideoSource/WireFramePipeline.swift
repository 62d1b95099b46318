import FrameWire
import Media
import ScreencastSupport

/// Why `WireFramePipeline.process` gave no picture.
enum FrameFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The body did not decode (or only with a warning): `DropReason.decodeError`.
    case decode(MediaError)
    /// The JPEG's header (or an I420 frame's Buffer-Width/Height) claims more pixels than the decode budget
    /// (`maximumDecodePixels`, or a side above `maximumDimension`): refused before its planes are
    /// allocated, `DropReason.tooLarge`.
    case tooLarge(width: Int, height: Int, budget: Int)
    /// A raw I420 body whose length is not the picture's size (a `Frame` made without the wire decoder,
    /// which refuses such streams): counted as `DropReason.decodeError`.
    case rawLength(width: Int, height: Int, expected: Int, got: Int)
    /// A `BGRX-SHM` frame without its mapping (read from a file or dump, not a socket): `DropReason.decodeError`.
    case noSharedMemory
    /// A `BGRX-SHM` frame whose slot was rewritten before or while it was converted (the agent is two
    /// frames ahead): `DropReason.stale`; a newer frame is on its way.
    case staleSharedPicture

    var description: String {
        switch self {
        case .decode(let error): "\(error)"
        case .tooLarge(let width, let height, let budget):
            "picture of \(width)x\(height) (\(width * height) pixels) exceeds the decode budget of \(budget) pixels"
        case .rawLength(let width, let height, let expected, let got):
            "I420 body of \(got) bytes, but a \(width)x\(height) I420 picture has \(expected)"
        case .noSharedMemory: "a BGRX-SHM frame without its shared memory (only a socket reader maps it)"
        case .staleSharedPicture: "the shared slot was rewritten before it was read"
        }
    }
}

/// Wire frame → upright `VideoFrame` in BT.601 limited range: a JPEG body straight to I420 (libturbojpeg)
/// or a raw I420 body as it is, then the rotation from `Buffer-Orientation` (libyuv), into a pooled
/// buffer, then the one colour conversion of the path.
///
/// - Colours (Protocol/colour.md): a JPEG decodes to BT.601 full range (JFIF), a raw I420 body is in the
///   range its `Buffer-Color-Range` names (full when absent); VP8 carries limited range.
///   The picture is converted full → limited once, here, in place in the pooled buffer after the rotation
///   (`I420Buffer.convertToLimitedRange`, libyuv `ARGBPolynomial`: ≈0.5 ms at 1080p), so every source of the
///   call hands the encoder limited range and `VP8Encoder` refuses anything else.
/// - A raw I420 body (`Buffer-Format: I420`) in limited range (`Buffer-Color-Range: limited`, what our
///   agent sends) is used in place, without a copy: the
///   frame's body becomes the picture's storage (and later a pool buffer). A full-range one is copied
///   into a pooled buffer and converted there (the body may be shared, as a dump's frames are). The same
///   budget applies (from `Buffer-Width`/`Buffer-Height`, plus `maximumDimension` per side); the body's
///   length must be exactly the picture's (`FrameFailure.rawLength` otherwise); rotation as for JPEG.
///
/// - The JPEG's header is read first: a picture above the decode budget (`maximumDecodePixels`) is
///   refused before anything is allocated for it (`FrameFailure.tooLarge`), logged once per refused size.
/// - The picture takes the JPEG's own size; a difference from `Buffer-Width`/`Buffer-Height` is logged
///   once per change of the (buffer size, JPEG size) pair, and once when they agree again.
/// - A rotation change is logged once and applies from that frame on.
/// - Those "once per change" lines are rate-limited per kind (`LogRateLimiter`: 3 at once, then one per
///   5 s with the count held back), so sizes or rotations alternating on every frame cannot flood the log.
/// - A body that does not decode (or decodes only with a warning) is reported as the `MediaError`;
///   the caller drops and counts it.
/// - Memory follows the pictures: buffers come from the pool (which frees oversized ones), and after a
///   large picture the decoder is re-made once smaller ones follow, which frees its scratch planes.
///
/// One thread at a time (it owns a `JPEGDecoder`): not `Sendable`.
final class WireFramePipeline {
    private var decoder: JPEGDecoder
    let pool: FramePool
    let logger: Logger
    private let maximumDimension: Int
    /// The largest picture (pixels) decoded, as a JPEG, before it is refused.
    let maximumDecodePixels: Int
    private var lastSizes: (buffer: (Int, Int), jpeg: (Int, Int))?
    private var lastRotation: PictureRotation?
    private var lastRefused: (Int, Int)?
    private var sizeLog = LogRateLimiter()
    private var rotationLog = LogRateLimiter()
    private var refusalLog = LogRateLimiter()
    /// Pixels of the recent pictures, and the most the current decoder has decoded.
    private var recentPixels = RecentMaximum(count: 8)
    private var decoderPeakPixels = 0
    /// Frames whose JPEG size differed from the header's, counted since the pipeline was made.
    private(set) var sizeMismatches = 0
    /// Decoders re-made to free a large picture's scratch (tests).
    private(set) var decoderRenewals = 0
    /// The last `BGRX-SHM` picture made (upright as converted), which the next frame's `Buffer-Damage`
    /// updates (`WireFramePipeline+Damage.swift`).
    var lastShared: LastSharedPicture?
    /// `BGRX-SHM` frames converted only where their damage said (the rest copied from the last picture).
    var partialConversions = 0
    /// Frames whose `Buffer-Damage` was malformed (taken whole, the fault logged rate-limited).
    var damageFaults = 0
    var damageFaultLog = LogRateLimiter()

    init(pool: FramePool, logger: Logger, maximumDimension: Int, maximumDecodePixels: Int) throws(MediaError) {
        decoder = try JPEGDecoder(maximumDimension: maximumDimension)
        self.pool = pool
        self.logger = logger
        self.maximumDimension = maximumDimension
        self.maximumDecodePixels = maximumDecodePixels
    }

    /// Forgets what was logged (a new sender starts with fresh "once per change" state; the rate limits
    /// stay, so many short senders cannot flood the log either).
    func reset() {
        lastSizes = nil
        lastRotation = nil
        lastRefused = nil
        lastShared = nil
    }

    /// Decodes and rotates `frame`; the result's picture comes from the pool (or is the I420 body itself).
    func process(_ frame: Frame, captureTimestampMicros: UInt64) -> Result<VideoFrame, FrameFailure> {
        if let fault = frame.header.damageFault { noteDamageFault(fault) }
        if frame.header.format == .i420 { return processI420(frame, captureTimestampMicros: captureTimestampMicros) }
        if frame.header.format == .sharedBGRX { return processShared(frame, captureTimestampMicros: captureTimestampMicros) }
        let header = frame.header
        let info: JPEGInfo
        do throws(MediaError) {
            info = try decoder.readHeader(frame.body)
        } catch {
            return .failure(.decode(error))
        }
        if info.width * info.height > maximumDecodePixels {
            noteRefused(width: info.width, height: info.height, what: "jpeg")
            return .failure(.tooLarge(width: info.width, height: info.height, budget: maximumDecodePixels))
        }
        renewDecoderIfOversized(pixels: info.width * info.height)

        let rotation = noteRotation(header)
        var decoded = pool.take(width: info.width, height: info.height)
        let decodedInfo: JPEGInfo
        do throws(MediaError) {
            decodedInfo = try decoder.decodeI420(frame.body, into: &decoded)
        } catch {
            pool.recycle(decoded)
            return .failure(.decode(error))
        }
        decoderPeakPixels = max(decoderPeakPixels, decodedInfo.width * decodedInfo.height)
        let picture: I420Buffer
        do throws(MediaError) {
            picture = try limitedRange(try upright(decoded, rotation: rotation))
        } catch {
            return .failure(.decode(error))
        }
        noteSizes(buffer: (header.bufferWidth, header.bufferHeight), jpeg: (decodedInfo.width, decodedInfo.height))
        return .success(VideoFrame(picture: picture, captureTimestampMicros: captureTimestampMicros,
                                   appliedRotation: rotation))
    }

    /// A raw I420 frame: checked against the budget and its exact size, then used without a copy.
    private func processI420(_ frame: Frame, captureTimestampMicros: UInt64) -> Result<VideoFrame, FrameFailure> {
        let (width, height) = (frame.header.bufferWidth, frame.header.bufferHeight)
        if width * height > maximumDecodePixels || width > maximumDimension || height > maximumDimension {
            noteRefused(width: width, height: height, what: "picture")
            return .failure(.tooLarge(width: width, height: height, budget: maximumDecodePixels))
        }
        let expected = I420Buffer.byteCount(width: width, height: height)
        let colorSpace = YCbCrColorSpace(range: frame.header.bodyColorRange == .limited ? .limited : .full)
        guard frame.body.count == expected,
              let raw = try? I420Buffer(width: width, height: height, bytes: frame.body, colorSpace: colorSpace)  // shares the body's storage
        else {
            return .failure(.rawLength(width: width, height: height, expected: expected, got: frame.body.count))
        }
        let rotation = noteRotation(frame.header)
        do throws(MediaError) {
            var picture = try upright(raw, rotation: rotation)
            if rotation == .none, picture.colorSpace != .bt601Limited {
                // Still the frame's body (shared with the caller): converted in a pooled copy, never in place.
                var copy = pool.take(width: width, height: height)
                picture.copy(into: &copy)
                picture = copy
            }
            return .success(VideoFrame(picture: try limitedRange(picture), captureTimestampMicros: captureTimestampMicros,
                                       appliedRotation: rotation))
        } catch {
            return .failure(.decode(error))
        }
    }

    /// A `BGRX-SHM` frame: its slot converted once, straight from the shared memory into a pooled buffer, to
    /// BT.601 limited range (libyuv `ARGBToI420`) — only the rectangles of its `Buffer-Damage` into a copy of
    /// the last picture when that is the frame before (Protocol/frame-wire.md §2.9) — then checked against the slot's seqlock version (a
    /// rewritten slot is dropped as stale, never shown torn); rotation as for JPEG.
    private func processShared(_ frame: Frame, captureTimestampMicros: UInt64) -> Result<VideoFrame, FrameFailure> {
        guard let shared = frame.sharedPicture, let memory = frame.header.memory else { return .failure(.noSharedMemory) }
        let (width, height) = (shared.width, shared.height)
        if width * height > maximumDecodePixels || width > maximumDimension || height > maximumDimension {
            noteRefused(width: width, height: height, what: "picture")
            return .failure(.tooLarge(width: width, height: height, budget: maximumDecodePixels))
        }
        guard shared.version(slot: memory.slot) == memory.version else { return .failure(.staleSharedPicture) }
        var converted = pool.take(width: width, height: height)
        let damage = previousPicture(for: frame.header, width: width, height: height, into: &converted)
        do throws(MediaError) {
            let pixels = BGRXPixels(base: shared.pixels(slot: memory.slot), width: width, height: height, stride: shared.stride)
            if let damage {
                // Even edges (I420 chroma is 2x2): another writer may name odd ones.
                let regions = damage.map { $0.alignedToChroma(width: width, height: height) }.map { ($0.x, $0.y, $0.width, $0.height) }
                try BGRXToYUV.convertRegionsToI420(pixels, regions: regions, range: .limited, into: &converted)
                partialConversions += 1
            } else {
                try BGRXToYUV.convertToI420(pixels, range: .limited, into: &converted)
            }
        } catch {
            pool.recycle(converted)
            return .failure(.decode(error))
        }
        guard shared.isIntact(slot: memory.slot, version: memory.version) else {
            pool.recycle(converted)
            return .failure(.staleSharedPicture)
        }
        let rotation = noteRotation(frame.header)
        if rotation == .none { keepShared(converted, header: frame.header) }
        do throws(MediaError) {
            return .success(VideoFrame(picture: try upright(converted, rotation: rotation),
                                       captureTimestampMicros: captureTimestampMicros, appliedRotation: rotation))
        } catch {
            return .failure(.decode(error))
        }
    }

    /// The rotation `header` asks for; a change is logged (rate-limited) and applies from this frame on.
    private func noteRotation(_ header: FrameHeader) -> PictureRotation {
        let rotation = PictureRotation(degrees: header.rotation.degrees) ?? .none
        if rotation != lastRotation {
            if lastRotation != nil || rotation != .none, let suppressed = rotationLog.admit() {
                logger.info("rotation", ["degrees": rotation.degrees, "orientation": header.orientation, "suppressed": suppressed])
            }
            lastRotation = rotation
        }
        return rotation
    }

    /// `decoded` turned upright into a pooled buffer (`decoded` goes back to the pool), or `decoded` itself
    /// for no rotation. On a throw `decoded` has gone back to the pool.
    private func upright(_ decoded: consuming I420Buffer, rotation: PictureRotation) throws(MediaError) -> I420Buffer {
        guard rotation != .none else { return decoded }
        let size = rotation.rotatedSize(width: decoded.width, height: decoded.height)
        var picture = pool.take(width: size.width, height: size.height)
        do throws(MediaError) {
            try decoded.rotated(by: rotation, into: &picture)
        } catch {
            pool.recycle(picture)
            pool.recycle(decoded)
            throw error
        }
        pool.recycle(decoded)
        return picture
    }

    /// `picture` (a pooled buffer of ours) in BT.601 limited range: converted in place when it is full range.
    /// On a throw it has gone back to the pool.
    private func limitedRange(_ picture: consuming I420Buffer) throws(MediaError) -> I420Buffer {
        var picture = picture
        do throws(MediaError) {
            try picture.convertToLimitedRange()
        } catch {
            pool.recycle(picture)
            throw error
        }
        return picture
    }

    /// After a large picture, once only much smaller ones come (the largest of the last 8 is under half
    /// of it), a fresh decoder replaces the one whose scratch planes were sized for the large one.
    private func renewDecoderIfOversized(pixels: Int) {
        recentPixels.record(pixels)
        guard decoderPeakPixels >= 1_000_000, decoderPeakPixels > 2 * recentPixels.maximum else { return }
        guard let fresh = try? JPEGDecoder(maximumDimension: maximumDimension) else { return }
        decoder = fresh
        decoderPeakPixels = 0
        decoderRenewals += 1
    }

    /// Logs a refused size once per change (rate-limited); `what` is the log key: `jpeg` or `picture` (I420).
    private func noteRefused(width: Int, height: Int, what: String) {
        if let lastRefused, lastRefused == (width, height) { return }
        lastRefused = (width, height)
        guard let suppressed = refusalLog.admit() else { return }
        logger.warning("frame refused: the picture exceeds the decode budget", [
            what: "\(width)x\(height)", "pixels": width * height, "budget": maximumDecodePixels, "suppressed": suppressed,
        ])
    }

    private func noteSizes(buffer: (Int, Int), jpeg: (Int, Int)) {
        let mismatch = buffer != jpeg
        if mismatch { sizeMismatches += 1 }
        if let lastSizes, lastSizes.buffer == buffer, lastSizes.jpeg == jpeg { return }
        let wasMismatch = lastSizes.map { $0.buffer != $0.jpeg } ?? false
        lastSizes = (buffer, jpeg)
        guard mismatch || wasMismatch, let suppressed = sizeLog.admit() else { return }
        if mismatch {
            logger.warning("JPEG size differs from Buffer-Width/Height; using the JPEG's", [
                "buffer": "\(buffer.0)x\(buffer.1)", "jpeg": "\(jpeg.0)x\(jpeg.1)", "suppressed": suppressed,
            ])
        } else {
            logger.info("JPEG size matches Buffer-Width/Height again", ["size": "\(jpeg.0)x\(jpeg.1)", "suppressed": suppressed])
        }
    }
}
