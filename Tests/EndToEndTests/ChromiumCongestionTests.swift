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
    let tc = LoopbackBottleneck.tc

    /// 1 Mbit/s for 12 s, 300 kbit/s for 12 s, 3 Mbit/s for 12 s.
    func testTargetFollowsABottleneckStepProfile() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ChromiumCongestionTests/testTargetFollowsABottleneckStepProfile", timeout: 180)
        }
        let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium"), driver = URL(fileURLWithPath: "/usr/bin/chromedriver")
        guard EndToEnd.requireTools([chromium, driver, tc, EndToEnd.systemPython, TestPaths.executable("screencast-call")]) else { return }
        let bottleneck = try LoopbackBottleneck(rate: "1mbit")
        // Only the call's media (UDP from its ICE ports 40960–41023): Chromium's feedback must not queue behind it.
        try bottleneck.shapeCallMedia()
        defer { bottleneck.remove() }

        // Scrolling terminal content (640x360): enough to load the link at every step.
        let (samples, report, congestionSeen) = try watch(seconds: 38) { t, stepped in
            if stepped == 0, t >= 12 {
                try bottleneck.change(rate: "300kbit")
                return 1
            } else if stepped == 1, t >= 24 {
                try bottleneck.change(rate: "3mbit", burst: "30kb")
                return 2
            }
            return stepped
        }
        XCTAssertNil(report["error"] as? String)
        XCTAssertNotNil(congestionSeen, "Chromium negotiated transport-wide CC: the peer has a congestion view")
        XCTAssertGreaterThan(samples.last?.t ?? 0, 34, "the profile ran to its end")
        // Settled below 1 Mbit/s from 5 s on. An ALR probe at 2 × an application-limited estimate of ~580
        // kbit/s sends 1.15 Mbit/s for 400 ms, too little above the link to spend tbf's 15 kB burst (at 150
        // kbit/s over it that takes 0.8 s), so its result reads its own send rate and lifts the target for one
        // sample before the over-use it causes brings it down (1160 and 1161 kbit/s seen, 2026-12-05; libwebrtc's
        // 15 ms probes read a burst the same way). Such an excursion lasts one sample and stays under 1.2 × the
        // link; the median is below the link.
        let oneMegabit = samples.filter { (5..<12).contains($0.t) }.map(\.target)
        XCTAssertFalse(oneMegabit.isEmpty)
        XCTAssertLessThan(oneMegabit.sorted()[oneMegabit.count / 2], 1000, "settled below 1 Mbit/s from 5 s on: \(oneMegabit)")
        XCTAssertLessThan(oneMegabit.max() ?? .max, 1200, "no probe lifts it past 1.2 × the link: \(oneMegabit)")
        for (earlier, later) in zip(oneMegabit, oneMegabit.dropFirst()) {
            XCTAssertFalse(earlier >= 1000 && later >= 1000, "above the link for one sample at most: \(oneMegabit)")
        }
        // Settled: the median of the last 2 s at 300 kbit/s (an ALR probe's result may lift one sample above the
        // link for a moment before over-use brings it down: 341 kbit/s seen once, 2026-12-02).
        let low = samples.filter { (22..<24).contains($0.t) }.map(\.target)
        XCTAssertFalse(low.isEmpty)
        let lowMedian = low.sorted()[low.count / 2]
        XCTAssertLessThan(lowMedian, 330, "near or below 300 kbit/s within 10 s of the step down: \(low)")
        // Periodic probes (5 s apart, not within 5 s of an over-use) and ALR probes (the encoder sends
        // 300–550 kbit/s, far below the target) find the capacity that came back: 400 ms clusters read past
        // tbf's burst, and their results set the estimate directly, so the target follows the link to 3 Mbit/s.
        let up = samples.filter { (24..<34).contains($0.t) }.map(\.target)
        XCTAssertGreaterThan(up.max() ?? 0, 330, "above the 300 kbit/s link within 10 s of the step up")
        // The issue's bar, 70 % of the 3 Mbit/s link within 10 s of the step up, was met in 5 of 7 runs under
        // load (2026-12-02; the misses: a 2-s pause in Chromium's feedback after the first probe, a probe read
        // at half its rate, then 5 s to the next); 2026-12-05, with the 2.5 s probe quiet time and probe chains
        // kept burst-robust, in 2 of 3 at load 1–2; with an over-use during a probe decreased from what the link
        // delivered and the last cluster's result read with its over-use, in 6 of 6 (at +3.1 to +6.2 s; BENCHMARKS
        // "the step profile"). Printed, not asserted until CI has shown it holds under load.
        // Asserted: half the link (1.5 Mbit/s, five times the link before) within 10 s — met in every run since the
        // probe chain's last cluster is read with its over-use (2026-12-05), where the 70 % bar below was met in 6 of 6.
        XCTAssertGreaterThanOrEqual(up.max() ?? 0, 1500, "half of the 3 Mbit/s link within 10 s of the step up: \(up)")
        let reached = samples.filter { (24..<34).contains($0.t) && $0.target >= 2100 }.first
        print("e2e: step up: highest target \(Int(up.max() ?? 0)) kbit/s within 10 s; 2100 kbit/s " + (reached.map { "at +\(String(format: "%.1f", $0.t - 24)) s" } ?? "not reached"))
        let high = samples.filter { $0.t >= 34 }.map(\.target)
        XCTAssertGreaterThan(high.max() ?? 0, lowMedian, "rising again after the step up")
        let stats = try XCTUnwrap(report["stats"] as? [String: Any], "the page reported no stats")
        print("e2e: chromium decoded \(stats["framesDecoded"] ?? "-") frames, fps \(stats["fps"] ?? "-")")
        // Measured (2026-12-01): 160 frames in 38 s, 4 fps at the end, 67 delta frames thinned — the encoder
        // still overshoots its target, and what the link cannot carry is thinned rather than queued.
        // With probing (2026-12-02): 924–953 kbit/s at 1 Mbit/s from 0.5 s, 126–147 at 300 kbit/s, after the
        // step up 357 kbit/s at +4 s and 967 at +9.5 s (before: 519 after 13 s); 221 frames decoded.
        // With ALR probing (2026-12-02, load 7): at 1 Mbit/s 415–900 kbit/s from 1 s, 139–415 at 300 kbit/s, after the
        // step up 2252 kbit/s at +1.9 s / 3000 at +4 s (two runs); 243–245 frames decoded. With 400 ms clusters
        // (load 10): 2834 kbit/s at +7 s, the first probe 5 s after the last over-use.
        XCTAssertGreaterThanOrEqual(stats["framesDecoded"] as? Int ?? 0, 60, "Chromium kept decoding")
        XCTAssertEqual(report["state"] as? String, "connected")
    }

    /// 2 % of all UDP arriving in the namespace dropped (nft input hook: both our media and Chromium's feedback),
    /// no bandwidth limit, 24 s: the target does not collapse (loss below GCC's 2–10 % band holds or raises it)
    /// and Chromium keeps decoding.
    func testTwoPercentLossDoesNotCollapseTheTarget() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ChromiumCongestionTests/testTwoPercentLossDoesNotCollapseTheTarget", timeout: 180)
        }
        let nft = URL(fileURLWithPath: "/usr/sbin/nft")
        let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium"), driver = URL(fileURLWithPath: "/usr/bin/chromedriver")
        guard EndToEnd.requireTools([chromium, driver, nft, EndToEnd.systemPython, TestPaths.executable("screencast-call")]) else { return }
        for rule in [
            ["add", "table", "inet", "impair"],
            ["add", "chain", "inet", "impair", "in", "{ type filter hook input priority 0; policy accept; }"],
            ["add", "rule", "inet", "impair", "in", "meta", "l4proto", "udp", "numgen", "random", "mod", "100", "<", "2", "drop"],
        ] {
            let result = try ProcessRunner.run(nft, rule, timeout: 10)
            XCTAssertEqual(result.status, 0, "nft \(rule.joined(separator: " ")): \(result.stderr)")
        }
        defer { _ = try? ProcessRunner.run(nft, ["delete", "table", "inet", "impair"], timeout: 10) }
        let (samples, report, congestion) = try watch(seconds: 24) { _, stepped in stepped }
        XCTAssertNil(report["error"] as? String)
        let late = samples.filter { $0.t >= 12 }.map(\.target)
        XCTAssertFalse(late.isEmpty)
        XCTAssertGreaterThanOrEqual(late.min() ?? 0, 250, "no collapse below the 300 kbit/s start")
        XCTAssertNotNil(congestion)
        // Measured (2026-12-01): 300 → 775 kbit/s in 24 s, Chromium counted 18–30 packets lost and decoded 182–186 frames.
        XCTAssertGreaterThan(late.max() ?? 0, 400, "2 % is below GCC's 2–10 % hold band: the target still grows")
        let stats = try XCTUnwrap(report["stats"] as? [String: Any], "the page reported no stats")
        XCTAssertGreaterThanOrEqual(stats["framesDecoded"] as? Int ?? 0, 100, "Chromium kept decoding")
    }

    /// The droppable cadence forced on (`--droppable-period 3`) behind a 300 kbit/s bottleneck for 20 s: the
    /// sender leaves non-reference frames out when its queue holds more than 1 s of the target, Chromium gets
    /// the rest with contiguous sequence numbers and PictureIDs (the N bit on the non-reference ones it does
    /// get) and keeps decoding. One viewer is not the case the cadence is for (the encoder follows its
    /// estimate; no outlier): measured (2026-12-05) 1–5 droppable frames thinned, 1–2 reference frames still
    /// thinned at the 2-s bound during GCC's fall from its 300 kbit/s start, 88–119 frames decoded in 20 s,
    /// 1–3 PLIs (tbf drops); without the option 0 droppable and 2–4 reference frames thinned, 101–124 decoded.
    func testDroppableFramesThinnedBehindABottleneckKeepChromiumDecoding() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace(
                "EndToEndTests.ChromiumCongestionTests/testDroppableFramesThinnedBehindABottleneckKeepChromiumDecoding", timeout: 180)
        }
        let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium"), driver = URL(fileURLWithPath: "/usr/bin/chromedriver")
        guard EndToEnd.requireTools([chromium, driver, tc, EndToEnd.systemPython, TestPaths.executable("screencast-call")]) else { return }
        let bottleneck = try LoopbackBottleneck(rate: "300kbit")
        try bottleneck.shapeCallMedia()
        defer { bottleneck.remove() }
        let (_, report, congestion) = try watch(seconds: 20, extraArguments: ["--droppable-period", "3"]) { _, stepped in stepped }
        XCTAssertNil(report["error"] as? String)
        let view = try XCTUnwrap(congestion)
        let peer = lastPeer ?? [:]
        let stats = try XCTUnwrap(report["stats"] as? [String: Any], "the page reported no stats")
        print("e2e: droppable cadence 1 in 3 at 300 kbit/s: thinned droppable \(view["framesThinnedDroppable"] ?? "-"), "
              + "reference (last resort) \(view["framesThinned"] ?? "-"), references over budget \(view["referenceFramesOverBudget"] ?? "-"); "
              + "peer: frames sent \(peer["framesSent"] ?? "-"), keyframes sent \(peer["keyframesSent"] ?? "-"), PLIs \(peer["plis"] ?? "-"), "
              + "keyframe requests \(peer["keyframeRequests"] ?? "-"); chromium decoded \(stats["framesDecoded"] ?? "-"), fps \(stats["fps"] ?? "-")")
        XCTAssertGreaterThanOrEqual(stats["framesDecoded"] as? Int ?? 0, 60, "Chromium kept decoding")
        XCTAssertEqual(report["state"] as? String, "connected")
    }

    /// The last `/viewers` entry of the peer `watch` followed.
    var lastPeer: [String: Any]?

    /// Runs a call (640x360 scrolling terminal content, ICE ports 40960–41023) and Chromium on its page for
    /// `seconds`, sampling the peer's congestion view every 0.5 s; `step(t, state)` may change the network and
    /// returns the next state. Returns the samples (t since the first target, target and acknowledged kbps),
    /// Chromium's report and the last congestion view.
    func watch(seconds: Int, extraArguments: [String] = [], step: (Double, Int) throws -> Int) throws
        -> (samples: [(t: Double, target: Int, acknowledged: Int?)], report: [String: Any], congestion: [String: Any]?) {
        let frames = TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/terminal-scroll.frames").path
        let call = try CallUnderTest(["--source", "file:" + frames, "--ice-ports", "40960-41023", "--ice-tcp", "off"] + extraArguments)
        defer { call.stop() }
        let profile = call.folder.path("chromium")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let browser = try PythonPeer(
            EndToEnd.systemPython, "chromium_viewer.py",
            ["--url", call.baseURL + "/", "--profile", profile + "/profile", "--frames", "1000000", "--timeout", "\(seconds)"],
            environment: ["HOME": profile, "TMPDIR": profile])
        var samples: [(t: Double, target: Int, acknowledged: Int?)] = []
        var first: Date?
        var state = 0
        var seen: [String: Any]?
        // Each peer's last /viewers entry, in the order they appeared: a page that reconnects shows as two.
        var peersSeen: [(id: String, last: [String: Any])] = []
        // The browser ends by itself after `seconds` of playing; one that hangs (a page load that never
        // returns) is stopped after a minute more, so the test reports what it saw instead of timing out.
        let deadline = Date().addingTimeInterval(Double(seconds) + 60)
        while browser.isRunning {
            if Date() > deadline {
                print("e2e: chromium still running \(seconds + 60) s after start; stopping it")
                browser.process.terminate()
                break
            }
            Thread.sleep(forTimeInterval: 0.5)
            guard let peers = (try? call.viewers())?["peers"] as? [[String: Any]], let peer = peers.first,
                  let congestion = peer["congestion"] as? [String: Any], let target = congestion["targetKbps"] as? Int
            else { continue }
            seen = congestion
            lastPeer = peer
            let id = peer["id"] as? String ?? "-"
            if peersSeen.last?.id == id { peersSeen[peersSeen.count - 1].last = peer } else { peersSeen.append((id, peer)) }
            let start = first ?? Date()
            first = start
            let t = Date().timeIntervalSince(start)
            samples.append((t, target, congestion["acknowledgedKbps"] as? Int))
            state = try step(t, state)
        }
        let report = try browser.finish(timeout: 60)
        print("e2e: chromium \(report)")
        print("e2e: target/acknowledged kbps per sample " + samples.map {
            "\(String(format: "%.1f", $0.t)):\($0.target)/\($0.acknowledged.map(String.init) ?? "-")"
        }.joined(separator: " "))
        print("e2e: congestion view \(seen ?? [:])")
        // The rest of the peer's entry (ICE, SRTP, RTCP counters) and the call's warnings: when the feedback
        // stops (the target then falls on the 3-s timeout), they say which side went quiet.
        print("e2e: the peer's last entry \((lastPeer ?? [:]).filter { $0.key != "congestion" })")
        let warnings = call.log.split(separator: "\n").filter { $0.contains("warn") || $0.contains("error") }
        print("e2e: the call's warnings (\(warnings.count), the last 30):" + warnings.suffix(30).map { "\ne2e:   " + $0 }.joined())
        if peersSeen.count > 1 {
            print("e2e: the page connected \(peersSeen.count) times; each peer's last entry: \(peersSeen.map(\.last))")
        }
        return (samples, report, seen)
    }
}
