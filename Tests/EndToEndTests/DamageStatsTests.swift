import Foundation
import TestSupport
import XCTest
import XTestSupport

/// `Buffer-Damage` end to end (Protocol/frame-wire.md §2.9): the real agent on the shared-memory wire, the
/// real call; small windows appearing one after another make frames whose damage the call uses — `/stats`
/// `screen.damage` counts them, their mean share of the picture, and the slots converted only in part.
final class DamageStatsTests: XCTestCase {
    func testTheCallConvertsOnlyWhatChangedAndSaysSo() throws {
        let agentPath = TestPaths.executable("screencast-agent")
        guard EndToEnd.requireTools([URL(fileURLWithPath: "/usr/bin/Xvfb"), agentPath, TestPaths.executable("screencast-call")]) else { return }
        let server = try XServerProcess(.xvfb, width: 320, height: 240)
        defer { server.stop() }
        let client = try XTestClient(display: server.display)
        client.setRootColor(0x204060)
        let call = try CallUnderTest([])
        defer { call.stop() }
        let agent = try ProcessRunner.start(
            agentPath, ["--display", server.display, "--socket", call.folder.path("agent.sock"), "--format", "shm", "--cursor", "off",
                        "--stats-interval", "0"], stderr: Pipe())
        defer { if agent.isRunning { kill(agent.processIdentifier, SIGKILL); agent.waitUntilExit() } }
        func damage() throws -> [String: Any] { try XCTUnwrap((try call.stats()["screen"] as? [String: Any])?["damage"] as? [String: Any]) }
        var first = 0
        for _ in 0..<100 where first == 0 {
            first = (try damage()["frames"] as? Int) ?? 0
            if first == 0 { usleep(50_000) }
        }
        XCTAssertGreaterThan(first, 0, "no frame with damage reached the call")
        // 20 windows of 16x16, one every 100 ms: each frame changes about 0.3 % of the picture.
        for step in 0..<20 {
            _ = client.createWindow(x: 10 + step * 14, y: 100, width: 16, height: 16, color: 0xFFCC00)
            usleep(100_000)
        }
        usleep(300_000)
        let stats = try damage()
        let frames = try XCTUnwrap(stats["frames"] as? Int)
        let partial = try XCTUnwrap(stats["partialConversions"] as? Int)
        let mean = try XCTUnwrap(stats["meanFraction"] as? Double)
        XCTAssertGreaterThanOrEqual(frames - first, 10, "\(stats)")
        XCTAssertGreaterThanOrEqual(partial, 10, "frames converted only where they changed: \(stats)")
        XCTAssertLessThan(mean, 0.2, "the first frame is whole, the others about 0.3 %: \(stats)")
        XCTAssertEqual(stats["faults"] as? Int, 0, "\(stats)")
    }
}
