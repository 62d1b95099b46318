import CongestionControl
import RTP

/// A call in memory: ``SimulatedSender`` → ``BottleneckLink`` → ``SimulatedReceiver``, TWCC feedback back
/// over a path with the same propagation delay and no queue, an RTT fed to the controller once a second
/// (as RTCP reports would), all on one simulated clock stepped every ``Scenario/stepMicros``.
/// Deterministic: the same scenario gives the same run, byte for byte.
public struct CongestionSimulation: Sendable {
    /// A capacity from a time on.
    public struct CapacityStep: Sendable, Equatable {
        public var atMicros: Int64
        public var bitsPerSecond: Int

        public init(atSeconds: Double, bitsPerSecond: Int) {
            atMicros = Int64(atSeconds * 1_000_000)
            self.bitsPerSecond = bitsPerSecond
        }
    }

    public struct Scenario: Sendable, Equatable {
        /// The link's capacity over time; the first step applies from the start.
        public var capacity: [CapacityStep]
        public var link: BottleneckLink.Configuration
        public var sender: SimulatedSender.Configuration
        public var feedbackIntervalMicros: Int64
        public var durationMicros: Int64
        public var stepMicros: Int64 = 250
        public var tickIntervalMicros: Int64 = 25_000
        public var roundTripIntervalMicros: Int64 = 1_000_000

        public init(capacity: [CapacityStep], link: BottleneckLink.Configuration, sender: SimulatedSender.Configuration,
                    feedbackIntervalMicros: Int64 = 100_000, durationSeconds: Double) {
            self.capacity = capacity
            self.link = link
            self.sender = sender
            self.feedbackIntervalMicros = feedbackIntervalMicros
            durationMicros = Int64(durationSeconds * 1_000_000)
        }

        /// The capacity in force at `micros`.
        public func capacity(at micros: Int64) -> Int {
            capacity.last(where: { $0.atMicros <= micros })?.bitsPerSecond ?? capacity.first?.bitsPerSecond ?? 1
        }
    }

    /// One second of the run.
    public struct Second: Sendable, Equatable {
        /// The second's start, s.
        public var second: Int
        /// The link's capacity during the second's last µs, bits/s.
        public var capacityBitsPerSecond: Int
        /// The controller's target at the second's end, bits/s.
        public var targetBitsPerSecond: Int
        /// What reached the receiver during the second, bits/s.
        public var deliveredBitsPerSecond: Int
        public var acknowledgedBitsPerSecond: Int?
        /// The link's queueing delay at the second's end, ms.
        public var queueDelayMillis: Double
        /// Packets the link dropped (queue or random) over those offered, during the second.
        public var linkLossFraction: Double
        public var usage: BandwidthUsage
    }

    /// Something the controller saw, in order (for ``SimulationRecording``).
    public enum Event: Sendable, Equatable {
        case sent(sequenceNumber: UInt16, sizeBytes: Int, atMicros: Int64, probeClusterID: Int?)
        case feedback(compound: [UInt8], atMicros: Int64)
        case roundTrip(micros: Int64)
        case tick(atMicros: Int64)
    }

    public let scenario: Scenario
    public private(set) var sender: SimulatedSender
    public private(set) var link: BottleneckLink
    private var receiver: SimulatedReceiver
    /// Feedback on its way back: (arrival at the sender, bytes, one-way delay of its newest packet).
    private var returning: [(arrival: Int64, compound: [UInt8], oneWay: Int64?)] = []
    private var lastOneWayMicros: Int64?
    /// Every event the controller saw, when recording.
    public private(set) var events: [Event] = []
    private let recording: Bool

    public init(scenario: Scenario, recordEvents: Bool = false) throws(CongestionControlError) {
        self.scenario = scenario
        sender = try SimulatedSender(configuration: scenario.sender, startMicros: 0)
        link = BottleneckLink(configuration: scenario.link, capacityBitsPerSecond: scenario.capacity(at: 0))
        receiver = SimulatedReceiver(intervalMicros: scenario.feedbackIntervalMicros)
        recording = recordEvents
    }

    /// Runs the whole scenario; returns one entry per second.
    public mutating func run() throws(RTPError) -> [Second] {
        var seconds: [Second] = []
        var now: Int64 = 0
        var nextTick: Int64 = 0
        var nextRoundTrip = scenario.roundTripIntervalMicros
        var secondBytes = 0
        var secondOffered = 0
        var secondDropped = 0
        var secondEnd: Int64 = 1_000_000
        while now <= scenario.durationMicros {
            link.capacityBitsPerSecond = scenario.capacity(at: now)
            for delivery in link.deliveries(until: now) {
                try receiver.receive(delivery)
                secondBytes += delivery.bytes.count
            }
            if let feedback = try receiver.feedback(atMicros: now) {
                returning.append((now + scenario.link.propagationMicros, feedback.compound, feedback.oneWayMicros))
            }
            while let first = returning.first, first.arrival <= now {
                returning.removeFirst()
                if let oneWay = first.oneWay { lastOneWayMicros = oneWay }
                if recording { events.append(.feedback(compound: first.compound, atMicros: now)) }
                try sender.onFeedback(first.compound, atMicros: now)
            }
            if now >= nextRoundTrip, let oneWay = lastOneWayMicros {
                let rtt = oneWay + scenario.link.propagationMicros
                if recording { events.append(.roundTrip(micros: rtt)) }
                sender.onRoundTripTime(micros: rtt)
                nextRoundTrip += scenario.roundTripIntervalMicros
            }
            if now >= nextTick {
                if recording { events.append(.tick(atMicros: now)) }
                sender.onTick(atMicros: now)
                nextTick += scenario.tickIntervalMicros
            }
            for packet in try sender.run(until: now) {
                if recording {
                    events.append(.sent(sequenceNumber: packet.sequenceNumber, sizeBytes: packet.bytes.count,
                                        atMicros: now, probeClusterID: packet.probeClusterID))
                }
                secondOffered += 1
                if !link.send(packet.bytes, at: now) { secondDropped += 1 }
            }
            if now + scenario.stepMicros > secondEnd || now == scenario.durationMicros {
                let stats = sender.controller.stats
                seconds.append(Second(
                    second: Int(secondEnd / 1_000_000) - 1, capacityBitsPerSecond: scenario.capacity(at: secondEnd - 1),
                    targetBitsPerSecond: stats.targetBitsPerSecond, deliveredBitsPerSecond: secondBytes * 8,
                    acknowledgedBitsPerSecond: stats.acknowledgedBitsPerSecond,
                    queueDelayMillis: Double(link.queueDelayMicros(at: now)) / 1000,
                    linkLossFraction: secondOffered > 0 ? Double(secondDropped) / Double(secondOffered) : 0,
                    usage: stats.usage))
                secondBytes = 0
                secondOffered = 0
                secondDropped = 0
                secondEnd += 1_000_000
                if secondEnd > scenario.durationMicros + 1_000_000 { break }
            }
            now += scenario.stepMicros
        }
        return seconds
    }
}
