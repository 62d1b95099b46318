public import RTP

/// One feature of a peer's outgoing stream (pion's interceptor, sans-I/O): it sees the stream's packets and
/// the peer's RTCP, and says what it wants done through the context it is handed. ``RTPSenderChain`` holds
/// each feature negotiated as a field of its own and calls them in a fixed order:
///
/// ```
///   frame ─▶ lobby ─▶ packetize ─┬─▶ packetized(_:)      NACK history · send latency
///                                └─▶ pacer ── release ─▶ willSend(_:kind:nowMicros:)   playout delay, then congestion
///                                                        control (TWCC number) · send latency
///   RTCP ─▶ parse ─▶ for each packet, in order: receive(_:context:)
///                    sender reports (RTT, loss) ─▶ NACK/RTX responder ─▶ PLI/FIR ─▶ REMB ─▶ congestion control
///        └─▶ transport-cc feedback (RTPFB FMT 15), parsed only with congestion control:
///                    receive(transportFeedback:context:)
///   timer ─▶ handleTimer(context:)   Sender Reports · congestion control;   nextDeadlineMicros: when to be called again
/// ```
///
/// Every method has a default that does nothing, so a feature implements only what it uses. The chain is
/// not an open list of these: its features feed each other (the link a report measured reaches the NACK
/// responder and congestion control in the same compound, the target paces the chain and bounds repair), so
/// each has its place. A new feature gets a field and its calls in that order, and a test of the order.
/// ``TransportWideCongestionControl`` (the `CongestionControl` module's `SendSideCongestionController`)
/// maps onto the hooks: `willSend` stamps the transport-wide sequence number and calls `onPacketSent`;
/// `receive(transportFeedback:context:)` calls `onTransportFeedback`; `receive` takes the RTT of
/// `context.link` (`onRoundTripTime`) and REMB as a ceiling; the target goes into
/// `context.outcome.targetBitrate` (which then paces the chain); `handleTimer`/`nextDeadlineMicros` run its
/// `onTick`.
public protocol RTPSenderFeature: Sendable {
    /// A frame's media packets were made, in order, before they enter the pacer.
    mutating func packetized(_ frame: PacketizedFrame)
    /// The pacer lets `packet` go now (just before SRTP): a header extension may be set here (the
    /// transport-wide sequence number, draft-holmer-rmcat-transport-wide-cc-extensions-01 §2).
    mutating func willSend(_ packet: inout RTPPacket, kind: PacketKind, nowMicros: UInt64)
    /// One packet of an RTCP compound from the peer, in the order they came (RFC 3550 §6.1).
    mutating func receive(_ packet: RTCPPacket, context: inout FeedbackContext)
    /// One transport-wide CC feedback packet of the compound (draft-holmer-rmcat-transport-wide-cc-extensions-01
    /// §3.1), after the compound's other packets.
    mutating func receive(transportFeedback: RTCPTransportFeedback, context: inout FeedbackContext)
    /// Runs what is due by `context.nowMicros`.
    mutating func handleTimer(context: inout TimerContext)
    /// When ``handleTimer(context:)`` is next due; nil when nothing is scheduled.
    var nextDeadlineMicros: UInt64? { get }
}

extension RTPSenderFeature {
    public mutating func packetized(_ frame: PacketizedFrame) {}
    public mutating func willSend(_ packet: inout RTPPacket, kind: PacketKind, nowMicros: UInt64) {}
    public mutating func receive(_ packet: RTCPPacket, context: inout FeedbackContext) {}
    public mutating func receive(transportFeedback: RTCPTransportFeedback, context: inout FeedbackContext) {}
    public mutating func handleTimer(context: inout TimerContext) {}
    public var nextDeadlineMicros: UInt64? { nil }
}

/// What a queued packet is, for the counters and for the pacer's order (retransmissions go first).
public enum PacketKind: Sendable, Equatable {
    /// A first transmission of media.
    case media
    /// A packet sent again for a NACK: RTX (RFC 4588) or the packet as it was.
    case retransmission
}

/// One encoded frame's packets, as packetized.
public struct PacketizedFrame: Sendable {
    /// The RTP packets in sending order (the marker on the last), plain: before SRTP.
    public var packets: [RTPPacket]
    public var isKeyframe: Bool
    /// Capture time, CLOCK_MONOTONIC µs (the RTP timestamp derives from it).
    public var captureMicros: UInt64
    /// When they were made, monotonic µs.
    public var nowMicros: UInt64

    public init(packets: [RTPPacket], isKeyframe: Bool, captureMicros: UInt64, nowMicros: UInt64) {
        self.packets = packets
        self.isKeyframe = isKeyframe
        self.captureMicros = captureMicros
        self.nowMicros = nowMicros
    }
}

/// The link as the receiver's reports last described it (RFC 3550 §6.4.1): what later features of the
/// chain weigh (the NACK responder's resend interval and duplicates).
public struct LinkReport: Sendable, Equatable {
    /// Round-trip time from the last report block answering one of our Sender Reports, ms.
    public var roundTripMillis: Double?
    /// The last report's fraction lost, 0…1.
    public var fractionLost: Double?

    public init(roundTripMillis: Double? = nil, fractionLost: Double? = nil) {
        self.roundTripMillis = roundTripMillis
        self.fractionLost = fractionLost
    }
}

/// Why a keyframe is wanted (the text goes into logs and the peer's event).
public enum KeyframeReason: String, Sendable, Equatable {
    /// The receiver just became ready: it waits in the lobby for a keyframe.
    case newViewer = "new viewer"
    /// The receiver sent PLI (RFC 4585 §6.3.1) or a new FIR (RFC 5104 §4.3.1).
    case pictureLoss = "PLI/FIR"
    /// The pacer overflowed and was emptied: the receiver lost its place.
    case pacerOverflow = "pacer overflow"
    /// The lobby's last request went unanswered for its retry interval.
    case stillWaiting = "still waiting for a keyframe"
    /// Delta frames were thinned: the pacer held more than the congestion estimate carries.
    case thinned = "frames thinned to the estimate"
}

/// What the chain asks its owner to do after an event (the retransmissions it already queued in the pacer).
public struct SenderOutcome: Sendable, Equatable {
    /// Ask the shared encoder for a keyframe (the first reason of this event).
    public var keyframeRequest: KeyframeReason?
    /// REMB (draft-alvestrand-rmcat-remb): the receiver's estimate of what it can take, bits per second.
    public var estimatedBitrate: UInt64?
    /// The congestion controller's target (``RTPSenderChain/congestion``), bits per second: the pacer
    /// already follows it.
    public var targetBitrate: UInt64?
    /// RTCP compounds to protect and send (plain), e.g. our Sender Report.
    public var rtcp: [[UInt8]] = []
    /// A frame was admitted as the first keyframe after the lobby waited this long, µs.
    public var firstKeyframeWaitMicros: UInt64?
    /// The pacer could not take a frame and was emptied (the lobby waits for a keyframe again).
    public var pacerOverflowed = false
    /// RTCP BYE: the peer left.
    public var goodbye = false

    public init() {}

    /// Records a keyframe request unless one is recorded already.
    public mutating func requestKeyframe(_ reason: KeyframeReason) {
        if keyframeRequest == nil { keyframeRequest = reason }
    }
}

/// What a feature gets with each RTCP packet: the times, the link as reported so far, and where to put
/// what it wants done.
public struct FeedbackContext: Sendable {
    /// Monotonic µs.
    public let nowMicros: UInt64
    /// The compound's arrival on the wall clock (for RTT, RFC 3550 §6.4.1).
    public let arrival: NTPTimestamp
    /// Updated by the Sender Reports feature before later features see the same packet.
    public var link: LinkReport
    /// Packets to send again, ahead of waiting media (the chain queues them).
    public var retransmissions: [RTPPacket] = []
    public var outcome = SenderOutcome()
    /// Feedback this feature understood but had to ignore (another SSRC, not negotiated).
    public var ignored = 0

    public init(nowMicros: UInt64, arrival: NTPTimestamp, link: LinkReport) {
        self.nowMicros = nowMicros
        self.arrival = arrival
        self.link = link
    }
}

/// What a feature gets when the chain's timer fires.
public struct TimerContext: Sendable {
    /// Monotonic µs.
    public let nowMicros: UInt64
    /// Now on the wall clock (for Sender Reports' NTP timestamps).
    public let ntp: NTPTimestamp
    /// What the stream has sent so far (for the Sender Report's counts).
    public let stream: OutgoingVideoStream.Statistics
    public var outcome = SenderOutcome()

    public init(nowMicros: UInt64, ntp: NTPTimestamp, stream: OutgoingVideoStream.Statistics) {
        self.nowMicros = nowMicros
        self.ntp = ntp
        self.stream = stream
    }
}
