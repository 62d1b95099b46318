import Foundation
import Media
import Publishing
import TestSupport
import XCTest

/// WHIP into a real SFU: `screencast-call --whip http://127.0.0.2:PORT/whip/endpoint/ID --whip-token T`
/// publishing through Debian's simple-whip-server (``SimpleWHIPServer``) into a real Janus
/// (``JanusHarness``, WebSocket transport on), in a loopback-only namespace with the 127.0.0.2 veth. An
/// independent aiortc subscriber through the Janus HTTP API (`Peers/janus_subscriber.py`) decodes the test
/// pattern; stopping the call DELETEs the WHIP session, which the server handles (its log and its
/// endpoint's state) and Janus sees (the publisher leaves the room).
final class WHIPServerCallTests: XCTestCase {
    let room = 80
    let port: UInt16 = 17080
    let (width, height) = (320, 240)

    func testPublishesThroughSimpleWHIPServerIntoJanusAndDeletesOnStop() throws {
        let test = "PublishingTests.WHIPServerCallTests/testPublishesThroughSimpleWHIPServerIntoJanusAndDeletesOnStop"
        guard JanusHarness.isInside else {
            guard SimpleWHIPServer.isInstalled else {
                return XCTFail("\(SimpleWHIPServer.sources.path)/server.js or /usr/bin/node is missing: run tools/setup")
            }
            for tool in [JanusCallTests.python, TestPaths.executable("screencast-call")] where !FileManager.default.isExecutableFile(atPath: tool.path) {
                return XCTFail("\(tool.path) is missing: run tools/setup and swift build")
            }
            return try JanusHarness.rerunInNamespace(test, timeout: 120)
        }
        let janus = try JanusHarness(websockets: true)
        defer { janus.stop() }
        try janus.start()
        let created = try JanusHarness.videoRoom(["request": "create", "room": room, "publishers": 1, "videocodec": "vp8"])
        XCTAssertEqual(created["videoroom"] as? String, "created", "\(created)")
        let server = try SimpleWHIPServer(port: port, folder: janus.folder)
        defer { server.stop() }
        try server.start()
        XCTAssertTrue(wait(15) { server.logText.contains("Connected to Janus: \(JanusHarness.webSocketURL)") }, server.logText)
        try server.createEndpoint(id: "screen", room: room, token: "t0ken")

        let call = try ProcessRunner.start(TestPaths.executable("screencast-call"), [
            "--source", "testpattern", "--pattern-size", "\(width)x\(height)", "--http", "127.0.0.1:18080", "--stats-interval", "0",
            "--socket", janus.folder.appendingPathComponent("agent.sock").path, "--ice-address", "127.0.0.2", "--ice-address", "127.0.0.1",
            "--whip", "http://127.0.0.2:\(port)/whip/endpoint/screen", "--whip-token", "t0ken",
        ])
        defer { _ = ProcessRunner.terminate(call) }
        XCTAssertTrue(wait(20) { (try? JanusCallTests.stats())?["state"] as? String == "published" }, "\(server.logText.suffix(4000))")
        XCTAssertTrue(server.logText.contains("[screen] Publishing to WHIP endpoint"), server.logText)
        XCTAssertEqual(try server.endpoints().first { $0["id"] as? String == "screen" }?["enabled"] as? Bool, true)

        let pictures = janus.folder.appendingPathComponent("pictures.yuv").path
        var report: [String: Any] = [:]
        for _ in 0..<4 {
            let result = try ProcessRunner.run(JanusCallTests.python, [
                JanusE2EETests.subscriber.path, "--url", JanusHarness.apiURL, "--room", String(room), "--seconds", "4", "--save-pictures", pictures,
            ], timeout: 40)
            let line = try XCTUnwrap(result.stdout.split(separator: "\n").last, "the subscriber printed nothing: \(result.stderr.suffix(3000))")
            report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            guard (report["error"] as? String)?.contains("no publisher") == true else { break }
            usleep(500_000)  // Janus lists the publisher once its PeerConnection is up
        }
        print("janus: aiortc through simple-whip-server's Janus: \(report)")
        XCTAssertNil(report["error"] as? String)
        XCTAssertEqual(report["publisher"] as? String, "WHIP Publisher \(room)", "simple-whip-server's publisher in the room")
        XCTAssertGreaterThan(report["frames"] as? Int ?? 0, 30, "frames decoded in 4 s")
        XCTAssertEqual(report["width"] as? Int, width)
        XCTAssertEqual(report["height"] as? Int, height)
        let decoded = try JanusE2EETests.pictures(at: pictures, width: width, height: height)
        XCTAssertEqual(decoded.count, min(30, report["frames"] as? Int ?? 0))
        for (index, picture) in decoded.enumerated() {
            XCTAssertEqual(testPatternBarsShown(in: picture), 8, "picture \(index) through simple-whip-server and Janus shows the test pattern")
        }

        // SIGTERM: the call DELETEs its WHIP session (the 201's Location, /whip/resource/screen).
        XCTAssertFalse(ProcessRunner.terminate(call), "the call stops on SIGTERM")
        XCTAssertTrue(wait(10) { server.logText.contains("[screen] Terminating WHIP session") }, server.logText)
        let text = server.logText
        XCTAssertTrue(text.contains("/resource/: screen"), "the DELETE handler ran:\n\(text)")
        XCTAssertFalse(text.contains("PeerConnection detected as closed"), "the session ended by the DELETE, not by Janus seeing the peer go:\n\(text)")
        XCTAssertEqual(try server.endpoints().first { $0["id"] as? String == "screen" }?["enabled"] as? Bool, false)
        XCTAssertTrue(wait(10) {
            let listed = (try? JanusHarness.videoRoom(["request": "listparticipants", "room": self.room]))?["participants"] as? [[String: Any]]
            return listed?.contains { $0["publisher"] as? Bool == true } == false
        }, "the publisher left the Janus room")
    }

    /// Polls `condition` every 100 ms for at most `seconds`; whether it held.
    func wait(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(100_000)
        }
        return condition()
    }
}
