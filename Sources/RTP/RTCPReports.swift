/// A report block of an SR or RR (RFC 3550 §6.4.1): the receiver's view of one source.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |                 SSRC_1 (SSRC of first source)                 |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// | fraction lost |       cumulative number of packets lost       |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           extended highest sequence number received           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                      interarrival jitter                      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         last SR (LSR)                         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                   delay since last SR (DLSR)                  |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// ```
public struct RTCPReportBlock: Sendable, Equatable {
    public static let size = 24

    /// The source reported on.
    public var ssrc: UInt32
    /// Packets lost since the previous report as a fraction of those expected, in units of 1/256.
    public var fractionLost: UInt8
    /// Packets lost since the start (24-bit signed on the wire: −8388608…8388607; duplicates can make it
    /// negative). Clamped to that range when serialized.
    public var cumulativeLost: Int32
    /// Cycles × 65536 + highest sequence number received.
    public var extendedHighestSequenceNumber: UInt32
    /// Interarrival jitter in RTP timestamp units (1/90000 s for video).
    public var jitter: UInt32
    /// LSR: the middle 32 bits of the NTP timestamp of the last SR received from the source, 0 if none.
    public var lastSenderReport: UInt32
    /// DLSR: delay between receiving that SR and sending this block, in units of 1/65536 s.
    public var delaySinceLastSenderReport: UInt32

    public init(
        ssrc: UInt32, fractionLost: UInt8, cumulativeLost: Int32, extendedHighestSequenceNumber: UInt32,
        jitter: UInt32, lastSenderReport: UInt32, delaySinceLastSenderReport: UInt32
    ) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequenceNumber = extendedHighestSequenceNumber
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    init(parsing bytes: ArraySlice<UInt8>) {
        ssrc = bytes.u32(0)
        fractionLost = bytes.u8(4)
        let raw = bytes.u24(5)
        cumulativeLost = raw & 0x80_0000 != 0 ? Int32(bitPattern: raw | 0xFF00_0000) : Int32(raw)
        extendedHighestSequenceNumber = bytes.u32(8)
        jitter = bytes.u32(12)
        lastSenderReport = bytes.u32(16)
        delaySinceLastSenderReport = bytes.u32(20)
    }

    func serialize(into buffer: inout [UInt8]) {
        buffer.appendU32(ssrc)
        buffer.append(fractionLost)
        let clamped = min(max(cumulativeLost, -0x80_0000), 0x7F_FFFF)
        buffer.appendU24(UInt32(bitPattern: clamped) & 0xFF_FFFF)
        buffer.appendU32(extendedHighestSequenceNumber)
        buffer.appendU32(jitter)
        buffer.appendU32(lastSenderReport)
        buffer.appendU32(delaySinceLastSenderReport)
    }

    /// Round-trip time in milliseconds (RFC 3550 §6.4.1: A − LSR − DLSR, where A is the arrival time of this
    /// block), from the NTP time the block arrived on the sender's own wall clock. Nil when the receiver has
    /// not yet received an SR (LSR = 0); 0 when clock rounding makes it negative.
    public func roundTripTimeMilliseconds(arrival: NTPTimestamp) -> Double? {
        guard lastSenderReport != 0 else { return nil }
        let units = Int32(bitPattern: arrival.compact &- lastSenderReport &- delaySinceLastSenderReport)
        return Double(max(0, units)) * 1000 / 65536
    }
}

/// Sender Report, PT = 200 (RFC 3550 §6.4.1): the sender's NTP/RTP time mapping and counts, and report
/// blocks for the sources it receives.
///
/// ```
///         0                   1                   2                   3
///         0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// header |V=2|P|    RC   |   PT=SR=200   |             length            |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                         SSRC of sender                        |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// sender |              NTP timestamp, most significant word             |
/// info   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |             NTP timestamp, least significant word             |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                         RTP timestamp                         |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                     sender's packet count                     |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                      sender's octet count                     |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
///        |                 report blocks (RC × 24 bytes)                 |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
///        |                  profile-specific extensions                  |
/// ```
/// Profile-specific extensions are skipped when parsing and never written.
public struct RTCPSenderReport: Sendable, Equatable {
    public var ssrc: UInt32
    /// Wall-clock time at which ``rtpTimestamp`` applies.
    public var ntpTimestamp: NTPTimestamp
    /// The RTP timestamp (90 kHz for video) corresponding to ``ntpTimestamp``.
    public var rtpTimestamp: UInt32
    /// RTP data packets sent since the start (wraps).
    public var packetCount: UInt32
    /// RTP payload bytes sent since the start, headers and padding excluded (wraps).
    public var octetCount: UInt32
    /// At most 31.
    public var reports: [RTCPReportBlock]

    public init(
        ssrc: UInt32, ntpTimestamp: NTPTimestamp, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32,
        reports: [RTCPReportBlock] = []
    ) {
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reports = reports
    }

    init(count: UInt8, body: ArraySlice<UInt8>) throws(RTPError) {
        let needed = 24 + Int(count) * RTCPReportBlock.size
        guard body.count >= needed else { throw .truncated(.senderReport, needed: needed + 4, available: body.count + 4) }
        ssrc = body.u32(0)
        ntpTimestamp = NTPTimestamp(seconds: body.u32(4), fraction: body.u32(8))
        rtpTimestamp = body.u32(12)
        packetCount = body.u32(16)
        octetCount = body.u32(20)
        reports = (0..<Int(count)).map { RTCPReportBlock(parsing: body.sub(24 + $0 * RTCPReportBlock.size, RTCPReportBlock.size)) }
    }

    public func serialize(into buffer: inout [UInt8]) throws(RTPError) {
        guard reports.count <= 31 else { throw .tooMany(.senderReport, count: reports.count, limit: 31) }
        let start = buffer.beginRTCPPacket(count: UInt8(reports.count), type: RTCPPacket.PacketType.senderReport)
        buffer.appendU32(ssrc)
        buffer.appendU32(ntpTimestamp.seconds)
        buffer.appendU32(ntpTimestamp.fraction)
        buffer.appendU32(rtpTimestamp)
        buffer.appendU32(packetCount)
        buffer.appendU32(octetCount)
        for report in reports { report.serialize(into: &buffer) }
        try buffer.finishRTCPPacket(startingAt: start)
    }
}

/// Receiver Report, PT = 201 (RFC 3550 §6.4.2): the SR without sender info.
///
/// ```
///         0                   1                   2                   3
///         0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// header |V=2|P|    RC   |   PT=RR=201   |             length            |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                     SSRC of packet sender                     |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
///        |                 report blocks (RC × 24 bytes)                 |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// ```
public struct RTCPReceiverReport: Sendable, Equatable {
    public var ssrc: UInt32
    /// At most 31.
    public var reports: [RTCPReportBlock]

    public init(ssrc: UInt32, reports: [RTCPReportBlock] = []) {
        self.ssrc = ssrc
        self.reports = reports
    }

    init(count: UInt8, body: ArraySlice<UInt8>) throws(RTPError) {
        let needed = 4 + Int(count) * RTCPReportBlock.size
        guard body.count >= needed else { throw .truncated(.receiverReport, needed: needed + 4, available: body.count + 4) }
        ssrc = body.u32(0)
        reports = (0..<Int(count)).map { RTCPReportBlock(parsing: body.sub(4 + $0 * RTCPReportBlock.size, RTCPReportBlock.size)) }
    }

    public func serialize(into buffer: inout [UInt8]) throws(RTPError) {
        guard reports.count <= 31 else { throw .tooMany(.receiverReport, count: reports.count, limit: 31) }
        let start = buffer.beginRTCPPacket(count: UInt8(reports.count), type: RTCPPacket.PacketType.receiverReport)
        buffer.appendU32(ssrc)
        for report in reports { report.serialize(into: &buffer) }
        try buffer.finishRTCPPacket(startingAt: start)
    }
}
