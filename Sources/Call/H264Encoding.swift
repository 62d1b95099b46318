import Dispatch
import Foundation
import H264
import Media
import ScreencastSupport
import Synchronization
import VideoSource

/// The video track's H.264 encoding, made once for every output that consumes it (RTMP destinations, MP4
/// recordings): the shared source's new pictures (``VideoSource/addPictureSink(_:)``, the same I420 frames
/// the VP8 encoder takes, no copy) encoded by libx264 on a thread of its own ("h264-encoder"), fanned out.
///
/// ```
///  VideoSource's encoder thread ── new picture ──▶ slot (latest wins) ──▶ h264-encoder: H264Encoder ──▶ fan-out ──▶ RTMP, MP4
/// ```
/// - Size: the picture's (a new size makes a new encoder, whose first frame is a keyframe).
/// - Bitrate: ``H264Settings/defaultBitsPerSecond(width:height:framesPerSecond:)`` of the size at the source's
///   frame-rate cap, unless one is given (`--rtmp-bitrate`).
/// - Keyframes: ``KeyframeCadence`` (2 × fps frames, at the latest 2 s), and at once on request.
/// - A still screen offers no new pictures: the last one is encoded again every ``repeatMicros`` (a stream of
///   2 fps, so a player joining sees a picture and the keyframe cadence holds).
/// - Timestamps: capture times, strictly increasing (a repeat is stamped with the clock's now).
final class H264Encoding: PictureSink, Sendable {
    let selection = MediaSelection.videoH264
    let fanOut = FrameFanOut()
    private let source: VideoSource
    private let clock: any VideoClock
    private let bitsPerSecond: Int?
    private let framesPerSecond: Int
    private let logger: Logger
    let repeatMicros: UInt64 = 500_000
    private let wake = DispatchSemaphore(value: 0)
    private let done = Mutex<DispatchSemaphore?>(nil)
    private let token = Mutex<SinkToken?>(nil)

    private struct Shared {
        var pending: VideoFrame?
        var keyframeRequested = false
        var stopping = false
        var frames = 0
        var keyframes = 0
        var repeats = 0
        var failures = 0
        var encodeMicros: UInt64 = 0
        var size: PictureSize?
        var target = 0
        /// Each RTMP destination's limit, a fraction of the configured target (``QueueBitrateAdapter``).
        var limits: [String: Double] = [:]
        var window: [(micros: UInt64, bytes: Int)] = []
    }
    private let shared = Mutex(Shared())

    init(source: VideoSource, clock: any VideoClock, bitsPerSecond: Int?, logger: Logger) {
        self.source = source
        self.clock = clock
        self.bitsPerSecond = bitsPerSecond
        framesPerSecond = max(1, Int(source.configuration.maxFramesPerSecond.rounded()))
        self.logger = logger
    }

    /// A new picture from the source (its encoder thread): kept, latest wins.
    func consume(_ frame: VideoFrame) {
        shared.withLock { $0.pending = frame }
        wake.signal()
    }

    /// `consumer`'s limit, a fraction of the configured target (nil: none); the encoder follows the lowest,
    /// from its next frame.
    func limit(consumer: String, fraction: Double?) {
        shared.withLock { $0.limits[consumer] = fraction }
    }

    /// The next frame is a keyframe (coalesced).
    func requestKeyframe() {
        shared.withLock { $0.keyframeRequested = true }
        wake.signal()
    }

    /// Frames encoded a second over the last 5 s.
    var encodedFramesPerSecond: Double {
        let now = MonotonicClock.nowMicros()
        return shared.withLock { s in
            let recent = s.window.filter { $0.micros + 5_000_000 >= now }
            guard let first = recent.first else { return 0 }
            return Double(recent.count) / max(1, Double(now - first.micros) / 1_000_000)  // over 5 s, or since the first frame
        }
    }

    /// The target now, bits per second (0 before the first picture).
    var targetBitsPerSecond: Int { shared.withLock { $0.target } }

    /// Starts the thread and takes the source's pictures. Idempotent.
    func start() {
        let started = done.withLock { d -> Bool in
            guard d == nil else { return false }
            let semaphore = DispatchSemaphore(value: 0)
            let thread = Thread { [self] in
                run()
                semaphore.signal()
            }
            thread.name = "h264-encoder"
            thread.start()
            d = semaphore
            return true
        }
        if started { token.withLock { $0 = source.addPictureSink(self) } }
    }

    /// Stops taking pictures, encodes the one waiting, finishes every output's inlet. Idempotent.
    func stop() {
        if let token = token.withLock({ t -> SinkToken? in defer { t = nil }; return t }) { source.removePictureSink(token) }
        shared.withLock { $0.stopping = true }
        wake.signal()
        guard let semaphore = done.withLock({ d -> DispatchSemaphore? in defer { d = nil }; return d }) else {
            fanOut.finish()
            return
        }
        semaphore.wait()
    }

    private func run() {
        var encoder: H264Encoder?
        var cadence = KeyframeCadence(intervalFrames: 2 * framesPerSecond)
        var last: VideoFrame?
        var lastStamp: UInt64 = 0
        var lastEncodedAt: UInt64 = 0
        while true {
            _ = wake.wait(timeout: .now() + .microseconds(Int(repeatMicros)))
            let (pending, requested, stopping) = shared.withLock { s in
                defer { s.pending = nil; s.keyframeRequested = false }
                return (s.pending, s.keyframeRequested, s.stopping)
            }
            let now = clock.nowMicros()
            var frame: VideoFrame
            if let pending {
                frame = pending
            } else if !stopping, let last, requested || now >= lastEncodedAt + repeatMicros {
                frame = last
                frame.captureTimestampMicros = now
                shared.withLock { $0.repeats += 1 }
            } else if stopping {
                break
            } else {
                if requested { shared.withLock { $0.keyframeRequested = true } }  // kept for the first picture
                continue
            }
            frame.captureTimestampMicros = max(frame.captureTimestampMicros, lastStamp + 1000)
            lastStamp = frame.captureTimestampMicros
            last = frame
            lastEncodedAt = now
            if encoder?.settings.width != frame.width || encoder?.settings.height != frame.height {
                var settings = H264Settings(width: frame.width, height: frame.height, framesPerSecond: framesPerSecond, bitsPerSecond: bitsPerSecond)
                settings.colorSpace = frame.picture.colorSpace
                encoder = nil
                do throws(H264Error) {
                    encoder = try H264Encoder(settings: settings)
                    cadence = KeyframeCadence(intervalFrames: settings.keyframeIntervalFrames)
                    shared.withLock { s in
                        s.size = PictureSize(width: frame.width, height: frame.height)
                        s.target = settings.bitsPerSecond
                    }
                    logger.info("H.264 encoder made", [
                        "size": "\(frame.width)x\(frame.height)", "fps": framesPerSecond, "kbps": settings.bitsPerSecond / 1000,
                        "keyint": settings.keyframeIntervalFrames, "profile": settings.profile, "preset": settings.preset,
                    ])
                } catch {
                    shared.withLock { $0.failures += 1 }
                    logger.error("H.264 encoder refused the picture", ["size": "\(frame.width)x\(frame.height)", "error": error.description])
                    continue
                }
            }
            guard let encoder else { continue }
            adaptBitrate(encoder)
            if requested { cadence.request() }
            let forced = cadence.next(atMicros: frame.captureTimestampMicros)
            let started = MonotonicClock.nowMicros()
            do throws(H264Error) {
                guard let output = try encoder.encode(frame, forceKeyframe: forced) else { continue }
                let took = MonotonicClock.nowMicros() - started
                shared.withLock { s in
                    s.frames += 1
                    if output.isKeyframe { s.keyframes += 1 }
                    s.encodeMicros += took
                    s.window.append((started, output.bytes.count))
                    s.window.removeAll { $0.micros + 5_000_000 < started }
                }
                fanOut.consume(output)
            } catch {
                shared.withLock { $0.failures += 1 }
                logger.error("H.264 encode failed", ["error": error.description])
            }
            if stopping { break }
        }
        fanOut.finish()
    }

    /// Follows the lowest destination's limit (at least ``H264Settings/minimumBitsPerSecond``).
    private func adaptBitrate(_ encoder: H264Encoder) {
        let fraction = shared.withLock { $0.limits.values.min() ?? 1 }
        let wanted = max(H264Settings.minimumBitsPerSecond, Int(Double(encoder.settings.bitsPerSecond) * fraction))
        guard wanted != encoder.bitsPerSecond else { return }
        do throws(H264Error) {
            try encoder.setBitrate(wanted)
            shared.withLock { $0.target = wanted }
            logger.info("H.264 target changed", ["kbps": wanted / 1000, "fraction": fraction])
        } catch {
            logger.warning("H.264 target not changed", ["kbps": wanted / 1000, "error": error.description])
        }
    }

    /// `/stats` "h264": frames, keyframes, repeats of a still picture, fps and kbps over the last 5 s, mean
    /// encode time, size and target.
    var json: JSONValue {
        let now = MonotonicClock.nowMicros()
        return shared.withLock { s in
            let recent = s.window.filter { $0.micros + 5_000_000 >= now }
            let bytes = recent.reduce(0) { $0 + $1.bytes }
            return .object([
                ("size", s.size.map { .string("\($0.width)x\($0.height)") } ?? .null), ("targetKbps", .int(Int64(s.target / 1000))),
                ("frames", .int(Int64(s.frames))), ("keyframes", .int(Int64(s.keyframes))), ("repeats", .int(Int64(s.repeats))),
                ("fps", .double(Double(recent.count) / 5)), ("kbps", .int(Int64(bytes * 8 / 5 / 1000))),
                ("encodeMsMean", .double(s.frames == 0 ? 0 : (Double(s.encodeMicros) / Double(s.frames) / 100).rounded() / 10)),
                ("failures", .int(Int64(s.failures))),
            ])
        }
    }
}
