import Foundation
import Media
import TestSupport
import XCTest

/// `screencast-call --whip URL --whip-token T` publishing to an independent WHIP endpoint made of aiortc
/// (`Peers/whip_endpoint.py`: RFC 9725 POST → 201 + Location, DELETE), in a loopback-only namespace: the
/// endpoint decodes the test pattern (its eight bars), and stopping the call DELETEs the session, which the
/// endpoint sees.
final class WHIPEndpointTests: XCTestCase {
    func testPublishesToAnAiortcWHIPEndpointAndDeletesOnStop() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.WHIPEndpointTests/testPublishesToAnAiortcWHIPEndpointAndDeletesOnStop", timeout: 120)
        }
        guard EndToEnd.requireTools([EndToEnd.venvPython, TestPaths.executable("screencast-call")]) else { return }
        let folder = try TemporaryDirectory(prefix: "sc-whip")
        defer { folder.remove() }
        let port = try LoopbackPort.tcp()
        let endpoint = try PythonPeer(
            EndToEnd.venvPython, "whip_endpoint.py", ["--port", String(port), "--token", "t0ken", "--seconds", "40", "--save-last", folder.path("last.yuv")])
        usleep(1_500_000)  // the endpoint binds before the call's first POST (a refused POST would be retried at once anyway)
        let call = try CallUnderTest([
            "--source", "testpattern", "--pattern-size", "640x360", "--whip", "http://127.0.0.1:\(port)/whip", "--whip-token", "t0ken",
        ])
        XCTAssertNotNil(call.waitForLine("sfu published", timeout: 20), call.log)
        usleep(4_000_000)
        XCTAssertEqual(call.stop(), 0, "the call stops cleanly on SIGTERM")
        let report = try endpoint.finish(timeout: 30)
        print("e2e: aiortc WHIP endpoint: \(report)")
        XCTAssertNil(report["error"] as? String)
        XCTAssertEqual(report["posts"] as? Int, 1)
        XCTAssertEqual(report["deletes"] as? [String], ["/whip/resource/1"], "DELETE on the Location when the call stopped")
        XCTAssertEqual((report["refused"] as? [Any])?.count, 0, "every request carried the bearer token")
        XCTAssertGreaterThan(report["frames"] as? Int ?? 0, 30, "frames decoded in 4 s")
        XCTAssertEqual(report["width"] as? Int, 640)
        XCTAssertEqual(report["height"] as? Int, 360)
        let picture = try I420Buffer(
            width: 640, height: 360, bytes: Array(try Data(contentsOf: URL(fileURLWithPath: folder.path("last.yuv")))), colorSpace: .bt601Limited)
        XCTAssertEqual(testPatternBarsShown(in: picture), 8, "the endpoint's last picture is the test pattern")
    }
}
