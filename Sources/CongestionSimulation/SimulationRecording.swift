import CongestionControl
import RTP

/// What the congestion controller saw in a run — packets sent, feedback received (the RTCP bytes), RTTs,
/// ticks — as text, one event a line, so a run can be kept as a fixture and replayed into a fresh
/// controller (``replay(_:configuration:)``) whatever later changes to the simulator:
/// ```
/// # comment lines (how the recording was made)
/// config <min bits/s> <start bits/s> <max bits/s>
/// s <µs> <transport-wide seq> <bytes> [<probe cluster id>]
/// f <µs> <feedback compound, hex>
/// r <RTT µs>
/// t <µs>
/// ```
public struct SimulationRecording: Sendable, Equatable {
    /// Why a recording could not be read: the line (1-based) and what was wrong.
    public struct ReadError: Error, Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var reason: String
        public var description: String { "recording line \(line): \(reason)" }
    }

    public var comments: [String]
    public var configuration: SendSideCongestionController.Configuration
    public var events: [CongestionSimulation.Event]

    public init(comments: [String], configuration: SendSideCongestionController.Configuration, events: [CongestionSimulation.Event]) {
        self.comments = comments
        self.configuration = configuration
        self.events = events
    }

    /// The recording as text.
    public var text: String {
        var lines = comments.map { "# \($0)" }
        lines.append("config \(configuration.minBitsPerSecond) \(configuration.startBitsPerSecond) \(configuration.maxBitsPerSecond)")
        for event in events {
            switch event {
            case .sent(let sequence, let size, let at, let cluster):
                lines.append("s \(at) \(sequence) \(size)" + (cluster.map { " \($0)" } ?? ""))
            case .feedback(let compound, let at):
                lines.append("f \(at) " + compound.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())
            case .roundTrip(let micros): lines.append("r \(micros)")
            case .tick(let at): lines.append("t \(at)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads a recording written by ``text``.
    public init(parsing text: String) throws(ReadError) {
        comments = []
        events = []
        var configuration: SendSideCongestionController.Configuration?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where !line.isEmpty {
            let number = index + 1
            if line.hasPrefix("#") {
                comments.append(String(line.dropFirst(line.hasPrefix("# ") ? 2 : 1)))
                continue
            }
            let fields = line.split(separator: " ")
            func integer(_ position: Int) throws(ReadError) -> Int64 {
                guard position < fields.count, let value = Int64(fields[position]) else {
                    throw ReadError(line: number, reason: "field \(position + 1) is not an integer")
                }
                return value
            }
            switch fields.first {
            case "config":
                configuration = .init(minBitsPerSecond: Int(try integer(1)), startBitsPerSecond: Int(try integer(2)),
                                      maxBitsPerSecond: Int(try integer(3)))
            case "s":
                guard (4...5).contains(fields.count), let sequence = UInt16(exactly: try integer(2)) else {
                    throw ReadError(line: number, reason: "a send needs µs, a 16-bit sequence number, bytes, [cluster]")
                }
                events.append(.sent(sequenceNumber: sequence, sizeBytes: Int(try integer(3)), atMicros: try integer(1),
                                    probeClusterID: fields.count == 5 ? Int(try integer(4)) : nil))
            case "f":
                guard fields.count == 3, let bytes = Self.bytes(hex: fields[2]) else {
                    throw ReadError(line: number, reason: "feedback needs µs and an even number of hex digits")
                }
                events.append(.feedback(compound: bytes, atMicros: try integer(1)))
            case "r": events.append(.roundTrip(micros: try integer(1)))
            case "t": events.append(.tick(atMicros: try integer(1)))
            default: throw ReadError(line: number, reason: "unknown event '\(fields.first ?? "")'")
            }
        }
        guard let configuration else { throw ReadError(line: 0, reason: "no config line") }
        self.configuration = configuration
    }

    /// One decision of a replayed controller.
    public struct Decision: Sendable, Equatable {
        public var atMicros: Int64
        public var stats: CongestionControlStats
        public var probes: [ProbeCluster]
    }

    /// Feeds the events into a fresh controller; returns its state after the start, after every feedback and
    /// tick, and after the last event.
    public static func replay(_ events: [CongestionSimulation.Event], configuration: SendSideCongestionController.Configuration)
        throws -> [Decision]
    {
        var controller = try SendSideCongestionController(configuration: configuration)
        var decisions: [Decision] = []
        let first = controller.start(atMicros: 0)
        decisions.append(Decision(atMicros: 0, stats: controller.stats, probes: first.probes))
        for event in events {
            switch event {
            case .sent(let sequence, let size, let at, let cluster):
                controller.onPacketSent(sequenceNumber: sequence, sizeBytes: size, atMicros: at, probeClusterID: cluster)
            case .feedback(let compound, let at):
                var probes: [ProbeCluster] = []
                for feedback in try RTCPTransportFeedback.packets(inCompound: compound) {
                    probes += controller.onTransportFeedback(feedback, atMicros: at).probes
                }
                decisions.append(Decision(atMicros: at, stats: controller.stats, probes: probes))
            case .roundTrip(let micros): controller.onRoundTripTime(micros: micros)
            case .tick(let at):
                let update = controller.onTick(atMicros: at)
                decisions.append(Decision(atMicros: at, stats: controller.stats, probes: update.probes))
            }
        }
        decisions.append(Decision(atMicros: decisions.last?.atMicros ?? 0, stats: controller.stats, probes: []))
        return decisions
    }

    private static func bytes(hex: Substring) -> [UInt8]? {
        guard hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
