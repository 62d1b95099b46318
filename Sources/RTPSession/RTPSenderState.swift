public import RTP
import Glibc

/// One peer's outgoing VP8 stream as plain RTP/RTCP, sans-I/O: sequencing and packetization (RFC 7741),
/// the retransmission history, Sender Reports (RFC 3550 §6.4.1) and what the peer's RTCP asks for.
///
/// ```
///   frame (bytes, keyframe?, capture µs) ──packetize──▶ RTP packets ──▶ (pacer, SRTP, ICE)
///                                                 └──▶ history (max(1 s, 3 RTT)) ◀── NACK ──┐
///   senderReport(now, ntp) ──▶ SR + SDES CNAME                                    │
///   handleRTCP(packets) ◀── RR (RTT, loss, jitter), PLI/FIR, NACK, REMB, BYE ─────┘
///        └─▶ FeedbackOutcome: retransmissions (RTX per RFC 4588 when negotiated), keyframe wanted,
///            bitrate estimate, goodbye
/// ```
///
/// - One SSRC per peer; sequence numbers continue across frames; PictureIDs run per peer.
/// - RTP timestamps come from capture time: `offset + capture µs × 90 / 1000` (mod 2³²), the offset random
///   per peer (RFC 3550 §5.1). A Sender Report maps "now" on the same monotonic clock to the wall clock's
///   NTP time, so receivers can place frames in real time.
/// - Everything random is in ``Configuration``; the same inputs always give the same bytes.
public struct RTPSenderState: Sendable {
    /// One peer's stream identity and limits; everything random here is drawn once per peer.
    public struct Configuration: Sendable, Equatable {
        /// The media SSRC (RFC 3550 §8.1: random per peer).
        public var ssrc: UInt32
        /// The negotiated VP8 payload type, 0…127 (RFC 3550 §5.1).
        public var payloadType: UInt8
        /// RTX stream (SSRC, payload type) when the peer offered RTX; nil retransmits plainly.
        public var rtx: RTXStream?
        /// The RTCP CNAME sent in SDES (RFC 3550 §6.5.1), also in the answer's `a=ssrc` lines.
        public var cname: String
        /// Added to every RTP timestamp (random, RFC 3550 §5.1).
        public var timestampOffset: UInt32
        /// First RTP sequence number of the media stream (random, RFC 3550 §5.1).
        public var initialSequenceNumber: UInt16
        /// First VP8 PictureID, 15 bits used (RFC 7741 §4.2).
        public var initialPictureID: UInt16
        /// First RTP sequence number of the RTX stream (RFC 4588 §4).
        public var initialRTXSequenceNumber: UInt16
        /// Largest RTP packet (before SRTP), bytes.
        public var maxPacketSize: Int
        /// The retransmission history keeps packets max(`historyMinimumMilliseconds`, 3 × RTT) after they were
        /// sent (``RTPPacketHistory``; the RTT from Receiver Reports), ms.
        public var historyMinimumMilliseconds: UInt64
        /// Hard limit on the packets the history holds, whatever the window (rounded up to a power of two).
        public var historyPackets: Int
        /// Hard limit on the bytes the history holds (plain RTP packets), whatever the window.
        public var historyBytes: Int
        /// What the answer negotiated: feedback that was not negotiated is ignored.
        public var feedback: Feedback
        /// When the loss seen lately (``Statistics/lossEstimate``, or the receiver's last report) is at least this
        /// fraction (0…1), every retransmission is sent twice: on such a link a lone retransmission is itself
        /// lost often enough, and receivers that NACK a packet only once (aiortc) then stall until their next
        /// loss. Nil: always once.
        public var duplicateRetransmissionsAboveLoss: Double?

        /// The RTCP feedback the session description agreed on (RFC 4585 §4.2 `a=rtcp-fb`; RFC 5104 `ccm fir`;
        /// `goog-remb`).
        public struct Feedback: Sendable, Equatable {
            /// `nack`: answer generic NACKs with retransmissions.
            public var nack: Bool
            /// `nack pli`.
            public var pictureLossIndication: Bool
            /// `ccm fir`.
            public var fullIntraRequest: Bool
            /// `goog-remb`.
            public var estimatedBitrate: Bool

            public init(nack: Bool, pictureLossIndication: Bool, fullIntraRequest: Bool, estimatedBitrate: Bool) {
                self.nack = nack
                self.pictureLossIndication = pictureLossIndication
                self.fullIntraRequest = fullIntraRequest
                self.estimatedBitrate = estimatedBitrate
            }

            public static let all = Feedback(nack: true, pictureLossIndication: true, fullIntraRequest: true, estimatedBitrate: true)
        }

        public struct RTXStream: Sendable, Equatable {
            public var ssrc: UInt32
            public var payloadType: UInt8
            public init(ssrc: UInt32, payloadType: UInt8) {
                self.ssrc = ssrc
                self.payloadType = payloadType
            }
        }

        public init(
            ssrc: UInt32, payloadType: UInt8, rtx: RTXStream? = nil, cname: String, timestampOffset: UInt32 = 0,
            initialSequenceNumber: UInt16 = 0, initialPictureID: UInt16 = 0, initialRTXSequenceNumber: UInt16 = 0,
            maxPacketSize: Int = VP8Payloader.defaultMaxPacketSize,
            historyMinimumMilliseconds: UInt64 = RTPPacketHistory.defaultMinimumWindowMilliseconds,
            historyPackets: Int = RTPPacketHistory.defaultCapacity, historyBytes: Int = RTPPacketHistory.defaultMaxBytes, feedback: Feedback = .all,
            duplicateRetransmissionsAboveLoss: Double? = 0.02
        ) {
            self.ssrc = ssrc
            self.payloadType = payloadType
            self.rtx = rtx
            self.cname = cname
            self.timestampOffset = timestampOffset
            self.initialSequenceNumber = initialSequenceNumber
            self.initialPictureID = initialPictureID
            self.initialRTXSequenceNumber = initialRTXSequenceNumber
            self.maxPacketSize = maxPacketSize
            self.historyMinimumMilliseconds = historyMinimumMilliseconds
            self.historyPackets = historyPackets
            self.historyBytes = historyBytes
            self.feedback = feedback
            self.duplicateRetransmissionsAboveLoss = duplicateRetransmissionsAboveLoss
        }
    }

    /// Counters and the receiver's view, for `/stats`.
    public struct Statistics: Sendable, Equatable {
        /// Encoded frames packetized, and of them keyframes.
        public var framesSent = 0
        public var keyframesSent = 0
        /// Media packets packetized (RTP, first transmissions).
        public var packetsSent = 0
        /// Their payload bytes (the SR's octet count, RFC 3550 §6.4.1).
        public var payloadBytesSent = 0
        /// Their whole RTP bytes (headers included, before SRTP).
        public var rtpBytesSent = 0
        /// RTCP Sender Reports built (RFC 3550 §6.4.1).
        public var senderReportsSent = 0

        /// Generic NACK packets received (RFC 4585 §6.2.1).
        public var nacksReceived = 0
        /// Sequence numbers the NACKs named.
        public var packetsNacked = 0
        /// Packets resent for NACKs (RTX per RFC 4588 or as they were), and their RTP bytes.
        public var packetsRetransmitted = 0
        public var bytesRetransmitted = 0
        /// Second copies of retransmissions sent because the link is lossy.
        public var duplicateRetransmissions = 0
        /// Recent loss, 0…1: the share of the last ~50 media packets that NACKs named (an exponential average
        /// per packet sent), available before the receiver's first report and not reset by a quiet one.
        public var lossEstimate = 0.0
        /// NACKed packets no longer in the history (or resent too recently).
        public var retransmissionsSkipped = 0
        /// PLI (RFC 4585 §6.3.1), new FIR (RFC 5104 §4.3.1) and REMB (draft-alvestrand-rmcat-remb) received.
        public var plisReceived = 0
        public var firsReceived = 0
        public var rembsReceived = 0
        /// The last REMB estimate, bits per second.
        public var estimatedBitrate: UInt64?
        /// Report blocks about our SSRC received (in RR or SR packets).
        public var receiverReports = 0
        /// Round-trip time from the last report block answering one of our SRs (RFC 3550 §6.4.1).
        public var roundTripMillis: Double?
        /// The last report's fraction lost, 0…1.
        public var fractionLost: Double?
        /// The last report's cumulative packets lost.
        public var cumulativeLost: Int = 0
        /// The last report's interarrival jitter, ms.
        public var jitterMillis: Double?
        /// RTCP compound packets that did not parse, or feedback for another SSRC.
        public var rtcpIgnored = 0

        public init() {}
    }

    /// What the peer's RTCP asks the owner to do.
    public struct FeedbackOutcome: Sendable, Equatable {
        /// Packets to send again, ahead of new media: RTX packets when negotiated, else the originals.
        public var retransmissions: [[UInt8]] = []
        /// PLI or a new FIR: the shared encoder should make a keyframe.
        public var keyframeRequested = false
        /// REMB: the peer's estimate of what it can receive, bits per second.
        public var estimatedBitrate: UInt64?
        /// BYE: the peer left.
        public var goodbye = false

        public init() {}
    }

    public let configuration: Configuration
    public private(set) var statistics = Statistics()
    private var payloader: VP8Payloader
    private var rtxPacketizer: RTXPacketizer?
    private var history: RTPPacketHistory
    private let clock: RTPTimestampMapper
    /// The last FIR sequence number seen (RFC 5104 §4.3.1.2: a repeat carries the same number).
    private var lastFIRSequence: UInt8?
    /// True once a media packet went out (SRs before that would map a stream nobody has seen).
    public private(set) var hasSentMedia = false

    /// - Throws: ``RTPError`` when the packet size leaves no room for VP8 data or the payload type is above 127.
    public init(configuration: Configuration) throws(RTPError) {
        self.configuration = configuration
        payloader = try VP8Payloader(
            ssrc: configuration.ssrc, payloadType: configuration.payloadType,
            initialSequenceNumber: configuration.initialSequenceNumber, initialPictureID: configuration.initialPictureID,
            maxPacketSize: configuration.maxPacketSize)
        rtxPacketizer = configuration.rtx.map {
            RTXPacketizer(ssrc: $0.ssrc, payloadType: $0.payloadType, initialSequenceNumber: configuration.initialRTXSequenceNumber)
        }
        history = RTPPacketHistory(
            ssrc: configuration.ssrc, capacity: configuration.historyPackets, maxBytes: configuration.historyBytes,
            minimumWindowMilliseconds: configuration.historyMinimumMilliseconds)
        clock = RTPTimestampMapper(clockRate: 90_000, offset: configuration.timestampOffset, originMicroseconds: 0)
    }

    /// Packets the retransmission history holds now.
    public var historyPacketCount: Int { history.count }
    /// Bytes the retransmission history holds now (plain RTP packets).
    public var historyByteCount: Int { history.bytes }

    /// The sequence number the next media packet gets.
    public var nextSequenceNumber: UInt16 { payloader.nextSequenceNumber }

    /// The RTP timestamp of a capture time (monotonic µs).
    public func rtpTimestamp(captureMicros: UInt64) -> UInt32 { clock.rtpTimestamp(forMicroseconds: captureMicros) }

    /// Packetizes one encoded VP8 frame into RTP packets (each ≤ ``Configuration/maxPacketSize``, the marker
    /// on the last), keeps them for retransmission, and returns them in sending order.
    public mutating func packetize(
        frame: [UInt8], isKeyframe: Bool, captureMicros: UInt64, nowMicros now: UInt64
    ) throws(RTPError) -> [[UInt8]] {
        let timestamp = rtpTimestamp(captureMicros: captureMicros)
        var packets: [[UInt8]] = []
        packets.reserveCapacity(payloader.packetCount(forFrameSize: frame.count))
        try payloader.packetize(frame: frame[...], rtpTimestamp: timestamp) { packets.append($0) }
        let millis = now / 1000
        for packet in packets {
            try history.insert(packet, sentMilliseconds: millis)
            statistics.rtpBytesSent += packet.count
            statistics.payloadBytesSent += packet.count - RTPPacket.fixedHeaderSize
        }
        statistics.packetsSent += packets.count
        statistics.lossEstimate *= pow(1 - Self.lossAveraging, Double(packets.count))
        statistics.framesSent += 1
        if isKeyframe { statistics.keyframesSent += 1 }
        hasSentMedia = true
        return packets
    }

    /// A compound RTCP packet for the peer (RFC 3550 §6.1): our Sender Report for `now` (monotonic µs,
    /// mapped onto RTP time) at wall-clock time `ntp`, then SDES with our CNAME.
    public mutating func senderReport(nowMicros now: UInt64, ntp: NTPTimestamp) throws(RTPError) -> [UInt8] {
        let report = RTCPSenderReport(
            ssrc: configuration.ssrc, ntpTimestamp: ntp, rtpTimestamp: rtpTimestamp(captureMicros: now),
            packetCount: UInt32(truncatingIfNeeded: statistics.packetsSent),
            octetCount: UInt32(truncatingIfNeeded: statistics.payloadBytesSent))
        let compound = try RTCPPacket.serializeCompound([
            .senderReport(report), .sourceDescription(RTCPSourceDescription(ssrc: configuration.ssrc, cname: configuration.cname)),
        ])
        statistics.senderReportsSent += 1
        return compound
    }

    /// Reads the peer's RTCP (one unprotected compound packet) at `now` (monotonic µs) and wall-clock
    /// `arrival`, and says what to do about it.
    public mutating func handleRTCP(_ compound: [UInt8], nowMicros now: UInt64, arrival: NTPTimestamp) -> FeedbackOutcome {
        let packets: [RTCPPacket]
        do {
            packets = try RTCPPacket.parseCompound(compound)
        } catch {
            statistics.rtcpIgnored += 1
            return FeedbackOutcome()
        }
        return handle(packets, nowMicros: now, arrival: arrival)
    }

    /// ``handleRTCP(_:nowMicros:arrival:)`` for packets already parsed.
    public mutating func handle(_ packets: [RTCPPacket], nowMicros now: UInt64, arrival: NTPTimestamp) -> FeedbackOutcome {
        var outcome = FeedbackOutcome()
        let ssrc = configuration.ssrc
        for packet in packets {
            switch packet {
            case .receiverReport(let report): read(report.reports, arrival: arrival)
            case .senderReport(let report): read(report.reports, arrival: arrival)
            case .nack(let nack):
                guard nack.mediaSSRC == ssrc, configuration.feedback.nack else {
                    statistics.rtcpIgnored += 1
                    continue
                }
                statistics.nacksReceived += 1
                retransmit(nack.sequenceNumbers, nowMicros: now, into: &outcome)
            case .pictureLossIndication(let pli):
                guard pli.mediaSSRC == ssrc else {
                    statistics.rtcpIgnored += 1
                    continue
                }
                statistics.plisReceived += 1
                outcome.keyframeRequested = true
            case .fullIntraRequest(let fir):
                guard let entry = fir.entries.first(where: { $0.ssrc == ssrc }) else {
                    statistics.rtcpIgnored += 1
                    continue
                }
                statistics.firsReceived += 1
                if lastFIRSequence != entry.sequenceNumber {
                    lastFIRSequence = entry.sequenceNumber
                    outcome.keyframeRequested = true
                }
            case .estimatedBitrate(let remb):
                guard remb.ssrcs.isEmpty || remb.ssrcs.contains(ssrc) else {
                    statistics.rtcpIgnored += 1
                    continue
                }
                statistics.rembsReceived += 1
                statistics.estimatedBitrate = remb.bitrate
                outcome.estimatedBitrate = remb.bitrate
            case .goodbye: outcome.goodbye = true
            case .sourceDescription: break
            }
        }
        return outcome
    }

    /// Report blocks about our stream: RTT (when the block answers one of our SRs), loss, jitter.
    private mutating func read(_ blocks: [RTCPReportBlock], arrival: NTPTimestamp) {
        for block in blocks where block.ssrc == configuration.ssrc {
            statistics.receiverReports += 1
            if let rtt = block.roundTripTimeMilliseconds(arrival: arrival) {
                statistics.roundTripMillis = rtt
                // The history keeps 3 RTTs (at least 1 s): a NACK cannot come back sooner than one RTT.
                history.roundTripMilliseconds = UInt64(rtt.rounded(.up))
            }
            statistics.fractionLost = Double(block.fractionLost) / 256
            statistics.cumulativeLost = Int(block.cumulativeLost)
            statistics.jitterMillis = Double(block.jitter) / 90
        }
    }

    /// The weight of one packet in ``Statistics/lossEstimate``.
    static let lossAveraging = 1.0 / 50

    /// Resends what the history still holds, at most once per RTT for each packet.
    private mutating func retransmit(_ sequenceNumbers: [UInt16], nowMicros now: UInt64, into outcome: inout FeedbackOutcome) {
        let interval = UInt64(max(5, min(statistics.roundTripMillis ?? 20, 500)))
        statistics.lossEstimate = min(1, statistics.lossEstimate + Double(sequenceNumbers.count) * Self.lossAveraging)
        let loss = max(statistics.lossEstimate, statistics.fractionLost ?? 0)
        let copies = configuration.duplicateRetransmissionsAboveLoss.map { loss >= $0 ? 2 : 1 } ?? 1
        for sequence in sequenceNumbers {
            statistics.packetsNacked += 1
            guard let original = history.retransmission(
                of: sequence, nowMilliseconds: now / 1000, minimumIntervalMilliseconds: interval)
            else {
                statistics.retransmissionsSkipped += 1
                continue
            }
            statistics.packetsRetransmitted += 1
            for copy in 0..<copies {
                // RTX gives every copy its own RTX sequence number; a plain copy repeats the original bytes
                // exactly (SRTP then repeats its index with the same keystream, which is safe).
                var packet = original
                if rtxPacketizer != nil {
                    do {
                        packet = try rtxPacketizer!.wrap(original)
                    } catch {
                        statistics.retransmissionsSkipped += 1
                        break
                    }
                }
                if copy > 0 { statistics.duplicateRetransmissions += 1 }
                statistics.bytesRetransmitted += packet.count
                outcome.retransmissions.append(packet)
            }
        }
    }
}
