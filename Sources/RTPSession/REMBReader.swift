public import RTP

/// Reads the receiver's REMB (draft-alvestrand-rmcat-remb-03 §2.2): its estimate of what it can receive,
/// for the streams it names (or all, when it names none).
///
/// ```
///   PSFB FMT 15 "REMB" ── names our SSRC (or none) ──▶ outcome.estimatedBitrate (bits per second)
/// ```
public struct REMBReader: RTPSenderFeature {
    public struct Statistics: Sendable, Equatable {
        /// REMB packets about our stream.
        public var rembsReceived = 0
        /// The last estimate, bits per second.
        public var estimatedBitrate: UInt64?

        public init() {}
    }

    public let ssrc: UInt32
    public private(set) var statistics = Statistics()

    public init(ssrc: UInt32) { self.ssrc = ssrc }

    public mutating func receive(_ packet: RTCPPacket, context: inout FeedbackContext) {
        guard case .estimatedBitrate(let remb) = packet else { return }
        guard remb.ssrcs.isEmpty || remb.ssrcs.contains(ssrc) else {
            context.ignored += 1
            return
        }
        statistics.rembsReceived += 1
        statistics.estimatedBitrate = remb.bitrate
        context.outcome.estimatedBitrate = remb.bitrate
    }
}
