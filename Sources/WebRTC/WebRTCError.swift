/// Why a session description was refused or could not be answered. The one error type of the `WebRTC`
/// module (typed throws throughout; nothing here traps on input from a peer).
///
/// ``isPeerError`` separates the peer's mistakes (the HTTP layer answers 4xx) from ours (5xx).
public enum WebRTCError: Error, Sendable, Equatable, CustomStringConvertible {
    // MARK: SDP syntax (RFC 8866)

    /// The description is larger than the parser accepts (bytes, limit).
    case sdpTooLarge(bytes: Int, limit: Int)
    /// The bytes are not UTF-8 text, or hold a NUL or a bare CR.
    case sdpNotText
    /// A line is not `<letter>=<value>`, has an unknown type letter, or its fields are malformed.
    /// `line` counts from 1.
    case sdpBadLine(line: Int, text: String, reason: String)
    /// A required line is absent: `v=`, `o=`, `s=`, `t=`, or `c=` (section: "session" or "m-line N").
    case sdpMissingLine(String, section: String)
    /// A line where the grammar does not allow it (a second `v=`, `o=` inside a media section, …).
    case sdpUnexpectedLine(line: Int, text: String)
    /// A known attribute with a malformed value (`a=rtpmap`, `a=candidate`, `a=fingerprint`, …).
    case sdpBadAttribute(line: Int, name: String, reason: String)

    // MARK: Offer/answer (RFC 8829, RFC 3264)

    /// The offer has no video m-line (port ≠ 0) offering VP8/90000.
    case offerHasNoVP8Video
    /// The chosen video m-line lacks `a=rtcp-mux` (we demultiplex RTP and RTCP on one port only).
    case offerWithoutRTCPMux(mid: String?)
    /// The chosen video m-line uses a profile other than (UDP/TLS/)RTP/SAVPF.
    case unsupportedProfile(String)
    /// No `a=ice-ufrag` / `a=ice-pwd` for the chosen m-line (media or session level).
    case offerWithoutICECredentials
    /// No `a=fingerprint` for the chosen m-line (media or session level).
    case offerWithoutFingerprint
    /// Every `a=fingerprint` for the chosen m-line names a hash function we do not check (RFC 8122 §5; we
    /// check sha-1 … sha-512): the hash function names as offered.
    case unsupportedFingerprintHash([String])
    /// `a=setup` with a role we cannot answer (`holdconn`, or an offer's `passive` when building an
    /// answer's counterpart fails).
    case unsupportedSetup(String)

    // MARK: Ours

    /// The local parameters given to a builder are invalid (what was wrong).
    case invalidConfiguration(String)

    // MARK: DTLS (RFC 6347, RFC 5764) and SRTP (RFC 3711, RFC 7714)

    /// The DTLS endpoint failed (handshake, fingerprint mismatch, timeout, …) or our certificate could not
    /// be made.
    case dtls(DTLSFailure)
    /// An SRTP/SRTCP packet could not be protected or unprotected.
    case srtp(SRTPFailure)

    // MARK: ICE (RFC 8445, through libnice)

    /// A remote candidate (from the SDP or trickled) is malformed or libnice refused it: the candidate as
    /// given, and why.
    case iceBadRemoteCandidate(String, reason: String)
    /// The remote `ice-ufrag` / `ice-pwd` are malformed (RFC 8839 §5.4) or libnice refused them.
    case iceBadRemoteCredentials(reason: String)
    /// Local candidates could not be gathered (no usable local address, a port range that is taken, …).
    case iceGatheringFailed(reason: String)
    /// The ICE agent could not be created or driven (libnice or thread failure).
    case iceAgentFailure(String)
    /// The ICE agent was closed before or during the call.
    case iceClosed

    /// True when the remote peer's description is at fault (malformed or unanswerable): a 4xx.
    public var isPeerError: Bool {
        switch self {
        case .dtls(let failure): return failure.isPeerError
        case .srtp(let failure): return failure.isPeerError
        case .invalidConfiguration, .iceGatheringFailed, .iceAgentFailure, .iceClosed: return false
        default: return true
        }
    }

    public var description: String {
        switch self {
        case .dtls(let failure): failure.description
        case .srtp(let failure): failure.description
        case .sdpTooLarge(let bytes, let limit): "SDP of \(bytes) bytes exceeds the limit of \(limit)"
        case .sdpNotText: "SDP is not UTF-8 text"
        case .sdpBadLine(let line, let text, let reason): "SDP line \(line) (\(text)): \(reason)"
        case .sdpMissingLine(let type, let section): "SDP \(section) lacks its \(type) line"
        case .sdpUnexpectedLine(let line, let text): "SDP line \(line) (\(text)) is not allowed there"
        case .sdpBadAttribute(let line, let name, let reason): "SDP line \(line): bad a=\(name): \(reason)"
        case .offerHasNoVP8Video: "the offer has no video m-line with VP8"
        case .offerWithoutRTCPMux(let mid): "the video m-line (mid \(mid ?? "none")) lacks a=rtcp-mux"
        case .unsupportedProfile(let profile): "unsupported media profile \(profile)"
        case .offerWithoutICECredentials: "the offer lacks a=ice-ufrag/a=ice-pwd"
        case .offerWithoutFingerprint: "the offer lacks a=fingerprint"
        case .unsupportedFingerprintHash(let names):
            "the offer's a=fingerprint uses no hash function we check (sha-1 … sha-512): \(names.joined(separator: ", "))"
        case .unsupportedSetup(let role): "unsupported a=setup:\(role)"
        case .invalidConfiguration(let reason): "invalid local configuration: \(reason)"
        case .iceBadRemoteCandidate(let candidate, let reason): "bad remote ICE candidate (\(candidate)): \(reason)"
        case .iceBadRemoteCredentials(let reason): "bad remote ICE credentials: \(reason)"
        case .iceGatheringFailed(let reason): "ICE candidate gathering failed: \(reason)"
        case .iceAgentFailure(let reason): "ICE agent failure: \(reason)"
        case .iceClosed: "the ICE agent is closed"
        }
    }
}
