public import AudioSource
import Dispatch
import Foundation
public import Media
public import ScreencastSupport
import Synchronization

/// What a destination writes: a picture of the H.264 (or VP8) encoding, or a sound frame (AAC-LC, or Opus for
/// WebM) at its time in 48 kHz ticks from the session's start.
enum StreamFrame: Sendable {
    case video(EncodedFrame)
    case audio(EncodedAudioFrame, ticks: Int64)

    var isVideo: Bool { if case .video = self { true } else { false } }
}

/// One destination of the shared H.264 encoding (and of the AAC-LC encoding beside it): an RTMP server (FLV over `rtmp://`/`rtmps://`, reconnecting on
/// a ``RetrySchedule``) or a file (fragmented MP4). Frames come in on the encoder's thread (``consume(_:)``
/// queues and returns); a thread of its own connects, writes and reconnects, so a slow or failing destination
/// never holds up the encoder, the viewers or the other destinations.
///
/// ```
///  encoder thread ─ consume ─▶ SendQueue (≤ 30 frames; drops end at a keyframe) ─▶ writer thread ─▶ AVMuxer
///                                                                       write error ─▶ close, wait, reconnect
/// ```
/// - Timestamps: pictures at capture time − the first picture's capture time, ms, strictly increasing across
///   reconnects; sound from its sample count (``EncodedAudioFrame/sampleTime``), anchored once on that same
///   session start by the first sound frame's capture time, so both run on one clock and sound keeps its own.
/// - Sound never goes ahead of the pictures (``SendQueue``), and a drop of pictures drops the sound of their time.
/// - After (re)connecting: the sequence headers (AVC from the first keyframe's SPS/PPS; AAC or Opus from
///   ``setAudio(codec:extradata:)``), then that keyframe first.
/// - Every attempt is logged with its delay and the reason of the failure before it; after ``Target``'s limit
///   of failed attempts in a row the writer stops and says so at error level.
public final class StreamWriter: Sendable {
    /// Where it writes.
    public enum Target: Sendable, Equatable {
        /// FLV over RTMP, reconnecting up to `retries` failed attempts in a row (0: forever).
        case rtmp(RTMPURL, retries: Int)
        /// A fragmented MP4 file (1-s fragments and one at each keyframe; a kill loses at most the last one).
        case mp4(path: String)
        /// A WebM file of VP8 frames as encoded and, given ``setAudio(codec:extradata:)`` with Opus, the Opus
        /// packets as encoded (no re-encoding; cues and duration written at the end, so a player seeks in it).
        case webm(path: String)

        /// A file, written whole (what waits is written at the end), rather than a live destination.
        public var isFile: Bool { if case .rtmp = self { false } else { true } }
    }

    /// Where the writer is.
    public enum State: String, Sendable {
        case idle, connecting, publishing, waiting, failed, stopped
    }


    public let name: String
    public let target: Target
    let targetBitsPerSecond: @Sendable () -> Int
    let encoderFramesPerSecond: @Sendable () -> Double
    private let limitBitrate: @Sendable (Double?) -> Void
    let logger: Logger
    private let requestKeyframe: @Sendable () -> Void
    private let gate = InterruptGate()
    private let wake = DispatchSemaphore(value: 0)
    private let done = Mutex<DispatchSemaphore?>(nil)
    /// How long one write may block before the connection counts as failed, s.
    let writeTimeoutSeconds: Double

    struct Shared {
        var queue: SendQueue<StreamFrame>
        /// The sound's codec and its configuration when the destination carries sound.
        var audio: AVMuxer.AudioTrack?
        /// The first sound frame's sample time and its time in 48 kHz ticks from the session's start.
        var audioAnchor: (sample: UInt64, ticks: Int64)?
        var audioFramesSent = 0
        /// An RTMP connection's adaptive bitrate (fresh at each publish; nil otherwise).
        var adapter: QueueBitrateAdapter?
        var state = State.idle
        var finishing = false
        var sessionStartMicros: UInt64?
        var framesSent = 0
        var bytesSent = 0
        var reconnects = 0
        var publishingSinceMicros: UInt64?
        var lastReason: String?
        var failure: String?
        var window: [(micros: UInt64, bytes: Int, isVideo: Bool)] = []
    }
    let shared: Mutex<Shared>

    /// - Parameters:
    ///   - name: for logs and `/stats` (`rtmp-1`, `mp4`).
    ///   - targetBitsPerSecond: the encoding's target (shown beside what is sent).
    ///   - queueLimit: frames waiting beyond which stale ones are dropped (30 ≈ 1 s at 30 fps).
    ///   - encoderFramesPerSecond: the shared encoder's frame rate over the last 5 s (shown beside what is sent).
    ///   - limitBitrate: an RTMP destination's adaptive limit for the shared encoding, a fraction of its
    ///     configured target (``QueueBitrateAdapter``); nil when it has none (not publishing).
    ///   - requestKeyframe: asks the shared encoding for a keyframe (after a connect or a drop).
    public init(
        name: String, target: Target, targetBitsPerSecond: @escaping @Sendable () -> Int, queueLimit: Int = 30, writeTimeoutSeconds: Double = 5,
        encoderFramesPerSecond: @escaping @Sendable () -> Double = { 0 },
        limitBitrate: @escaping @Sendable (_ fraction: Double?) -> Void = { _ in },
        logger: Logger, requestKeyframe: @escaping @Sendable () -> Void
    ) {
        self.name = name
        self.target = target
        self.targetBitsPerSecond = targetBitsPerSecond
        self.logger = logger
        self.requestKeyframe = requestKeyframe
        self.writeTimeoutSeconds = writeTimeoutSeconds
        self.encoderFramesPerSecond = encoderFramesPerSecond
        self.limitBitrate = limitBitrate
        shared = Mutex(Shared(queue: SendQueue(limit: queueLimit)))
    }

    deinit { stop() }

    /// Queues an encoded frame (H.264 Annex B); returns at once. Frames before the first keyframe and frames
    /// the queue's limit drops are counted in ``stats``.
    public func consume(_ frame: EncodedFrame) {
        let result = shared.withLock { s -> (SendQueue<StreamFrame>.Outcome, Double?)? in
            guard !s.finishing, s.state != .failed, s.state != .stopped else { return nil }
            if s.sessionStartMicros == nil { s.sessionStartMicros = frame.captureTimestampMicros }
            let outcome = s.queue.push(.init(frame: .video(frame), isKeyframe: frame.isKeyframe, micros: frame.captureTimestampMicros))
            let step = s.adapter?.observe(queueDelayMicros: s.queue.spanMicros, dropped: s.queue.dropped, now: frame.captureTimestampMicros)
            return (outcome, step)
        }
        guard let (outcome, step) = result else { return }
        if let step {
            limitBitrate(step)
            logger.info("bitrate step", ["fraction": step, "queue.ms": shared.withLock { $0.queue.spanMicros / 1000 }])
        }
        if outcome.needsKeyframe { requestKeyframe() }
        if outcome.dropped > 0 { logger.debug("send queue over its limit: frames dropped", ["dropped": outcome.dropped]) }
        wake.signal()
    }

    /// Makes the destination carry sound beside the pictures, 48 kHz stereo: AAC-LC with `extradata` the
    /// AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1; RTMP, MP4), or Opus with `extradata` the `OpusHead` (RFC
    /// 7845 §5.1; WebM) of the encoding whose frames ``consumeAudio(_:)`` takes. Call before ``start()``.
    public func setAudio(codec: AudioCodec, extradata: [UInt8]) {
        let track: AVMuxer.AudioTrack = switch codec {
        case .aac: .aac(config: extradata)
        case .opus: .opus(head: extradata)
        }
        shared.withLock { $0.audio = track }
    }

    /// Queues a sound frame (an AAC-LC access unit, an Opus packet, DTX ones too); returns at once. Sound before the first picture is not kept (the stream starts
    /// with a picture); its time is the sample count from the first frame kept, anchored on its capture time.
    public func consumeAudio(_ frame: EncodedAudioFrame) {
        let queued = shared.withLock { s -> Bool in
            guard !s.finishing, s.state != .failed, s.state != .stopped, s.audio != nil, let start = s.sessionStartMicros else {
                return false
            }
            let rate = Int64(AudioFrame.sampleRate)
            if s.audioAnchor == nil {
                s.audioAnchor = (frame.sampleTime, (Int64(frame.captureMicros) - Int64(start)) * rate / 1_000_000)
            }
            let anchor = s.audioAnchor!
            let ticks = anchor.ticks + Int64(frame.sampleTime) - Int64(anchor.sample)
            guard ticks >= 0 else { return false }
            let micros = start + UInt64(ticks * 1_000_000 / rate)
            _ = s.queue.push(.init(frame: .audio(frame, ticks: ticks), isKeyframe: true, micros: micros, isVideo: false))
            return true
        }
        if queued { wake.signal() }
    }

    /// Starts the writer's thread (connects at once). Idempotent.
    public func start() {
        done.withLock { d in
            guard d == nil else { return }
            let semaphore = DispatchSemaphore(value: 0)
            let thread = Thread { [self] in
                run()
                semaphore.signal()
            }
            thread.name = name
            thread.start()
            d = semaphore
        }
    }

    /// Ends the writer: an MP4 file gets what waits and its trailer; an RTMP connection ends at once. Waits for
    /// the thread (a blocked write is interrupted after `graceSeconds`). Idempotent.
    public func stop(graceSeconds: Double = 3) {
        shared.withLock { $0.finishing = true }
        wake.signal()
        guard let semaphore = done.withLock({ d -> DispatchSemaphore? in
            defer { d = nil }
            return d
        }) else {
            shared.withLock { if $0.state == .idle { $0.state = .stopped } }
            return
        }
        if semaphore.wait(timeout: .now() + graceSeconds) == .timedOut {
            gate.stop()
            semaphore.wait()
        }
    }

    /// Why the writer's work is incomplete (a file not written whole, a destination given up); nil when whole.
    public var failure: String? { shared.withLock { $0.failure } }

    // MARK: - The writer's thread

    private func setState(_ state: State) { shared.withLock { $0.state = state } }

    private func run() {
        switch target {
        case .rtmp(let url, let retries): runRTMP(url, retries: retries)
        case .mp4(let path): runFile(path, format: "mp4")
        case .webm(let path): runFile(path, format: "webm")
        }
        shared.withLock { s in
            if s.state != .failed { s.state = .stopped }
            s.publishingSinceMicros = nil
        }
    }

    private func runRTMP(_ url: RTMPURL, retries: Int) {
        var schedule = RetrySchedule(limit: retries)
        var attempt = 0
        var reason: String?
        while !isFinishing {
            attempt += 1
            setState(.connecting)
            logger.info(attempt == 1 ? "connecting" : "reconnecting", ["url": url.redacted, "attempt": attempt, "reason": reason ?? "-"])
            do throws(StreamingError) {
                let buffer = Self.sendBufferBytes(targetBitsPerSecond: targetBitsPerSecond())
                let muxer = try AVMuxer(
                    url: url.url, display: url.redacted, format: "flv", gate: gate, protocolOptions: ["send_buffer_size": String(buffer)])
                try publish(muxer, options: [:]) {
                    schedule.succeeded()
                    logger.info("publishing", ["url": url.redacted, "attempt": attempt])
                }
                try? muxer.finish(seconds: 1)
                return  // finishing
            } catch {
                reason = error.explained(for: url).description
            }
            shared.withLock { s in
                s.lastReason = reason
                s.publishingSinceMicros = nil
            }
            if isFinishing { return }
            guard let delay = schedule.nextDelayMillis() else {
                let failure = "gave up after \(schedule.failures) failed attempts in a row: \(reason ?? "-")"
                logger.error("destination failed: no more attempts (--rtmp-retries)", ["url": url.redacted, "attempts": schedule.failures, "reason": reason ?? "-"])
                shared.withLock { s in
                    s.state = .failed
                    s.failure = failure
                    s.queue = SendQueue(limit: s.queue.limit)
                }
                return
            }
            shared.withLock { s in
                s.state = .waiting
                s.reconnects += 1
            }
            logger.warning("connection lost; next attempt", ["url": url.redacted, "in_ms": delay, "attempt": attempt + 1, "reason": reason ?? "-"])
            if sleepUnlessFinishing(millis: delay) { return }
        }
    }

    /// MP4: fragmented (an empty moov first, then a fragment per second and at each keyframe, flushed to the
    /// file as it is written: a kill leaves every complete fragment playable). WebM: a cluster a second,
    /// flushed as it closes (a kill leaves the closed ones playable); cues and duration in the trailer (a clean
    /// stop makes it seekable).
    private func runFile(_ path: String, format: String) {
        setState(.connecting)
        let options = format == "mp4"
            ? ["movflags": "frag_keyframe+empty_moov+default_base_moof", "frag_duration": "1000000", "flush_packets": "1"]
            : ["cluster_time_limit": "1000", "flush_packets": "1"]  // a cluster a second, each on disk as it closes
        do throws(StreamingError) {
            let muxer = try AVMuxer(url: path, display: path, format: format, gate: gate)
            try publish(muxer, options: options) {
                logger.info("recording", ["path": path])
            }
            try muxer.finish()
            logger.info("recording closed", ["path": path, "frames": shared.withLock { $0.framesSent }])
        } catch {
            logger.error("recording failed", ["path": path, "error": error.description])
            shared.withLock { s in
                s.state = .failed
                s.failure = error.description
                s.lastReason = error.description
                s.queue = SendQueue(limit: s.queue.limit)
            }
        }
    }

    private var isFinishing: Bool { shared.withLock { $0.finishing } }

    /// The connection ended: its adaptive limit goes (a destination away is no measure of a path).
    private func withdrawLimit() {
        if shared.withLock({ s in defer { s.adapter = nil }; return s.adapter != nil }) { limitBitrate(nil) }
    }

    /// The bounds of an RTMP connection's kernel send buffer (`SO_SNDBUF` through FFmpeg's `send_buffer_size`),
    /// bytes: 64 KiB to 1 MiB.
    static let sendBufferRange = 65_536...1_048_576

    /// An RTMP connection's send buffer: half a second of the target bitrate, within ``sendBufferRange``. Left
    /// to itself Linux grows it to 4 MiB, where a stalled server would hide up to 15 s of a 2 Mbit/s stream
    /// from the send queue (its delay, its drops); half a second still fills a path of 0.5 s round trip.
    static func sendBufferBytes(targetBitsPerSecond: Int) -> Int {
        min(sendBufferRange.upperBound, max(sendBufferRange.lowerBound, targetBitsPerSecond / 16))
    }

    /// Sequence headers, then the first keyframe, then every frame as it comes, until finishing (RTMP: at once;
    /// a file: once the queue is empty) or an error (thrown).
    private func publish(_ muxer: AVMuxer, options: [String: String], published: () -> Void) throws(StreamingError) {
        if shared.withLock({ $0.queue.restartAtKeyframe() }) { requestKeyframe() }
        let drains = target.isFile
        var first: EncodedFrame?
        while first == nil {
            switch nextFrame(drains: drains) {
            case nil: return
            case .video(let frame)?: first = frame
            case .audio?: shared.withLock { $0.queue.countDroppedAudio(1) }  // the stream starts with a picture
            }
        }
        guard let first else { return }
        let video: AVMuxer.VideoTrack
        if case .webm = target {
            video = .vp8
        } else {
            guard let parameterSets = AnnexB.parameterSets(first.bytes) else { throw .noParameterSets }
            video = .h264(parameterSets: parameterSets)
        }
        let audio = shared.withLock { $0.audio }
        // WebM: blocks in time order across the tracks (the MP4 and RTMP paths write as they come).
        let interleaved = if case .webm = target { true } else { false }
        try muxer.writeHeader(width: first.width, height: first.height, video: video, audio: audio, interleaved: interleaved, options: options)
        try write(.video(first), to: muxer)
        let live = !target.isFile
        shared.withLock { s in
            s.state = .publishing
            s.publishingSinceMicros = MonotonicMicros.now()
            if live { s.adapter = QueueBitrateAdapter(now: first.captureTimestampMicros) }
        }
        defer { if live { withdrawLimit() } }
        published()
        while let frame = nextFrame(drains: drains) { try write(frame, to: muxer) }
    }

    /// The next frame to write, waiting for it; nil once finishing (an MP4 writer first takes what waits).
    private func nextFrame(drains: Bool) -> StreamFrame? {
        while true {
            let (item, finishing) = shared.withLock { s in
                (s.finishing && !drains ? nil : s.queue.pop(draining: s.finishing), s.finishing)
            }
            if let item { return item.frame }
            if finishing { return nil }
            wake.wait()
        }
    }

    private func write(_ frame: StreamFrame, to muxer: AVMuxer) throws(StreamingError) {
        let size: Int
        switch frame {
        case .video(let frame):
            let millis = shared.withLock { s -> Int64 in
                let start = s.sessionStartMicros ?? frame.captureTimestampMicros
                return Int64(frame.captureTimestampMicros >= start ? (frame.captureTimestampMicros - start) / 1000 : 0)
            }
            let stamp = monotonic.withLock { last -> Int64 in
                let value = max(millis, (last.video ?? -1) + 1)
                last.video = value
                return value
            }
            try muxer.write(frame.bytes, millis: stamp, isKeyframe: frame.isKeyframe, seconds: writeTimeoutSeconds)
            size = frame.bytes.count
        case .audio(let frame, let ticks):
            // From the sample count: strictly increasing by construction; a repeat (never expected) is skipped.
            let fresh = monotonic.withLock { last -> Bool in
                guard ticks > (last.audio ?? -1) else { return false }
                last.audio = ticks
                return true
            }
            guard fresh, muxer.hasAudio else { return }
            try muxer.writeAudio(frame.data, ticks: ticks, durationSamples: frame.durationSamples, seconds: writeTimeoutSeconds)
            size = frame.data.count
        }
        let now = MonotonicMicros.now()
        shared.withLock { s in
            if case .video = frame { s.framesSent += 1 } else { s.audioFramesSent += 1 }
            s.bytesSent += size
            s.window.append((now, size, frame.isVideo))
            if s.window.count > 2000 { s.window.removeFirst(s.window.count - 2000) }
        }
    }

    /// The last timestamps written: pictures in ms, sound in 48 kHz ticks (kept across connections: the
    /// stream's time never goes back).
    private let monotonic = Mutex<(video: Int64?, audio: Int64?)>((nil, nil))

    /// Sleeps `millis` unless finishing first; returns true when finishing.
    private func sleepUnlessFinishing(millis: UInt64) -> Bool {
        let deadline = DispatchTime.now() + .milliseconds(Int(millis))
        while !isFinishing {
            if wake.wait(timeout: deadline) == .timedOut { return isFinishing }
        }
        return true
    }
}
