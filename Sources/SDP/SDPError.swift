/// Why a session description was refused or could not be answered. The one error type of the `SDP`
/// module (typed throws throughout; nothing here traps on input from a peer).
///
/// ``isPeerError`` separates the peer's mistakes (the HTTP layer answers 4xx) from ours (5xx).
public enum SDPError: Error, Sendable, Equatable, CustomStringConvertible {
    // MARK: SDP syntax (RFC 8866)

    /// The description is larger than the parser accepts (bytes, limit).
    case tooLarge(bytes: Int, limit: Int)
    /// The BUNDLE transport carries more `a=candidate` lines than ``RemoteTransport/maxCandidates`` (count,
    /// limit): refused as too large (413), like ``tooLarge(bytes:limit:)``.
    case tooManyCandidates(count: Int, limit: Int)
    /// The bytes are not UTF-8 text, or hold a NUL or a bare CR.
    case notText
    /// A line is not `<letter>=<value>`, has an unknown type letter, or its fields are malformed.
    /// `line` counts from 1.
    case badLine(line: Int, text: String, reason: String)
    /// A required line is absent: `v=`, `o=`, `s=`, `t=`, or `c=` (section: "session" or "m-line N").
    case missingLine(String, section: String)
    /// A line where the grammar does not allow it (a second `v=`, `o=` inside a media section, …).
    case unexpectedLine(line: Int, text: String)
    /// A known attribute with a malformed value (`a=rtpmap`, `a=candidate`, `a=fingerprint`, …).
    case badAttribute(line: Int, name: String, reason: String)

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
    /// A remote answer to our offer that we cannot use (why, in words; ``VideoAnswerReader``).
    case answerRefused(String)

    // MARK: Trickle fragments (RFC 8840 §9, RFC 8838)

    /// A trickle fragment with another `ice-ufrag`/`ice-pwd`: an ICE restart (RFC 8839 §4.4.1.1.1), which an
    /// answering session does not support: understood but unanswerable (422). `line` counts from 1.
    case iceRestartNotSupported(line: Int)
    /// A trickle fragment's `a=mid` names no m-line of the session (RFC 8840 §4.4, RFC 8838 §11): the
    /// fragment is well-formed but its candidates belong nowhere (422).
    case unknownMid(line: Int, mid: String)

    // MARK: Ours

    /// The local parameters given to a builder are invalid (what was wrong).
    case invalidConfiguration(String)

    /// True for the syntax errors (RFC 8866): the description is not well-formed SDP (an HTTP layer's 400;
    /// ``tooLarge(bytes:limit:)`` is apart, a 413).
    public var isMalformed: Bool {
        switch self {
        case .notText, .badLine, .missingLine, .unexpectedLine, .badAttribute: true
        default: false
        }
    }

    /// True when the remote peer's description is at fault (malformed or unanswerable): a 4xx.
    public var isPeerError: Bool {
        switch self {
        case .invalidConfiguration: return false
        default: return true
        }
    }

    public var description: String {
        switch self {
        case .tooLarge(let bytes, let limit): "SDP of \(bytes) bytes exceeds the limit of \(limit)"
        case .tooManyCandidates(let count, let limit): "the offer has \(count) ICE candidates, more than the \(limit) accepted"
        case .notText: "SDP is not UTF-8 text"
        case .badLine(let line, let text, let reason): "SDP line \(line) (\(text.escapingControls)): \(reason.escapingControls)"
        case .missingLine(let type, let section): "SDP \(section) lacks its \(type) line"
        case .unexpectedLine(let line, let text): "SDP line \(line) (\(text.escapingControls)) is not allowed there"
        case .badAttribute(let line, let name, let reason): "SDP line \(line): bad a=\(name.escapingControls): \(reason.escapingControls)"
        case .offerHasNoVP8Video: "the offer has no video m-line with VP8"
        case .offerWithoutRTCPMux(let mid): "the video m-line (mid \(mid ?? "none")) lacks a=rtcp-mux"
        case .unsupportedProfile(let profile): "unsupported media profile \(profile)"
        case .offerWithoutICECredentials: "the offer lacks a=ice-ufrag/a=ice-pwd"
        case .offerWithoutFingerprint: "the offer lacks a=fingerprint"
        case .unsupportedFingerprintHash(let names):
            "the offer's a=fingerprint uses no hash function we check (sha-1 … sha-512): \(names.joined(separator: ", "))"
        case .unsupportedSetup(let role): "unsupported a=setup:\(role)"
        case .answerRefused(let reason): "unusable answer: \(reason)"
        case .iceRestartNotSupported(let line):
            "SDP fragment line \(line): an ICE restart (new a=ice-ufrag/a=ice-pwd) is not supported"
        case .unknownMid(let line, let mid):
            "SDP fragment line \(line): a=mid:\(mid.escapingControls) names no m-line of this session"
        case .invalidConfiguration(let reason): "invalid local configuration: \(reason)"
        }
    }
}

extension SDPError {
    /// The same error placed on `line` of an enclosing text (a candidate parsed alone says line 0; in a
    /// trickle fragment it is on line `line`). Other cases are returned unchanged.
    public func at(line: Int) -> SDPError {
        switch self {
        case .badAttribute(_, let name, let reason): .badAttribute(line: line, name: name, reason: reason)
        case .badLine(_, let text, let reason): .badLine(line: line, text: text, reason: reason)
        case .unexpectedLine(_, let text): .unexpectedLine(line: line, text: text)
        default: self
        }
    }
}

extension String {
    /// The text with C0 control characters and DEL escaped as the logger writes them (`\r`, `\n`, `\t`,
    /// else `\u{1b}`), so a message quoting peer input never carries raw control bytes (a NUL, an ESC, a bare
    /// CR) into a response body or a log line.
    var escapingControls: String {
        guard unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return self }
        var result = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\r": result += "\\r"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: result += "\\u{\(String(scalar.value, radix: 16))}"
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
