import Foundation
import FrameWire
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

    /// A recorded dump with sound replays through the call (`--source file:`, FileCapturer): the fixture's
    /// pictures with a 440 Hz sine at -12 dBFS recorded between them (10-ms sound messages stamped on the
    /// pictures' clock, as the agent records them), and aiortc hears that tone.
    func testADumpsSoundReplaysThroughTheCall() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.AiortcSoundTests/testADumpsSoundReplaysThroughTheCall", timeout: 120)
        }
        guard EndToEnd.requireTools([EndToEnd.venvPython, TestPaths.executable("screencast-call")]) else { return }
        let folder = try TemporaryDirectory(prefix: "sc-dump-sound")
        defer { folder.remove() }
        let dump = folder.path("with-sound.frames")
        try FileManager.default.createFile(atPath: dump, contents: Data(Self.dumpWithTone(hz: 440, dbfs: -12)))
        let call = try CallUnderTest(["--source", "file:\(dump)"])
        defer { call.stop() }
        let report = try EndToEnd.runPeer(EndToEnd.venvPython, "whep_viewer.py", ["--url", call.whepURL, "--seconds", "3", "--audio"], timeout: 60)
        let viewer = try XCTUnwrap((report["viewers"] as? [[String: Any]])?.first, "\(report)")
        let audio = try XCTUnwrap(viewer["audio"] as? [String: Any], "\(viewer)")
        print("e2e: aiortc heard the dump's sound: \(audio); video frames \(viewer["frames"] ?? "-")")
        XCTAssertGreaterThan(viewer["frames"] as? Int ?? 0, 0, "the dump's pictures too")
        XCTAssertGreaterThanOrEqual(audio["measuredSamples"] as? Int ?? 0, 48_000)
        XCTAssertEqual(audio["frequencyHz"] as? Double ?? 0, 440, accuracy: 5)
        XCTAssertEqual(audio["levelDBFS"] as? Double ?? -99, -12, accuracy: 3)
        XCTAssertEqual(audio["ptsGaps"] as? Int, 0)
        let frames = ((try call.stats()["audio"] as? [String: Any])?["frames"] as? [String: Any])?["screen"] as? Int ?? 0
        XCTAssertGreaterThan(frames, 100, "the dump's sound fed the audio source")
    }

    /// static-desktop.frames (4 pictures over 5 s) with sound between the pictures: 10-ms messages from each
    /// picture's timestamp to the next one's (1 s after the last), one continuous sine.
    static func dumpWithTone(hz: Double, dbfs: Double) throws -> [UInt8] {
        let source = try [UInt8](Data(contentsOf: EndToEnd.fixtures.appendingPathComponent("static-desktop.frames")))
        var pictures: [Frame] = []
        var decoder = FrameDecoder()
        decoder.feed(source) { if case .frame(let frame) = $0 { pictures.append(frame) } }
        let amplitude = pow(10, dbfs / 20) * 2.0.squareRoot() * 32767
        var out: [UInt8] = []
        var sample: UInt64 = 0
        var sequence: UInt64 = 0
        for (index, picture) in pictures.enumerated() {
            out += FrameEncoder.encode(picture)
            let start = picture.header.timestampMicros ?? 0
            let end = index + 1 < pictures.count ? (pictures[index + 1].header.timestampMicros ?? start) : start + 1_000_000
            var t = start
            while t + 10_000 <= end {
                var pcm = [Int16](repeating: 0, count: 960)
                for n in 0..<480 {
                    let v = Int16((amplitude * sin(2 * .pi * hz * Double(sample + UInt64(n)) / 48_000)).rounded())
                    pcm[2 * n] = v
                    pcm[2 * n + 1] = v
                }
                sample += 480
                out += FrameEncoder.encodeSound(
                    header: SoundHeader(samples: 480, timestampMicros: t, sequence: sequence, source: "system"), body: FrameEncoder.soundBody(pcm))
                sequence += 1
                t += 10_000
            }
        }
        return out
    }
}
