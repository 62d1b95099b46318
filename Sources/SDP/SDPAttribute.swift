/// One `a=` line (RFC 8866 §5.13): the attributes WebRTC negotiates, typed; any other kept as written.
public enum SDPAttribute: Sendable, Equatable {
    case rtpmap(RTPMap)
    case fmtp(FormatParameters)
    case rtcpFeedback(RTCPFeedbackAttribute)
    /// `a=mid:<tag>` (RFC 5888 §4).
    case mid(String)
    case group(SDPGroup)
    /// `a=ice-ufrag` (RFC 8839 §5.4): 4–256 ice-chars.
    case iceUfrag(String)
    /// `a=ice-pwd` (RFC 8839 §5.4): 22–256 ice-chars.
    case icePwd(String)
    /// `a=ice-options:<option> …` (RFC 8839 §5.6), e.g. `trickle`.
    case iceOptions([String])
    /// `a=ice-lite` (RFC 8839 §5.3).
    case iceLite
    case fingerprint(Fingerprint)
    case setup(DTLSSetup)
    case candidate(ICECandidate)
    /// `a=end-of-candidates` (RFC 8840 §8.2).
    case endOfCandidates
    /// `a=rtcp-mux` (RFC 5761 §5.1.3).
    case rtcpMux
    /// `a=rtcp-rsize` (RFC 5506 §5).
    case rtcpReducedSize
    case ssrc(SSRCAttribute)
    case ssrcGroup(SSRCGroup)
    case extmap(ExtensionMap)
    case direction(MediaDirection)
    /// Any other attribute: its name and the text after the first colon (nil for a property attribute).
    case other(name: String, value: String?)

    /// Parses the text after `a=`.
    init(line text: Substring, number line: Int) throws(SDPError) {
        let name: Substring
        let value: String?
        if let colon = text.firstIndex(of: ":") {
            name = text[..<colon]
            value = String(text[text.index(after: colon)...])
        } else {
            name = text
            value = nil
        }
        guard !name.isEmpty, name.utf8.allSatisfy(\.isTokenByte) else {
            throw .badLine(line: line, text: "a=" + text, reason: "attribute name is not a token")
        }
        func required() throws(SDPError) -> String {
            guard let value, !value.isEmpty else { throw .badAttribute(line: line, name: String(name), reason: "no value") }
            return value
        }
        switch name {
        case "rtpmap": self = .rtpmap(try RTPMap(value: required(), line: line))
        case "fmtp": self = .fmtp(try FormatParameters(value: required(), line: line))
        case "rtcp-fb": self = .rtcpFeedback(try RTCPFeedbackAttribute(value: required(), line: line))
        case "mid":
            let mid = try required()
            guard mid.utf8.allSatisfy(\.isTokenByte) else { throw .badAttribute(line: line, name: "mid", reason: "not a token") }
            self = .mid(mid)
        case "group": self = .group(try SDPGroup(value: required(), line: line))
        case "ice-ufrag", "ice-pwd":
            let text = try required()
            guard text.utf8.allSatisfy(\.isICEByte) else {
                throw .badAttribute(line: line, name: String(name), reason: "characters outside ALPHA / DIGIT / + /")
            }
            self = name == "ice-ufrag" ? .iceUfrag(text) : .icePwd(text)
        case "ice-options":
            let options = try required().split(separator: " ").map(String.init)
            // Only spaces would print back as `a=ice-options:`, which has no value.
            guard !options.isEmpty else { throw .badAttribute(line: line, name: "ice-options", reason: "no options") }
            self = .iceOptions(options)
        case "ice-lite" where value == nil: self = .iceLite
        case "fingerprint": self = .fingerprint(try Fingerprint(value: required(), line: line))
        case "setup":
            guard let role = DTLSSetup(rawValue: try required()) else {
                throw .badAttribute(line: line, name: "setup", reason: "not actpass/active/passive/holdconn")
            }
            self = .setup(role)
        case "candidate": self = .candidate(try ICECandidate(value: required(), line: line))
        case "end-of-candidates" where value == nil: self = .endOfCandidates
        case "rtcp-mux" where value == nil: self = .rtcpMux
        case "rtcp-rsize" where value == nil: self = .rtcpReducedSize
        case "ssrc": self = .ssrc(try SSRCAttribute(value: required(), line: line))
        case "ssrc-group": self = .ssrcGroup(try SSRCGroup(value: required(), line: line))
        case "extmap": self = .extmap(try ExtensionMap(value: required(), line: line))
        default:
            if value == nil, let direction = MediaDirection(rawValue: String(name)) {
                self = .direction(direction)
            } else {
                self = .other(name: String(name), value: value)
            }
        }
    }

    /// The attribute's name (`rtpmap`, `candidate`, `sendonly`, …).
    public var name: String {
        switch self {
        case .rtpmap: "rtpmap"
        case .fmtp: "fmtp"
        case .rtcpFeedback: "rtcp-fb"
        case .mid: "mid"
        case .group: "group"
        case .iceUfrag: "ice-ufrag"
        case .icePwd: "ice-pwd"
        case .iceOptions: "ice-options"
        case .iceLite: "ice-lite"
        case .fingerprint: "fingerprint"
        case .setup: "setup"
        case .candidate: "candidate"
        case .endOfCandidates: "end-of-candidates"
        case .rtcpMux: "rtcp-mux"
        case .rtcpReducedSize: "rtcp-rsize"
        case .ssrc: "ssrc"
        case .ssrcGroup: "ssrc-group"
        case .extmap: "extmap"
        case .direction(let direction): direction.rawValue
        case .other(let name, _): name
        }
    }

    /// The text after `a=`.
    public var sdpText: String {
        switch self {
        case .rtpmap(let map): "rtpmap:" + map.sdpValue
        case .fmtp(let parameters): "fmtp:" + parameters.sdpValue
        case .rtcpFeedback(let feedback): "rtcp-fb:" + feedback.sdpValue
        case .mid(let mid): "mid:" + mid
        case .group(let group): "group:" + group.sdpValue
        case .iceUfrag(let ufrag): "ice-ufrag:" + ufrag
        case .icePwd(let pwd): "ice-pwd:" + pwd
        case .iceOptions(let options): "ice-options:" + options.joined(separator: " ")
        case .fingerprint(let fingerprint): "fingerprint:" + fingerprint.sdpValue
        case .setup(let role): "setup:" + role.rawValue
        case .candidate(let candidate): "candidate:" + candidate.sdpValue
        case .ssrc(let ssrc): "ssrc:" + ssrc.sdpValue
        case .ssrcGroup(let group): "ssrc-group:" + group.sdpValue
        case .extmap(let map): "extmap:" + map.sdpValue
        case .other(let name, let value): name + (value.map { ":" + $0 } ?? "")
        case .iceLite, .endOfCandidates, .rtcpMux, .rtcpReducedSize, .direction: name
        }
    }
}
