import Dispatch
import Foundation
public import Media
public import ScreencastSupport
import Synchronization

/// One destination of the shared H.264 encoding: an RTMP server (FLV over `rtmp://`/`rtmps://`, reconnecting on
/// a ``RetrySchedule``) or a file (fragmented MP4). Frames come in on the encoder's thread (``consume(_:)``
/// queues and returns); a thread of its own connects, writes and reconnects, so a slow or failing destination
/// never holds up the encoder, the viewers or the other destinations.
///
/// ```
///  encoder thread ─ consume ─▶ SendQueue (≤ 30 frames; drops end at a keyframe) ─▶ writer thread ─▶ AVMuxer
///                                                                       write error ─▶ close, wait, reconnect
/// ```
/// - Timestamps: capture time − the first frame's capture time, ms, strictly increasing across reconnects.
/// - After (re)connecting: the sequence header (SPS/PPS of the first keyframe), then that keyframe first.
/// - Every attempt is logged with its delay and the reason of the failure before it; after ``Target``'s limit
///   of failed attempts in a row the writer stops and says so at error level.
public final class StreamWriter: Sendable {
    /// Where it writes.
    public enum Target: Sendable, Equatable {
        /// FLV over RTMP, reconnecting up to `retries` failed attempts in a row (0: forever).
        case rtmp(RTMPURL, retries: Int)
        /// A fragmented MP4 file (1-s fragments and one at each keyframe; a kill loses at most the last one).
        case mp4(path: String)
    }

    /// Where the writer is.
    public enum State: String, Sendable {
        case idle, connecting, publishing, waiting, failed, stopped
    }

    /// Its numbers now.
    public struct Stats: Sendable {
        public var state: State
        public var queueFrames: Int
        public var queueMillis: Int
        public var sentKbps: Int
        public var targetKbps: Int
        public var framesSent: Int
        public var bytesSent: Int
        public var dropped: Int
        public var reconnects: Int
        /// Seconds since the current connection began publishing; 0 when not publishing.
        public var uptimeSeconds: Double
        public var lastReason: String?
    }

    public let name: String
    public let target: Target
    private let targetBitsPerSecond: @Sendable () -> Int
    private let logger: Logger
    private let requestKeyframe: @Sendable () -> Void
    private let gate = InterruptGate()
    private let wake = DispatchSemaphore(value: 0)
    private let done = Mutex<DispatchSemaphore?>(nil)
    /// How long one write may block before the connection counts as failed, s.
    let writeTimeoutSeconds: Double

    private struct Shared {
        var queue: SendQueue<EncodedFrame>
        var state = State.idle
        var finishing = false
        var sessionStartMicros: UInt64?
        var framesSent = 0
        var bytesSent = 0
        var reconnects = 0
        var publishingSinceMicros: UInt64?
        var lastReason: String?
        var failure: String?
        var window: [(micros: UInt64, bytes: Int)] = []
    }
    private let shared: Mutex<Shared>

    /// - Parameters:
    ///   - name: for logs and `/stats` (`rtmp-1`, `mp4`).
    ///   - targetBitsPerSecond: the encoding's target (shown beside what is sent).
    ///   - queueLimit: frames waiting beyond which stale ones are dropped (30 ≈ 1 s at 30 fps).
    ///   - requestKeyframe: asks the shared encoding for a keyframe (after a connect or a drop).
    public init(
        name: String, target: Target, targetBitsPerSecond: @escaping @Sendable () -> Int, queueLimit: Int = 30, writeTimeoutSeconds: Double = 5,
        logger: Logger, requestKeyframe: @escaping @Sendable () -> Void
    ) {
        self.name = name
        self.target = target
        self.targetBitsPerSecond = targetBitsPerSecond
        self.logger = logger
        self.requestKeyframe = requestKeyframe
        self.writeTimeoutSeconds = writeTimeoutSeconds
        shared = Mutex(Shared(queue: SendQueue(limit: queueLimit)))
    }

    deinit { stop() }

    /// Queues an encoded frame (H.264 Annex B); returns at once. Frames before the first keyframe and frames
    /// the queue's limit drops are counted in ``stats``.
    public func consume(_ frame: EncodedFrame) {
        let outcome = shared.withLock { s -> SendQueue<EncodedFrame>.Outcome? in
            guard !s.finishing, s.state != .failed, s.state != .stopped else { return nil }
            if s.sessionStartMicros == nil { s.sessionStartMicros = frame.captureTimestampMicros }
            return s.queue.push(.init(frame: frame, isKeyframe: frame.isKeyframe, micros: frame.captureTimestampMicros))
        }
        guard let outcome else { return }
        if outcome.needsKeyframe { requestKeyframe() }
        if outcome.dropped > 0 { logger.debug("send queue over its limit: frames dropped", ["dropped": outcome.dropped]) }
        wake.signal()
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

    public var stats: Stats {
        let now = MonotonicMicros.now()
        let target = targetBitsPerSecond()
        return shared.withLock { s in
            s.window.removeAll { $0.micros + 5_000_000 < now }
            let bytes = s.window.reduce(0) { $0 + $1.bytes }
            let span = max(1.0, min(5.0, Double(now - (s.publishingSinceMicros ?? now)) / 1_000_000))
            return Stats(
                state: s.state, queueFrames: s.queue.count, queueMillis: Int(s.queue.spanMicros / 1000),
                sentKbps: Int(Double(bytes) * 8 / span / 1000), targetKbps: target / 1000, framesSent: s.framesSent,
                bytesSent: s.bytesSent, dropped: s.queue.dropped, reconnects: s.reconnects,
                uptimeSeconds: s.publishingSinceMicros.map { Double(now - $0) / 1_000_000 } ?? 0, lastReason: s.lastReason)
        }
    }

    /// `/stats`: state, queue (frames, ms), kbps sent and target, frames, drops, reconnects, uptime, last reason.
    public var json: JSONValue {
        let s = stats
        let destination: String = switch target {
        case .rtmp(let url, _): url.redacted
        case .mp4(let path): path
        }
        return .object([
            ("destination", .string(destination)), ("state", .string(s.state.rawValue)), ("queueFrames", .int(Int64(s.queueFrames))),
            ("queueMs", .int(Int64(s.queueMillis))), ("sentKbps", .int(Int64(s.sentKbps))), ("targetKbps", .int(Int64(s.targetKbps))),
            ("framesSent", .int(Int64(s.framesSent))), ("bytesSent", .int(Int64(s.bytesSent))), ("dropped", .int(Int64(s.dropped))),
            ("reconnects", .int(Int64(s.reconnects))), ("uptimeSeconds", .double((s.uptimeSeconds * 10).rounded() / 10)),
            ("lastReason", s.lastReason.map { .string($0) } ?? .null),
        ])
    }

    // MARK: - The writer's thread

    private func setState(_ state: State) { shared.withLock { $0.state = state } }

    private func run() {
        switch target {
        case .rtmp(let url, let retries): runRTMP(url, retries: retries)
        case .mp4(let path): runFile(path)
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
                let muxer = try AVMuxer(url: url.url, display: url.redacted, format: "flv", gate: gate)
                try publish(muxer, options: [:]) {
                    schedule.succeeded()
                    logger.info("publishing", ["url": url.redacted, "attempt": attempt])
                }
                try? muxer.finish(seconds: 1)
                return  // finishing
            } catch {
                reason = error.description
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

    private func runFile(_ path: String) {
        setState(.connecting)
        do throws(StreamingError) {
            let muxer = try AVMuxer(url: path, display: path, format: "mp4", gate: gate)
            // Fragmented: an empty moov first, then a fragment per second and at each keyframe, flushed to the
            // file as it is written; a kill leaves every complete fragment playable.
            try publish(muxer, options: ["movflags": "frag_keyframe+empty_moov+default_base_moof", "frag_duration": "1000000", "flush_packets": "1"]) {
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

    /// Sequence header, then the first keyframe, then every frame as it comes, until finishing (RTMP: at once;
    /// a file: once the queue is empty) or an error (thrown).
    private func publish(_ muxer: AVMuxer, options: [String: String], published: () -> Void) throws(StreamingError) {
        if shared.withLock({ $0.queue.restartAtKeyframe() }) { requestKeyframe() }
        let drains = if case .mp4 = target { true } else { false }
        guard let first = nextFrame(drains: drains) else { return }
        guard let parameterSets = AnnexB.parameterSets(first.bytes) else { throw .noParameterSets }
        try muxer.writeHeader(width: first.width, height: first.height, parameterSets: parameterSets, options: options)
        try write(first, to: muxer)
        shared.withLock { s in
            s.state = .publishing
            s.publishingSinceMicros = MonotonicMicros.now()
        }
        published()
        while let frame = nextFrame(drains: drains) { try write(frame, to: muxer) }
    }

    /// The next frame to write, waiting for it; nil once finishing (an MP4 writer first takes what waits).
    private func nextFrame(drains: Bool) -> EncodedFrame? {
        while true {
            let (item, finishing) = shared.withLock { s in
                (s.finishing && !drains ? nil : s.queue.pop(), s.finishing)
            }
            if let item { return item.frame }
            if finishing { return nil }
            wake.wait()
        }
    }

    private func write(_ frame: EncodedFrame, to muxer: AVMuxer) throws(StreamingError) {
        let millis = shared.withLock { s -> Int64 in
            let start = s.sessionStartMicros ?? frame.captureTimestampMicros
            return Int64(frame.captureTimestampMicros >= start ? (frame.captureTimestampMicros - start) / 1000 : 0)
        }
        let stamp = monotonic.withLock { last -> Int64 in
            let value = max(millis, (last ?? -1) + 1)
            last = value
            return value
        }
        try muxer.write(frame.bytes, millis: stamp, isKeyframe: frame.isKeyframe, seconds: writeTimeoutSeconds)
        let now = MonotonicMicros.now()
        shared.withLock { s in
            s.framesSent += 1
            s.bytesSent += frame.bytes.count
            s.window.append((now, frame.bytes.count))
            if s.window.count > 600 { s.window.removeFirst(s.window.count - 600) }
        }
    }

    /// The last timestamp written, ms (kept across connections: the stream's time never goes back).
    private let monotonic = Mutex<Int64?>(nil)

    /// Sleeps `millis` unless finishing first; returns true when finishing.
    private func sleepUnlessFinishing(millis: UInt64) -> Bool {
        let deadline = DispatchTime.now() + .milliseconds(Int(millis))
        while !isFinishing {
            if wake.wait(timeout: deadline) == .timedOut { return isFinishing }
        }
        return true
    }
}
