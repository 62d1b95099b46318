public import ScreencastSupport

/// Capture → RTP-sent latency of one peer's frames: from a frame's capture time (the agent's
/// `Buffer-Timestamp`, CLOCK_MONOTONIC µs) to the moment the frame's last RTP packet (the one with the
/// marker bit) was handed to the socket. Sans-I/O: the peer tells it when a frame is queued and when a
/// media packet left; it keeps the last ``capacity`` latencies for `/stats` and `tools/bench`.
///
/// Refinement re-encodes and repeats of a still picture carry the time of their re-encode as capture
/// time, so on a still screen the figures mostly measure encode + send.
public struct SendLatency: Sendable {
    /// Latencies kept (≈68 s at 30 fps).
    public static let capacity = 2048

    /// Frames queued whose last packet has not left yet: (RTP timestamp, capture µs), oldest first.
    private var waiting: [(rtpTimestamp: UInt32, captureMicros: UInt64)] = []
    private var samples = [UInt32](repeating: 0, count: SendLatency.capacity)
    /// Frames measured so far.
    public private(set) var frames = 0

    public init() {}

    /// A frame's packets were queued; its last one is `lastPacket` (plain RTP).
    public mutating func queued(lastPacket: [UInt8], captureMicros: UInt64) {
        guard let timestamp = Self.rtpTimestamp(lastPacket) else { return }
        if waiting.count >= 64 { waiting.removeFirst(waiting.count - 63) }  // a pacer that was emptied
        waiting.append((timestamp, captureMicros))
    }

    /// A media packet (plain RTP) was sent at `sentMicros`. Returns the frame's capture time and latency
    /// (µs) when it was a frame's last packet.
    public mutating func sent(_ packet: [UInt8], sentMicros: UInt64) -> (captureMicros: UInt64, latencyMicros: UInt64)? {
        guard Self.isLastOfFrame(packet), let timestamp = Self.rtpTimestamp(packet),
              let index = waiting.firstIndex(where: { $0.rtpTimestamp == timestamp })
        else { return nil }
        let capture = waiting[index].captureMicros
        waiting.removeFirst(index + 1)
        let latency = sentMicros > capture ? sentMicros - capture : 0
        samples[frames % Self.capacity] = UInt32(clamping: latency)
        frames += 1
        return (capture, latency)
    }

    /// `{"frames", "p50", "p95", "p99", "max"}` in milliseconds over the kept latencies (nulls before any).
    public var json: JSONValue {
        let kept = samples[0..<min(frames, Self.capacity)].sorted()
        func at(_ p: Double) -> JSONValue {
            guard !kept.isEmpty else { return .null }
            let index = min(kept.count - 1, Int((Double(kept.count) * p).rounded(.up)) - 1)
            return .double((Double(kept[max(0, index)]) / 10).rounded() / 100)
        }
        return .object([("frames", .number(frames)), ("p50", at(0.5)), ("p95", at(0.95)), ("p99", at(0.99)), ("max", at(1))])
    }

    /// True for an RTP packet with the marker bit: the last packet of a video frame (RFC 7741 §3.1).
    public static func isLastOfFrame(_ packet: [UInt8]) -> Bool { packet.count >= 12 && packet[1] & 0x80 != 0 }

    private static func rtpTimestamp(_ packet: [UInt8]) -> UInt32? {
        guard packet.count >= 12 else { return nil }
        return UInt32(packet[4]) << 24 | UInt32(packet[5]) << 16 | UInt32(packet[6]) << 8 | UInt32(packet[7])
    }
}
