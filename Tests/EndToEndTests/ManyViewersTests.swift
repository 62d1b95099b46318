import Foundation
import TestSupport
import XCTest

/// Several aiortc viewers of one call: each has its own ICE/DTLS/SRTP session, all share the encoder.
final class ManyViewersTests: XCTestCase {
    /// Four viewers for 30 s: each decodes continuously (no gap over 500 ms); viewer 1 leaves at 10 s
    /// (close + DELETE), joins again a second later and decodes its first frame within 1 s (the keyframe
    /// lobby asks the shared encoder for one); the other three see no interruption meanwhile.
    func testFourViewersForThirtySecondsOneLeavesAndRejoins() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ManyViewersTests/testFourViewersForThirtySecondsOneLeavesAndRejoins", timeout: 180)
        }
        guard EndToEnd.requireTools([EndToEnd.venvPython, TestPaths.executable("screencast-call")]) else { return }
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "640x360"])
        defer { call.stop() }
        let seconds = 30.0
        let viewers = try PythonPeer(
            EndToEnd.venvPython, "whep_viewer.py",
            ["--url", call.whepURL, "--viewers", "4", "--seconds", String(seconds), "--rejoin-viewer", "1", "--rejoin-at", "10"])
        var maximumPeers = 0
        var created = 0
        // The call's side, to tell a pause of the call from one of the viewers' process when a gap fails:
        // per peer, the longest time its framesSent did not move (read every 0.25 s), and the slowest frame.
        var sending: [String: (frames: Int, since: Double)] = [:]
        var callPauseMs = 0.0
        var slowestCaptureToSentMs = 0.0
        while viewers.isRunning {
            if let stats = try? call.viewers() {
                let peers = stats["peers"] as? [[String: Any]] ?? []
                maximumPeers = max(maximumPeers, peers.count)
                created = stats["created"] as? Int ?? created
                let now = ProcessInfo.processInfo.systemUptime
                for peer in peers where peer["state"] as? String == "connected" {
                    guard let id = peer["id"] as? String, let frames = peer["framesSent"] as? Int, frames > 0 else { continue }
                    if let last = sending[id], last.frames == frames {
                        callPauseMs = max(callPauseMs, (now - last.since) * 1000)
                    } else {
                        sending[id] = (frames, now)
                    }
                    let latency = peer["captureToSentMs"] as? [String: Any]
                    slowestCaptureToSentMs = max(slowestCaptureToSentMs, latency?["max"] as? Double ?? 0)
                }
            }
            Thread.sleep(forTimeInterval: 0.25)
        }
        let callSide = "the call's longest pause sending to a connected viewer ≥ \(Int(callPauseMs)) ms (polled every 0.25 s), slowest capture→sent \(Int(slowestCaptureToSentMs)) ms"
        print("e2e: \(callSide)")
        let report = try viewers.finish(timeout: 90)
        let results = try XCTUnwrap(report["viewers"] as? [[String: Any]], "\(report)")
        for result in results { print("e2e: viewer \(result)") }
        XCTAssertEqual(results.count, 4)
        XCTAssertEqual(maximumPeers, 4, "four peers at once in /stats")
        XCTAssertEqual(created, 5, "four sessions and the rejoin")

        for result in results where result["index"] as? Int != 1 {
            XCTAssertNil(result["error"] as? String)
            XCTAssertEqual(result["width"] as? Int, 640)
            let frames = result["frames"] as? Int ?? 0
            XCTAssertGreaterThanOrEqual(Double(frames), (seconds - 1) * 30 * 0.6, "viewer \(result["index"] ?? "?") decodes continuously")
            XCTAssertLessThanOrEqual(result["maxGapMs"] as? Double ?? .infinity, 500, "viewer \(result["index"] ?? "?") sees no interruption; \(callSide)")
        }
        let leaver = try XCTUnwrap(results.first { $0["index"] as? Int == 1 })
        let before = try XCTUnwrap(leaver["beforeLeaving"] as? [String: Any])
        XCTAssertGreaterThanOrEqual(before["frames"] as? Int ?? 0, 200, "viewer 1 watched for 10 s before leaving")
        XCTAssertNil(leaver["rejoinError"] as? String)
        let rejoin = try XCTUnwrap(leaver["rejoin"] as? [String: Any])
        XCTAssertLessThanOrEqual(rejoin["firstFrameMs"] as? Double ?? .infinity, 1000, "a keyframe within 1 s of rejoining")
        XCTAssertGreaterThanOrEqual(rejoin["frames"] as? Int ?? 0, 400, "and continuous decoding after it")
        XCTAssertLessThanOrEqual(rejoin["maxGapMs"] as? Double ?? .infinity, 500)
    }
}
