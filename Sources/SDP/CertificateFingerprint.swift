/// Fingerprints of DTLS certificates (RFC 8122 §5; RFC 8827 §6.5 and RFC 8842 §5 for WebRTC), beyond
/// what the SDP parser needs: parsing one from its `a=fingerprint` value, comparing without regard to case,
/// and choosing which of a peer's fingerprints to check.
extension Fingerprint {
    /// Parses `<hash function> <hex:hex:…>` as written after `a=fingerprint:` (`sha-256 AB:CD:…`); the hash
    /// name is lowercased, hex digits of either case are accepted.
    /// - Throws: ``SDPError/badAttribute(line:name:reason:)`` (line 0) when it is not that shape.
    public init(sdpValue text: String) throws(SDPError) {
        try self.init(value: text, line: 0)
    }

    /// True when both name the same hash function and the same digest bytes (hex compared without regard
    /// to case, as RFC 8122 §5 allows either).
    public func matches(_ other: Fingerprint) -> Bool {
        guard algorithm.lowercased() == other.algorithm.lowercased(), let mine = digest else { return false }
        return mine == other.digest
    }

    /// Rank of the hash function: higher is stronger; nil when unsupported.
    public var strength: Int? {
        switch algorithm.lowercased() {
        case "sha-1": 1
        case "sha-224": 2
        case "sha-256": 3
        case "sha-384": 4
        case "sha-512": 5
        default: nil
        }
    }

    /// Of a peer's fingerprints, those to check a certificate against: every well-formed one of the
    /// strongest hash function we support (weaker ones beside it are not checked; several of that function
    /// may name several certificates the peer might use, RFC 8122 §5). Empty when none is usable.
    public static func strongest(of fingerprints: [Fingerprint]) -> [Fingerprint] {
        let usable = fingerprints.filter { $0.strength != nil && $0.digest != nil }
        guard let best = usable.compactMap(\.strength).max() else { return [] }
        return usable.filter { $0.strength == best }
    }
}
