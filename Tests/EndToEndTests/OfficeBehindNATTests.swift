import Foundation
import TestSupport
import XCTest

/// A whole office behind one NAT (issue 31): twenty viewers whose requests all leave from one address open a
/// `--share` link in the same second — each loads the page over HTTPS, POSTs its WHEP offer and polls `/stats`
/// as the page does — while 50 slow clients from another address hold connections by stalling TLS handshakes.
/// Under the old per-address limits (8 connections, 4 unconnected sessions) 12 of 16 got 429.
final class OfficeBehindNATTests: XCTestCase {
    func testTwentyViewersFromOneAddressAllWatchWhileSlowClientsHoldConnections() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace(
                "EndToEndTests.OfficeBehindNATTests/testTwentyViewersFromOneAddressAllWatchWhileSlowClientsHoldConnections", timeout: 180)
        }
        guard EndToEnd.requireTools([EndToEnd.venvPython, TestPaths.executable("screencast-call")]) else { return }
        let call = try CallUnderTest(["--share", "--source", "testpattern", "--pattern-size", "320x240", "--max-viewers", "24"])
        defer { call.stop() }
        let deadline = Date().addingTimeInterval(5)
        while !call.printed.contains(where: { $0.contains("SHA-256") }), Date() < deadline { usleep(50_000) }
        let link = try XCTUnwrap(call.printed.first { $0.hasPrefix("    https://") }?.trimmingCharacters(in: .whitespaces), "\(call.printed)")
        let token = String(link.split(separator: "=").last ?? "")
        let base = "https://127.0.0.1:\(call.port)"
        let viewers = try PythonPeer(EndToEnd.venvPython, "whep_viewer.py", [
            "--url", base + "/whep", "--token=" + token, "--insecure", "--together", "--viewers", "20", "--seconds", "6",
            "--page", link, "--poll", base + "/stats", "--slow-clients", "50", "--slow-source", "127.0.0.2",
        ])
        let report = try viewers.finish(timeout: 120)
        let results = try XCTUnwrap(report["viewers"] as? [[String: Any]], "\(report)")
        for result in results { print("e2e: office viewer \(result.filter { $0.key != "inbound" && $0.key != "connectionStates" })") }
        print("e2e: slow clients \(report["slowClients"] ?? "-")")
        XCTAssertEqual(results.count, 20)
        for result in results {
            let index = result["index"] as? Int ?? -1
            XCTAssertNil(result["error"] as? String, "viewer \(index)")
            XCTAssertEqual(result["pageStatus"] as? Int, 200, "viewer \(index) loads the page")
            XCTAssertEqual(result["width"] as? Int, 320, "viewer \(index) decodes the shared picture")
            XCTAssertGreaterThanOrEqual(result["frames"] as? Int ?? 0, 10, "viewer \(index) keeps receiving")
            XCTAssertLessThanOrEqual(result["firstFrameMs"] as? Double ?? .infinity, 5000, "viewer \(index): its first frame within 5 s of opening the page")
            XCTAssertGreaterThanOrEqual(result["polls200"] as? Int ?? 0, 3, "viewer \(index) reads /stats as the page does")
            XCTAssertEqual(result["polls200"] as? Int, result["polls"] as? Int, "viewer \(index): every /stats poll answered")
        }
        let slow = report["slowClients"] as? [String: Any] ?? [:]
        XCTAssertEqual(slow["opened"] as? Int, 50, "the slow clients connected")
        XCTAssertGreaterThanOrEqual(slow["closedBeforeEnd"] as? Int ?? 0, 50 - 32, "the slow address holds at most 32 incomplete connections")
        XCTAssertFalse(call.log.contains("too many sessions pending"), "no 429")
        XCTAssertTrue(call.log.contains("http connection refused: too many incomplete requests from one address"),
                      "the slow address was capped at 32 (18 of its 50 refused)")
    }

    /// `--share` on a host with loopback only (this loopback-only namespace) and no `--ice-address`: the call says
    /// at start that ICE offers 127.0.0.1, and a viewer's offer is answered and plays (it was `HTTP 500 … no usable
    /// local address` for every viewer, issue 34).
    func testAShareOnAHostWithLoopbackOnlyServesViewersOnIt() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace(
                "EndToEndTests.OfficeBehindNATTests/testAShareOnAHostWithLoopbackOnlyServesViewersOnIt", timeout: 120)
        }
        guard EndToEnd.requireTools([EndToEnd.venvPython, TestPaths.executable("screencast-call")]) else { return }
        let call = try CallUnderTest(["--share", "--source", "testpattern", "--pattern-size", "320x240"], iceAddress: false)
        defer { call.stop() }
        XCTAssertNotNil(call.waitForLine("no network address but loopback: ICE offers 127.0.0.1", timeout: 5), call.log)
        let deadline = Date().addingTimeInterval(5)
        while !call.printed.contains(where: { $0.contains("SHA-256") }), Date() < deadline { usleep(50_000) }
        XCTAssertTrue(call.printed.contains { $0.contains("Sharing on this machine only") }, "\(call.printed)")
        let link = try XCTUnwrap(call.printed.first { $0.hasPrefix("    https://") }?.trimmingCharacters(in: .whitespaces), "\(call.printed)")
        let token = String(link.split(separator: "=").last ?? "")
        let report = try EndToEnd.runPeer(
            EndToEnd.venvPython, "whep_viewer.py",
            ["--url", "https://127.0.0.1:\(call.port)/whep", "--token=" + token, "--insecure", "--seconds", "3"], timeout: 60)
        let viewer = try XCTUnwrap((report["viewers"] as? [[String: Any]])?.first, "\(report)")
        XCTAssertNil(viewer["error"] as? String)
        XCTAssertEqual(viewer["width"] as? Int, 320)
        XCTAssertGreaterThanOrEqual(viewer["frames"] as? Int ?? 0, 10)
        XCTAssertFalse(call.log.contains("no usable local address"))
    }
}
