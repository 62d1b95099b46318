public import RTP

extension RTPSenderChain {
    /// One peer's stream identity, limits and timers; everything random here is drawn once per peer.
    public struct Configuration: Sendable, Equatable {
        /// The RTCP feedback the session description agreed on (RFC 4585 §4.2 `a=rtcp-fb`; RFC 5104 `ccm fir`;
        /// `goog-remb`): NACKs are answered only when negotiated.
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

        /// The media SSRC (RFC 3550 §8.1: random per peer).
        public var ssrc: UInt32
        /// The negotiated VP8 payload type, 0…127 (RFC 3550 §5.1).
        public var payloadType: UInt8
        /// The RTX stream when the peer offered RTX; nil retransmits plainly.
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
        /// sent (``RTP/RTPPacketHistory``; the RTT from Receiver Reports), ms.
        public var historyMinimumMilliseconds: UInt64
        /// Hard limit on the packets the history holds, whatever the window (rounded up to a power of two).
        public var historyPackets: Int
        /// Hard limit on the bytes the history holds (plain RTP packets), whatever the window.
        public var historyBytes: Int
        /// What the answer negotiated: feedback that was not negotiated is ignored.
        public var feedback: Feedback
        /// Loss (0…1, ``NACKResponder``) from which every retransmission is sent twice; nil: always once.
        public var duplicateRetransmissionsAboveLoss: Double?
        /// RTCP Sender Report interval, µs (RFC 3550 §6.2; 1 s by default).
        public var senderReportIntervalMicros: UInt64
        /// How often a receiver waiting for its first keyframe asks again, µs.
        public var keyframeRetryMicros: UInt64
        /// The send pacing (token bucket) until a target rate is set.
        public var pacer: PacerQueue.Configuration
        /// Once a target rate is set (``RTPSenderChain/setTargetBitrate(_:nowMicros:)``), the pacer runs at this
        /// multiple of it (libwebrtc paces at 2.5 × the target).
        public var pacingFactor: Double
        /// Keyframe packets are paced at this multiple of the target (1: no faster than the estimate, issue 12;
        /// a 170 kB keyframe at 1 Mbit/s then takes 1.4 s instead of queueing at the bottleneck).
        public var keyframePacingFactor: Double
        /// Once a target is set, a delta frame larger than the target carries in this long (µs) is paced
        /// as a keyframe is (``keyframePacingFactor``); nil: only keyframes. A bottleneck queues about 100 ms
        /// (a TBF at `latency 100ms`, a shallow router), and a frame pushed at 2.5 × the target into a link at
        /// the target overflows it: at 300 kbit/s each 20 kB frame of a scrolling screen lost its tail, and
        /// the loss held the target at half the link.
        public var largeFrameMicros: UInt64?
        /// Transport-wide congestion control when the answer negotiated it (the extension ID and the
        /// estimator's limits); nil: none (REMB, if any, is only reported).
        public var transportWideCC: TransportWideCongestionControl.Configuration?
        /// With congestion control, the thinning budget: while the pacer holds more than this many µs of the
        /// target rate besides keyframe packets, a droppable (non-reference) frame is left out, with no
        /// keyframe asked for; keyframes are always queued.
        public var thinningQueueMicros: UInt64
        /// With congestion control, the hard bound for reference delta frames while droppable frames come
        /// (the shared encoder's cadence), µs of the target rate besides keyframe packets: they are queued up
        /// to it (a decoder cannot skip them), and past it one is dropped and the lobby waits for a keyframe
        /// (the last resort). Never below ``thinningQueueMicros``, which is the bound when no droppable frame
        /// comes.
        public var referenceQueueMicros: UInt64
        /// The negotiated one-byte ID (1…14) of the playout-delay extension (``RTP/PlayoutDelay``): every media
        /// packet then carries MIN = MAX = 0 (show at once); nil: not written.
        public var playoutDelayExtensionID: UInt8? = nil

        public init(
            ssrc: UInt32, payloadType: UInt8, rtx: RTXStream? = nil, cname: String, timestampOffset: UInt32 = 0,
            initialSequenceNumber: UInt16 = 0, initialPictureID: UInt16 = 0, initialRTXSequenceNumber: UInt16 = 0,
            maxPacketSize: Int = VP8Payloader.defaultMaxPacketSize,
            historyMinimumMilliseconds: UInt64 = RTPPacketHistory.defaultMinimumWindowMilliseconds,
            historyPackets: Int = RTPPacketHistory.defaultCapacity, historyBytes: Int = RTPPacketHistory.defaultMaxBytes,
            feedback: Feedback = .all, duplicateRetransmissionsAboveLoss: Double? = 0.02,
            senderReportIntervalMicros: UInt64 = 1_000_000, keyframeRetryMicros: UInt64 = 1_000_000,
            pacer: PacerQueue.Configuration = .init(), pacingFactor: Double = 2.5, keyframePacingFactor: Double = 1,
            transportWideCC: TransportWideCongestionControl.Configuration? = nil, thinningQueueMicros: UInt64 = 1_000_000,
            referenceQueueMicros: UInt64 = 2_000_000, largeFrameMicros: UInt64? = 100_000
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
            self.senderReportIntervalMicros = senderReportIntervalMicros
            self.keyframeRetryMicros = keyframeRetryMicros
            self.pacer = pacer
            self.pacingFactor = pacingFactor
            self.keyframePacingFactor = min(max(0.1, keyframePacingFactor), pacingFactor)
            self.transportWideCC = transportWideCC
            self.thinningQueueMicros = thinningQueueMicros
            self.referenceQueueMicros = referenceQueueMicros
            self.largeFrameMicros = largeFrameMicros
        }
    }
}
