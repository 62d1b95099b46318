import Foundation
import Media
import Publishing
import TestSupport
import XCTest

/// A real `screencast-call --source testpattern --janus … --janus-create-room` publishing into a real Janus
/// (``JanusHarness``), watched through Janus by an independent aiortc subscriber
/// (`Peers/janus_subscriber.py`, the VideoRoom subscriber flow over the Janus HTTP API).
final class JanusCallTests: XCTestCase {
    static let python = TestPaths.packageRoot.appendingPathComponent("venv/bin/python")
    static let script = TestPaths.packageRoot.appendingPathComponent("Tests/PublishingTests/Peers/janus_subscriber.py")
    let room = 77

    struct Watched: Decodable {
        var frames: Int
        var width: Int
        var height: Int
        var firstFrameMs: Int?
        var publisher: String?
        var error: String?
    }

    func watch(seconds: Double) throws -> Watched {
        let result = try ProcessRunner.run(
            Self.python, [Self.script.path, "--url", JanusHarness.apiURL, "--room", String(room), "--seconds", String(seconds)], timeout: 40)
        let line = try XCTUnwrap(result.stdout.split(separator: "\n").last, "subscriber printed nothing: \(result.stderr.suffix(3000))")
        return try JSONDecoder().decode(Watched.self, from: Data(line.utf8))
    }

    /// The subscriber decodes 320x240 frames of the test pattern through Janus; after SIGKILL and a restart
    /// of Janus the call re-creates the room and re-publishes, and a new subscriber decodes frames again.
    func testASubscriberThroughJanusDecodesTheCallAndAgainAfterJanusRestarts() throws {
        guard JanusHarness.isInside else {
            for tool in [Self.python, TestPaths.executable("screencast-call")] where !FileManager.default.isExecutableFile(atPath: tool.path) {
                return XCTFail("\(tool.path) is missing: run tools/setup and swift build")
            }
            return try JanusHarness.rerunInNamespace(
                "PublishingTests.JanusCallTests/testASubscriberThroughJanusDecodesTheCallAndAgainAfterJanusRestarts", timeout: 90)
        }
        let janus = try JanusHarness()
        defer { janus.stop() }
        try janus.start()
        let call = try ProcessRunner.start(TestPaths.executable("screencast-call"), [
            "--source", "testpattern", "--pattern-size", "320x240", "--http", "127.0.0.1:18080", "--stats-interval", "0",
            "--socket", janus.folder.appendingPathComponent("agent.sock").path, "--ice-address", "127.0.0.2", "--ice-address", "127.0.0.1",
            "--janus", JanusHarness.apiURL, "--janus-room", String(room), "--janus-create-room", "--janus-display", "e2e",
        ])
        defer { _ = ProcessRunner.terminate(call) }
        var first = try watch(seconds: 4)
        for _ in 0..<3 where first.error?.contains("no publisher") == true {
            usleep(500_000)
            first = try watch(seconds: 4)
        }
        XCTAssertNil(first.error)
        XCTAssertEqual(first.publisher, "e2e")
        XCTAssertGreaterThan(first.frames, 30, "frames decoded in 4 s")
        XCTAssertEqual(first.width, 320)
        XCTAssertEqual(first.height, 240)
        print("janus: subscriber decoded \(first.frames) frames, first after \(first.firstFrameMs ?? -1) ms")

        let beforeKill = try Self.stats()
        XCTAssertEqual(beforeKill["state"] as? String, "published")
        XCTAssertGreaterThanOrEqual(beforeKill["plisReceived"] as? Int ?? 0, 1, "Janus asked for a keyframe for the subscriber")

        // A local WHEP viewer watches straight from the call while Janus dies and comes back.
        let output = Pipe()
        let viewer = try ProcessRunner.start(Self.python, [Self.whepViewer.path, "--url", "http://127.0.0.1:18080/whep", "--seconds", "22"], stdout: output)
        defer { _ = ProcessRunner.terminate(viewer) }
        // Python with aiortc takes 1–4 s to start on a loaded machine: wait for the viewer to be sent frames.
        let joinedBy = Date().addingTimeInterval(20)
        while Date() < joinedBy, ((try? Self.framesEncodedAndSentToTheLocalViewerIfJoined())?.sent ?? 0) == 0 { usleep(100_000) }
        let (encodedBefore, sentBefore) = try Self.framesEncodedAndSentToTheLocalViewer()
        janus.kill()
        usleep(1_000_000)
        try janus.start()
        let restarted = Date()
        var again = try watch(seconds: 4)
        while again.error?.contains("no publisher") == true, Date().timeIntervalSince(restarted) < 40 {
            usleep(500_000)
            again = try watch(seconds: 4)
        }
        print("janus: after the restart, publishing again within \(String(format: "%.1f", Date().timeIntervalSince(restarted))) s; "
            + "\(again.frames) frames, first after \(again.firstFrameMs ?? -1) ms")
        XCTAssertNil(again.error)
        XCTAssertGreaterThan(again.frames, 30)
        XCTAssertEqual(again.width, 320)
        let after = try Self.stats()
        // Every frame encoded while the SFU leg failed and came back went to the local viewer (counts, not
        // timing: the viewer's own arrival gaps, printed below, depend on the machine's load).
        let (encodedAfter, sentAfter) = try Self.framesEncodedAndSentToTheLocalViewer()
        print("janus: while the leg failed and came back the call encoded \(encodedAfter - encodedBefore) frames and sent the local viewer "
            + "\(sentAfter - sentBefore)")
        XCTAssertGreaterThan(encodedAfter - encodedBefore, 30, "the encoder went on")
        XCTAssertLessThanOrEqual(abs((sentAfter - sentBefore) - (encodedAfter - encodedBefore)), 2, "a frame withheld from the local viewer")
        XCTAssertGreaterThanOrEqual(after["reconnects"] as? Int ?? 0, 1)
        XCTAssertNotNil(after["lastReason"] as? String)

        XCTAssertFalse(ProcessRunner.wait(for: viewer, timeout: 30), "the WHEP viewer ends by itself")
        let text = String(decoding: POSIXPipeRead.toEnd(output.fileHandleForReading.fileDescriptor), as: UTF8.self)
        let local = try XCTUnwrap(
            (try JSONSerialization.jsonObject(with: Data((text.split(separator: "\n").last ?? "").utf8)) as? [String: Any])?["viewers"] as? [[String: Any]])
        print("janus: the local WHEP viewer meanwhile: \(local.first?["frames"] ?? "-") frames, largest gap \(local.first?["maxGapMs"] ?? "-") ms, "
            + "\(local.first?["gapsOver500"] ?? "-") gaps over 500 ms")
        XCTAssertNil(local.first?["error"] as? String)
        XCTAssertGreaterThanOrEqual(local.first?["frames"] as? Int ?? 0, sentAfter - sentBefore, "the local viewer decoded what it was sent")
    }

    /// ``framesEncodedAndSentToTheLocalViewer()`` without assertions: nil until the one local viewer is there.
    static func framesEncodedAndSentToTheLocalViewerIfJoined() throws -> (encoded: Int, sent: Int)? {
        let response = try HTTPClient().request("GET", "http://127.0.0.1:18080/stats")
        guard let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
              let encoded = (json["frames"] as? [String: Any])?["encoded"] as? Int,
              let peers = (json["viewers"] as? [String: Any])?["peers"] as? [[String: Any]], peers.count == 1,
              let sent = peers.first?["framesSent"] as? Int
        else { return nil }
        return (encoded, sent)
    }

    /// The call's encoded frames (`frames.encoded`) and the frames its one local WHEP viewer was sent.
    static func framesEncodedAndSentToTheLocalViewer() throws -> (encoded: Int, sent: Int) {
        let response = try HTTPClient().request("GET", "http://127.0.0.1:18080/stats")
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        let encoded = try XCTUnwrap((json["frames"] as? [String: Any])?["encoded"] as? Int)
        let peers = try XCTUnwrap((json["viewers"] as? [String: Any])?["peers"] as? [[String: Any]])
        XCTAssertEqual(peers.count, 1, "one local viewer")
        return (encoded, try XCTUnwrap(peers.first?["framesSent"] as? Int))
    }

    static let whepViewer = TestPaths.packageRoot.appendingPathComponent("Tests/EndToEndTests/Peers/whep_viewer.py")

    /// The call's `/stats` "sfu" object (another of its objects by `path`; "": the whole of it).
    /// A room made beforehand with a 250 kbps cap (Janus REMBs it to publishers) below the encoder's default
    /// for 640x360 at 30 fps (553 kbps) and below the leg's congestion target without it (about 310 kbps on
    /// this loopback): the cap bounds the one shared encoder (its target and the bytes it makes), and
    /// Janus's TWCC feedback (transport-cc offered, kept by Janus) drives the leg's congestion target, which
    /// stays under the cap. (The test pattern is mostly still: the encoder makes less than its target, and
    /// the congestion target, limited by what is acknowledged, stays near it.)
    func testTheRoomsCapBoundsTheSharedEncoderAndJanusSendsTWCCFeedback() throws {
        guard JanusHarness.isInside else {
            return try JanusHarness.rerunInNamespace(
                "PublishingTests.JanusCallTests/testTheRoomsCapBoundsTheSharedEncoderAndJanusSendsTWCCFeedback", timeout: 90)
        }
        let janus = try JanusHarness()
        defer { janus.stop() }
        try janus.start()
        let capped = 79
        let created = try JanusHarness.videoRoom(["request": "create", "room": capped, "publishers": 1, "videocodec": "vp8", "bitrate": 250_000])
        XCTAssertEqual(created["videoroom"] as? String, "created", "\(created)")
        let defaultKbps = VP8EncoderSettings.defaultBitrateKbps(width: 640, height: 360, framesPerSecond: 30)
        XCTAssertGreaterThan(defaultKbps, 400, "the cap must be below what the encoder would use")
        let call = try ProcessRunner.start(TestPaths.executable("screencast-call"), [
            "--source", "testpattern", "--pattern-size", "640x360", "--http", "127.0.0.1:18080", "--stats-interval", "0",
            "--socket", janus.folder.appendingPathComponent("agent.sock").path, "--ice-address", "127.0.0.2", "--ice-address", "127.0.0.1",
            "--janus", JanusHarness.apiURL, "--janus-room", String(capped),
        ])
        defer { _ = ProcessRunner.terminate(call) }
        let start = Date()
        func ceiling() -> Int? { ((try? Self.stats(path: "viewers"))?["bitrate"] as? [String: Any])?["ceilingKbps"] as? Int }
        while ceiling() != 250 || (try? Self.stats())?["twccFeedbackPackets"] as? Int ?? 0 < 10, Date().timeIntervalSince(start) < 15 {
            usleep(200_000)
        }
        let sfu = try Self.stats()
        XCTAssertEqual(sfu["state"] as? String, "published")
        XCTAssertEqual(sfu["bitrateCeilingBps"] as? Int, 250_000, "Janus's REMB is the room's cap")
        XCTAssertEqual(ceiling(), 250, "the cap is the shared encoder's ceiling")
        let encoderKbps = try XCTUnwrap(try Self.stats(path: "viewers").isEmpty ? nil : Self.topLevel("bitrateKbps"))
        XCTAssertLessThanOrEqual(encoderKbps, 250, "the shared encoder's target is under the cap")
        XCTAssertGreaterThanOrEqual(encoderKbps, 150)
        // The bytes the encoder makes over 4 s, under the cap (libvpx's rate control within 25 %).
        let before = try Self.topLevel("bytes")
        let measured = Date()
        usleep(4_000_000)
        let after = try Self.topLevel("bytes")
        let kbps = Double(after - before) * 8 / 1000 / Date().timeIntervalSince(measured)
        let leg = try Self.stats()
        print("janus: room cap 250 kbps (default \(defaultKbps)): encoder target \(encoderKbps) kbps, made \(String(format: "%.0f", kbps)) kbps; "
            + "TWCC feedback \(leg["twccFeedbackPackets"] ?? "-") packets, leg target \(leg["targetBps"] ?? "-") bps")
        XCTAssertLessThanOrEqual(kbps, 250 * 1.25)
        XCTAssertGreaterThan(kbps, 30, "the encoder still sends the moving picture")
        XCTAssertGreaterThan(leg["twccFeedbackPackets"] as? Int ?? 0, 10, "Janus sends TWCC feedback (every 200 ms by default)")
        let target = try XCTUnwrap(leg["targetBps"] as? Int, "no congestion target for the leg")
        XCTAssertLessThanOrEqual(target, 250_000, "the cap is the congestion target's ceiling")
    }

    /// A number at the top of the call's `/stats` (the source's: `bitrateKbps`, `bytes`).
    static func topLevel(_ key: String) throws -> Int {
        let response = try HTTPClient().request("GET", "http://127.0.0.1:18080/stats")
        let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return try XCTUnwrap(json?[key] as? Int, "no \(key) in /stats")
    }

    /// One part of the call's `/stats` (the SFU leg by default).
    static func stats(path: String = "sfu") throws -> [String: Any] {
        let response = try HTTPClient().request("GET", "http://127.0.0.1:18080/stats")
        let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        if path.isEmpty { return try XCTUnwrap(json, "/stats is not an object") }
        return try XCTUnwrap(json?[path] as? [String: Any], "no \(path) in /stats")
    }
}
