/// The remote side's transport parameters, for ICE (libnice) and DTLS.
public struct RemoteTransport: Sendable, Equatable {
    public var iceUfrag: String
    public var icePwd: String
    public var iceLite: Bool
    /// The peer's certificate must match one of these (RFC 8122 §5).
    public var fingerprints: [Fingerprint]
    /// The peer's `a=setup` (absent counts as `active`, RFC 4145 §4).
    public var setup: DTLSSetup
    /// Candidates from the BUNDLE transport's sections (the chosen one and the BUNDLE-tagged one), in
    /// order, without repeats. Host names (mDNS `.local`) are kept; resolving them is the ICE agent's job.
    public var candidates: [ICECandidate]
    /// `a=end-of-candidates` was present.
    public var candidatesComplete: Bool

    /// The most `a=candidate` lines the BUNDLE transport's sections may hold together; an offer with more is
    /// refused (``SDPError/tooManyCandidates(count:limit:)``, a 413). A browser offers one or two per network
    /// interface and address family (a dozen on a busy host); an offer with 1,250 cost ~3 s of CPU to
    /// deduplicate before this limit (quadratic) and libnice takes at most
    /// `ICEAgent.Configuration.remoteCandidateLimit` (32) anyway.
    public static let maxCandidates = 256

    /// Reads the transport of `offer.media[chosen]`: media-level attributes first, then those of the
    /// BUNDLE-tagged section (the first mid of the BUNDLE group, RFC 8843 §7.2.1), then session level.
    init(offer: SessionDescription, chosen: Int) throws(SDPError) {
        let section = offer.media[chosen]
        var sources = [section]
        if let tag = offer.bundleGroup?.mids.first, let tagged = offer.media(mid: tag), tagged.mid != section.mid {
            sources.append(tagged)
        }
        let session = MediaDescription(kind: "", port: 0, proto: "", formats: [], attributes: offer.attributes)
        let all = sources + [session]
        guard let ufrag = all.lazy.compactMap(\.iceUfrag).first, let pwd = all.lazy.compactMap(\.icePwd).first else {
            throw .offerWithoutICECredentials
        }
        guard let fingerprints = all.lazy.map(\.fingerprints).first(where: { !$0.isEmpty }) else {
            throw .offerWithoutFingerprint
        }
        // Refused here, as the peer's fault (422), not later by the DTLS configuration as ours.
        guard !Fingerprint.strongest(of: fingerprints).isEmpty else {
            throw .unsupportedFingerprintHash(fingerprints.map(\.algorithm))
        }
        iceUfrag = ufrag
        icePwd = pwd
        iceLite = offer.attributes.contains(.iceLite)
        self.fingerprints = fingerprints
        setup = all.lazy.compactMap(\.setup).first ?? .active
        let offered = sources.map(\.candidates)
        let count = offered.reduce(0) { $0 + $1.count }
        guard count <= Self.maxCandidates else { throw .tooManyCandidates(count: count, limit: Self.maxCandidates) }
        var candidates: [ICECandidate] = []
        var seen = Set<ICECandidate>()
        for candidate in offered.joined() where seen.insert(candidate).inserted { candidates.append(candidate) }
        self.candidates = candidates
        candidatesComplete = sources.contains { $0.hasEndOfCandidates }
    }
}

/// What an answer settled for our video stream: what the RTP/RTCP and DTLS layers need.
public struct NegotiatedVideo: Sendable, Equatable {
    /// RTCP feedback both sides agreed on (RFC 4585, RFC 5104, REMB).
    public struct Feedback: Sendable, Equatable {
        /// `nack`: answer generic NACKs with retransmissions.
        public var nack: Bool
        /// `nack pli`.
        public var pictureLossIndication: Bool
        /// `ccm fir`.
        public var fullIntraRequest: Bool
        /// `goog-remb`.
        public var estimatedBitrate: Bool
        /// `transport-cc` (draft-holmer-rmcat-transport-wide-cc-extensions-01 §4): answered only together with
        /// the transport-wide sequence number extension (``NegotiatedVideo/transportWideCCExtensionID``).
        public var transportWideCC: Bool

        public init(nack: Bool, pictureLossIndication: Bool, fullIntraRequest: Bool, estimatedBitrate: Bool,
                    transportWideCC: Bool = false) {
            self.nack = nack
            self.pictureLossIndication = pictureLossIndication
            self.fullIntraRequest = fullIntraRequest
            self.estimatedBitrate = estimatedBitrate
            self.transportWideCC = transportWideCC
        }

        /// Every feedback but `transport-cc` (which needs its header extension beside it).
        public static let all = Feedback(nack: true, pictureLossIndication: true, fullIntraRequest: true, estimatedBitrate: true)

        /// `a=rtcp-fb` lines in the order `nack`, `nack pli`, `ccm fir`, `goog-remb`, `transport-cc`.
        func attributes(payloadType: UInt8) -> [SDPAttribute] {
            var lines: [RTCPFeedbackAttribute] = []
            if nack { lines.append(.init(payloadType: payloadType, type: "nack")) }
            if pictureLossIndication { lines.append(.init(payloadType: payloadType, type: "nack", parameter: "pli")) }
            if fullIntraRequest { lines.append(.init(payloadType: payloadType, type: "ccm", parameter: "fir")) }
            if estimatedBitrate { lines.append(.init(payloadType: payloadType, type: "goog-remb")) }
            if transportWideCC { lines.append(.init(payloadType: payloadType, type: "transport-cc")) }
            return lines.map(SDPAttribute.rtcpFeedback)
        }
    }

    /// Which DTLS role we take (RFC 5763 §5: `active` is the client).
    public enum DTLSRole: Sendable, Equatable { case client, server }

    public var mid: String?
    /// Index of the accepted m-line.
    public var mediaIndex: Int
    /// Our direction: `sendonly`, or `inactive` when the peer does not receive.
    public var direction: MediaDirection
    public var vp8PayloadType: UInt8
    /// Nil when RTX was not offered: retransmit plainly.
    public var rtxPayloadType: UInt8?
    public var feedback: Feedback
    /// `a=rtcp-rsize` (RFC 5506): feedback may be sent without a report.
    public var reducedSizeRTCP: Bool
    public var dtlsRole: DTLSRole
    public var remote: RemoteTransport
    /// The one-byte header extension ID (1…14, RFC 8285 §4.2) of the transport-wide sequence number
    /// (`a=extmap:<id> http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01`), when the
    /// offer had it and `transport-cc` feedback for VP8; nil: no TWCC (REMB only).
    public var transportWideCCExtensionID: UInt8?
    /// The one-byte header extension ID (1…14) of the playout delay
    /// (`a=extmap:<id> http://www.webrtc.org/experiments/rtp-hdrext/playout-delay`) when the offer had it:
    /// every media packet then carries MIN = MAX = 0; nil: not written.
    public var playoutDelayExtensionID: UInt8? = nil
    /// The data channels' SCTP association when the answer accepted the offer's bundled `m=application`
    /// (``DataChannelAnswer``); nil: no data channel.
    public var dataChannel: NegotiatedDataChannel? = nil
    /// The Opus stream accepted beside the video in the same BUNDLE (``AudioAnswerSection``); nil: no sound.
    public var audio: NegotiatedAudio? = nil
}
