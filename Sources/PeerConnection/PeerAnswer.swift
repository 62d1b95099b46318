import DTLS
public import ICE
public import RTPSession
public import SDP

/// Answering a viewer's offer, sans-I/O: everything but gathering our candidates (the shell's ICE agent
/// does that between ``check(offer:fingerprint:)`` and ``init(offer:ice:candidates:configuration:using:)``).
///
/// ```
///   offer text ── check ──▶ SessionDescription (refused here, before any socket: no VP8, no rtcp-mux, …)
///   + our ICE credentials and candidates, random SSRCs/CNAME/session id ──▶ answer text, NegotiatedVideo,
///     LocalMediaParameters, the sender chain's configuration (random starting points)
/// ```
public struct PeerAnswer: Sendable {
    /// The SDP answer (candidates included, `a=end-of-candidates`).
    public let answer: String
    /// What the offer and our answer agreed: payload types, feedback, RTX, DTLS role, the peer's transport.
    public let negotiated: NegotiatedVideo
    /// Our side: SSRCs, ICE credentials, fingerprint, CNAME, candidates.
    public let local: LocalMediaParameters
    /// The sender chain for the negotiated stream, with its random starting points drawn.
    public let sender: RTPSenderChain.Configuration
    /// The Opus stream when the answer accepted the viewer's audio section (random SSRC, timestamp and
    /// sequence starts); nil: video only.
    public let audio: OutgoingAudioStream?

    /// Parses the offer and checks that it can be answered (a trial answer with placeholder parameters).
    /// - Throws: ``PeerConnectionError/sdp(_:)`` for an offer that is malformed or unanswerable.
    public static func check(offer text: String, fingerprint: Fingerprint) throws(PeerConnectionError) -> SessionDescription {
        do {
            let offer = try SDPParser().parse(text)
            let trial = LocalMediaParameters(
                iceUfrag: "trial", icePwd: String(repeating: "x", count: 22), fingerprint: fingerprint, videoSSRC: 1, rtxSSRC: 2,
                cname: "trial", sessionID: 1)
            _ = try VideoAnswerBuilder.answer(offer, local: trial)
            return offer
        } catch {
            throw .sdp(error)
        }
    }

    /// The answer to a checked offer, with our ICE credentials and gathered candidates, and random SSRCs (two
    /// different ones), CNAME (16 alphanumerics) and session id from `generator`.
    /// - Throws: ``PeerConnectionError/sdp(_:)`` when the answer cannot be built (our parameters).
    public init(
        offer: SessionDescription, ice: ICEAgent.Credentials, candidates: [ICECandidate], configuration: PeerConnection.Configuration,
        using generator: inout some RandomNumberGenerator
    ) throws(PeerConnectionError) {
        local = .drawn(ice: ice, candidates: candidates, configuration: configuration, using: &generator)
        let answered: (SessionDescription, NegotiatedVideo)
        do { answered = try VideoAnswerBuilder.answer(offer, local: local) } catch { throw .sdp(error) }
        answer = answered.0.serialized()
        negotiated = answered.1
        var sender = RTPSenderChain.Configuration(negotiated: negotiated, local: local, using: &generator)
        sender.pacer = configuration.pacer
        sender.keyframeRetryMicros = configuration.keyframeRetryMicros
        sender.senderReportIntervalMicros = configuration.senderReportIntervalMicros
        self.sender = sender
        if let negotiated = negotiated.audio, let ssrc = local.audioSSRC {
            do {
                audio = try OutgoingAudioStream(
                    ssrc: ssrc, payloadType: negotiated.payloadType, timestampOffset: UInt32.random(in: 0...UInt32.max, using: &generator),
                    initialSequenceNumber: UInt16.random(in: 0...0x7FFF, using: &generator), cname: local.cname,
                    reportIntervalMicros: configuration.senderReportIntervalMicros)
            } catch {
                throw .invalidConfiguration("audio sender: \(error)")
            }
        } else {
            audio = nil
        }
    }
}
