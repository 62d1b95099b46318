import DTLS
import ICE
import PeerConnection
import ScreencastSupport
import SDP
import TestSupport
import XCTest

/// The SDP answer to a real browser's offer carries our ICE-TCP candidates (RFC 6544 §4.5) after the UDP
/// one, and none with ICE-TCP off.
final class ICETCPAnswerTests: XCTestCase {
    private func answer(iceTCP: Bool, ports: ClosedRange<UInt16>) throws -> [String] {
        let configuration = PeerConnection.Configuration(
            ice: ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"], portRange: ports, iceTCP: iceTCP),
            certificate: try DTLSCertificate.shared())
        let peer = try PeerConnection.answering(
            offer: try SDPFixture.text("chromium-whep-offer.sdp"), id: "tcp", configuration: configuration,
            logger: Logger(component: "test", threshold: .error), onEvent: { _ in })
        defer { peer.close() }
        return peer.answer.components(separatedBy: "\r\n").filter { $0.hasPrefix("a=candidate:") }
    }

    /// On: the UDP host candidate first, then `TCP … typ host tcptype active` on port 9 and `tcptype passive`
    /// on a port of the range (the answer lists by priority, and TCP ranks below UDP). Off: the UDP one only.
    func testTheAnswerCarriesPassiveAndActiveTCPCandidates() throws {
        let base = try LoopbackPort.udp()
        let ports = base...min(base + 19, UInt16.max)
        let lines = try answer(iceTCP: true, ports: ports)
        print("ice-tcp answer: \(lines)")
        XCTAssertEqual(lines.count, 3, "\(lines)")
        let fields = lines.map { $0.split(separator: " ").map(String.init) }
        XCTAssertEqual(fields.map { $0.count >= 3 ? $0[2] : "" }, ["UDP", "TCP", "TCP"], "\(lines)")
        let passive = try XCTUnwrap(lines.first { $0.hasSuffix(" typ host tcptype passive") }, "\(lines)")
        XCTAssertNotNil(passive.range(of: #"^a=candidate:[A-Za-z0-9+/]+ 1 TCP [0-9]+ 127\.0\.0\.1 [0-9]+ typ host tcptype passive$"#,
                                      options: .regularExpression), passive)
        let passivePort = UInt16(passive.split(separator: " ")[5]) ?? 0
        XCTAssertTrue(ports.contains(passivePort), "passive TCP port \(passivePort) in \(ports)")
        XCTAssertTrue(lines.contains { $0.hasSuffix(" 127.0.0.1 9 typ host tcptype active") }, "\(lines)")
        // Each parses back (as a browser reads it) to a TCP candidate with its tcptype.
        let parsed = try lines.map { try ICECandidate(parsing: $0) }
        XCTAssertEqual(Set(parsed.compactMap(\.tcpType)), ["active", "passive"])
        XCTAssertEqual(parsed.filter(\.isTCP).count, 2)
        XCTAssertTrue(parsed[0].priority > parsed[1].priority && parsed[1].priority >= parsed[2].priority, "by priority: \(lines)")

        let off = try answer(iceTCP: false, ports: ports)
        XCTAssertEqual(off.count, 1, "\(off)")
        XCTAssertTrue(off.allSatisfy { $0.contains(" UDP ") }, "\(off)")
    }
}
