import DTLS
public import ICE
public import RTPSession
public import SDP

/// Offering to an SFU (WHIP, Janus), sans-I/O: the counterpart of ``PeerAnswer`` for the side that
/// publishes. Everything but gathering (the shell's ICE agent does that before ``init(ice:candidates:configuration:using:)``)
/// and the HTTP exchange.
///
/// ```
///   our ICE credentials + all gathered candidates, random SSRCs/CNAME/session id
///     ──▶ offer text (sendonly VP8 + RTX, transport-wide CC when configured, a=setup:actpass, a=end-of-candidates: no trickle needed)
///   answer text ── accept ──▶ NegotiatedVideo (DTLS role from the answer's a=setup), the sender chain's configuration
/// ```
public struct PeerOffer: Sendable {
    /// The SDP offer (``VideoOfferBuilder``; candidates included, `a=end-of-candidates`).
    public let offer: String
    /// Our side: SSRCs, ICE credentials, fingerprint, CNAME, candidates.
    public let local: LocalMediaParameters
    /// VP8 and RTX payload types offered.
    public let vp8PayloadType: UInt8
    public let rtxPayloadType: UInt8
    /// The one-byte header extension ID offered for the transport-wide sequence number (with
    /// `a=rtcp-fb:<vp8> transport-cc`): an SFU that keeps both (Janus does) sends TWCC feedback, and our
    /// congestion controller's target for the leg follows it.
    public static let transportWideCCExtensionID: UInt8 = 3
    private let configuration: PeerConnection.Configuration
    private let senderSeed: UInt64

    /// Builds the offer with random SSRCs (two different ones), CNAME (16 alphanumerics) and session id
    /// from `generator`.
    /// - Throws: ``PeerConnectionError/sdp(_:)`` when our parameters make no valid offer.
    public init(
        ice: ICEAgent.Credentials, candidates: [ICECandidate], configuration: PeerConnection.Configuration,
        vp8PayloadType: UInt8 = 96, rtxPayloadType: UInt8 = 97, using generator: inout some RandomNumberGenerator
    ) throws(PeerConnectionError) {
        local = .drawn(ice: ice, candidates: candidates, configuration: configuration, using: &generator)
        do {
            offer = try VideoOfferBuilder.offer(
                local: local, vp8PayloadType: vp8PayloadType, rtxPayloadType: rtxPayloadType,
                transportWideCCExtensionID: configuration.offersTransportWideCC ? Self.transportWideCCExtensionID : nil).serialized()
        } catch {
            throw .sdp(error)
        }
        self.vp8PayloadType = vp8PayloadType
        self.rtxPayloadType = rtxPayloadType
        self.configuration = configuration
        senderSeed = UInt64.random(in: 0...UInt64.max, using: &generator)
    }

    /// Reads the remote answer: what it agreed, and the sender chain for it (random starting points drawn
    /// from the seed taken at ``init(ice:candidates:configuration:vp8PayloadType:rtxPayloadType:using:)``).
    /// - Throws: ``PeerConnectionError/sdp(_:)``: malformed SDP, or an answer ``VideoAnswerReader`` refuses
    ///   (no VP8, a rejected m-line, a=setup:actpass, no rtcp-mux, no fingerprint or ICE credentials).
    public func accept(answer text: String) throws(PeerConnectionError) -> (negotiated: NegotiatedVideo, sender: RTPSenderChain.Configuration) {
        let negotiated: NegotiatedVideo
        do { negotiated = try VideoAnswerReader.read(try SDPParser().parse(text)) } catch { throw .sdp(error) }
        var random = SplitMix(seed: senderSeed)
        var sender = RTPSenderChain.Configuration(negotiated: negotiated, local: local, using: &random)
        sender.pacer = configuration.pacer
        sender.keyframeRetryMicros = configuration.keyframeRetryMicros
        sender.senderReportIntervalMicros = configuration.senderReportIntervalMicros
        return (negotiated, sender)
    }
}

/// SplitMix64 (Steele et al., 2014): the sender's random starting points from one drawn seed, so
/// ``PeerOffer/accept(answer:)`` needs no generator of its own.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
