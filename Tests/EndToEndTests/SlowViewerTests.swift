import Foundation
import TestSupport
import XCTest

/// Issue 12 with real peers: a fast aiortc viewer (REMB, unshaped) and a slow headless Chromium (transport-cc)
/// whose media alone goes through a 300 kbit/s bottleneck (tc HTB + TBF, a u32 filter on the UDP port of
/// Chromium's selected candidate, added once it is known), inside the test's loopback-only namespace. The slow
/// viewer becomes an outlier, the droppable cadence turns on, and its sender thins it; the fast viewer keeps
/// its frame rate. (What the slow one gets is measured, not asserted: see the end of the test.)
final class SlowViewerEndToEndTests: XCTestCase {
    let tc = LoopbackBottleneck.tc

    func testASlowChromiumBesideAFastViewerIsThinnedWithoutKeyframes() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace(
                "EndToEndTests.SlowViewerEndToEndTests/testASlowChromiumBesideAFastViewerIsThinnedWithoutKeyframes", timeout: 240)
        }
        let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium"), driver = URL(fileURLWithPath: "/usr/bin/chromedriver")
        guard EndToEnd.requireTools([chromium, driver, tc, EndToEnd.systemPython, EndToEnd.venvPython, TestPaths.executable("screencast-call")])
        else { return }
        let bottleneck = try LoopbackBottleneck(rate: "300kbit")
        defer { bottleneck.remove() }

        let frames = TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/terminal-scroll.frames").path
        // The droppable cadence's path: without the second encoding, which would move this viewer off the main one
        // (SecondEncodingEndToEndTests).
        let call = try CallUnderTest(["--source", "file:" + frames, "--ice-ports", "40960-41023", "--ice-tcp", "off", "--bitrate", "1500", "--second-encoding", "off"])
        defer { call.stop() }
        let profile = call.folder.path("chromium")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let seconds = 30
        let browser = try PythonPeer(
            EndToEnd.systemPython, "chromium_viewer.py",
            ["--url", call.baseURL + "/", "--profile", profile + "/profile", "--frames", "1000000", "--timeout", "\(seconds)"],
            environment: ["HOME": profile, "TMPDIR": profile])
        // Chromium's peer: the one with a congestion view; its selected pair's remote port is what to shape.
        var slowID: String?
        let deadline = Date().addingTimeInterval(30)
        while slowID == nil, Date() < deadline, browser.isRunning {
            Thread.sleep(forTimeInterval: 0.25)
            let peers = (try? call.viewers())?["peers"] as? [[String: Any]] ?? []
            for peer in peers where peer["congestion"] is [String: Any] {
                guard let remote = (peer["pair"] as? [String: Any])?["remote"] as? String,
                      let port = remote.split(separator: ":").last.flatMap({ UInt16($0) }) else { continue }
                try LoopbackBottleneck.run("filter add dev lo parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff match ip dport \(port) 0xffff flowid 1:10")
                slowID = peer["id"] as? String
            }
        }
        let slow = try XCTUnwrap(slowID, "Chromium's peer never connected")
        // The fast viewer: a second Chromium, unshaped; its GCC target climbs towards the 1500 kbit/s ceiling.
        let fastProfile = call.folder.path("chromium-fast")
        try FileManager.default.createDirectory(atPath: fastProfile, withIntermediateDirectories: true)
        let fast = try PythonPeer(
            EndToEnd.systemPython, "chromium_viewer.py",
            ["--url", call.baseURL + "/", "--profile", fastProfile + "/profile", "--frames", "1000000", "--timeout", "\(seconds - 8)"],
            environment: ["HOME": fastProfile, "TMPDIR": fastProfile])
        var periods: Set<Int> = []
        var outliersSeen = false
        var slowPeer: [String: Any]?
        var fastPeer: [String: Any]?
        var bitrate: [String: Any]?
        var fastKeyframesWhileOutlier = 0
        while fast.isRunning || browser.isRunning {
            Thread.sleep(forTimeInterval: 0.5)
            guard let stats = try? call.viewers() else { continue }
            bitrate = stats["bitrate"] as? [String: Any]
            if let period = bitrate?["droppablePeriod"] as? Int { periods.insert(period) }
            let outlier = (bitrate?["outliers"] as? [String])?.contains(slow) ?? false
            if outlier { outliersSeen = true }
            for peer in stats["peers"] as? [[String: Any]] ?? [] {
                if peer["id"] as? String == slow {
                    slowPeer = peer
                } else {
                    if outlier, let before = fastPeer?["keyframesSent"] as? Int, let now = peer["keyframesSent"] as? Int {
                        fastKeyframesWhileOutlier += max(0, now - before)
                    }
                    fastPeer = peer
                }
            }
        }
        let fastReport = try fast.finish(timeout: 90)
        let browserReport = try browser.finish(timeout: 90)
        let congestion = slowPeer?["congestion"] as? [String: Any] ?? [:]
        let fastCongestion = fastPeer?["congestion"] as? [String: Any] ?? [:]
        let slowStats = browserReport["stats"] as? [String: Any] ?? [:]
        let fastStats = fastReport["stats"] as? [String: Any] ?? [:]
        print("e2e: cadence periods seen \(periods.sorted()), slow viewer an outlier: \(outliersSeen); bitrate \(bitrate ?? [:])")
        print("e2e: slow (Chromium, 300 kbit/s): target \(congestion["targetKbps"] ?? "-") kbit/s, thinned droppable "
              + "\(congestion["framesThinnedDroppable"] ?? "-") / reference \(congestion["framesThinned"] ?? "-"), references over budget "
              + "\(congestion["referenceFramesOverBudget"] ?? "-"), frames sent \(slowPeer?["framesSent"] ?? "-"), keyframes sent "
              + "\(slowPeer?["keyframesSent"] ?? "-"), PLIs \(slowPeer?["plis"] ?? "-"), keyframe requests \(slowPeer?["keyframeRequests"] ?? "-"); "
              + "decoded \(slowStats["framesDecoded"] ?? "-"), fps \(slowStats["fps"] ?? "-")")
        print("e2e: fast (Chromium): target \(fastCongestion["targetKbps"] ?? "-") kbit/s, frames sent \(fastPeer?["framesSent"] ?? "-"), "
              + "keyframes sent \(fastPeer?["keyframesSent"] ?? "-") (\(fastKeyframesWhileOutlier) while the slow one was an outlier), "
              + "PLIs \(fastPeer?["plis"] ?? "-"); decoded \(fastStats["framesDecoded"] ?? "-"), fps \(fastStats["fps"] ?? "-")")
        XCTAssertTrue(outliersSeen, "Chromium behind 300 kbit/s became an outlier")
        XCTAssertFalse(periods.isEmpty, "the droppable cadence turned on")
        XCTAssertGreaterThan(congestion["framesThinnedDroppable"] as? Int ?? 0, 0, "the slow viewer was thinned with droppable frames")
        XCTAssertNil(fastReport["error"] as? String)
        // terminal-scroll makes 8 new frames a second: the fast viewer keeps them (about 22 s watched).
        XCTAssertGreaterThanOrEqual(fastStats["framesDecoded"] as? Int ?? 0, 100, "the fast Chromium kept its frame rate")
        // Not asserted: the slow viewer's frames. Measured (2026-12-05, four runs): its GCC target settles at
        // 117–137 kbit/s, a tenth of the fast one's 983–1228, beyond what 1 reference frame in 6 carries;
        // 80–157 droppable frames thinned, but 2–10 reference frames still dropped at the 2-s bound, and the
        // keyframes that follow (sized for the fast viewer's rate: seconds of the slow one's) keep it at 12–71
        // frames decoded in 30 s. The fast viewer got 11–13 keyframes on its account before the outlier's
        // requests were spaced 4 s apart (`OutlierKeyframeGate`), 3–8 after. A second, lower-rate encoding is
        // what serves such a viewer.
    }
}
