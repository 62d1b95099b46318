public import SDP

/// A trickle-ICE fragment (RFC 8840 §9, `application/trickle-ice-sdpfrag`) as WHEP PATCHes it: its
/// `a=candidate` lines and `a=end-of-candidates`. An `a=ice-ufrag` / `a=ice-pwd` other than the session's
/// asks for an ICE restart (RFC 8839 §4.4.1.1.1), which is refused as unanswerable (422).
///
/// ```
///   a=ice-ufrag:<the offer's>        (optional; another one: an ICE restart, refused)
///   a=ice-pwd:<the offer's>          (optional; likewise)
///   a=ice-options:trickle            (optional, RFC 8840 §4.4)
///   a=group:BUNDLE 0                 (optional, RFC 8840 §4.4)
///   m=video 9 UDP/TLS/RTP/SAVPF 0    (optional dummy m= line, RFC 8840 §9)
///   a=mid:0                          (must name an m-line of the session, RFC 8840 §4.4)
///   a=candidate:1 1 udp 2130706431 192.0.2.1 50000 typ host     ──▶ candidates (each parsed, RFC 8839 §5.1)
///   a=end-of-candidates                                          ──▶ complete (RFC 8838 §13)
/// ```
/// Any other line (not `a=` or `m=`, or another attribute) is malformed (400): a fragment carries ICE
/// information only (RFC 8840 §9), so `garbage` is not one.
public struct TrickleFragment: Sendable, Equatable {
    /// The candidates, as given after `a=` (`candidate:…`), in order.
    public var candidates: [String]
    /// `a=end-of-candidates` was present.
    public var complete: Bool

    /// The attributes a fragment may carry (RFC 8840 §9 with RFC 8839 §5 and RFC 8838 §13).
    public static let allowedAttributes: Set<String> = [
        "ice-ufrag", "ice-pwd", "ice-options", "group", "mid", "candidate", "end-of-candidates",
    ]

    public init(candidates: [String], complete: Bool) {
        self.candidates = candidates
        self.complete = complete
    }

    /// - Parameters:
    ///   - text: the PATCH body, CRLF or LF line ends.
    ///   - ufrag: the session's remote `ice-ufrag` (from the offer).
    ///   - password: the session's remote `ice-pwd`; nil: not compared.
    ///   - mids: the session's m-line identifiers (every `a=mid` of the offer); nil: not checked.
    /// - Throws: nothing is applied then;
    ///   ``SDPError/badAttribute(line:name:reason:)`` or ``SDPError/badLine(line:text:reason:)`` (lines from 1)
    ///   for a malformed candidate or credential, a line that is no `a=`/`m=` line, or an attribute a fragment
    ///   does not carry (400); ``SDPError/iceRestartNotSupported(line:)`` for other credentials and
    ///   ``SDPError/unknownMid(line:mid:)`` for a mid the session lacks (422).
    public init(parsing text: String, ufrag: String, password: String? = nil, mids: [String]? = nil) throws(SDPError) {
        candidates = []
        complete = false
        for (index, raw) in text.split(whereSeparator: \.isNewline).enumerated() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            let number = index + 1
            if line.hasPrefix("m=") { continue }  // the dummy m= line; its a=mid is what identifies it
            guard line.hasPrefix("a=") else {
                throw .badLine(line: number, text: String(line.prefix(80)), reason: "a trickle fragment holds only a= and m= lines (RFC 8840 §9)")
            }
            let attribute = line.dropFirst(2)
            let name = attribute.prefix { $0 != ":" }
            let value = attribute.dropFirst(name.count + 1)
            guard Self.allowedAttributes.contains(String(name)) else {
                throw .badAttribute(line: number, name: String(name.prefix(40)),
                                    reason: "not an attribute of a trickle fragment (RFC 8840 §9: ICE attributes only)")
            }
            switch name {
            case "ice-ufrag", "ice-pwd":
                let lengths = name == "ice-ufrag" ? 4...256 : 22...256
                guard lengths.contains(value.utf8.count), ICECandidate.isICEChars(String(value)) else {
                    throw .badAttribute(line: number, name: String(name),
                                        reason: "must be \(lengths.lowerBound)–\(lengths.upperBound) ice-chars (RFC 8839 §5.4)")
                }
                let current = name == "ice-ufrag" ? ufrag : password
                if let current, value != current { throw .iceRestartNotSupported(line: number) }
            case "mid":
                if let mids, !mids.contains(String(value)) { throw .unknownMid(line: number, mid: String(value.prefix(80))) }
            case "candidate":
                do { _ = try ICECandidate(parsing: String(attribute)) } catch { throw error.at(line: number) }
                candidates.append(String(attribute))
            case "end-of-candidates":
                complete = true
            default:
                break  // ice-options, group: nothing to apply
            }
        }
    }
}
