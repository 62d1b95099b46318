import Foundation
import TestSupport
import XCTest
import XTestSupport

/// The call's sound reaches an independent WebRTC viewer: aiortc offers audio and video (recvonly), the call
/// answers the Opus section in the same BUNDLE, and aiortc decodes what arrives with libopus. Everything runs
/// in a loopback-only network namespace.
final class AiortcSoundTests: XCTestCase {
    /// What the system plays, for real: a PulseAudio server of the test's own plays a 1000 Hz sine at
    /// -9.03 dBFS RMS into its null sink; `screencast-agent --audio system` captures the sink's monitor and
    /// sends it to `screencast-call`, which encodes Opus once and sends it to aiortc. Decoded: 1000 ± 5 Hz,
    /// within 3 dB of the source, stereo 48 kHz, and no gap in the timestamps after the first second.
    func testSystemSoundThroughAgentAndCallReachesAiortc() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.AiortcSoundTests/testSystemSoundThroughAgentAndCallReachesAiortc", timeout: 120)
        }
        let agentPath = TestPaths.executable("screencast-agent")
        guard EndToEnd.requireTools([URL(fileURLWithPath: "/usr/bin/Xvfb"), EndToEnd.venvPython, agentPath, TestPaths.executable("screencast-call")])
        else { return }
        let pulse = try PulseServer()
        defer { pulse.stop() }
        let server = try XServerProcess(.xvfb, width: 320, height: 240)
        defer { server.stop() }
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "320x240"])
        defer { call.stop() }
        let agent = try ProcessRunner.start(
            agentPath, ["--display", server.display, "--socket", call.folder.path("agent.sock"), "--audio", "system", "--stats-interval", "0"],
            stderr: Pipe())
        defer { if agent.isRunning { kill(agent.processIdentifier, SIGKILL); agent.waitUntilExit() } }
        // The agent's sound flowing into the call's audio source (its stream may take a second to start).
        var screenFrames = 0
        let deadline = Date().addingTimeInterval(15)
        while screenFrames < 30, Date() < deadline {
            screenFrames = (((try? call.stats())?["audio"] as? [String: Any])?["frames"] as? [String: Any])?["screen"] as? Int ?? 0
            if screenFrames < 30 { usleep(100_000) }
        }
        XCTAssertGreaterThanOrEqual(screenFrames, 30, "the agent's sound did not reach the call: \(call.log)")

        let peer = try PythonPeer(EndToEnd.venvPython, "whep_viewer.py", ["--url", call.whepURL, "--seconds", "4", "--audio"])
        Thread.sleep(forTimeInterval: 3)
        let during = try call.stats()
        let report = try peer.finish(timeout: 60)
        let viewer = try XCTUnwrap((report["viewers"] as? [[String: Any]])?.first, "\(report)")
        let audio = try XCTUnwrap(viewer["audio"] as? [String: Any], "\(viewer)")
        print("e2e: aiortc heard the system sound: \(audio); video frames \(viewer["frames"] ?? "-")")
        XCTAssertNil(viewer["error"] as? String)
        XCTAssertNil(audio["error"] as? String)
        XCTAssertGreaterThan(viewer["frames"] as? Int ?? 0, 0, "the picture still comes beside the sound")
        XCTAssertEqual(audio["rate"] as? Int, 48_000)
        XCTAssertEqual(audio["channels"] as? Int, 2)
        XCTAssertGreaterThanOrEqual(audio["measuredSamples"] as? Int ?? 0, 48_000, "at least 1 s of sound measured")
        XCTAssertEqual(audio["frequencyHz"] as? Double ?? 0, 1000, accuracy: 5)
        XCTAssertEqual(audio["levelDBFS"] as? Double ?? -99, -9.03, accuracy: 3)
        XCTAssertEqual(audio["ptsGaps"] as? Int, 0, "no sound missing after the start")
        XCTAssertLessThan(audio["maxArrivalGapMs"] as? Double ?? .infinity, 250)

        // The call's side: one Opus encoding fed by the screen's sound; the viewer's audio packets and reports.
        let encodings = ((during["audio"] as? [String: Any])?["encodings"] as? [String: Any])?["opus"] as? [String: Any]
        XCTAssertEqual(encodings?["consumers"] as? Int, 1, "\(during["audio"] ?? "-")")
        let peers = (during["viewers"] as? [String: Any])?["peers"] as? [[String: Any]]
        let sent = (peers?.first?["audio"] as? [String: Any])?["packetsSent"] as? Int ?? 0
        XCTAssertGreaterThanOrEqual(sent, 50, "about 50 packets a second: \(peers?.first?["audio"] ?? "-")")
    }

    /// No agent: the call's test tone (`--audio-test-tone 440`, -20 dBFS) is what the viewer hears.
    func testCallsTestToneReachesAiortc() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.AiortcSoundTests/testCallsTestToneReachesAiortc", timeout: 120)
        }
        guard EndToEnd.requireTools([EndToEnd.venvPython, TestPaths.executable("screencast-call")]) else { return }
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "320x240", "--audio-test-tone", "440"])
        defer { call.stop() }
        let report = try EndToEnd.runPeer(EndToEnd.venvPython, "whep_viewer.py", ["--url", call.whepURL, "--seconds", "3", "--audio"], timeout: 60)
        let viewer = try XCTUnwrap((report["viewers"] as? [[String: Any]])?.first, "\(report)")
        let audio = try XCTUnwrap(viewer["audio"] as? [String: Any], "\(viewer)")
        print("e2e: aiortc heard the test tone: \(audio)")
        XCTAssertGreaterThanOrEqual(audio["measuredSamples"] as? Int ?? 0, 48_000)
        XCTAssertEqual(audio["frequencyHz"] as? Double ?? 0, 440, accuracy: 5)
        XCTAssertEqual(audio["levelDBFS"] as? Double ?? -99, -20, accuracy: 3)
        XCTAssertEqual(audio["ptsGaps"] as? Int, 0)
    }
}
