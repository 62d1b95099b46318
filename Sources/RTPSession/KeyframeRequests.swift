public import RTP

/// Reads the receiver's keyframe requests: PLI (RFC 4585 §6.3.1) and FIR (RFC 5104 §4.3.1), each about our
/// SSRC, become a request to the shared encoder. A FIR repeated with the same sequence number (RFC 5104
/// §4.3.1.2: a retransmission of the same request) does not ask again.
///
/// ```
///   PLI (media SSRC = ours) ───────────────────────▶ outcome.keyframeRequest = .pictureLoss
///   FIR (an entry for our SSRC, new seq nr) ───────┘
/// ```
public struct KeyframeRequests: RTPSenderFeature {
    public struct Statistics: Sendable, Equatable {
        public var plisReceived = 0
        /// FIR entries for our SSRC, repeats included.
        public var firsReceived = 0

        public init() {}
    }

    public let ssrc: UInt32
    public private(set) var statistics = Statistics()
    /// The last FIR sequence number seen.
    private var lastFIRSequence: UInt8?

    public init(ssrc: UInt32) { self.ssrc = ssrc }

    public mutating func receive(_ packet: RTCPPacket, context: inout FeedbackContext) {
        switch packet {
        case .pictureLossIndication(let pli):
            guard pli.mediaSSRC == ssrc else {
                context.ignored += 1
                return
            }
            statistics.plisReceived += 1
            context.outcome.requestKeyframe(.pictureLoss)
        case .fullIntraRequest(let fir):
            guard let entry = fir.entries.first(where: { $0.ssrc == ssrc }) else {
                context.ignored += 1
                return
            }
            statistics.firsReceived += 1
            if lastFIRSequence != entry.sequenceNumber {
                lastFIRSequence = entry.sequenceNumber
                context.outcome.requestKeyframe(.pictureLoss)
            }
        default: break
        }
    }
}
