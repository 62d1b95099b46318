import Foundation
import Glibc
import TestSupport
import XCTest

/// A browser that vanishes without `pagehide` (SIGKILLed: no WHEP DELETE, no DTLS close_notify, no RTCP
/// BYE) stops holding the shared encoder's bitrate once its feedback has been silent for
/// `BitrateFollower.defaultSilenceLimitMicros` (3 s), long before its consent (RFC 7675) lapses and the viewer is lost (15 s with `--consent-timeout 10`).
final class ChromiumGoneTests: XCTestCase {
    func testAVanishedBrowserStopsHoldingTheBitrateAfterThreeSecondsOfSilence() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace(
                "EndToEndTests.ChromiumGoneTests/testAVanishedBrowserStopsHoldingTheBitrateAfterThreeSecondsOfSilence", timeout: 150)
        }
        let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium"), driver = URL(fileURLWithPath: "/usr/bin/chromedriver")
        guard EndToEnd.requireTools([chromium, driver, EndToEnd.systemPython, TestPaths.executable("screencast-call")]) else { return }
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "1280x720", "--consent-timeout", "10"])
        defer { call.stop() }
        let profile = call.folder.path("chromium")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let browser = try PythonPeer(
            EndToEnd.systemPython, "chromium_viewer.py",
            ["--url", call.baseURL + "/", "--profile", profile + "/profile", "--frames", "1000000", "--timeout", "60"],
            environment: ["HOME": profile, "TMPDIR": profile])
        defer { kill(browser.process.processIdentifier, SIGKILL) }
        // Chromium's congestion controller (transport-cc) starts low: the encoder follows its target.
        XCTAssertNotNil(call.waitForLine("bitrate follows the lowest viewer", timeout: 30), call.log.suffix(3000).description)
        usleep(1_000_000)
        let held = try call.viewers()
        XCTAssertNotEqual((held["bitrate"] as? [String: Any])?["applied"] as? String, "default", "\(held)")

        let killed = Self.killProcesses(mentioning: profile + "/profile")
        XCTAssertGreaterThan(killed, 0, "no Chromium process found")
        let start = Date()
        let released = call.waitForLine("bitrate back to the default", timeout: 15)
        let releasedAfter = Date().timeIntervalSince(start)
        let afterRelease = try call.viewers()
        // The sharer's view: after 5 s without a word the viewer is shown silent, while consent still runs.
        while Date().timeIntervalSince(start) < 6.5 { usleep(100_000) }
        let silentView = try call.viewers()
        XCTAssertEqual(silentView["connected"] as? Int, 1, "still connected: consent has 10 s")
        XCTAssertEqual(silentView["silent"] as? Int, 1, "shown silent after 5 s: \(silentView)")
        XCTAssertEqual(((silentView["peers"] as? [[String: Any]])?.first)?["silent"] as? Bool, true)
        XCTAssertEqual(held["silent"] as? Int, 0, "not silent while it watched")
        let text = String(decoding: try HTTP.request("GET", port: call.port, path: "/stats?format=text").body, as: UTF8.self)
        XCTAssertTrue(text.contains("viewers: 1 connected (1 silent: gone, most likely)"), text)
        XCTAssertTrue(text.contains(": silent for "), text)
        // Consent (RFC 7675) lapses 10 s after the last authenticated RTCP (`--consent-timeout 10`), and the
        // peer ends 5 s later.
        let lost = call.waitForLine("viewer lost", timeout: 20)
        let lostAfter = Date().timeIntervalSince(start)
        print("e2e: browser killed; bitrate released after \(String(format: "%.1f", releasedAfter)) s, viewer lost after "
              + "\(String(format: "%.1f", lostAfter)) s; bitrate while held \(held["bitrate"] ?? "-"), after \(afterRelease["bitrate"] ?? "-")")
        XCTAssertNotNil(released, call.log.suffix(3000).description)
        XCTAssertTrue(call.log.contains("viewer silent: its estimate no longer sets the bitrate"))
        // 3 s of silence, checked every 0.5 s; Chromium's last feedback came at most ~100 ms before the kill.
        XCTAssertGreaterThanOrEqual(releasedAfter, 2.8)
        XCTAssertLessThan(releasedAfter, 3 + 0.5 + 1)
        let bitrate = afterRelease["bitrate"] as? [String: Any] ?? [:]
        XCTAssertEqual(bitrate["applied"] as? String, "default")
        XCTAssertEqual((bitrate["silentPeers"] as? [String])?.count, 1, "\(bitrate)")
        XCTAssertEqual(afterRelease["count"] as? Int, 1, "still listed until consent fails")
        XCTAssertNotNil(lost, "the vanished viewer was never dropped")
        XCTAssertGreaterThan(lostAfter, releasedAfter, "released before the viewer is lost")
    }

    /// SIGKILLs every process whose command line contains `marker` (this test's own profile folder); how many.
    private static func killProcesses(mentioning marker: String) -> Int {
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap(Int32.init) ?? []
        var count = 0
        for pid in ids where pid != getpid() {
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { continue }
            let line = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            if line.contains(marker), !line.contains("chromium_viewer.py"), kill(pid, SIGKILL) == 0 { count += 1 }
        }
        return count
    }
}
