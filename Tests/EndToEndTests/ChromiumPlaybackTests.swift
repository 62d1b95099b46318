import Foundation
import TestSupport
import XCTest

/// Headless Chromium (Debian `chromium`, `chromium-driver`, `python3-selenium`) opens the call's viewer
/// page and plays the call, in a loopback-only network namespace: Chromium hides its host candidates, so
/// the call learns it as peer-reflexive.
final class ChromiumPlaybackTests: XCTestCase {
    /// The video reaches the source's size, the page's getStats shows ≥ 60 frames decoded, and pixels read
    /// from the video through a canvas have the test pattern's bar colours; the receiver's
    /// `jitterBufferTarget` and `playoutDelayHint` are 0 and the answer Chromium applied has the playout delay.
    func testChromiumPlaysTheTestPatternOnTheViewerPage() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ChromiumPlaybackTests/testChromiumPlaysTheTestPatternOnTheViewerPage", timeout: 150)
        }
        let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium"), driver = URL(fileURLWithPath: "/usr/bin/chromedriver")
        guard EndToEnd.requireTools([chromium, driver, EndToEnd.systemPython, TestPaths.executable("screencast-call")]) else { return }
        let (width, height) = (1280, 720)
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "\(width)x\(height)"], token: "view-token")
        defer { call.stop() }
        let profile = call.folder.path("chromium")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let points = barSamplePoints(width: width, height: height).map { "\($0.x),\($0.y)" }.joined(separator: ";")
        let browser = try PythonPeer(
            EndToEnd.systemPython, "chromium_viewer.py",
            ["--url", call.baseURL + "/?token=view-token", "--profile", profile + "/profile", "--frames", "60", "--timeout", "40",
             "--points", points, "--screenshot", call.folder.path("viewer.png")],
            environment: ["HOME": profile, "TMPDIR": profile])
        // The call's view of the peer while the browser plays (it leaves when the browser quits).
        var peer: [String: Any]?
        while browser.isRunning {
            if let seen = (try? call.viewers())?["peers"] as? [[String: Any]], let first = seen.first { peer = first }
            Thread.sleep(forTimeInterval: 0.5)
        }
        let report = try browser.finish(timeout: 120)
        print("e2e: chromium viewer \(report)")
        XCTAssertNil(report["error"] as? String)
        let stats = try XCTUnwrap(report["stats"] as? [String: Any], "the page reported no stats: \(report)")
        XCTAssertGreaterThanOrEqual(stats["framesDecoded"] as? Int ?? 0, 60)
        XCTAssertEqual(stats["width"] as? Int, width)
        XCTAssertEqual(stats["height"] as? Int, height)
        XCTAssertEqual(report["videoWidth"] as? Int, width)
        XCTAssertEqual(report["videoHeight"] as? Int, height)
        XCTAssertEqual(report["state"] as? String, "connected")
        // Low latency: the page asked for no jitter-buffer target, and Chromium took the playout delay.
        let lowLatency = try XCTUnwrap(report["lowLatency"] as? [String: Any], "no receiver report: \(report)")
        XCTAssertEqual(lowLatency["jitterBufferTarget"] as? Double, 0)
        XCTAssertEqual(lowLatency["playoutDelayHint"] as? Double, 0)
        let extmaps = try XCTUnwrap(lowLatency["answerExtmaps"] as? [String])
        XCTAssertEqual(extmaps.filter { $0.hasSuffix(" http://www.webrtc.org/experiments/rtp-hdrext/playout-delay") }.count, 1, "\(extmaps)")
        let pixels = try XCTUnwrap(report["pixels"] as? [[Int]], "no pixels read")
        XCTAssertEqual(pixels.count, 8)
        for (index, pixel) in pixels.enumerated() where pixel.count >= 3 {
            let expected = rgb(ofBar: testPatternBars[index])
            let differences = [abs(pixel[0] - expected.r), abs(pixel[1] - expected.g), abs(pixel[2] - expected.b)]
            XCTAssertLessThanOrEqual(differences.max() ?? 255, 4, "bar \(index): \(pixel) vs \(expected)")
        }

        // The call's side: the peer was connected through a peer-reflexive candidate and answered our SRs.
        print("e2e: the call's view of the peer \(peer ?? [:])")
        let peerStats = try XCTUnwrap(peer, "/stats never showed the peer")
        XCTAssertEqual(peerStats["state"] as? String, "connected")
        XCTAssertEqual((peerStats["pair"] as? [String: Any])?["remoteType"] as? String, "prflx")
        // ICE-TCP is on (the default) and Chromium has TCP candidates too: UDP still wins.
        XCTAssertEqual((peerStats["pair"] as? [String: Any])?["transport"] as? String, "udp")
        XCTAssertGreaterThanOrEqual(peerStats["receiverReports"] as? Int ?? 0, 1)
    }
}
