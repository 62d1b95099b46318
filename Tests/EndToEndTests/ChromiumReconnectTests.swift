import Foundation
import Glibc
import TestSupport
import XCTest

/// Issue 5: the viewer page reconnects with back-off when the call restarts. Headless Chromium plays the
/// viewer page of one `screencast-call`; the call is stopped with SIGINT and a new one starts on the same
/// port; the page, without a reload, plays the new call. Loopback-only network namespace, as the other
/// end-to-end tests.
final class ChromiumReconnectTests: XCTestCase {
    /// The page decodes frames from the first call; within 15 s of the new call serving it has a new peer
    /// connection, `data-state="connected"` and decoded frames on it, then ≥ 30 frames and a rising
    /// `totalVideoFrames` (within 20 s).
    func testViewerPageReconnectsWhenTheCallRestarts() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ChromiumReconnectTests/testViewerPageReconnectsWhenTheCallRestarts", timeout: 180)
        }
        let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium"), driver = URL(fileURLWithPath: "/usr/bin/chromedriver")
        guard EndToEnd.requireTools([chromium, driver, EndToEnd.systemPython, TestPaths.executable("screencast-call")]) else { return }
        let folder = try TemporaryDirectory(prefix: "sc-e2e-reconnect")
        defer { folder.remove() }
        let port = try LoopbackPort.tcp()
        let profile = folder.path("chromium")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)

        let arguments = ["--source", "testpattern", "--pattern-size", "640x360"]
        var first: CallUnderTest? = try CallUnderTest(arguments, token: "view-token", port: port)
        defer { first?.stop() }
        let browser = try PythonPeer(
            EndToEnd.systemPython, "chromium_reconnect.py",
            ["--url", "http://127.0.0.1:\(port)/?token=view-token", "--profile", profile + "/profile", "--dir", folder.path(""),
             "--frames", "30", "--timeout", "120"],
            environment: ["HOME": profile, "TMPDIR": profile])

        // The page plays the first call.
        let playing = folder.path("playing")
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: playing), browser.isRunning, Date() < deadline { usleep(100_000) }
        guard FileManager.default.fileExists(atPath: playing) else {
            let report = try browser.finish(timeout: 30)
            return XCTFail("the page never played the first call: \(report)\n\(first?.log ?? "")")
        }

        // SIGINT: the call stops cleanly (exit 0); a new one serves on the same port.
        let status = first?.stop(signal: SIGINT)
        XCTAssertEqual(status, 0, "the first call's exit after SIGINT:\n\(first?.log ?? "")")
        first = nil
        let restartedAt = Date()
        let second = try CallUnderTest(arguments, token: "view-token", port: port)
        defer { second.stop() }
        print("e2e: the second call served \(String(format: "%.2f", Date().timeIntervalSince(restartedAt))) s after the first exited")
        _ = FileManager.default.createFile(atPath: folder.path("restarted"), contents: Data())

        let report = try browser.finish(timeout: 150)
        print("e2e: chromium across the restart \(report)")
        XCTAssertNil(report["error"] as? String)
        XCTAssertEqual(report["recovered"] as? Bool, true, "the page did not play the new call: \(report)\n\(second.log)")
        XCTAssertEqual(report["state"] as? String, "connected")
        XCTAssertGreaterThanOrEqual(report["newFrames"] as? Int ?? 0, 30)
        // Back on the new call within 15 s: Chromium calls the dead connection "disconnected" after ~5 s, the
        // page gives it 5 s more, then retries after 0.5 s (±20 %): ~10.5–12 s here.
        let liveMs = try XCTUnwrap(report["liveMs"] as? Int, "the page never went live again: \(report)")
        let recoveryMs = try XCTUnwrap(report["recoveryMs"] as? Int, "no recovery time: \(report)")
        print("e2e: the page was live on the new call \(liveMs) ms after it served, \(recoveryMs) ms to 30 frames")
        XCTAssertLessThanOrEqual(liveMs, 15_000)
        XCTAssertLessThanOrEqual(recoveryMs, 20_000)
        // The page noticed the restart (it left "connected") rather than keeping a dead connection.
        let states = (report["states"] as? [[Any]] ?? []).compactMap { $0.last as? String }
        XCTAssertTrue(states.contains("retrying") || states.contains("connecting"), "states: \(states)")
        // The new call saw the page as a viewer.
        let viewers = try XCTUnwrap((try? second.stats())?["viewers"] as? [String: Any])
        print("e2e: the new call's viewers \(viewers)")
    }
}
