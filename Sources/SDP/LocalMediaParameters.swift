/// What this side contributes to an offer or answer: ICE credentials and candidates, the DTLS
/// certificate's fingerprint, our SSRCs and CNAME, the session id. Everything random is passed in, so the
/// same parameters always give the same text.
public struct LocalMediaParameters: Sendable, Equatable {
    /// `a=ice-ufrag`: 4–256 ice-chars (RFC 8839 §5.4).
    public var iceUfrag: String
    /// `a=ice-pwd`: 22–256 ice-chars.
    public var icePwd: String
    /// `a=ice-options` values, e.g. `["trickle"]` when trickled candidates are accepted (WHEP PATCH).
    public var iceOptions: [String]
    /// The SHA-256 fingerprint of our DTLS certificate (RFC 8122).
    public var fingerprint: Fingerprint
    /// Our gathered candidates (host, srflx, relay), in preference order; the first with an IP address
    /// gives the m-line's port and `c=` address (the default candidate, RFC 8829 §5.3.1).
    public var candidates: [ICECandidate]
    /// Whether gathering is complete: adds `a=end-of-candidates` (RFC 8840 §8.2).
    public var candidatesComplete: Bool
    /// SSRC of our VP8 stream.
    public var videoSSRC: UInt32
    /// SSRC of our RTX stream (used only when RTX is negotiated).
    public var rtxSSRC: UInt32
    /// SSRC of our Opus stream; nil when we send no sound (every audio section is then rejected).
    public var audioSSRC: UInt32? = nil
    /// RTCP CNAME (RFC 7022): one per peer connection, random.
    public var cname: String
    /// `a=msid:<stream> <track>` (RFC 8830), so the browser's `ontrack` event carries a stream; nil omits it.
    public var mediaStreamID: (stream: String, track: String)?
    /// `o=` session id: digits, up to 19 of them (random, RFC 8829 §5.2.1 asks for a 63-bit number).
    public var sessionID: UInt64
    /// `o=` session version.
    public var sessionVersion: UInt64

    public init(
        iceUfrag: String, icePwd: String, iceOptions: [String] = [], fingerprint: Fingerprint,
        candidates: [ICECandidate] = [], candidatesComplete: Bool = true, videoSSRC: UInt32, rtxSSRC: UInt32,
        cname: String, mediaStreamID: (stream: String, track: String)? = ("screencast", "screen"),
        sessionID: UInt64, sessionVersion: UInt64 = 2
    ) {
        self.iceUfrag = iceUfrag
        self.icePwd = icePwd
        self.iceOptions = iceOptions
        self.fingerprint = fingerprint
        self.candidates = candidates
        self.candidatesComplete = candidatesComplete
        self.videoSSRC = videoSSRC
        self.rtxSSRC = rtxSSRC
        self.cname = cname
        self.mediaStreamID = mediaStreamID
        self.sessionID = sessionID
        self.sessionVersion = sessionVersion
    }

    public static func == (a: LocalMediaParameters, b: LocalMediaParameters) -> Bool {
        a.iceUfrag == b.iceUfrag && a.icePwd == b.icePwd && a.iceOptions == b.iceOptions && a.fingerprint == b.fingerprint
            && a.candidates == b.candidates && a.candidatesComplete == b.candidatesComplete && a.videoSSRC == b.videoSSRC
            && a.rtxSSRC == b.rtxSSRC && a.audioSSRC == b.audioSSRC && a.cname == b.cname && a.mediaStreamID?.stream == b.mediaStreamID?.stream
            && a.mediaStreamID?.track == b.mediaStreamID?.track && a.sessionID == b.sessionID
            && a.sessionVersion == b.sessionVersion
    }

    /// Refuses parameters that would make an invalid description.
    func validate() throws(SDPError) {
        guard (4...256).contains(iceUfrag.count), iceUfrag.utf8.allSatisfy(\.isICEByte) else {
            throw .invalidConfiguration("ice-ufrag must be 4–256 characters of ALPHA / DIGIT / + /")
        }
        guard (22...256).contains(icePwd.count), icePwd.utf8.allSatisfy(\.isICEByte) else {
            throw .invalidConfiguration("ice-pwd must be 22–256 characters of ALPHA / DIGIT / + /")
        }
        guard fingerprint.digest != nil, !fingerprint.algorithm.isEmpty, !fingerprint.algorithm.contains(" ") else {
            throw .invalidConfiguration("fingerprint is not '<hash> <hex:hex:…>'")
        }
        guard !cname.isEmpty, !cname.contains(" ") else { throw .invalidConfiguration("cname must be non-empty without spaces") }
        guard videoSSRC != rtxSSRC else { throw .invalidConfiguration("video and RTX SSRCs must differ") }
        if let audioSSRC, audioSSRC == videoSSRC || audioSSRC == rtxSSRC {
            throw .invalidConfiguration("the audio SSRC must differ from the video and RTX SSRCs")
        }
        if let (stream, track) = mediaStreamID {
            guard !stream.isEmpty, !track.isEmpty, !stream.contains(" "), !track.contains(" ") else {
                throw .invalidConfiguration("msid stream and track ids must be non-empty tokens")
            }
        }
        guard iceOptions.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(\.isTokenByte) }) else {
            throw .invalidConfiguration("ice-options must be tokens")
        }
    }

    /// The default candidate's port and connection (RFC 8829 §5.3.1), or 9 and `IN IP4 0.0.0.0`.
    var defaultAddress: (port: UInt16, connection: SessionDescription.Connection) {
        guard let candidate = candidates.first(where: { $0.component == 1 && !$0.hasHostName }) else {
            return (9, .unspecified)
        }
        return (candidate.port, .init(addressType: candidate.address.contains(":") ? "IP6" : "IP4", address: candidate.address))
    }

    /// Transport attributes of our media section: ICE, DTLS (with `setup`).
    func transportAttributes(setup: DTLSSetup) -> [SDPAttribute] {
        var attributes: [SDPAttribute] = [.iceUfrag(iceUfrag), .icePwd(icePwd)]
        if !iceOptions.isEmpty { attributes.append(.iceOptions(iceOptions)) }
        attributes += [.fingerprint(fingerprint), .setup(setup)]
        return attributes
    }

    /// Our sending stream: `a=ssrc-group:FID` (with RTX), `a=ssrc:<ssrc> cname:` (RFC 5576, RFC 4588 §8.3).
    func sourceAttributes(withRTX: Bool) -> [SDPAttribute] {
        var attributes: [SDPAttribute] = []
        if withRTX { attributes.append(.ssrcGroup(.init(semantics: "FID", ssrcs: [videoSSRC, rtxSSRC]))) }
        attributes.append(.ssrc(.init(ssrc: videoSSRC, name: "cname", value: cname)))
        if withRTX { attributes.append(.ssrc(.init(ssrc: rtxSSRC, name: "cname", value: cname))) }
        return attributes
    }

    /// `a=candidate` lines, then `a=end-of-candidates` when complete.
    var candidateAttributes: [SDPAttribute] {
        candidates.map(SDPAttribute.candidate) + (candidatesComplete ? [.endOfCandidates] : [])
    }
}
