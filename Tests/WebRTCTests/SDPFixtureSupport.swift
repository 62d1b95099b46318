import Foundation
import WebRTC
import XCTest

/// The folder of SDP fixtures beside this file.
let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

func fixture(_ name: String) throws -> String {
    try String(contentsOf: fixtures.appendingPathComponent(name), encoding: .utf8)
}

/// Our side's parameters, fixed so answers are byte-exact.
func localParameters(candidates: [String] = [
    "1 1 udp 2130706431 127.0.0.1 50000 typ host",
    "2 1 udp 1694498815 203.0.113.7 50000 typ srflx raddr 127.0.0.1 rport 50000",
    "3 1 udp 16777215 198.51.100.9 3478 typ relay raddr 203.0.113.7 rport 50000",
]) throws(WebRTCError) -> LocalMediaParameters {
    LocalMediaParameters(
        iceUfrag: "sc01", icePwd: "0123456789abcdefghijkl",
        fingerprint: Fingerprint(algorithm: "sha-256", digest: Array(0..<32)),
        candidates: try candidates.map { text throws(WebRTCError) in try ICECandidate(parsing: text) },
        videoSSRC: 0x1111_1111, rtxSSRC: 0x2222_2222, cname: "screencast-cname", sessionID: 4_242_424_242, sessionVersion: 2)
}

/// The lines of a description's text.
func lines(_ text: String) -> [String] {
    text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
}

/// Asserts that `body` throws the given `WebRTCError`.
func assertThrowsWebRTCError<T>(
    _ body: @autoclosure () throws(WebRTCError) -> T, _ expected: WebRTCError, file: StaticString = #filePath, line: UInt = #line
) {
    do {
        _ = try body()
        XCTFail("expected \(expected)", file: file, line: line)
    } catch {
        XCTAssertEqual(error, expected, file: file, line: line)
    }
}
