import Foundation
import TestSupport
import XCTest

/// Headless Chromium plays the call's sound on the viewer page (in a loopback-only namespace): the page
/// starts muted with its "Unmute" button, plays once unmuted (`--autoplay-policy=no-user-gesture-required`
/// stands for the person's click), and Chromium's audio `inbound-rtp` shows the samples arriving whole.
final class ChromiumSoundTests: XCTestCase {
    /// The call's 1000 Hz test tone: over 3 s after the unmute, `totalSamplesReceived` rises by at least 2 s of
    /// sound, `concealedSamples` stay under 2 % of those, and the level meter's `audioLevel` shows the tone.
    func testChromiumPlaysTheCallsSoundAfterUnmute() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ChromiumSoundTests/testChromiumPlaysTheCallsSoundAfterUnmute", timeout: 150)
        }
        let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium"), driver = URL(fileURLWithPath: "/usr/bin/chromedriver")
        guard EndToEnd.requireTools([chromium, driver, EndToEnd.systemPython, TestPaths.executable("screencast-call")]) else { return }
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "320x240", "--audio-test-tone", "1000"])
        defer { call.stop() }
        let profile = call.folder.path("chromium")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let report = try EndToEnd.runPeer(
            EndToEnd.systemPython, "chromium_viewer.py",
            ["--url", call.baseURL + "/", "--profile", profile + "/profile", "--frames", "20", "--timeout", "40", "--sound", "--settle", "3"],
            timeout: 120, environment: ["HOME": profile, "TMPDIR": profile])
        print("e2e: chromium sound \(report["sound"] ?? "-")")
        XCTAssertNil(report["error"] as? String)
        let sound = try XCTUnwrap(report["sound"] as? [String: Any], "\(report)")
        XCTAssertEqual(sound["dataSound"] as? String, "muted", "the page starts muted")
        XCTAssertEqual(sound["muted"] as? Bool, false, "the Unmute button unmutes")
        XCTAssertEqual(sound["dataSoundAfter"] as? String, "on")
        let before = try XCTUnwrap(sound["before"] as? [String: Any], "no audio stats before: \(sound)")
        let after = try XCTUnwrap(sound["after"] as? [String: Any], "no audio stats after: \(sound)")
        let received = (after["totalSamplesReceived"] as? Int ?? 0) - (before["totalSamplesReceived"] as? Int ?? 0)
        let concealed = (after["concealedSamples"] as? Int ?? 0) - (before["concealedSamples"] as? Int ?? 0)
        XCTAssertGreaterThanOrEqual(received, 96_000, "at least 2 s of 48 kHz sound in 3 s")
        XCTAssertLessThan(Double(concealed), 0.02 * Double(max(received, 1)), "concealed \(concealed) of \(received)")
        let total = after["totalSamplesReceived"] as? Int ?? 0
        XCTAssertLessThan(Double(after["concealedSamples"] as? Int ?? 0), 0.02 * Double(max(total, 1)), "since the start: \(after)")
        // A -20 dBFS RMS sine peaks at 0.14 of full scale; audioLevel is linear, 1 = full scale.
        let level = after["audioLevel"] as? Double ?? 0
        XCTAssertGreaterThan(level, 0.05, "\(after)")
        XCTAssertLessThan(level, 0.3, "\(after)")
        XCTAssertEqual(sound["note"] as? String, "", "a tone is not silence")
    }
}
