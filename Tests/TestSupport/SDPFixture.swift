import Foundation
public import SDP

/// The SDP offers in `Tests/Fixtures/SDP` (how each was made: its README) and our side's fixed parameters,
/// so answers to them are byte-exact.
public enum SDPFixture {
    /// The folder of the offers.
    public static let folder = TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/SDP")

    /// The text of one offer (`chromium-whep-offer.sdp`, `aiortc-offer.sdp`, …).
    public static func text(_ name: String) throws -> String {
        try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
    }

    /// Our side's parameters, fixed: ICE credentials `sc01` / `0123456789abcdefghijkl`, a SHA-256
    /// fingerprint of the bytes 0…31, SSRCs 0x11111111 (video) and 0x22222222 (RTX), and `candidates` (a
    /// host, a server-reflexive and a relayed one unless given).
    public static func localParameters(candidates: [String] = [
        "1 1 udp 2130706431 127.0.0.1 50000 typ host",
        "2 1 udp 1694498815 203.0.113.7 50000 typ srflx raddr 127.0.0.1 rport 50000",
        "3 1 udp 16777215 198.51.100.9 3478 typ relay raddr 203.0.113.7 rport 50000",
    ]) throws(SDPError) -> LocalMediaParameters {
        LocalMediaParameters(
            iceUfrag: "sc01", icePwd: "0123456789abcdefghijkl",
            fingerprint: Fingerprint(algorithm: "sha-256", digest: Array(0..<32)),
            candidates: try candidates.map { text throws(SDPError) in try ICECandidate(parsing: text) },
            videoSSRC: 0x1111_1111, rtxSSRC: 0x2222_2222, cname: "screencast-cname", sessionID: 4_242_424_242, sessionVersion: 2)
    }
}
