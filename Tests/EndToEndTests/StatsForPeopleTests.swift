import Foundation
import Glibc
import TestSupport
import XCTest
import XTestSupport

/// `/stats` answers what a person asks first (version, uptime, the viewer page), and `?format=text` says it
/// in three lines that agree with the JSON.
final class StatsForPeopleTests: XCTestCase {
    func testJSONLeadsWithVersionUptimeAndTheViewerPage() throws {
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "320x240", "--max-viewers", "5"])
        defer { call.stop() }
        usleep(1_200_000)
        let stats = try call.stats()
        let version = try ProcessRunner.run(TestPaths.executable("screencast-call"), ["--version"]).stdout
        XCTAssertEqual("screencast-call \(stats["version"] as? String ?? "-")\n", version)
        let uptime = try XCTUnwrap(stats["uptimeSeconds"] as? Double)
        XCTAssertGreaterThanOrEqual(uptime, 1.0)
        XCTAssertLessThan(uptime, 30)
        XCTAssertEqual(stats["viewerURL"] as? String, call.baseURL + "/")
        XCTAssertEqual(stats["maxViewers"] as? Int, 5)

        let text = try HTTP.request("GET", port: call.port, path: "/stats?format=text")
        XCTAssertEqual(text.status, 200)
        XCTAssertEqual(text.headers["Content-Type"] ?? text.headers["content-type"], "text/plain; charset=utf-8")
        let lines = text.text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, text.text)
        XCTAssertTrue(lines[0].hasPrefix("screencast-call \(stats["version"] as? String ?? "-"), up "), lines[0])
        XCTAssertTrue(lines[0].hasSuffix("; viewer page \(call.baseURL)/"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix("source: testpattern 320x240, "), lines[1])
        XCTAssertTrue(lines[1].hasSuffix("; no agent connected"), lines[1])
        XCTAssertEqual(lines[2], "viewers: 0 connected of 5 allowed; 0 ended recently")

        let bad = try HTTP.request("GET", port: call.port, path: "/stats?format=xml")
        XCTAssertEqual(bad.status, 400)
        XCTAssertTrue(bad.text.contains("format must be json or text"), bad.text)
    }

    /// What the agent captures reaches `/stats` from its `Capture-*` fields (frame-wire.md §2.7): the display,
    /// the area, the rectangle on the screen and the frame rate asked for; the text summary says it in words;
    /// both go back to "no agent" when it leaves.
    func testStatsSayWhatTheAgentCaptures() throws {
        let agentPath = TestPaths.executable("screencast-agent")
        guard EndToEnd.requireTools([URL(fileURLWithPath: "/usr/bin/Xvfb"), agentPath, TestPaths.executable("screencast-call")]) else { return }
        let server = try XServerProcess(.xvfb, width: 320, height: 240)
        defer { server.stop() }
        let call = try CallUnderTest([])
        defer { call.stop() }
        let agent = try ProcessRunner.start(
            agentPath, ["--display", server.display, "--socket", call.folder.path("agent.sock"), "--region", "10,20,100,50",
                        "--fps", "12.5", "--stats-interval", "0"], stderr: Pipe())
        defer { if agent.isRunning { kill(agent.processIdentifier, SIGKILL); agent.waitUntilExit() } }
        // The `Capture-*` fields arrive with the first header; the source's size only once that frame is decoded
        // and delivered, so wait for both before reading the text summary.
        var captured: [String: Any]?
        for _ in 0..<200 {
            let stats = try call.stats()
            captured = (stats["screen"] as? [String: Any])?["agent"] as? [String: Any]
            if captured != nil, stats["width"] as? Int == 100 { break }
            usleep(50_000)
        }
        let agentStats = try XCTUnwrap(captured, "no agent in /stats: \((try? call.stats()) ?? [:])")
        XCTAssertEqual(agentStats["display"] as? String, server.display)
        XCTAssertEqual(agentStats["area"] as? String, "region")
        XCTAssertEqual(agentStats["rect"] as? String, "100x50+10+20")
        XCTAssertEqual(agentStats["fpsAsked"] as? String, "12.5")
        let text = try HTTP.request("GET", port: call.port, path: "/stats?format=text").text
        let source = text.split(separator: "\n").map(String.init).first { $0.hasPrefix("source: ") } ?? ""
        XCTAssertTrue(source.hasPrefix("source: screen 100x50, "), text)
        XCTAssertTrue(source.hasSuffix("; agent on display \(server.display) captures region 100x50+10+20 at up to 12.5 fps"), text)

        kill(agent.processIdentifier, SIGTERM)
        XCTAssertFalse(ProcessRunner.wait(for: agent, timeout: 10), "the agent did not stop")
        var gone = false
        for _ in 0..<100 where !gone {
            gone = ((try call.stats()["screen"] as? [String: Any])?["agent"]) is NSNull
            if !gone { usleep(50_000) }
        }
        XCTAssertTrue(gone, "the agent left but /stats still shows it")
        XCTAssertTrue(try HTTP.request("GET", port: call.port, path: "/stats?format=text").text.contains("; no agent connected"))
    }
}
