public import RTP

/// One encoded Opus packet to send to a peer (the call's Opus encoding, without the `AudioSource` types).
public struct OutgoingAudioFrame: Sendable {
    /// The Opus packet (RFC 6716 §3), the RTP payload as it is (RFC 7587 §4.2).
    public var bytes: [UInt8]
    /// Its first sample on the call's 48 kHz sample clock (continuous; the RTP timestamp derives from it).
    public var sampleTime: UInt64
    /// CLOCK_MONOTONIC µs at which its first sample was played: the Sender Report maps it to NTP.
    public var captureMicros: UInt64
    /// A DTX packet (1–2 bytes, RFC 7587 §3.1.3): not sent; the next sound packet after it has the marker.
    public var isSilence: Bool

    /// An Opus packet (`bytes`, RFC 6716 §3) of the call's 48 kHz sample clock at `sampleTime`.
    public init(bytes: [UInt8], sampleTime: UInt64, captureMicros: UInt64, isSilence: Bool = false) {
        self.bytes = bytes
        self.sampleTime = sampleTime
        self.captureMicros = captureMicros
        self.isSilence = isSilence
    }
}

/// A peer's Opus stream (RFC 7587) beside its video: one SSRC, one packet per Opus packet, RTP timestamps
/// on the 48 kHz sample clock, and Sender Reports that map the same monotonic clock as the video's to NTP,
/// so the receiver can play the two in sync (RFC 3550 §6.4.1, §7.2 in spirit).
///
/// ```
///   frame (Opus packet, sample time, capture µs) ──packetize──▶ RTPPacket
///        RTP timestamp = offset + sample time (mod 2³², RFC 7587 §4.1: 48 kHz whatever the audio bandwidth)
///        marker on the first packet after silence (DTX, RFC 3551 §4.1); DTX packets are not sent
///   SR at monotonic `now` ── RTP = offset + s₀ + (now − c₀) × 48 000 / 10⁶, from the newest (s₀, c₀) sent
/// ```
///
/// Sans-I/O and deterministic: every random starting point is passed in.
public struct OutgoingAudioStream: Sendable {
    /// The stream's counters (`/stats` per viewer `audio`).
    public struct Statistics: Sendable, Equatable {
        /// Packets made (RTP, sent once: Opus has no NACK here), their payload and whole RTP bytes.
        public var packetsSent = 0
        public var payloadBytesSent = 0
        public var rtpBytesSent = 0
        /// DTX packets not sent (silence).
        public var silentPacketsSkipped = 0
        /// Sender Reports made, and the receiver's last report about this SSRC: fraction lost (0…1),
        /// cumulative loss, jitter (ms).
        public var senderReportsSent = 0
        public var fractionLost: Double?
        public var cumulativeLost = 0
        public var jitterMillis: Double?

        public init() {}
    }

    /// The audio SSRC (RFC 3550 §8.1), different from the video's.
    public let ssrc: UInt32
    public let payloadType: UInt8
    /// The RTP timestamp of sample 0.
    public let timestampOffset: UInt32
    public let cname: String
    /// Between Sender Reports, µs.
    public let reportIntervalMicros: UInt64
    public private(set) var statistics = Statistics()
    private var sequenceNumber: UInt16
    private var afterSilence = true
    /// The newest packet's (sample time, capture µs): the Sender Report's anchor.
    private var anchor: (sample: UInt64, micros: UInt64)?
    private var nextReportMicros: UInt64?

    /// - Throws: ``RTPSessionError/invalidConfiguration(_:)`` for a payload type above 127 or an interval of 0.
    public init(
        ssrc: UInt32, payloadType: UInt8, timestampOffset: UInt32, initialSequenceNumber: UInt16, cname: String,
        reportIntervalMicros: UInt64 = 1_000_000
    ) throws(RTPSessionError) {
        guard payloadType <= 127 else { throw .invalidConfiguration("audio payload type \(payloadType) is above 127") }
        guard reportIntervalMicros > 0 else { throw .invalidConfiguration("the Sender Report interval must be positive") }
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.timestampOffset = timestampOffset
        self.cname = cname
        self.reportIntervalMicros = reportIntervalMicros
        sequenceNumber = initialSequenceNumber
    }

    /// The transport is up: the first Sender Report is due one interval from `now`.
    public mutating func start(nowMicros now: UInt64) { nextReportMicros = now &+ reportIntervalMicros }

    /// Stops reporting.
    public mutating func stop() { nextReportMicros = nil }

    /// When ``senderReportIfDue(nowMicros:ntp:)`` next has work.
    public var nextDeadlineMicros: UInt64? { nextReportMicros }

    /// The RTP packet of `frame`, or nil for a DTX packet (counted, not sent). The payload shares `frame`'s bytes.
    public mutating func packetize(_ frame: OutgoingAudioFrame) -> RTPPacket? {
        if frame.isSilence || frame.bytes.isEmpty {
            statistics.silentPacketsSkipped += 1
            afterSilence = true
            return nil
        }
        let packet = RTPPacket(
            marker: afterSilence, payloadType: payloadType, sequenceNumber: sequenceNumber,
            timestamp: timestampOffset &+ UInt32(truncatingIfNeeded: frame.sampleTime), ssrc: ssrc, payload: frame.bytes[...])
        afterSilence = false
        sequenceNumber &+= 1
        anchor = (frame.sampleTime, frame.captureMicros)
        statistics.packetsSent += 1
        statistics.payloadBytesSent += frame.bytes.count
        statistics.rtpBytesSent += packet.serializedSize
        return packet
    }

    /// The RTP timestamp of monotonic time `micros` on this stream's clock (nil before any packet was sent).
    public func rtpTimestamp(forMicros micros: UInt64) -> UInt32? {
        guard let anchor else { return nil }
        let mapper = RTPTimestampMapper(
            clockRate: 48_000, offset: timestampOffset &+ UInt32(truncatingIfNeeded: anchor.sample), originMicroseconds: anchor.micros)
        return mapper.rtpTimestamp(forMicroseconds: micros)
    }

    /// When due: a compound of our Sender Report for `now` (monotonic µs ↔ wall-clock `ntp`) and SDES CNAME
    /// (RFC 3550 §6.4.1, §6.5.1), once a packet was sent; nil otherwise (the video's reports carry the RR).
    public mutating func senderReportIfDue(nowMicros now: UInt64, ntp: NTPTimestamp) -> [UInt8]? {
        guard let due = nextReportMicros, now >= due else { return nil }
        nextReportMicros = now &+ reportIntervalMicros
        guard let rtp = rtpTimestamp(forMicros: now) else { return nil }
        let report = RTCPSenderReport(
            ssrc: ssrc, ntpTimestamp: ntp, rtpTimestamp: rtp, packetCount: UInt32(truncatingIfNeeded: statistics.packetsSent),
            octetCount: UInt32(truncatingIfNeeded: statistics.payloadBytesSent))
        guard let compound = try? RTCPPacket.serializeCompound([
            .senderReport(report), .sourceDescription(RTCPSourceDescription(ssrc: ssrc, cname: cname)),
        ]) else { return nil }
        statistics.senderReportsSent += 1
        return compound
    }

    /// The receiver's report blocks about our SSRC: loss and jitter (48 kHz ticks → ms).
    public mutating func receive(_ packets: [RTCPPacket]) {
        for packet in packets {
            let blocks: [RTCPReportBlock]
            switch packet {
            case .receiverReport(let report): blocks = report.reports
            case .senderReport(let report): blocks = report.reports
            default: continue
            }
            for block in blocks where block.ssrc == ssrc {
                statistics.fractionLost = Double(block.fractionLost) / 256
                statistics.cumulativeLost = Int(block.cumulativeLost)
                statistics.jitterMillis = Double(block.jitter) / 48
            }
        }
    }
}
