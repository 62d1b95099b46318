import Foundation
public import ScreencastSupport

/// A destination's numbers: for `/stats`, its text summary and the stats line.
extension StreamWriter {
    /// Its numbers now.
    public struct Stats: Sendable {
        public var state: State
        public var queueFrames: Int
        public var queueMillis: Int
        /// Bits sent over the last 5 s (pictures and sound), kbit/s; the encoding's target, kbit/s.
        public var sentKbps: Int
        public var targetKbps: Int
        /// Pictures written over the last 5 s a second; the shared encoder's frames a second.
        public var sentFps: Double
        public var encoderFps: Double
        public var framesSent: Int
        public var bytesSent: Int
        /// Pictures dropped by the send queue.
        public var dropped: Int
        /// AAC frames written, waiting, and dropped (with the pictures of their time, or before a connection's
        /// first picture).
        public var audioFramesSent: Int
        public var audioQueueFrames: Int
        public var droppedAudio: Int
        public var reconnects: Int
        /// Seconds since the current connection began publishing; 0 when not publishing.
        public var uptimeSeconds: Double
        public var lastReason: String?
    }

    public var stats: Stats {
        let now = MonotonicMicros.now()
        let target = targetBitsPerSecond()
        let encoderFps = encoderFramesPerSecond()
        return shared.withLock { s in
            s.window.removeAll { $0.micros + 5_000_000 < now }
            let bytes = s.window.reduce(0) { $0 + $1.bytes }
            let span = max(1.0, min(5.0, Double(now - (s.publishingSinceMicros ?? now)) / 1_000_000))
            return Stats(
                state: s.state, queueFrames: s.queue.count, queueMillis: Int(s.queue.spanMicros / 1000),
                sentKbps: Int(Double(bytes) * 8 / span / 1000), targetKbps: target / 1000,
                sentFps: Double(s.window.filter(\.isVideo).count) / span, encoderFps: encoderFps, framesSent: s.framesSent,
                bytesSent: s.bytesSent, dropped: s.queue.dropped, audioFramesSent: s.audioFramesSent,
                audioQueueFrames: s.queue.audioItems.count, droppedAudio: s.queue.droppedAudio, reconnects: s.reconnects,
                uptimeSeconds: s.publishingSinceMicros.map { Double(now - $0) / 1_000_000 } ?? 0, lastReason: s.lastReason)
        }
    }

    /// `/stats`: state, queue (frames, ms), kbps sent and target, frames, drops, reconnects, uptime, last reason.
    public var json: JSONValue {
        let s = stats
        let destination: String = switch target {
        case .rtmp(let url, _): url.redacted
        case .mp4(let path), .webm(let path): path
        }
        return .object([
            ("destination", .string(destination)), ("state", .string(s.state.rawValue)), ("queueFrames", .int(Int64(s.queueFrames))),
            ("queueMs", .int(Int64(s.queueMillis))), ("sentKbps", .int(Int64(s.sentKbps))), ("targetKbps", .int(Int64(s.targetKbps))),
            ("sentFps", .double((s.sentFps * 10).rounded() / 10)), ("encoderFps", .double((s.encoderFps * 10).rounded() / 10)),
            ("framesSent", .int(Int64(s.framesSent))), ("bytesSent", .int(Int64(s.bytesSent))), ("dropped", .int(Int64(s.dropped))),
            ("audioFramesSent", .int(Int64(s.audioFramesSent))), ("audioQueueFrames", .int(Int64(s.audioQueueFrames))),
            ("droppedAudio", .int(Int64(s.droppedAudio))), ("reconnects", .int(Int64(s.reconnects))), ("uptimeSeconds", .double((s.uptimeSeconds * 10).rounded() / 10)),
            ("lastReason", s.lastReason.map { .string($0) } ?? .null),
        ])
    }

    /// The stats line (every `--stats-interval`, and at the end): state, queue in frames and ms, kbit/s sent
    /// against the target, the encoder's and the sent frame rates, drops, reconnects, uptime.
    public func logStats(final: Bool = false) {
        let s = stats
        logger.info(final ? "final" : "stats", [
            "state": s.state.rawValue, "queue.frames": s.queueFrames, "queue.ms": s.queueMillis, "kbps": s.sentKbps,
            "kbps.target": s.targetKbps, "fps.encoder": String(format: "%.1f", s.encoderFps), "fps.sent": String(format: "%.1f", s.sentFps),
            "dropped": s.dropped, "dropped.audio": s.droppedAudio, "audio.sent": s.audioFramesSent, "reconnects": s.reconnects,
            "uptime.s": Int(s.uptimeSeconds),
        ])
    }
}
