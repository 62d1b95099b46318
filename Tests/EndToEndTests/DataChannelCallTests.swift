import Foundation
import TestSupport
import XCTest

/// aiortc (its own SCTP and DCEP, independent of usrsctp and ours) as a viewer that offers video and data
/// channels to a real `screencast-call`, in a loopback-only network namespace: the channels open, messages
/// go both ways (strings, bytes, empty, aiortc's largest, and the call's largest inbound), and a message
/// over the call's limit or not UTF-8 closes only its channel, with the reason logged: the echo channel
/// and the video go on. (A viewer offering no channel: AiortcViewerTests, unchanged.)
final class DataChannelCallTests: XCTestCase {
    func testAiortcChannelsBothWaysAndFaultsCloseOnlyTheirChannel() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace(
                "EndToEndTests.DataChannelCallTests/testAiortcChannelsBothWaysAndFaultsCloseOnlyTheirChannel", timeout: 120)
        }
        guard EndToEnd.requireTools([EndToEnd.venvPython, TestPaths.executable("screencast-call")]) else { return }
        let started = Date()
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "320x180"])
        defer { call.stop() }
        let peer = try PythonPeer(EndToEnd.venvPython, "datachannel_viewer.py", ["--url", call.whepURL, "--seconds", "25"])
        // The call's view of the viewer's channels while it is there (the last seen).
        var channels: [String: Any]?
        var lastPeer: [String: Any]?
        while peer.isRunning {
            if let peers = try? call.viewers()["peers"] as? [[String: Any]], let seen = peers.first?["dataChannels"] as? [String: Any] {
                channels = seen
                lastPeer = peers.first
            }
            usleep(100_000)
        }
        let report = try peer.finish(timeout: 10)
        print("e2e: aiortc data channel viewer \(report)")
        print("e2e: call's data channel counters \(channels ?? [:])")
        if ProcessInfo.processInfo.environment["DC_DEBUG"] != nil { print(call.log, lastPeer ?? [:]) }
        XCTAssertNil(report["error"] as? String ?? nil, "\(report)")
        XCTAssertEqual(report["echoes"] as? [String], report["expected"] as? [String], "echoes equal what was sent")
        XCTAssertEqual((report["expected"] as? [String])?.count, 4)
        let closed = report["closed"] as? [String: Any] ?? [:]
        XCTAssertNotNil(closed["big"] as? Double, "the oversized message's channel closed: \(closed)")
        XCTAssertNotNil(closed["bad"] as? Double, "the non-UTF-8 message's channel closed: \(closed)")
        XCTAssertNil(closed["echo"], "the echo channel stayed open")
        XCTAssertEqual(report["echoAfterFaults"] as? Bool, true)
        XCTAssertEqual(report["echoState"] as? String, "open")
        XCTAssertGreaterThan(report["framesAfterFaults"] as? Int ?? 0, 5, "video went on after the faults")

        // The call counted the messages in (4 echo + 262144 bytes + the echo after the faults, + the two that
        // closed their channels) and out (the 5 echoes).
        let counters = try XCTUnwrap(channels)
        XCTAssertEqual(counters["opened"] as? Int, 3)
        XCTAssertEqual(counters["messagesOut"] as? Int, 5)
        XCTAssertEqual(counters["messagesIn"] as? Int, 8)
        XCTAssertGreaterThanOrEqual(counters["bytesIn"] as? Int ?? 0, 262_144 + 65_536)
        let log = call.log
        XCTAssertTrue(log.contains("message of 262145 bytes exceeds the limit of 262144 bytes"), log)
        XCTAssertTrue(log.contains("string message is not UTF-8"), log)
        print("e2e: data channel test took \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    /// Chromium (its own SCTP, dcsctp) opens channels to the call: a string, bytes, 65536 characters and
    /// 262144 bytes (the call's `a=max-message-size`) come back on the echo channel, Chromium read the limit
    /// from the answer (`RTCSctpTransport.maxMessageSize`) and refuses one byte more itself.
    func testChromiumChannelsEcho() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.DataChannelCallTests/testChromiumChannelsEcho", timeout: 120)
        }
        let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium"), driver = URL(fileURLWithPath: "/usr/bin/chromedriver")
        guard EndToEnd.requireTools([chromium, driver, EndToEnd.systemPython, TestPaths.executable("screencast-call")]) else { return }
        let started = Date()
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "320x180"])
        defer { call.stop() }
        let profile = call.folder.path("chromium")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let report = try EndToEnd.runPeer(
            EndToEnd.systemPython, "chromium_datachannel.py", ["--url", call.baseURL, "--profile", profile + "/profile"],
            timeout: 90, environment: ["HOME": profile, "TMPDIR": profile])
        print("e2e: chromium data channel \(report)")
        XCTAssertNil(report["error"] as? String ?? nil, "\(report)\n\(call.log)")
        XCTAssertEqual(report["echoes"] as? [String], ["s:19", "b:3", "s:65536", "b:262144"])
        XCTAssertEqual(report["maxMessageSize"] as? Int, 262_144)
        XCTAssertEqual(report["refused"] as? String, "TypeError", "Chromium refuses a message over the call's limit")
        XCTAssertTrue(call.log.contains("data channel opened"), call.log)
        print("e2e: chromium data channel test took \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }
}
