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

    /// An agent that sends sound (`--audio`): the call's shared audio source takes every message (the fixture's
    /// three, 1 kHz at -9 dBFS), says once that the agent's sound plays, and goes back to silence after it.
    func testTheAgentsSoundFeedsTheCallsAudioSource() throws {
        let call = try CallUnderTest([])
        defer { call.stop() }
        let replay = try ProcessRunner.start(
            TestPaths.executable("screencast-dump"),
            ["replay", TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/sound/agent-sound.frames").path,
             "--socket", call.folder.path("agent.sock"), "--wait", "0.1"])
        XCTAssertFalse(ProcessRunner.wait(for: replay, timeout: 30), "the replay ends by itself")
        XCTAssertNotNil(call.waitForLine("the agent's sound plays", timeout: 5), call.log)
        XCTAssertNotNil(call.waitForLine("no sound from the agent", timeout: 5), call.log)
        let audio = try XCTUnwrap(try call.stats()["audio"] as? [String: Any], "/stats has audio")
        XCTAssertEqual(audio["screenMessages"] as? Int, 3, "every sound message of the dump")
        XCTAssertEqual(audio["unsupportedMessages"] as? Int, 0)
        let frames = try XCTUnwrap(audio["frames"] as? [String: Any])
        XCTAssertEqual(frames["screen"] as? Int, 3, "480 samples each: three frames of the agent's sound")
        XCTAssertGreaterThan(frames["silence"] as? Int ?? 0, 0, "silence before and after")
        XCTAssertEqual(call.log.components(separatedBy: "the agent's sound plays").count - 1, 1, "said once")
    }

    func testTheTestPatternIsLiveFromTheStart() throws {
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "160x96"])
        defer { call.stop() }
        XCTAssertEqual(try wait(for: "live", call, timeout: 3), "live")
    }
}

/// The page never says "live" when nothing is (issue 34): Chromium on the page of a call with no agent says
/// "waiting for the sharer"; a sender's pictures make it "live"; once the sender has gone, "sharing paused"
/// (its last picture stays); the call stopped, "sharing ended" within the page's 2-s poll.
final class ChromiumSharerStateTests: XCTestCase {
    func testThePageSaysWaitingLivePausedEnded() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ChromiumSharerStateTests/testThePageSaysWaitingLivePausedEnded", timeout: 150)
        }
        let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium")
        guard EndToEnd.requireTools([chromium, EndToEnd.systemPython, TestPaths.executable("screencast-call"), TestPaths.executable("screencast-dump")]) else { return }
        let call = try CallUnderTest([])
        defer { call.stop() }
        let profile = call.folder.path("chromium")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let steps: [[String: Any]] = [
            ["wait": "status", "text": "waiting for the sharer"], ["wait": "status", "text": "live"],
            ["wait": "status", "text": "sharing paused"], ["wait": "status", "text": "sharing ended"],
        ]
        let browser = try PythonPeer(
            EndToEnd.systemPython, "chromium_e2ee.py",
            ["--url", call.baseURL + "/", "--profile", profile + "/profile", "--steps",
             String(decoding: try JSONSerialization.data(withJSONObject: steps), as: UTF8.self), "--timeout", "60"],
            environment: ["HOME": profile, "TMPDIR": profile])
        let connected = Date().addingTimeInterval(30)
        while (try? call.viewers()["connected"] as? Int) != 1, Date() < connected { usleep(100_000) }
        sleep(3)  // the page polls every 2 s: it has said "waiting"
        let replay = try ProcessRunner.start(
            TestPaths.executable("screencast-dump"),
            ["replay", TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/window-drag.frames").path,
             "--socket", call.folder.path("agent.sock"), "--wait", "0.1"])
        XCTAssertFalse(ProcessRunner.wait(for: replay, timeout: 30), "the replay ends by itself")
        sleep(3)  // "sharing paused" seen
        let stoppedAt = Date()
        call.stop()
        let report = try browser.finish(timeout: 60)
        print("e2e: sharer states \((report["snapshots"] as? [[String: Any]])?.map { "\($0["status"] ?? "-") at \($0["elapsedMs"] ?? "-") ms" } ?? [])")
        XCTAssertNil(report["error"] as? String, "\(report["error"] ?? "")")
        let snapshots = report["snapshots"] as? [[String: Any]] ?? []
        XCTAssertEqual(snapshots.map { $0["status"] as? String }, ["waiting for the sharer", "live", "sharing paused", "sharing ended"])
        XCTAssertEqual(snapshots.map { $0["statusBlocked"] as? String }, ["yes", "no", "yes", "yes"], "green only while live")
        XCTAssertLessThan(Date().timeIntervalSince(stoppedAt), 10)
    }
}
