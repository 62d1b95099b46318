import RTP

/// What one feedback packet says about one packet we sent.
public struct PacketResult: Sendable, Equatable {
    public var sent: SentPacket
    /// When it arrived, µs, on our clock's scale (the receiver's clock shifted so that its first feedback's
    /// reference time falls on the moment that feedback reached us; only differences are meaningful), or nil
    /// when the receiver reports it lost.
    public var arrivalMicros: Int64?

    public init(sent: SentPacket, arrivalMicros: Int64?) {
        self.sent = sent
        self.arrivalMicros = arrivalMicros
    }
}

/// One feedback packet turned into per-packet results (libwebrtc's `TransportPacketsFeedback`).
public struct TransportPacketsFeedback: Sendable, Equatable {
    /// When the feedback reached us, µs.
    public var feedbackTimeMicros: Int64
    /// Results for packets not reported before, in sequence order: received ones the first time they are
    /// reported received, lost ones the first time they are reported lost.
    public var results: [PacketResult]
    /// Bytes sent and not yet reported, before this feedback.
    public var priorBytesInFlight: Int

    /// The received results ordered by arrival time (ties by sequence), for the delay-based estimator.
    public var receivedByArrival: [PacketResult] {
        results.filter { $0.arrivalMicros != nil }.sorted {
            ($0.arrivalMicros!, $0.sent.sequenceNumber) < ($1.arrivalMicros!, $1.sent.sequenceNumber)
        }
    }

    /// Results reported lost.
    public var lostCount: Int { results.reduce(0) { $0 + ($1.arrivalMicros == nil ? 1 : 0) } }
}

/// Matches TWCC feedback (``RTCPTransportFeedback``) against the packets sent (libwebrtc's
/// `TransportFeedbackAdapter`): unwraps the 24-bit reference time (64 ms units, wrapping after 12.4 days)
/// against the previous feedback, maps the receiver's arrival times onto our clock's scale, and drops what
/// it cannot place (numbers never sent or long replaced; feedback repeating what we already know).
struct TransportFeedbackAdapter: Sendable {
    struct Counters: Sendable, Equatable {
        /// Feedback packets read.
        var feedbackPackets = 0
        /// Feedback packets the receiver sent that never reached us (from the gaps in their count).
        var feedbackPacketsMissed = 0
        /// Statuses about numbers we have no record of.
        var unknownPackets = 0
    }

    private(set) var history: SentPacketHistory
    private(set) var counters = Counters()
    /// The last reference time, unwrapped, in 64 ms ticks.
    private var lastReferenceTicks: Int64?
    /// Added to the receiver's µs to land on our scale.
    private var offsetMicros: Int64 = 0
    private var lastFeedbackCount: UInt8?

    init(historyCapacity: Int = SentPacketHistory.defaultCapacity) {
        history = SentPacketHistory(capacity: historyCapacity)
    }

    mutating func onPacketSent(sequenceNumber: UInt16, sendTimeMicros: Int64, sizeBytes: Int, probeClusterID: Int?) {
        history.record(sequenceNumber: sequenceNumber, sendTimeMicros: sendTimeMicros, sizeBytes: sizeBytes,
                       probeClusterID: probeClusterID)
    }

    /// A new path: nothing sent counts as in flight (``SentPacketHistory/forgetInFlight()``).
    mutating func forgetInFlight() { history.forgetInFlight() }

    mutating func adapt(_ feedback: RTCPTransportFeedback, receivedAtMicros now: Int64) -> TransportPacketsFeedback {
        counters.feedbackPackets += 1
        if let last = lastFeedbackCount {
            // A gap of half the circle or more is a repeated or reordered feedback, not 128+ lost ones; it does
            // not move the count back either (the next in-order feedback would count false losses).
            let gap = Int(feedback.feedbackPacketCount &- last &- 1)
            if gap < 128 {
                counters.feedbackPacketsMissed += gap
                lastFeedbackCount = feedback.feedbackPacketCount
            }
        } else {
            lastFeedbackCount = feedback.feedbackPacketCount
        }

        let ticks = Int64(feedback.referenceTime)
        let referenceTicks: Int64
        if let last = lastReferenceTicks {
            // The shortest way round the 24-bit circle from the last reference time.
            var delta = (ticks - last) & 0xFF_FFFF
            if delta >= 1 << 23 { delta -= 1 << 24 }
            referenceTicks = last + delta
        } else {
            referenceTicks = ticks
            offsetMicros = now - ticks * RTCPTransportFeedback.referenceTimeMicros
        }
        lastReferenceTicks = referenceTicks
        let shift = offsetMicros + (referenceTicks - ticks) * RTCPTransportFeedback.referenceTimeMicros

        var output = TransportPacketsFeedback(feedbackTimeMicros: now, results: [], priorBytesInFlight: history.bytesInFlight)
        output.results.reserveCapacity(Int(feedback.packetStatusCount))
        feedback.forEachPacket { sequenceNumber, arrival in
            let extended = history.unwrap(sequenceNumber)
            guard let (packet, outcome) = history.lookup(extended) else {
                counters.unknownPackets += 1
                return
            }
            if let arrival {
                guard outcome != .received else { return }
                history.mark(extended, .received)
                output.results.append(PacketResult(sent: packet, arrivalMicros: arrival + shift))
            } else {
                guard outcome == .unacknowledged else { return }
                history.mark(extended, .reportedLost)
                output.results.append(PacketResult(sent: packet, arrivalMicros: nil))
            }
        }
        return output
    }
}
