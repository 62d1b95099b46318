import Foundation
import Glibc
import TestSupport
import XCTest

/// Bad input while a good aiortc viewer watches: malformed SDP, an offer without VP8, missing and wrong
/// tokens, a peer whose certificate does not match its SDP fingerprint, garbage UDP at the ICE port. Each
/// gets a clear error (or is dropped), and the good viewer keeps decoding without interruption.
final class BadInputTests: XCTestCase {
    func testBadInputIsRefusedWhileAGoodViewerKeepsGoing() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.BadInputTests/testBadInputIsRefusedWhileAGoodViewerKeepsGoing", timeout: 150)
        }
        guard EndToEnd.requireTools([EndToEnd.venvPython, TestPaths.executable("screencast-call")]) else { return }
        let token = "s3cret-token"
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "640x360"], token: token)
        defer { call.stop() }
        let pageLine = try XCTUnwrap(call.waitForLine("viewer page", timeout: 5))
        XCTAssertTrue(pageLine.contains("token=\"required (not logged)\""), pageLine)
        XCTAssertFalse(call.log.contains(token), "the token is never in the log (journals and files others read)")
        let seconds = 12.0
        let good = try PythonPeer(EndToEnd.venvPython, "whep_viewer.py", ["--url", call.whepURL, "--token=" + token, "--seconds", String(seconds)])

        // Wait until the good viewer is connected.
        var goodPeer: [String: Any]?
        let deadline = Date().addingTimeInterval(10)
        while goodPeer == nil, Date() < deadline {
            goodPeer = (try? call.viewers())?["peers"].flatMap { $0 as? [[String: Any]] }?.first { $0["state"] as? String == "connected" }
            if goodPeer == nil { Thread.sleep(forTimeInterval: 0.2) }
        }
        let connected = try XCTUnwrap(goodPeer, "the good viewer never connected:\n\(call.log)")

        let sdpHeaders = ["Content-Type": "application/sdp", "Authorization": "Bearer \(token)"]
        let offer = try String(
            contentsOf: TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/SDP/aiortc-offer.sdp"), encoding: .utf8)

        // Tokens: none → 401, wrong → 401 (before the body is looked at).
        let noToken = try HTTP.request("POST", port: call.port, path: "/whep", headers: ["Content-Type": "application/sdp"], body: Array(offer.utf8))
        XCTAssertEqual(noToken.status, 401, noToken.text)
        let wrongToken = try HTTP.request(
            "POST", port: call.port, path: "/whep", headers: ["Content-Type": "application/sdp", "Authorization": "Bearer nope"],
            body: Array(offer.utf8))
        XCTAssertEqual(wrongToken.status, 401, wrongToken.text)
        XCTAssertEqual(wrongToken.headers["www-authenticate"]?.hasPrefix("Bearer"), true)

        // Malformed SDP → 400 with the parser's reason; an offer without VP8 → 422.
        let malformed = try HTTP.request("POST", port: call.port, path: "/whep", headers: sdpHeaders, body: Array("v=0\r\nthis is not sdp\r\n".utf8))
        XCTAssertEqual(malformed.status, 400, malformed.text)
        print("e2e: malformed SDP → \(malformed.status) \(malformed.text)")
        let noVP8 = offer.replacingOccurrences(of: "VP8/90000", with: "VP9/90000")
        let refused = try HTTP.request("POST", port: call.port, path: "/whep", headers: sdpHeaders, body: Array(noVP8.utf8))
        XCTAssertEqual(refused.status, 422, refused.text)
        XCTAssertTrue(refused.text.contains("VP8"), refused.text)
        print("e2e: offer without VP8 → \(refused.status) \(refused.text)")

        // Trickle and teardown on unknown sessions, and a malformed candidate.
        let unknown = try HTTP.request("DELETE", port: call.port, path: "/whep/0123456789abcdef", headers: ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(unknown.status, 404)
        let goodID = try XCTUnwrap(connected["id"] as? String)
        let badCandidate = try HTTP.request(
            "PATCH", port: call.port, path: "/whep/\(goodID)",
            headers: ["Content-Type": "application/trickle-ice-sdpfrag", "Authorization": "Bearer \(token)"],
            body: Array("a=candidate:garbage\r\n".utf8))
        XCTAssertEqual(badCandidate.status, 400, badCandidate.text)

        // Garbage at the good peer's ICE port: STUN-, DTLS-, RTP- and RTCP-looking datagrams and noise.
        let localPair = try XCTUnwrap((connected["pair"] as? [String: Any])?["local"] as? String)
        let icePort = try XCTUnwrap(UInt16(localPair.split(separator: ":").last ?? ""))
        let sent = try sendGarbage(to: icePort, count: 400)
        Thread.sleep(forTimeInterval: 0.5)
        let afterGarbage = (try call.viewers()["peers"] as? [[String: Any]])?.first { $0["id"] as? String == connected["id"] as? String }
        let counters = ["datagramsReceived", "ignoredDatagrams", "srtpErrors", "rtcpReceived"].map { name in
            "\(name) \(connected[name] ?? "?") → \(afterGarbage?[name] ?? "?")"
        }
        XCTAssertFalse(call.log.contains(token), "nor after requests that carried it")
        print("e2e: sent \(sent) garbage datagrams to the ICE port \(icePort); the peer's counters: \(counters)")
        XCTAssertEqual(afterGarbage?["state"] as? String, "connected", "garbage does not end the peer")

        // A peer whose DTLS certificate does not match the fingerprint in its offer.
        let impostor = try EndToEnd.runPeer(
            EndToEnd.venvPython, "whep_viewer.py", ["--url", call.whepURL, "--token=" + token, "--seconds", "3", "--mangle-fingerprint"],
            timeout: 60)
        let impostorView = try XCTUnwrap((impostor["viewers"] as? [[String: Any]])?.first)
        print("e2e: impostor \(impostorView)")
        XCTAssertEqual(impostorView["frames"] as? Int, 0, "no media without a matching fingerprint")

        let report = try good.finish(timeout: 60)
        let viewer = try XCTUnwrap((report["viewers"] as? [[String: Any]])?.first, "\(report)")
        print("e2e: the good viewer \(viewer)")
        XCTAssertNil(viewer["error"] as? String)
        let frames = viewer["frames"] as? Int ?? 0
        XCTAssertGreaterThanOrEqual(Double(frames), (seconds - 1) * 30 * 0.6, "the good viewer kept decoding")
        XCTAssertLessThanOrEqual(viewer["maxGapMs"] as? Double ?? .infinity, 500, "without interruption")

        let stats = try call.viewers()
        print("e2e: call viewers after the bad input \(stats)")
        let ended = try XCTUnwrap(stats["ended"] as? [[String: Any]])
        let mismatch = ended.first { ($0["reason"] as? String ?? "").contains("matches none of") }
        XCTAssertNotNil(mismatch, "the impostor ended with a fingerprint mismatch: \(ended)")
        XCTAssertEqual(mismatch?["failed"] as? Bool, true)
        XCTAssertTrue(call.process.isRunning, "the call survived")
    }

    /// Sends `count` datagrams of assorted garbage from a fresh socket to 127.0.0.1:`port`.
    private func sendGarbage(to port: UInt16, count: Int) throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw CallUnderTestError.http("udp socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var generator = SystemRandomNumberGenerator()
        var sent = 0
        for index in 0..<count {
            var datagram = (0..<Int.random(in: 1...1300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            switch index % 5 {
            case 0: datagram[0] = 0x00  // STUN range
            case 1: datagram[0] = 0x16  // DTLS handshake
            case 2: datagram[0] = 0x80  // RTP
            case 3:
                datagram[0] = 0x81  // RTCP
                if datagram.count > 1 { datagram[1] = 0xC9 }
            default: break  // noise
            }
            let result = datagram.withUnsafeBytes { bytes in
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            if result > 0 { sent += 1 }
        }
        return sent
    }
}
