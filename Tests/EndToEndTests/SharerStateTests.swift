import Foundation
import TestSupport
import XCTest

/// `GET /source` tells the page what to show of the sharer, so it never says "live" when nothing is (issue 34):
/// "waiting" before any agent, "live" while a sender's pictures come, "paused" once it has gone (its last picture
/// stays on the page), and "live" from the start with the test pattern.
final class SharerStateTests: XCTestCase {
    private func state(_ call: CallUnderTest) throws -> String? {
        let response = try HTTP.request("GET", port: call.port, path: "/source")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers.first { $0.key.lowercased() == "cache-control" }?.value, "no-store")
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return object?["state"] as? String
    }

    private func wait(for expected: String, _ call: CallUnderTest, timeout: Double = 10) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        var now = try state(call)
        while now != expected, Date() < deadline {
            usleep(50_000)
            now = try state(call)
        }
        return now
    }

    func testWaitingThenLiveWhileASenderSharesThenPaused() throws {
        let call = try CallUnderTest([])
        defer { call.stop() }
        XCTAssertEqual(try state(call), "waiting", "no agent yet")
        let replay = try ProcessRunner.start(
            TestPaths.executable("screencast-dump"),
            ["replay", TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/window-drag.frames").path, "--socket", call.folder.path("agent.sock"), "--wait", "0.1"])
        defer { _ = ProcessRunner.terminate(replay) }
        XCTAssertEqual(try wait(for: "live", call), "live", "the sender's pictures are coming")
        XCTAssertFalse(ProcessRunner.wait(for: replay, timeout: 30), "the replay ends by itself")
        XCTAssertEqual(try wait(for: "paused", call), "paused", "the sender has gone; its last picture stays")
    }

    func testTheTestPatternIsLiveFromTheStart() throws {
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "160x96"])
        defer { call.stop() }
        XCTAssertEqual(try wait(for: "live", call, timeout: 3), "live")
    }
}
