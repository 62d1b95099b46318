/// The receiver's half of transport-wide congestion control: records when each transport-wide sequence
/// number arrived and sends ``RTCPTransportFeedback`` for them every ``Configuration/intervalMicros``
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3; libwebrtc's `RemoteEstimatorProxy` in its periodic
/// mode, Janus's `twcc_period`). A sans-I/O value: the caller passes arrival and current times (µs of any
/// monotonic clock) and sends the packets returned.
///
/// - Each feedback covers the numbers from the first not yet reported to the highest received, lost ones
///   as not received; a packet that arrives after it was reported lost is reported again, with the ones after
///   it (the sender keeps the first arrival it learns). Arrivals more than ``Configuration/historyPackets``
///   numbers behind the reported edge are dropped as too late.
/// - The reference time is the first received packet's arrival rounded down to 64 ms; deltas are rounded to
///   250 µs. A delta that does not fit 16 signed bits (8.2 s) or ``Configuration/maxPacketsPerFeedback``
///   statuses (counted from the packet's first arrival) end a packet and the rest goes into the next one.
/// - A jump of more than ``maxSpan`` numbers past the oldest unreported one gives the skipped ones up.
public struct TransportFeedbackGenerator: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Our SSRC, written as the packet sender.
        public var senderSSRC: UInt32
        /// The media SSRC written in the feedback (libwebrtc writes the first media SSRC it saw; any is fine).
        public var mediaSSRC: UInt32
        /// Time between feedback packets, µs (default 100 ms; Chromium sends at least every 250 ms, Janus every 200).
        public var intervalMicros: Int64
        /// Most packet statuses in one feedback packet from its first received packet on (default 400: under
        /// 1000 bytes whatever the deltas); the losses before that one are reported in the same packet, whatever
        /// their number, in run-length chunks of up to 8191 each.
        public var maxPacketsPerFeedback: Int
        /// Reported arrivals kept to re-report when an older packet arrives late (default 1024).
        public var historyPackets: Int

        public init(
            senderSSRC: UInt32, mediaSSRC: UInt32, intervalMicros: Int64 = 100_000, maxPacketsPerFeedback: Int = 400,
            historyPackets: Int = 1024
        ) {
            self.senderSSRC = senderSSRC
            self.mediaSSRC = mediaSSRC
            self.intervalMicros = max(1, intervalMicros)
            self.maxPacketsPerFeedback = min(max(1, maxPacketsPerFeedback), Int(UInt16.max))
            self.historyPackets = max(0, historyPackets)
        }
    }

    /// Counters for stats and tests.
    public struct Statistics: Sendable, Equatable {
        /// Arrivals recorded (duplicates and too-late ones excluded).
        public var packetsRecorded = 0
        /// Arrivals of a number already recorded.
        public var duplicates = 0
        /// Arrivals older than the history kept, dropped.
        public var tooLate = 0
        /// Feedback packets made.
        public var feedbackPackets = 0
    }

    /// The most sequence numbers between the oldest unreported one and the newest (beyond it the oldest are
    /// given up).
    public static let maxSpan: Int64 = 1 << 14

    public let configuration: Configuration
    public private(set) var statistics = Statistics()

    private var unwrapper = SequenceNumberUnwrapper()
    /// Arrival µs per extended number from `windowStart`; `notReceived` where none arrived.
    private var arrivals: [Int64] = []
    private var windowStart: Int64 = 0
    /// The first extended number the next feedback reports.
    private var nextToReport: Int64 = 0
    private var lastFeedbackMicros: Int64?
    private var feedbackPacketCount: UInt8 = 0
    private static let notReceived = Int64.min

    public init(configuration: Configuration) { self.configuration = configuration }

    /// The highest extended number recorded plus one.
    private var windowEnd: Int64 { windowStart + Int64(arrivals.count) }

    /// Records that transport-wide sequence number `sequenceNumber` arrived at `arrivalMicros`.
    public mutating func record(sequenceNumber: UInt16, arrivalMicros: Int64) {
        let extended = unwrapper.unwrap(sequenceNumber)
        if lastFeedbackMicros == nil {
            lastFeedbackMicros = arrivalMicros
            windowStart = extended
            nextToReport = extended
        }
        guard extended >= nextToReport - Int64(configuration.historyPackets) else {
            statistics.tooLate += 1
            return
        }
        if extended < windowStart {
            // Older than any kept (e.g. reordered before the first packet seen): extend the window back.
            arrivals.insert(contentsOf: repeatElement(Self.notReceived, count: Int(windowStart - extended)), at: 0)
            windowStart = extended
        }
        if extended >= windowEnd {
            arrivals.append(contentsOf: repeatElement(Self.notReceived, count: Int(extended - windowEnd) + 1))
        }
        let index = Int(extended - windowStart)
        guard arrivals[index] == Self.notReceived else {
            statistics.duplicates += 1
            return
        }
        arrivals[index] = arrivalMicros
        statistics.packetsRecorded += 1
        nextToReport = min(nextToReport, extended)
        if windowEnd - nextToReport > Self.maxSpan { nextToReport = windowEnd - Self.maxSpan }
        prune()
    }

    /// When the next feedback is due (µs), or nil when there is nothing to report.
    public var nextFeedbackMicros: Int64? {
        guard let lastFeedbackMicros, nextToReport < windowEnd else { return nil }
        return lastFeedbackMicros + configuration.intervalMicros
    }

    /// The feedback due at `nowMicros`: empty before ``nextFeedbackMicros``, else the packets reporting
    /// everything received since the last ones.
    public mutating func feedback(nowMicros: Int64) -> [RTCPTransportFeedback] {
        guard let due = nextFeedbackMicros, nowMicros >= due else { return [] }
        return flush(nowMicros: nowMicros)
    }

    /// Feedback for everything not yet reported, whatever the interval (e.g. before closing).
    public mutating func flush(nowMicros: Int64) -> [RTCPTransportFeedback] {
        var packets: [RTCPTransportFeedback] = []
        while nextToReport < windowEnd, let packet = makePacket() { packets.append(packet) }
        if !packets.isEmpty { lastFeedbackMicros = nowMicros }
        statistics.feedbackPackets += packets.count
        prune()
        return packets
    }

    /// One packet from `nextToReport` on; moves `nextToReport` past what it covers.
    private mutating func makePacket() -> RTCPTransportFeedback? {
        let start = Int(nextToReport - windowStart)
        guard let firstReceived = arrivals[start...].firstIndex(where: { $0 != Self.notReceived }) else {
            nextToReport = windowEnd
            return nil
        }
        let referenceTicks = Self.floorDivide(arrivals[firstReceived], RTCPTransportFeedback.referenceTimeMicros)
        var cursor = referenceTicks * RTCPTransportFeedback.referenceTimeMicros
        var statuses: [RTCPTransportFeedback.PacketStatus] = []
        statuses.reserveCapacity(min(arrivals.count - start, configuration.maxPacketsPerFeedback))
        var index = start
        // The cap counts from the first received packet: a loss burst before it longer than the cap would
        // otherwise leave a packet of losses only, trimmed to nothing, and no feedback ever again.
        while index < arrivals.count, index - firstReceived < configuration.maxPacketsPerFeedback,
              statuses.count < Int(UInt16.max) {
            let arrival = arrivals[index]
            if arrival == Self.notReceived {
                statuses.append(.notReceived)
            } else {
                let ticks = Self.roundedTicks(arrival - cursor)
                guard let delta = Int16(exactly: ticks) else { break }
                statuses.append(.received(delta: delta))
                cursor += ticks * RTCPTransportFeedback.deltaMicros
            }
            index += 1
        }
        // Trailing not-received statuses can only come from the cap; they go into the next packet.
        while case .notReceived? = statuses.last { statuses.removeLast() }
        nextToReport = windowStart + Int64(start + statuses.count)
        let wrapped = Int32(truncatingIfNeeded: referenceTicks & 0xFF_FFFF)
        guard let packet = try? RTCPTransportFeedback(
            senderSSRC: configuration.senderSSRC, mediaSSRC: configuration.mediaSSRC,
            baseSequenceNumber: UInt16(truncatingIfNeeded: nextToReport - Int64(statuses.count)),
            referenceTime: wrapped >= 1 << 23 ? wrapped - (1 << 24) : wrapped,
            feedbackPacketCount: feedbackPacketCount, statuses: statuses)
        else { return nil }
        feedbackPacketCount &+= 1  // only for a packet made: a gap in the count reads as lost feedback
        return packet
    }

    /// Drops arrivals more than the history behind what was reported.
    private mutating func prune() {
        let keepFrom = nextToReport - Int64(configuration.historyPackets)
        let excess = Int(keepFrom - windowStart)
        // Amortized: drop in batches of at least the history size.
        guard excess > max(64, configuration.historyPackets) else { return }
        arrivals.removeFirst(excess)
        windowStart += Int64(excess)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
    }

    /// `micros` in 250 µs ticks, rounded half away from zero.
    private static func roundedTicks(_ micros: Int64) -> Int64 {
        let half = RTCPTransportFeedback.deltaMicros / 2
        return (micros >= 0 ? micros + half : micros - half) / RTCPTransportFeedback.deltaMicros
    }
}
