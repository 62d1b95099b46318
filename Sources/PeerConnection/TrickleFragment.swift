public import SDP

/// A trickle-ICE fragment (RFC 8840 §9, `application/trickle-ice-sdpfrag`) as WHEP PATCHes it: its
/// `a=candidate` lines and `a=end-of-candidates`. An `a=ice-ufrag` other than the session's asks for an ICE
/// restart (RFC 8839 §4.4.1.1.1), which is refused; other lines are ignored.
///
/// ```
///   a=ice-ufrag:<the offer's>        (optional; another one: refused)
///   a=candidate:1 1 udp 2130706431 192.0.2.1 50000 typ host     ──▶ candidates (each parsed, RFC 8839 §5.1)
///   a=end-of-candidates                                          ──▶ complete
/// ```
public struct TrickleFragment: Sendable, Equatable {
    /// The candidates, as given after `a=` (`candidate:…`), in order.
    public var candidates: [String]
    /// `a=end-of-candidates` was present.
    public var complete: Bool

    public init(candidates: [String], complete: Bool) {
        self.candidates = candidates
        self.complete = complete
    }

    /// - Parameters:
    ///   - text: the PATCH body, CRLF or LF line ends.
    ///   - ufrag: the session's remote `ice-ufrag` (from the offer).
    /// - Throws: ``SDPError/badAttribute(line:name:reason:)`` (line numbers from 1) for a malformed candidate or
    ///   an ICE restart; nothing is applied then.
    public init(parsing text: String, ufrag: String) throws(SDPError) {
        candidates = []
        complete = false
        for (index, raw) in text.split(whereSeparator: \.isNewline).enumerated() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line.hasPrefix("a=ice-ufrag:") {
                guard line.dropFirst("a=ice-ufrag:".count) == ufrag else {
                    throw .badAttribute(line: index + 1, name: "ice-ufrag", reason: "ICE restart is not supported")
                }
            } else if line.hasPrefix("a=candidate:") {
                let value = String(line.dropFirst(2))
                do {
                    _ = try ICECandidate(parsing: value)
                } catch {
                    throw .badAttribute(line: index + 1, name: "candidate", reason: "\(error)")
                }
                candidates.append(value)
            } else if line == "a=end-of-candidates" {
                complete = true
            }
        }
    }
}
