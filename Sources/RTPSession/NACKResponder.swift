import Glibc
public import RTP

/// Answers the receiver's generic NACKs (RFC 4585 §6.2.1) from a history of what was sent: RTX packets
/// (RFC 4588 §4) when RTX was negotiated, else the packets as they were.
///
/// ```
///   sent (as it leaves the pacer) ──▶ history (kept max(1 s, 3 RTT), RTPPacketHistory) ◀── NACK (our SSRC) ──┐
///   RR/SR RTT ──▶ history window, resend interval (once per RTT, 5…500 ms)                │
///   retransmissions (RTX-wrapped, twice on a lossy link) ──▶ budget ──▶ the pacer, ahead of media ◀───┘
/// ```
///
/// Repair is bounded (``RetransmissionBudget``): with a rate set (``setRetransmissionRate(bitsPerSecond:)``:
/// the congestion target, else the receiver's REMB), what is resent over the last 500 ms stays within it; a
/// NACKed packet over the budget is not marked as resent, so the receiver's next NACK can still have it.
///
/// Loss seen lately: ``Statistics/lossEstimate`` adds 1/50 per NACKed sequence number and decays by 1/50 per
/// media packet sent, so it is known before the receiver's first report and is not reset by a quiet one.
/// At or above ``Configuration/duplicatesAboveLoss`` (or the receiver's reported fraction lost), each
/// retransmission goes twice: on such a link a lone one is itself lost often enough, and receivers that
/// NACK a packet only once (aiortc) then stall until their next loss.
public struct NACKResponder: RTPSenderFeature {
    /// What the responder needs of the stream.
    public struct Configuration: Sendable, Equatable {
        /// The media SSRC the NACKs must name.
        public var ssrc: UInt32
        /// The RTX stream when negotiated; nil resends plainly.
        public var rtx: RTXStream?
        /// The RTX stream's first sequence number (RFC 4588 §4: random).
        public var initialRTXSequenceNumber: UInt16
        /// The history keeps packets max(`historyMinimumMilliseconds`, 3 × RTT) after they were sent, ms.
        public var historyMinimumMilliseconds: UInt64
        /// Hard limits on what the history holds, whatever the window (packets rounded up to a power of two).
        public var historyPackets: Int
        public var historyBytes: Int
        /// Loss (0…1) from which every retransmission is sent twice; nil: always once.
        public var duplicatesAboveLoss: Double?

        public init(
            ssrc: UInt32, rtx: RTXStream? = nil, initialRTXSequenceNumber: UInt16 = 0,
            historyMinimumMilliseconds: UInt64 = RTPPacketHistory.defaultMinimumWindowMilliseconds,
            historyPackets: Int = RTPPacketHistory.defaultCapacity, historyBytes: Int = RTPPacketHistory.defaultMaxBytes,
            duplicatesAboveLoss: Double? = 0.02
        ) {
            self.ssrc = ssrc
            self.rtx = rtx
            self.initialRTXSequenceNumber = initialRTXSequenceNumber
            self.historyMinimumMilliseconds = historyMinimumMilliseconds
            self.historyPackets = historyPackets
            self.historyBytes = historyBytes
            self.duplicatesAboveLoss = duplicatesAboveLoss
        }
    }

    public struct Statistics: Sendable, Equatable {
        /// Generic NACK packets received about our SSRC.
        public var nacksReceived = 0
        /// Sequence numbers they named.
        public var packetsNacked = 0
        /// Packets resent (RTX or as they were), and their RTP bytes.
        public var packetsRetransmitted = 0
        public var bytesRetransmitted = 0
        /// Second copies sent because the link is lossy.
        public var duplicateRetransmissions = 0
        /// NACKed packets no longer held, or resent too recently.
        public var retransmissionsSkipped = 0
        /// NACKed packets held but not resent because repair had spent its budget (second copies not counted).
        public var retransmissionsOverBudget = 0
        /// Recent loss, 0…1 (see the type's description).
        public var lossEstimate = 0.0

        public init() {}
    }

    /// The weight of one packet in ``Statistics/lossEstimate``.
    public static let lossAveraging = 1.0 / 50

    public let configuration: Configuration
    public private(set) var statistics = Statistics()
    private var history: RTPPacketHistory
    private var rtx: RTXPacketizer?
    /// What repair may send (unbounded until a rate is set).
    public private(set) var budget = RetransmissionBudget()
    /// How far back from the newest packet the next redundant (probe) packet is taken.
    private var redundantCursor = 0

    public init(configuration: Configuration) {
        self.configuration = configuration
        history = RTPPacketHistory(
            ssrc: configuration.ssrc, capacity: configuration.historyPackets, maxBytes: configuration.historyBytes,
            minimumWindowMilliseconds: configuration.historyMinimumMilliseconds)
        rtx = configuration.rtx.map {
            RTXPacketizer(ssrc: $0.ssrc, payloadType: $0.payloadType, initialSequenceNumber: configuration.initialRTXSequenceNumber)
        }
    }

    /// Packets and bytes (serialized, plain RTP) the history holds now.
    public var historyPacketCount: Int { history.count }
    public var historyByteCount: Int { history.bytes }

    /// Keeps the frame's packets as sent at the frame's time (ms precision), and lets the loss estimate decay.
    public mutating func packetized(_ frame: PacketizedFrame) {
        for packet in frame.packets { sent(packet, nowMicros: frame.nowMicros) }
    }

    /// Keeps one media packet as it leaves the pacer at `now` (the history's window counts from here: a
    /// keyframe paced at a low estimate leaves over seconds, and its last packets must still be held a
    /// round trip after they went), and lets the loss estimate decay.
    public mutating func sent(_ packet: RTPPacket, nowMicros now: UInt64) {
        try? history.insert(packet, sentMilliseconds: now / 1000)
        statistics.lossEstimate *= 1 - Self.lossAveraging
    }

    /// The most packets back from the newest one that probe padding resends (libwebrtc's payload padding
    /// also picks among the last few packets sent).
    public static let redundantWindow = 16

    /// Whether ``redundantPacket()`` can give a packet: RTX was negotiated and the history holds one.
    public var canSendRedundant: Bool { rtx != nil && history.count > 0 }
    /// Whether ``paddingPacket(bytes:)`` can give a packet: RTX was negotiated.
    public var canSendPadding: Bool { rtx != nil }

    /// Probe padding as RTX redundant payload (RFC 4588 §4): one of the last ``redundantWindow`` packets sent,
    /// newest first and cycling, wrapped in a fresh RTX packet; nil without RTX or history. The receiver
    /// already has the original and drops the copy, but counts it in its transport-wide feedback, so the
    /// probe measures the path with useful-sized packets instead of padding-only ones (at most 255 bytes).
    public mutating func redundantPacket() -> RTPPacket? {
        guard rtx != nil, let newest = history.newestSequenceNumber else { return nil }
        for _ in 0..<Self.redundantWindow {
            let sequence = newest &- UInt16(redundantCursor)
            redundantCursor = (redundantCursor + 1) % Self.redundantWindow
            if let original = history.packet(sequenceNumber: sequence) { return rtx!.wrap(original) }
        }
        redundantCursor = 0
        return history.packet(sequenceNumber: newest).map { rtx!.wrap($0) }
    }

    /// Probe padding as an RTX padding-only packet of `bytes` (1…255) of padding, timestamped as the newest
    /// packet sent; nil without RTX.
    public mutating func paddingPacket(bytes: Int) -> RTPPacket? {
        guard rtx != nil else { return nil }
        let timestamp = history.newestSequenceNumber.flatMap { history.packet(sequenceNumber: $0)?.timestamp } ?? 0
        return rtx!.padding(bytes: bytes, timestamp: timestamp)
    }

    /// Bounds retransmissions to `bitsPerSecond` over the budget's window (nil: unbounded).
    public mutating func setRetransmissionRate(bitsPerSecond: UInt64?) { budget.setRate(bitsPerSecond: bitsPerSecond) }

    /// Reads the RTT of report blocks (the history keeps 3 RTTs: a NACK cannot come back sooner than one),
    /// and answers NACKs about our SSRC.
    public mutating func receive(_ packet: RTCPPacket, context: inout FeedbackContext) {
        switch packet {
        case .receiverReport, .senderReport:
            if let rtt = context.link.roundTripMillis { history.roundTripMilliseconds = UInt64(rtt.rounded(.up)) }
        case .nack(let nack):
            guard nack.mediaSSRC == configuration.ssrc else {
                context.ignored += 1
                return
            }
            statistics.nacksReceived += 1
            retransmit(nack.sequenceNumbers, context: &context)
        default: break
        }
    }

    /// Resends what the history still holds, at most once per RTT for each packet, within the budget.
    private mutating func retransmit(_ sequenceNumbers: [UInt16], context: inout FeedbackContext) {
        let interval = UInt64(max(5, min(context.link.roundTripMillis ?? 20, 500)))
        statistics.lossEstimate = min(1, statistics.lossEstimate + Double(sequenceNumbers.count) * Self.lossAveraging)
        let loss = max(statistics.lossEstimate, context.link.fractionLost ?? 0)
        let copies = configuration.duplicatesAboveLoss.map { loss >= $0 ? 2 : 1 } ?? 1
        let now = context.nowMicros
        // RTX adds the original sequence number (2 bytes) to the payload.
        let overhead = rtx != nil ? 2 : 0
        var budget = self.budget  // the closure below must not capture self while the history is being modified
        defer { self.budget = budget }
        for sequence in sequenceNumbers {
            statistics.packetsNacked += 1
            var overBudget = false
            guard let original = history.retransmission(
                of: sequence, nowMilliseconds: now / 1000, minimumIntervalMilliseconds: interval,
                admit: { packet in
                    overBudget = !budget.tryUse(bytes: packet.serializedSize + overhead, nowMicros: now)
                    return !overBudget
                })
            else {
                if overBudget { statistics.retransmissionsOverBudget += 1 } else { statistics.retransmissionsSkipped += 1 }
                continue
            }
            statistics.packetsRetransmitted += 1
            for copy in 0..<copies {
                // A second copy only while the budget has room for it too.
                if copy > 0, !budget.tryUse(bytes: original.serializedSize + overhead, nowMicros: now) { break }
                // RTX gives every copy its own RTX sequence number; a plain copy repeats the original exactly
                // (SRTP then repeats its index with the same keystream, which is safe).
                let packet = rtx != nil ? rtx!.wrap(original) : original
                if copy > 0 { statistics.duplicateRetransmissions += 1 }
                statistics.bytesRetransmitted += packet.serializedSize
                context.retransmissions.append(packet)
            }
        }
    }
}

/// The retransmission stream of RFC 4588 (`a=rtpmap:N rtx/90000`, `a=fmtp:N apt=VP8`, `a=ssrc-group:FID`).
public struct RTXStream: Sendable, Equatable {
    public var ssrc: UInt32
    /// 0…127.
    public var payloadType: UInt8

    public init(ssrc: UInt32, payloadType: UInt8) {
        self.ssrc = ssrc
        self.payloadType = payloadType
    }
}
