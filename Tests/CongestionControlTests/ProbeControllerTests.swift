import CongestionControl
import XCTest

/// ``ProbeController`` rule by rule (libwebrtc's `ProbeController`: `InitiateExponentialProbing`,
/// `SetEstimatedBitrate` for further probes and large drops, `RequestProbe` for recovery, `Process` for the
/// 1 s result timeout and periodic/ALR probes). A cluster lasts 15 ms at its rate (minBytes = rate × 15 ms
/// / 8) and holds at least 5 packets; nothing at or below the estimate, nothing above the max.
final class ProbeControllerTests: XCTestCase {
    private func controller(max: Double = 3_000_000, _ change: (inout ProbeController.Configuration) -> Void = { _ in })
        -> ProbeController {
        var configuration = ProbeController.Configuration()
        change(&configuration)
        return ProbeController(configuration: configuration, maxBitrate: max)
    }

    /// The start probes are 3× and 6× the start rate; one capped at the max ends the exponential phase (no
    /// further probes), and two capped at the same rate are one cluster.
    func testStartProbesAndTheMax() {
        var low = controller()
        let lowProbes = low.start(startBitrate: 200_000, nowMicros: 0)
        XCTAssertEqual(lowProbes.map(\.bitsPerSecond), [600_000, 1_200_000])
        XCTAssertEqual(lowProbes.map(\.minBytes), [1125, 2250], "15 ms at the rate")
        XCTAssertEqual(lowProbes.map(\.minPackets), [5, 5])
        XCTAssertEqual(lowProbes.map(\.createdMicros), [0, 0])
        XCTAssertEqual(lowProbes.map(\.measuresPastBurst), [false, false])

        var capped = controller()
        XCTAssertEqual(capped.start(startBitrate: 600_000, nowMicros: 0).map(\.bitsPerSecond), [1_800_000, 3_000_000])
        XCTAssertEqual(capped.onEstimate(2_900_000, nowMicros: 100_000), [], "the max was probed: no further probing")

        var once = controller()
        XCTAssertEqual(once.start(startBitrate: 1_000_000, nowMicros: 0).map(\.bitsPerSecond), [3_000_000],
                       "3 M and 6 M both cap at 3 M: one cluster")
        XCTAssertEqual(once.start(startBitrate: 3_000_000, nowMicros: 0), [], "nothing above an estimate at the max")
    }

    /// Further probes: while waiting for a result, an estimate above 0.7 × the highest cluster asks for one at
    /// 2× that estimate, and the threshold moves to 0.7 × the new cluster.
    func testFurtherProbesClimbUntilTheMax() {
        var probes = controller(max: 10_000_000)
        _ = probes.start(startBitrate: 300_000, nowMicros: 0)  // 900 k, 1.8 M: threshold 1.26 M
        XCTAssertEqual(probes.onEstimate(1_250_000, nowMicros: 100_000), [], "not above 1.26 M")
        let second = probes.onEstimate(1_300_000, nowMicros: 200_000)
        XCTAssertEqual(second.map(\.bitsPerSecond), [2_600_000])
        XCTAssertEqual(second.map(\.id), [3])
        XCTAssertEqual(second.map(\.minBytes), [4875])
        XCTAssertEqual(probes.onEstimate(1_800_000, nowMicros: 300_000), [], "threshold now 0.7 × 2.6 M = 1.82 M")
        XCTAssertEqual(probes.onEstimate(1_900_000, nowMicros: 400_000).map(\.bitsPerSecond), [3_800_000])
        XCTAssertEqual(probes.onEstimate(5_400_000, nowMicros: 500_000).map(\.bitsPerSecond), [10_000_000], "capped")
        XCTAssertEqual(probes.onEstimate(9_000_000, nowMicros: 600_000), [], "capped: the phase ended")
    }

    /// A result must come within 1 s of the last cluster: after that the exponential phase is over and a high
    /// estimate asks for nothing more.
    func testTheResultTimeoutEndsFurtherProbing() {
        var probes = controller()
        _ = probes.start(startBitrate: 300_000, nowMicros: 0)
        XCTAssertEqual(probes.onTick(nowMicros: 1_000_000), [], "1 s exactly: still waiting (more than 1 s ends it)")
        XCTAssertEqual(probes.onEstimate(1_300_000, nowMicros: 1_000_000).map(\.bitsPerSecond), [2_600_000])
        // The further probe restarted the wait at 1 s; at 2.000001 s it is over.
        _ = probes.onTick(nowMicros: 2_000_001)
        XCTAssertEqual(probes.onEstimate(2_000_000, nowMicros: 2_100_000), [], "2 M > 0.7 × 2.6 M, but no longer waiting")
    }

    /// Periodic probes at 2× the estimate every 5 s after the last probe, while the estimate is below 90 % of
    /// the max and no result is awaited; capped at the max.
    func testPeriodicProbes() {
        var probes = controller()
        _ = probes.start(startBitrate: 300_000, nowMicros: 0)
        _ = probes.onEstimate(1_000_000, nowMicros: 500_000)
        XCTAssertEqual(probes.onTick(nowMicros: 4_999_999), [])
        let periodic = probes.onTick(nowMicros: 5_000_000)
        XCTAssertEqual(periodic.map(\.bitsPerSecond), [2_000_000])
        XCTAssertEqual(periodic.map(\.createdMicros), [5_000_000])
        XCTAssertEqual(probes.onTick(nowMicros: 9_999_999), [])
        _ = probes.onEstimate(1_600_000, nowMicros: 9_999_999)  // above 0.7 × 2 M, but no result awaited any more
        XCTAssertEqual(probes.onTick(nowMicros: 10_000_000).map(\.bitsPerSecond), [3_000_000], "3.2 M capped at the max")
        _ = probes.onEstimate(2_700_000, nowMicros: 10_500_000)  // 90 % of the max exactly
        XCTAssertEqual(probes.onTick(nowMicros: 20_000_000), [], "not below 90 % of the max")
        _ = probes.onEstimate(2_699_999, nowMicros: 20_000_000)
        XCTAssertEqual(probes.onTick(nowMicros: 20_000_001).map(\.bitsPerSecond), [3_000_000])
    }

    /// A large drop is one below 66 % of the previous estimate; a recovery probe (at 85 % of the estimate
    /// before the drop) needs the drop to be recent (< 5 s), no result awaited, and must be worth it
    /// (95 % of it above the estimate).
    func testDropsAndRecoveryProbes() {
        var probes = controller {
            $0.periodicIntervalMicros = 0
        }
        _ = probes.start(startBitrate: 1_000_000, nowMicros: 0)
        _ = probes.onTick(nowMicros: 1_100_000)  // the start probe timed out
        _ = probes.onEstimate(2_000_000, nowMicros: 1_200_000)
        _ = probes.onEstimate(1_330_000, nowMicros: 1_300_000)  // 66.5 %: not a large drop
        XCTAssertEqual(probes.onRecoveredFromOveruse(nowMicros: 1_400_000), [])
        _ = probes.onEstimate(870_000, nowMicros: 1_500_000)  // 65.4 % of 1.33 M: a drop from 1.33 M
        XCTAssertEqual(probes.onRecoveredFromOveruse(nowMicros: 1_600_000).map(\.bitsPerSecond), [1_130_500],
                       "85 % of 1.33 M")

        // Not worth it: the estimate recovered to 95 % of the suggestion by itself.
        var recovered = controller { $0.periodicIntervalMicros = 0 }
        _ = recovered.start(startBitrate: 3_000_000, nowMicros: 0)  // nothing above the max: no probes
        _ = recovered.onEstimate(1_000_000, nowMicros: 100_000)    // a drop from 3 M
        _ = recovered.onEstimate(2_430_000, nowMicros: 200_000)    // 2.4225 M = 0.95 × 2.55 M is below it
        XCTAssertEqual(recovered.onRecoveredFromOveruse(nowMicros: 300_000), [])
        _ = recovered.onEstimate(2_420_000, nowMicros: 400_000)
        XCTAssertEqual(recovered.onRecoveredFromOveruse(nowMicros: 500_000).map(\.bitsPerSecond), [2_550_000])

        // The drop must be less than 5 s old: 4.999999 s is, 5 s is not.
        for (elapsed, expected) in [(Int64(4_999_999), [2_550_000]), (5_000_000, [])] {
            var late = controller { $0.periodicIntervalMicros = 0 }
            _ = late.start(startBitrate: 3_000_000, nowMicros: 0)
            _ = late.onEstimate(1_000_000, nowMicros: 100_000)
            XCTAssertEqual(late.onRecoveredFromOveruse(nowMicros: 100_000 + elapsed).map(\.bitsPerSecond), expected)
        }
    }

    /// Burst-robust clusters: with ``ProbeController/Configuration/burstRobust`` and the owner's
    /// ``ProbeController/applicationLimited`` set, clusters last 400 ms and are marked; otherwise 15 ms.
    func testBurstRobustClustersOnlyWhileApplicationLimited() {
        var probes = controller { $0.burstRobust = true }
        XCTAssertEqual(probes.start(startBitrate: 300_000, nowMicros: 0).map(\.minBytes), [1687, 3375])
        var limited = controller { $0.burstRobust = true }
        limited.applicationLimited = true
        let clusters = limited.start(startBitrate: 300_000, nowMicros: 0)
        XCTAssertEqual(clusters.map(\.minBytes), [45_000, 90_000], "400 ms at 900 k and 1.8 M")
        XCTAssertEqual(clusters.map(\.measuresPastBurst), [true, true])
        var plain = controller()
        plain.applicationLimited = true
        XCTAssertEqual(plain.start(startBitrate: 300_000, nowMicros: 0).map(\.measuresPastBurst), [false, false],
                       "application-limited alone changes nothing")
    }

    /// A periodic probe that falls due while the ALR detector says application-limited counts as an ALR
    /// probe (when ALR probing is on); ALR probes wait 5 s from the later of the ALR start and the last probe.
    func testALRProbeTiming() {
        var probes = controller {
            $0.alrIntervalMicros = 5_000_000
            $0.periodicIntervalMicros = 8_000_000
        }
        _ = probes.start(startBitrate: 500_000, nowMicros: 0)  // 1.5 M, 3 M at 0
        _ = probes.onTick(nowMicros: 1_100_000)
        _ = probes.onEstimate(600_000, nowMicros: 1_200_000)
        // ALR since 3 s: due at 8 s (5 s after the ALR start, which is later than the last probe at 0).
        XCTAssertEqual(probes.onTick(nowMicros: 7_999_999, applicationLimitedSince: 3_000_000), [])
        XCTAssertEqual(probes.onTick(nowMicros: 8_000_000, applicationLimitedSince: 3_000_000).map(\.bitsPerSecond), [1_200_000])
        XCTAssertEqual(probes.alrProbes, 1)
        _ = probes.onTick(nowMicros: 9_100_000, applicationLimitedSince: 3_000_000)  // the result timed out
        // Not application-limited any more: the periodic probe, 8 s after the last probe.
        XCTAssertEqual(probes.onTick(nowMicros: 15_999_999), [])
        XCTAssertEqual(probes.onTick(nowMicros: 16_000_000).map(\.bitsPerSecond), [1_200_000])
        XCTAssertEqual(probes.alrProbes, 1, "a periodic probe outside ALR is not an ALR probe")
    }

    /// ``ProbeController/reset()`` forgets the estimate and every probe (a new path), but cluster ids and the
    /// ALR probe count go on; ``ProbeController/setMaxBitrate(_:)`` caps clusters from then on.
    func testResetAndSetMaxBitrate() {
        var probes = controller { $0.alrIntervalMicros = 5_000_000 }
        let first = probes.start(startBitrate: 300_000, nowMicros: 0)
        XCTAssertEqual(first.map(\.id), [1, 2])
        _ = probes.onTick(nowMicros: 1_100_000)
        _ = probes.onEstimate(400_000, nowMicros: 1_200_000)
        XCTAssertEqual(probes.onTick(nowMicros: 6_000_000, applicationLimitedSince: 1_000_000).map(\.id), [3])
        XCTAssertEqual(probes.alrProbes, 1)
        probes.reset()
        XCTAssertEqual(probes.onTick(nowMicros: 60_000_000), [], "no estimate after a reset: nothing to probe from")
        XCTAssertEqual(probes.alrProbes, 1)
        probes.setMaxBitrate(1_000_000)
        XCTAssertEqual(probes.maxBitrate, 1_000_000)
        let again = probes.start(startBitrate: 300_000, nowMicros: 61_000_000)
        XCTAssertEqual(again.map(\.id), [4, 5], "ids go on")
        XCTAssertEqual(again.map(\.bitsPerSecond), [900_000, 1_000_000], "the new max caps the second")
    }
}
