public import RTP

/// Our RTCP Sender Reports and what the receiver reports back (RFC 3550 §6.4): an SR + SDES CNAME every
/// ``interval`` once media flows (an empty RR + SDES before, and from a peer that only receives: RFC 3550
/// §6.4.2, every participant reports; the other end's consent freshness counts on it), and from the report
/// blocks about our SSRC (in RR or SR packets) the round-trip time, the loss and the jitter.
///
/// ```
///   timer ── every interval ──▶ SR (NTP now ↔ RTP now, packet/octet counts) + SDES; RR (no blocks) + SDES
///                               while no media was sent
///   RR/SR report block for our SSRC ──▶ RTT = A − LSR − DLSR (when it answers one of our SRs), loss, jitter
///                                      └─▶ context.link (read by the NACK responder after it)
/// ```
///
/// A Sender Report maps "now" on the monotonic clock (the same the RTP timestamps derive from) to the wall
/// clock's NTP time, so receivers can place frames in real time.
public struct SenderReports: RTPSenderFeature {
    public struct Statistics: Sendable, Equatable {
        /// Sender Reports built.
        public var senderReportsSent = 0
        /// Receiver Reports built (no media sent yet, or none to send).
        public var receiverReportsSent = 0
        /// Report blocks about our SSRC received.
        public var receiverReports = 0
        /// The last report's round-trip time, fraction lost (0…1) and cumulative loss.
        public var link = LinkReport()
        public var cumulativeLost = 0
        /// The last report's interarrival jitter, ms (90 kHz ticks / 90).
        public var jitterMillis: Double?

        public init() {}
    }

    public let ssrc: UInt32
    /// The RTCP CNAME (RFC 3550 §6.5.1).
    public let cname: String
    /// Between Sender Reports, µs (RFC 3550 §6.2; 1 s by default).
    public let intervalMicros: UInt64
    /// Maps monotonic µs to the stream's RTP timestamps (the stream's own mapping).
    public let rtpClock: RTPTimestampMapper
    public private(set) var statistics = Statistics()
    private var nextReportMicros: UInt64?

    /// - Throws: ``RTPSessionError/invalidConfiguration(_:)`` for an interval of 0.
    public init(ssrc: UInt32, cname: String, intervalMicros: UInt64 = 1_000_000, rtpClock: RTPTimestampMapper) throws(RTPSessionError) {
        guard intervalMicros > 0 else { throw .invalidConfiguration("the Sender Report interval must be positive") }
        self.ssrc = ssrc
        self.cname = cname
        self.intervalMicros = intervalMicros
        self.rtpClock = rtpClock
    }

    /// The stream starts: the first report is due one interval from `now`.
    public mutating func start(nowMicros now: UInt64) { nextReportMicros = now &+ intervalMicros }

    /// Stops reporting.
    public mutating func stop() { nextReportMicros = nil }

    public var nextDeadlineMicros: UInt64? { nextReportMicros }

    /// When a report is due: the next one is scheduled, and an SR is built if media was sent, else an RR.
    public mutating func handleTimer(context: inout TimerContext) {
        guard let due = nextReportMicros, context.nowMicros >= due else { return }
        nextReportMicros = context.nowMicros &+ intervalMicros
        let report = context.stream.hasSentMedia
            ? try? senderReport(nowMicros: context.nowMicros, ntp: context.ntp, stream: context.stream)
            : try? receiverReport()
        if let report { context.outcome.rtcp.append(report) }
    }

    /// A compound RTCP packet (RFC 3550 §6.1) for a participant that has sent no media: an RR with no
    /// report blocks (RC = 0, §6.4.2), then SDES with our CNAME.
    /// - Throws: ``RTPSessionError/invalidConfiguration(_:)`` for a CNAME RTCP cannot carry (over 255 bytes).
    public mutating func receiverReport() throws(RTPSessionError) -> [UInt8] {
        let compound: [UInt8]
        do {
            compound = try RTCPPacket.emptyReceiverReport(ssrc: ssrc, cname: cname)
        } catch {
            throw .invalidConfiguration("CNAME: \(error)")
        }
        statistics.receiverReportsSent += 1
        return compound
    }

    /// A compound RTCP packet (RFC 3550 §6.1): our Sender Report for `now` (monotonic µs, mapped onto RTP
    /// time) at wall-clock time `ntp`, with the stream's counts, then SDES with our CNAME.
    /// - Throws: ``RTPSessionError/invalidConfiguration(_:)`` for a CNAME RTCP cannot carry (over 255 bytes).
    public mutating func senderReport(
        nowMicros now: UInt64, ntp: NTPTimestamp, stream: OutgoingVideoStream.Statistics
    ) throws(RTPSessionError) -> [UInt8] {
        let report = RTCPSenderReport(
            ssrc: ssrc, ntpTimestamp: ntp, rtpTimestamp: rtpClock.rtpTimestamp(forMicroseconds: now),
            packetCount: UInt32(truncatingIfNeeded: stream.packetsSent), octetCount: UInt32(truncatingIfNeeded: stream.payloadBytesSent))
        let compound: [UInt8]
        do {
            compound = try RTCPPacket.serializeCompound([
                .senderReport(report), .sourceDescription(RTCPSourceDescription(ssrc: ssrc, cname: cname)),
            ])
        } catch {
            throw .invalidConfiguration("CNAME: \(error)")
        }
        statistics.senderReportsSent += 1
        return compound
    }

    /// Report blocks about our stream: RTT (when the block answers one of our SRs), loss, jitter.
    public mutating func receive(_ packet: RTCPPacket, context: inout FeedbackContext) {
        let blocks: [RTCPReportBlock]
        switch packet {
        case .receiverReport(let report): blocks = report.reports
        case .senderReport(let report): blocks = report.reports
        default: return
        }
        for block in blocks where block.ssrc == ssrc {
            statistics.receiverReports += 1
            if let rtt = block.roundTripTimeMilliseconds(arrival: context.arrival) { statistics.link.roundTripMillis = rtt }
            statistics.link.fractionLost = Double(block.fractionLost) / 256
            statistics.cumulativeLost = Int(block.cumulativeLost)
            statistics.jitterMillis = Double(block.jitter) / 90
        }
        context.link = statistics.link
    }
}
