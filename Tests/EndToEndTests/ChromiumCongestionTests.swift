import Foundation
import TestSupport
import XCTest

/// Headless Chromium on the viewer page behind a bottleneck on `lo` for the call's media only (tc HTB + TBF,
/// a u32 filter on UDP from the call's ICE ports, so HTTP and Chromium's RTCP stay fast), inside the test's
/// loopback-only namespace.
/// Chromium negotiates transport-wide CC: the call's GCC target for it (`/stats` congestion view) must stay
/// below the link and follow its steps, and Chromium keeps decoding. The encoder may still overshoot its
/// target (that is the encoder's side); this asserts what the transport layer controls.
final class ChromiumCongestionTests: XCTestCase {
    let tc = URL(fileURLWithPath: "/usr/sbin/tc")

    func shape(_ words: String) throws {
        let result = try ProcessRunner.run(tc, words.split(separator: " ").map(String.init), timeout: 10)
        XCTAssertEqual(result.status, 0, "tc \(words): \(result.stderr)")
    }

    /// 1 Mbit/s for 12 s, 300 kbit/s for 12 s, 3 Mbit/s for 12 s.
    func testTargetFollowsABottleneckStepProfile() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ChromiumCongestionTests/testTargetFollowsABottleneckStepProfile", timeout: 120)
        }
        let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium"), driver = URL(fileURLWithPath: "/usr/bin/chromedriver")
        guard EndToEnd.requireTools([chromium, driver, tc, EndToEnd.systemPython, TestPaths.executable("screencast-call")]) else { return }
        try shape("qdisc add dev lo root handle 1: htb default 20")
        try shape("class add dev lo parent 1: classid 1:10 htb rate 1mbit ceil 1mbit")
        try shape("class add dev lo parent 1: classid 1:20 htb rate 10gbit")
        try shape("qdisc add dev lo parent 1:10 handle 10: tbf rate 1mbit burst 15kb latency 100ms")
        // Only the call's media (UDP from its ICE ports 40960–41023): Chromium's feedback must not queue behind it.
        try shape("filter add dev lo parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff match ip sport 40960 0xffc0 flowid 1:10")
        defer { _ = try? ProcessRunner.run(tc, ["qdisc", "del", "dev", "lo", "root"], timeout: 10) }

        // Scrolling terminal content (640x360): enough to load the link at every step.
        let call = try CallUnderTest(["--source", "file:" + TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/terminal-scroll.frames").path, "--ice-ports", "40960-41023"])
        defer { call.stop() }
        let profile = call.folder.path("chromium")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let browser = try PythonPeer(
            EndToEnd.systemPython, "chromium_viewer.py",
            ["--url", call.baseURL + "/", "--profile", profile + "/profile", "--frames", "1000000", "--timeout", "38"],
            environment: ["HOME": profile, "TMPDIR": profile])
        // Per half second: seconds since the peer's first target, the target and acknowledged rate (kbps).
        var samples: [(t: Double, target: Int, acknowledged: Int?)] = []
        var first: Date?
        var stepped = 0
        var congestionSeen: [String: Any]?
        while browser.process.isRunning {
            Thread.sleep(forTimeInterval: 0.5)
            guard let peers = (try? call.viewers())?["peers"] as? [[String: Any]], let peer = peers.first,
                  let congestion = peer["congestion"] as? [String: Any], let target = congestion["targetKbps"] as? Int
            else { continue }
            congestionSeen = congestion
            let start = first ?? Date()
            first = start
            let t = Date().timeIntervalSince(start)
            samples.append((t, target, congestion["acknowledgedKbps"] as? Int))
            if stepped == 0, t >= 12 {
                try shape("class change dev lo parent 1: classid 1:10 htb rate 300kbit ceil 300kbit")
                try shape("qdisc change dev lo parent 1:10 handle 10: tbf rate 300kbit burst 15kb latency 100ms")
                stepped = 1
            } else if stepped == 1, t >= 24 {
                try shape("class change dev lo parent 1: classid 1:10 htb rate 3mbit ceil 3mbit")
                try shape("qdisc change dev lo parent 1:10 handle 10: tbf rate 3mbit burst 30kb latency 100ms")
                stepped = 2
            }
        }
        let report = try browser.finish(timeout: 60)
        print("e2e: chromium behind the step profile \(report)")
        print("e2e: target/acknowledged kbps per sample " + samples.map { "\(String(format: "%.1f", $0.t)):\($0.target)/\($0.acknowledged.map(String.init) ?? "-")" }.joined(separator: " "))
        print("e2e: congestion view \(congestionSeen ?? [:])")
        XCTAssertNil(report["error"] as? String)
        XCTAssertNotNil(congestionSeen, "Chromium negotiated transport-wide CC: the peer has a congestion view")
        XCTAssertGreaterThan(samples.last?.t ?? 0, 34, "the profile ran to its end")
        let oneMegabit = samples.filter { (5..<12).contains($0.t) }.map(\.target)
        XCTAssertFalse(oneMegabit.isEmpty)
        XCTAssertLessThan(oneMegabit.max() ?? .max, 1000, "below 1 Mbit/s from 5 s on")
        let low = samples.filter { (22..<24).contains($0.t) }.map(\.target)
        XCTAssertLessThan(low.max() ?? .max, 330, "near or below 300 kbit/s within 10 s of the step down")
        let high = samples.filter { $0.t >= 34 }.map(\.target)
        XCTAssertGreaterThan(high.max() ?? 0, low.max() ?? .max, "rising again after the step up")
        let stats = try XCTUnwrap(report["stats"] as? [String: Any], "the page reported no stats")
        print("e2e: chromium decoded \(stats["framesDecoded"] ?? "-") frames, fps \(stats["fps"] ?? "-")")
        // Measured (2026-12-01): 160 frames in 38 s, 4 fps at the end, 67 delta frames thinned — the encoder
        // still overshoots its target, and what the link cannot carry is thinned rather than queued.
        XCTAssertGreaterThanOrEqual(stats["framesDecoded"] as? Int ?? 0, 60, "Chromium kept decoding")
        XCTAssertEqual(report["state"] as? String, "connected")
    }
}
