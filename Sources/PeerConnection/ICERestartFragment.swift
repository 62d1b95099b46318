public import SDP

/// The SDP fragment of an ICE restart (RFC 8840 §4, §9 `application/trickle-ice-sdpfrag`; RFC 9725
/// §4.3.3; RFC 8839 §4.4.1.1.1: a new `ice-ufrag` / `ice-pwd` pair is what makes it a restart). The WHIP
/// client PATCHes one with its new credentials and candidates; the server answers with one carrying its own
/// (candidates optional: without them the ones of the SDP answer still hold).
///
/// ```
///   a=ice-ufrag:<4–256 ice-chars>                  (session level, or after m=: both accepted)
///   a=ice-pwd:<22–256 ice-chars>
///   a=group:BUNDLE 0                               (RFC 8840 §4.4: the m= lines' identification)
///   m=video 9 UDP/TLS/RTP/SAVPF 96                 (a dummy m= line, port 9, RFC 8840 §9)
///   a=mid:0
///   a=candidate:1 1 udp 2130706431 192.0.2.1 50000 typ host      (RFC 8839 §5.1, each parsed)
///   a=end-of-candidates                                          (RFC 8840 §4.2 / RFC 8838 §13)
/// ```
/// Lines end in CRLF when rendered; CRLF or LF are read. Other lines are ignored (RFC 8840 §9: unknown
/// attributes are allowed).
public struct ICERestartFragment: Sendable, Equatable {
    /// The new `ice-ufrag` / `ice-pwd`.
    public var ufrag: String
    public var password: String
    /// `candidate:…` values (after `a=`), in order.
    public var candidates: [String]
    /// `a=end-of-candidates` was present.
    public var complete: Bool
    /// The `a=mid` of the bundle's m= line (nil: none given).
    public var mid: String?

    /// Longest fragment read, bytes (a restart carries two credentials and a few candidates).
    public static let sizeLimit = 16 * 1024

    public init(ufrag: String, password: String, candidates: [String], complete: Bool = true, mid: String? = nil) {
        self.ufrag = ufrag
        self.password = password
        self.candidates = candidates
        self.complete = complete
        self.mid = mid
    }

    /// The fragment as sent (CRLF line ends): credentials, then, when ``mid`` is set, the BUNDLE group and
    /// the dummy `m=video` line with `payloadType`, then candidates and `a=end-of-candidates`.
    public func rendered(payloadType: UInt8 = 96) -> String {
        var lines = ["a=ice-ufrag:\(ufrag)", "a=ice-pwd:\(password)"]
        if let mid {
            lines += ["a=group:BUNDLE \(mid)", "m=video 9 UDP/TLS/RTP/SAVPF \(payloadType)", "a=mid:\(mid)"]
        }
        lines += candidates.map { "a=\($0)" }
        if complete { lines.append("a=end-of-candidates") }
        return lines.map { $0 + "\r\n" }.joined()
    }

    /// Reads a restart fragment.
    /// - Throws: ``SDPError/tooLarge(bytes:limit:)`` over ``sizeLimit``;
    ///   ``SDPError/missingLine(_:section:)`` without `a=ice-ufrag` or `a=ice-pwd` (then it is no restart);
    ///   ``SDPError/badAttribute(line:name:reason:)`` (lines from 1) for credentials of the wrong length or
    ///   characters (RFC 8839 §5.4), a second, different `ice-ufrag`, or a malformed candidate.
    public init(parsing text: String) throws(SDPError) {
        guard text.utf8.count <= Self.sizeLimit else { throw .tooLarge(bytes: text.utf8.count, limit: Self.sizeLimit) }
        var ufrag: String?, password: String?
        candidates = []
        complete = false
        mid = nil
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let line = raw.hasSuffix("\r") ? String(raw.dropLast()) : String(raw)
            let number = index + 1
            if let value = line.value(after: "a=ice-ufrag:") {
                try Self.checkCredential(value, 4...256, line: number, name: "ice-ufrag")
                if let ufrag, ufrag != value { throw .badAttribute(line: number, name: "ice-ufrag", reason: "a second, different ice-ufrag") }
                ufrag = value
            } else if let value = line.value(after: "a=ice-pwd:") {
                try Self.checkCredential(value, 22...256, line: number, name: "ice-pwd")
                if let password, password != value { throw .badAttribute(line: number, name: "ice-pwd", reason: "a second, different ice-pwd") }
                password = value
            } else if let value = line.value(after: "a=mid:") {
                mid = value
            } else if line.hasPrefix("a=candidate:") {
                let value = String(line.dropFirst(2))
                do { _ = try ICECandidate(parsing: value) } catch { throw error.at(line: number) }
                candidates.append(value)
            } else if line == "a=end-of-candidates" {
                complete = true
            }
        }
        guard let ufrag else { throw .missingLine("a=ice-ufrag", section: "ICE restart fragment") }
        guard let password else { throw .missingLine("a=ice-pwd", section: "ICE restart fragment") }
        self.ufrag = ufrag
        self.password = password
    }

    private static func checkCredential(_ value: String, _ lengths: ClosedRange<Int>, line: Int, name: String) throws(SDPError) {
        guard lengths.contains(value.utf8.count), ICECandidate.isICEChars(value) else {
            throw .badAttribute(line: line, name: name, reason: "must be \(lengths.lowerBound)–\(lengths.upperBound) ice-chars")
        }
    }
}

extension String {
    /// What follows `prefix`, when the string starts with it.
    fileprivate func value(after prefix: String) -> String? {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil
    }
}
