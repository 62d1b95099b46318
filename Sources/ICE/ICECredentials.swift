internal import CNice

// Local ICE credentials (RFC 8445 §5.3, RFC 8839 §5.4), made here rather than by libnice.
extension ICEAgent.Credentials {
    /// The characters of our ufrag and password: ALPHA / DIGIT only. RFC 8839's ice-char also allows `+` and
    /// `/`, which libnice's own generator uses; a WHIP server that builds a regular expression from the
    /// credentials (simple-whip-server's ICE restart does, `new RegExp('a=ice-pwd:' + pwd)`) fails with
    /// HTTP 500 on `++`, and silently mismatches on a single `+`. Without them nothing of ours can trip it.
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
    /// Characters of a ufrag we make: 8 × log2(62) ≈ 47.6 bits (RFC 8445 §5.3 asks for at least 24).
    static let ufragLength = 8
    /// Characters of a password we make: 24 × log2(62) ≈ 142.9 bits (RFC 8445 §5.3 asks for at least 128).
    static let passwordLength = 24

    /// A fresh pair from `generator`; ``ICEAgent`` uses `SystemRandomNumberGenerator` (getrandom(2)).
    static func random<Generator: RandomNumberGenerator>(using generator: inout Generator) -> ICEAgent.Credentials {
        func text(_ count: Int) -> String {
            String(decoding: (0..<count).map { _ in alphabet.randomElement(using: &generator)! }, as: UTF8.self)
        }
        return ICEAgent.Credentials(ufrag: text(ufragLength), password: text(passwordLength))
    }

    /// Fresh local credentials from the system's CSPRNG, set on `streamID` (`nice_agent_set_local_credentials`,
    /// effective while no checks run: at creation and right after `nice_agent_restart_stream`) and read back.
    static func replace(on agent: OpaquePointer, streamID: UInt32) -> ICEAgent.Credentials? {
        var system = SystemRandomNumberGenerator()
        let fresh = random(using: &system)
        guard nice_agent_set_local_credentials(agent, streamID, fresh.ufrag, fresh.password) != 0 else { return nil }
        return ICEAgentCore.readCredentials(agent, streamID)
    }
}
