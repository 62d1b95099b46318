public import RTP
public import ScreencastSupport

/// Capture → RTP-sent latency of one peer's frames: from a frame's capture time (the agent's
/// `Buffer-Timestamp`, CLOCK_MONOTONIC µs) to the moment the frame's last RTP packet (the one with the
/// marker bit, RFC 7741 §3.1) left the pacer for the socket. Sans-I/O, a feature of the sender chain: it
/// sees each frame's packets when they are made and is told of each media packet the pacer lets go; it keeps
/// the last ``capacity`` latencies for `/stats` and `tools/bench`.
///
/// Refinement re-encodes and repeats of a still picture carry the time of their re-encode as capture
/// time, so on a still screen the figures mostly measure encode + send.
public struct SendLatency: RTPSenderFeature {
    /// Latencies kept (≈68 s at 30 fps).
    public static let capacity = 2048

    /// Frames queued whose last packet has not left yet: (RTP timestamp, capture µs), oldest first.
    private var waiting: [(rtpTimestamp: UInt32, captureMicros: UInt64)] = []
    private var samples = [UInt32](repeating: 0, count: SendLatency.capacity)
    /// Frames measured so far.
    public private(set) var frames = 0
    /// The sum of every latency measured so far, µs (a Prometheus summary's `_sum`).
    public private(set) var totalMicros: UInt64 = 0

    public init() {}

    /// A frame's packets were queued: it waits for its last packet (the one with the marker).
    public mutating func packetized(_ frame: PacketizedFrame) {
        guard let last = frame.packets.last else { return }
        queued(lastPacket: last, captureMicros: frame.captureMicros)
    }

    /// A frame's packets were queued; its last one is `lastPacket` (plain RTP).
    public mutating func queued(lastPacket: RTPPacket, captureMicros: UInt64) {
        if waiting.count >= 64 { waiting.removeFirst(waiting.count - 63) }  // a pacer that was emptied
        waiting.append((lastPacket.timestamp, captureMicros))
    }

    /// A media packet (plain RTP) was sent at `sentMicros`. Returns the frame's capture time and latency
    /// (µs) when it was a frame's last packet (the marker bit, RFC 7741 §3.1).
    public mutating func sent(_ packet: RTPPacket, sentMicros: UInt64) -> (captureMicros: UInt64, latencyMicros: UInt64)? {
        guard packet.marker, let index = waiting.firstIndex(where: { $0.rtpTimestamp == packet.timestamp }) else { return nil }
        let capture = waiting[index].captureMicros
        waiting.removeFirst(index + 1)
        let latency = sentMicros > capture ? sentMicros - capture : 0
        samples[frames % Self.capacity] = UInt32(clamping: latency)
        frames += 1
        totalMicros &+= latency
        return (capture, latency)
    }

    /// The latencies kept at each quantile `p` (0…1, nearest rank), µs; nil before any frame.
    public func quantilesMicros(_ quantiles: [Double]) -> [UInt64?] {
        let kept = samples[0..<min(frames, Self.capacity)].sorted()
        return quantiles.map { p in
            guard !kept.isEmpty else { return nil }
            return UInt64(kept[max(0, min(kept.count - 1, Int((Double(kept.count) * p).rounded(.up)) - 1))])
        }
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
}
