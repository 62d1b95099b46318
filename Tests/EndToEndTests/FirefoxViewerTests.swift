import Foundation
import TestSupport
import XCTest

/// Headless Firefox ESR (Debian `firefox-esr`) on the viewer page, driven over Marionette by
/// `Peers/firefox_viewer.py` (PyPI `marionette-driver` in the venv, no geckodriver), for tests that want a
/// second browser beside Chromium. Run inside a loopback-only namespace (``EndToEnd/rerunInLoopbackNamespace``).
enum FirefoxViewer {
    static let firefox = URL(fileURLWithPath: "/usr/lib/firefox-esr/firefox-esr")
    static let ip = URL(fileURLWithPath: "/usr/sbin/ip")
    /// What a Firefox test needs; ``EndToEnd/requireTools(_:file:line:)`` fails (never skips) without one.
    static let tools = [firefox, ip, EndToEnd.venvPython, TestPaths.executable("screencast-call")]

    /// Firefox gathers no ICE candidate at all in a namespace with no default route (it asks the routing table
    /// which address it would leave from). This one keeps every packet on `lo`, so the namespace stays
    /// loopback-only; it goes with the namespace. Only Firefox needs it, so the other tests' namespaces lack it.
    static func addLoopbackDefaultRoute(file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try ProcessRunner.run(ip, ["route", "add", "default", "dev", "lo", "src", "127.0.0.1"], timeout: 10)
        XCTAssertEqual(result.status, 0, "ip route add default dev lo: \(result.stderr)", file: file, line: line)
    }

    /// Starts firefox_viewer.py on `url` with `steps` (its JSON vocabulary) and `points` to read pixels at.
    static func start(_ url: String, profile: String, steps: [[String: Any]], points: [(x: Int, y: Int)], timeout: Double = 30) throws -> PythonPeer {
        let stepsJSON = String(decoding: try JSONSerialization.data(withJSONObject: steps), as: UTF8.self)
        return try PythonPeer(
            EndToEnd.venvPython, "firefox_viewer.py",
            ["--url", url, "--profile", profile + "/profile", "--steps", stepsJSON,
             "--points", points.map { "\($0.x),\($0.y)" }.joined(separator: ";"), "--timeout", String(timeout)],
            environment: ["HOME": profile, "TMPDIR": profile])
    }

    /// The largest difference of one channel between the pixels read at ``barSamplePoints(width:height:)`` and
    /// the bars' colours (BT.601 limited range to RGB), failing when a bar is further off than `tolerance`.
    @discardableResult
    static func assertBars(_ snapshot: [String: Any], tolerance: Int, file: StaticString = #filePath, line: UInt = #line) -> Int {
        guard let pixels = snapshot["pixels"] as? [[Int]], pixels.count == 8 else {
            XCTFail("no pixels: \(snapshot)", file: file, line: line)
            return .max
        }
        var worst = 0
        for (index, pixel) in pixels.enumerated() {
            let expected = rgb(ofBar: testPatternBars[index])
            let difference = [abs(pixel[0] - expected.r), abs(pixel[1] - expected.g), abs(pixel[2] - expected.b)].max() ?? 255
            worst = max(worst, difference)
            XCTAssertLessThanOrEqual(difference, tolerance, "bar \(index): \(pixel) vs \(expected)", file: file, line: line)
        }
        return worst
    }
}

/// Firefox ESR as a viewer, plain and end to end encrypted, in a loopback-only namespace (with the default
/// route on `lo` and `media.peerconnection.ice.loopback` it connects over its obfuscated `.local` host candidate).
final class FirefoxViewerTests: XCTestCase {
    private let (width, height) = (640, 360)
    private let passphrase = "correct horse + battery/é"

    /// The page plays the test pattern: 60 frames decoded at the source's size, the bars' colours within 4
    /// levels of what the screen shows, the status line "live"; the call counts one connected viewer.
    func testFirefoxPlaysTheTestPattern() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.FirefoxViewerTests/testFirefoxPlaysTheTestPattern", timeout: 120)
        }
        guard EndToEnd.requireTools(FirefoxViewer.tools) else { return }
        try FirefoxViewer.addLoopbackDefaultRoute()
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "\(width)x\(height)"])
        defer { call.stop() }
        let profile = call.folder.path("firefox")
        let browser = try FirefoxViewer.start(
            call.baseURL + "/", profile: profile, steps: [["wait": "decoded", "frames": 60], ["pixels": true]],
            points: barSamplePoints(width: width, height: height))
        var connected = 0
        while browser.isRunning {
            connected = max(connected, (try? call.viewers())?["connected"] as? Int ?? 0)
            Thread.sleep(forTimeInterval: 0.3)
        }
        let report = try browser.finish(timeout: 60)
        print("e2e: firefox viewer \(report)")
        XCTAssertNil(report["error"] as? String, "\(report)")
        XCTAssertTrue((report["browser"] as? String ?? "").hasPrefix("firefox "), "\(report["browser"] ?? "-")")
        let snapshots = report["snapshots"] as? [[String: Any]] ?? []
        guard snapshots.count == 2 else { return XCTFail("snapshots: \(snapshots)") }
        let last = snapshots[1]
        XCTAssertGreaterThanOrEqual(last["framesDecoded"] as? Int ?? 0, 60)
        XCTAssertEqual(last["videoSize"] as? [Int], [width, height])
        XCTAssertEqual((last["stats"] as? [String: Any])?["width"] as? Int, width)
        XCTAssertEqual(last["status"] as? String, "live")
        XCTAssertEqual(last["paused"] as? Bool, false)
        let worst = FirefoxViewer.assertBars(last, tolerance: 4)
        let firstFrame = try XCTUnwrap(report["firstFrameMs"] as? Int, "no first frame: \(report)")
        print("e2e: firefox first frame \(firstFrame) ms after navigation start (load event \(report["loadMs"] ?? "-") ms), "
              + "60 frames at \(last["elapsedMs"] ?? "-") ms of the run, bars within \(worst) levels")
        XCTAssertLessThan(firstFrame, 5_000)
        XCTAssertEqual(connected, 1, "the call saw the viewer connect")
    }

    /// With `--e2ee-key-file`: the key in the link decrypts (RTCRtpScriptTransform, Firefox's only API) and
    /// shows the bars; the same link without the key (a new page) receives frames but decodes none and says the
    /// screen is encrypted; the key typed in, the picture is back.
    func testFirefoxDecryptsWithTheKeyAndDecodesNothingWithout() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.FirefoxViewerTests/testFirefoxDecryptsWithTheKeyAndDecodesNothingWithout", timeout: 120)
        }
        guard EndToEnd.requireTools(FirefoxViewer.tools) else { return }
        try FirefoxViewer.addLoopbackDefaultRoute()
        let keys = try TemporaryDirectory(prefix: "sc-e2ee")
        defer { keys.remove() }
        let keyFile = keys.path("key")
        XCTAssertTrue(FileManager.default.createFile(atPath: keyFile, contents: Data((passphrase + "\n").utf8), attributes: [.posixPermissions: 0o600]))
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "\(width)x\(height)", "--e2ee-key-file", keyFile])
        defer { call.stop() }
        let fragment = "#key=" + passphrase.utf8.map { String(format: "%%%02X", $0) }.joined()
        let browser = try FirefoxViewer.start(
            call.baseURL + "/" + fragment, profile: call.folder.path("firefox"),
            steps: [
                ["wait": "decoded", "frames": 30], ["pixels": true],
                ["navigate": call.baseURL + "/"], ["wait": "state", "state": "no-key", "received": 30], ["hold": 1],
                ["type": passphrase], ["wait": "decoded", "frames": 30], ["pixels": true],
            ],
            points: barSamplePoints(width: width, height: height), timeout: 40)
        let report = try browser.finish(timeout: 80)
        print("e2e: firefox e2ee \(report)")
        XCTAssertNil(report["error"] as? String, "\(report)")
        let snapshots = report["snapshots"] as? [[String: Any]] ?? []
        guard snapshots.count == 8 else { return XCTFail("snapshots: \(snapshots)") }
        func e2ee(_ snapshot: [String: Any]) -> [String: Any] {
            let view = snapshot["e2ee"] as? [String: Any] ?? [:]
            return (view["counts"] as? [String: Any] ?? [:]).merging(["mode": view["mode"] ?? NSNull()]) { $1 }
        }

        let keyed = snapshots[1]
        XCTAssertEqual(keyed["e2eeState"] as? String, "decrypting")
        XCTAssertEqual(e2ee(keyed)["mode"] as? String, "script-transform", "Firefox decrypts through RTCRtpScriptTransform")
        XCTAssertEqual(e2ee(keyed)["failed"] as? Int, 0)
        XCTAssertEqual(keyed["status"] as? String, "live")
        XCTAssertEqual(keyed["panelVisible"] as? Bool, false)
        let keyedWorst = FirefoxViewer.assertBars(keyed, tolerance: 4)

        let keyless = snapshots[4]
        XCTAssertEqual(keyless["e2eeState"] as? String, "no-key")
        XCTAssertEqual(keyless["framesDecoded"] as? Int, 0, "not one frame decoded without the key")
        XCTAssertGreaterThanOrEqual(keyless["received"] as? Int ?? 0, 30, "frames arrive all the same")
        XCTAssertEqual(e2ee(keyless)["decrypted"] as? Int, 0)
        XCTAssertEqual(keyless["panelVisible"] as? Bool, true)
        XCTAssertEqual(keyless["message"] as? String, "This screen is end-to-end encrypted \u{2014} enter the key")
        XCTAssertEqual(keyless["status"] as? String, "connected \u{2014} cannot decrypt: no key")
        XCTAssertEqual(keyless["statusBlocked"] as? String, "yes")

        let typed = snapshots[7]
        XCTAssertEqual(typed["e2eeState"] as? String, "decrypting")
        XCTAssertEqual(typed["status"] as? String, "live")
        let typedWorst = FirefoxViewer.assertBars(typed, tolerance: 4)
        let waited = (snapshots[6]["elapsedMs"] as? Int ?? 0) - (snapshots[5]["elapsedMs"] as? Int ?? 0)
        print("e2e: firefox e2ee first frame \(report["firstFrameMs"] ?? "-") ms after navigation start; bars within \(keyedWorst) levels "
              + "with the key in the link, \(typedWorst) after typing it; decoding \(waited) ms after the key was typed")
        XCTAssertLessThan(waited, 6_000, "decoding soon after the right key (the page's keyframe hint)")
    }
}
