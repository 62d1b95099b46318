@testable import CongestionControl
import XCTest

/// ``AIMDRateControl`` and its ``LinkCapacityEstimator`` rule by rule (draft-ietf-rmcat-gcc-02 §5.5;
/// libwebrtc's `AimdRateControl::ChangeBitrate`, `MultiplicativeRateIncrease`, `AdditiveRateIncrease`,
/// `GetNearMaxIncreaseRateBpsPerSecond`, `TimeToReduceFurther`, and `LinkCapacityEstimator`).
final class AIMDRateControlTests: XCTestCase {
    private func aimd(_ start: Double, min: Double = 10_000, max: Double = 10_000_000) -> AIMDRateControl {
        AIMDRateControl(startBitrate: start, minBitrate: min, maxBitrate: max)
    }

    /// Far from any capacity estimate the rate compounds at ×1.08 per second, whatever the feedback spacing:
    /// 100 steps of 100 ms are ×1.08^10 (after the +1 kbit/s of the first step, which only starts the clock).
    func testMultiplicativeIncreaseCompoundsPerSecond() {
        var control = aimd(300_000)
        XCTAssertEqual(control.update(usage: .normal, acknowledgedBitsPerSecond: 5_000_000, nowMicros: 1_000_000), 301_000)
        for step in 1...100 {
            control.update(usage: .normal, acknowledgedBitsPerSecond: 5_000_000, nowMicros: 1_000_000 + Int64(step) * 100_000)
        }
        XCTAssertEqual(control.bitrate, 301_000 * pow(1.08, 10), accuracy: 1e-3)
        XCTAssertEqual(control.state, .increase)
        // Irregular spacing compounds the same: 30 ms + 170 ms + 800 ms = one second.
        let before = control.bitrate
        for offset: Int64 in [30_000, 200_000, 1_000_000] {
            control.update(usage: .normal, acknowledgedBitsPerSecond: 5_000_000, nowMicros: 11_000_000 + offset)
        }
        XCTAssertEqual(control.bitrate, before * 1.08, accuracy: 1e-6)
    }

    /// A gap of more than a second counts as one second (×1.08 at most), and a step never adds less than
    /// 1 kbit/s.
    func testIncreaseStepLimits() {
        var control = aimd(500_000)
        control.update(usage: .normal, acknowledgedBitsPerSecond: 5_000_000, nowMicros: 0)
        XCTAssertEqual(control.update(usage: .normal, acknowledgedBitsPerSecond: 5_000_000, nowMicros: 7_000_000), 501_000 * 1.08,
                       accuracy: 1e-6)
        var slow = aimd(20_000)
        slow.update(usage: .normal, acknowledgedBitsPerSecond: 1_000_000, nowMicros: 0)
        // 21 kbit/s × (1.08^0.01 − 1) ≈ 16 bit/s: the step is 1000 bit/s.
        XCTAssertEqual(slow.update(usage: .normal, acknowledgedBitsPerSecond: 1_000_000, nowMicros: 10_000), 22_000)
    }

    /// The increase stops at 1.5 × the acknowledged rate + 10 kbit/s, exactly, and a rate already above that
    /// limit is kept (an increase state never lowers it). Without an acknowledged rate yet, the rate itself
    /// stands in; later steps use the latest acknowledged rate given.
    func testTheIncreaseIsLimitedByTheAcknowledgedRate() {
        var control = aimd(700_000)
        control.update(usage: .normal, acknowledgedBitsPerSecond: 500_000, nowMicros: 0)  // 701 000
        XCTAssertEqual(control.update(usage: .normal, acknowledgedBitsPerSecond: 500_000, nowMicros: 1_000_000), 701_000 * 1.08,
                       accuracy: 1e-6)
        XCTAssertEqual(control.update(usage: .normal, acknowledgedBitsPerSecond: 500_000, nowMicros: 2_000_000), 760_000,
                       "757 080 × 1.08 would pass 1.5 × 500 k + 10 k")
        XCTAssertEqual(control.update(usage: .normal, acknowledgedBitsPerSecond: nil, nowMicros: 3_000_000), 760_000,
                       "nil: the latest acknowledged rate (500 k) still limits")
        XCTAssertEqual(control.update(usage: .normal, acknowledgedBitsPerSecond: 300_000, nowMicros: 4_000_000), 760_000,
                       "above the new limit of 460 k: kept, not lowered")
        XCTAssertEqual(control.state, .increase)

        var fresh = aimd(100_000)
        fresh.update(usage: .normal, acknowledgedBitsPerSecond: nil, nowMicros: 0)
        // No acknowledged rate ever: the limit is 1.5 × the rate + 10 k, far above one step.
        XCTAssertEqual(fresh.update(usage: .normal, acknowledgedBitsPerSecond: nil, nowMicros: 1_000_000), 101_000 * 1.08,
                       accuracy: 1e-6)
    }

    /// Over-use: 0.85 × the acknowledged rate when that is below the rate; else 0.85 × the link capacity
    /// estimate if there is one; never an increase. Then hold, and the capacity estimate learns the
    /// acknowledged rate.
    func testDecreaseRules() {
        var control = aimd(2_000_000)
        XCTAssertEqual(control.update(usage: .overusing, acknowledgedBitsPerSecond: 1_000_000, nowMicros: 0), 850_000, accuracy: 1e-6)
        XCTAssertEqual(control.state, .hold)
        XCTAssertEqual(control.lastDecreaseMicros, 0)
        XCTAssertEqual(control.linkCapacity.estimate, 1_000_000, accuracy: 1e-6, "the first sample is the estimate")

        // A capacity estimate of 600 k, then over-use at 700 k while 900 k is acknowledged (0.85 × 900 k = 765 k
        // is above the rate): 0.85 × the capacity, 510 k.
        var capped = aimd(2_000_000)
        capped.update(usage: .overusing, acknowledgedBitsPerSecond: 600_000, nowMicros: 0)  // 510 k, capacity 600 k
        capped.setEstimate(700_000, nowMicros: 100_000)
        XCTAssertEqual(capped.update(usage: .overusing, acknowledgedBitsPerSecond: 900_000, nowMicros: 200_000), 510_000, accuracy: 1e-6)
        // 900 k is within the band's lower side (above 600 − 3 √(0.4 × 600) kbit/s): the estimate moves 5 %.
        XCTAssertEqual(capped.linkCapacity.estimate, 0.95 * 600_000 + 0.05 * 900_000, accuracy: 1e-6)

        // No capacity estimate and 0.85 × acknowledged above the rate: the rate is kept.
        var kept = aimd(400_000)
        XCTAssertEqual(kept.update(usage: .overusing, acknowledgedBitsPerSecond: 1_000_000, nowMicros: 0), 400_000)
        XCTAssertEqual(kept.state, .hold)
    }

    /// An acknowledged rate below the band's lower bound at over-use means the path changed: the estimate
    /// starts again from that rate (not 5 % towards it).
    func testDecreaseFarBelowTheBandRestartsTheCapacityEstimate() {
        var control = aimd(2_000_000)
        control.update(usage: .overusing, acknowledgedBitsPerSecond: 1_000_000, nowMicros: 0)
        // Band: 1000 ± 3 √(0.4 × 1000) = 1000 ± 60 kbit/s. 500 k is far below.
        XCTAssertEqual(control.linkCapacity.lowerBound, 940_000, accuracy: 1e-6)
        control.update(usage: .overusing, acknowledgedBitsPerSecond: 500_000, nowMicros: 1_000_000)
        XCTAssertEqual(control.bitrate, 425_000, accuracy: 1e-6)
        XCTAssertEqual(control.linkCapacity.estimate, 500_000, accuracy: 1e-6)
        // 950 k is inside the band: no restart, 5 % towards it.
        var inside = aimd(2_000_000)
        inside.update(usage: .overusing, acknowledgedBitsPerSecond: 1_000_000, nowMicros: 0)
        inside.setEstimate(2_000_000, nowMicros: 10)
        inside.update(usage: .overusing, acknowledgedBitsPerSecond: 950_000, nowMicros: 1_000_000)
        XCTAssertEqual(inside.linkCapacity.estimate, 997_500, accuracy: 1e-6)
    }

    /// Near the capacity the increase is additive: one average packet per response time, 2 × (RTT + 100 ms);
    /// an average packet is a 30 fps frame split into ⌈frame / 1200 B⌉ equal packets; at least 4 kbit/s per
    /// second. Checked over rates where the packet count changes.
    func testNearMaxIncreaseRate() {
        func expected(_ rate: Double, rtt: Double) -> Double {
            let frame = rate / 30
            let packets = (frame / 9600).rounded(.up)
            return Swift.max(4000, frame / packets / (2 * (rtt + 0.1)))
        }
        for rate in [50_000.0, 100_000, 287_999, 288_001, 850_000, 2_000_000, 8_000_000] {
            for rtt in [0.0, 0.05, 0.2, 1.0] {
                var control = aimd(rate)
                control.roundTripMicros = Int64(rtt * 1_000_000)
                XCTAssertEqual(control.nearMaxIncreasePerSecond, expected(rate, rtt: rtt), accuracy: 1e-6, "\(rate) bit/s, RTT \(rtt) s")
            }
        }
        // Spot values: 50 kbit/s is a 1667-bit frame in one packet, 2778 bit/s per second: the 4000 floor; at
        // 288 kbit/s a frame is exactly one 1200-byte packet: 9600 / 0.6 = 16 000.
        XCTAssertEqual(aimd(50_000).nearMaxIncreasePerSecond, 4000)
        XCTAssertEqual(aimd(288_000).nearMaxIncreasePerSecond, 16_000, accuracy: 1e-9)
    }

    /// With a capacity estimate the increase is additive in the elapsed time, not compounding: 10 steps of
    /// 100 ms add the per-second rate (recomputed at each step's rate).
    func testAdditiveIncreaseNearTheCapacity() {
        var control = aimd(2_000_000)
        control.update(usage: .overusing, acknowledgedBitsPerSecond: 1_000_000, nowMicros: 0)  // 850 k, capacity 1 M
        control.update(usage: .normal, acknowledgedBitsPerSecond: 1_000_000, nowMicros: 300_000)  // hold → increase
        XCTAssertEqual(control.bitrate, 850_000, accuracy: 1e-6)
        var rate = 850_000.0
        for step in 1...10 {
            let perSecond = control.nearMaxIncreasePerSecond
            rate += perSecond * 0.1
            XCTAssertEqual(control.update(usage: .normal, acknowledgedBitsPerSecond: 1_000_000, nowMicros: 300_000 + Int64(step) * 100_000),
                           rate, accuracy: 1e-6)
        }
        // 850 kbit/s: 28 333-bit frames in 3 packets of 9444 bits, per 0.6 s: 15 741 bit/s per second, growing
        // with the rate — until a frame needs a 4th packet past 864 kbit/s (3 × 1200 B × 8 × 30 fps), crossed
        // in the 10th step: the average packet, and the step, shrink by a quarter.
        XCTAssertGreaterThan(rate, 864_000)
        XCTAssertEqual(control.nearMaxIncreasePerSecond, rate / 30 / 4 / 0.6, accuracy: 1e-6)
        XCTAssertGreaterThan(rate - 850_000, 9 * 0.1 * 850_000 / 30 / 3 / 0.6, "nine steps of at least 1574 bit/s")
        // The acknowledged rate leaving the band upwards (above 1060 k) drops the estimate: multiplicative again.
        let before = control.bitrate
        control.update(usage: .normal, acknowledgedBitsPerSecond: 1_100_000, nowMicros: 2_300_000)
        XCTAssertFalse(control.linkCapacity.hasEstimate)
        XCTAssertEqual(control.bitrate, before * 1.08, accuracy: 1e-6)
    }

    /// The state machine of §5.5 Figure 2: normal moves hold to increase (starting the clock), over-use goes
    /// to decrease and then hold, under-use holds from anywhere; hold changes nothing.
    func testStateMachine() {
        var control = aimd(1_000_000)
        XCTAssertEqual(control.state, .hold)
        XCTAssertEqual(control.update(usage: .underusing, acknowledgedBitsPerSecond: 2_000_000, nowMicros: 0), 1_000_000)
        XCTAssertEqual(control.state, .hold)
        control.update(usage: .normal, acknowledgedBitsPerSecond: 2_000_000, nowMicros: 100_000)
        XCTAssertEqual(control.state, .increase)
        control.update(usage: .underusing, acknowledgedBitsPerSecond: 2_000_000, nowMicros: 600_000)
        XCTAssertEqual(control.state, .hold)
        let held = control.bitrate
        // Back to increase: the 5 s spent in hold do not count — the step from hold restarts the clock.
        XCTAssertEqual(control.update(usage: .normal, acknowledgedBitsPerSecond: 2_000_000, nowMicros: 5_600_000), held + 1000)
        control.update(usage: .overusing, acknowledgedBitsPerSecond: 900_000, nowMicros: 5_700_000)
        XCTAssertEqual(control.state, .hold, "a decrease is one step, then hold")
        XCTAssertEqual(control.bitrate, 765_000, accuracy: 1e-6)
    }

    /// One RTT (clamped to 10…200 ms) must pass since the last change before the next decrease, unless the
    /// acknowledged rate fell below half the estimate.
    func testTimeToReduceFurtherClampsTheRoundTrip() {
        var control = aimd(1_000_000)
        control.roundTripMicros = 1_000  // 1 ms: counts as 10
        control.update(usage: .overusing, acknowledgedBitsPerSecond: 1_000_000, nowMicros: 0)  // 850 k
        XCTAssertFalse(control.timeToReduceFurther(nowMicros: 9_999, acknowledgedBitsPerSecond: 500_000))
        XCTAssertTrue(control.timeToReduceFurther(nowMicros: 10_000, acknowledgedBitsPerSecond: 500_000))
        XCTAssertTrue(control.timeToReduceFurther(nowMicros: 9_999, acknowledgedBitsPerSecond: 424_999), "below half of 850 k")
        control.roundTripMicros = 120_000
        XCTAssertFalse(control.timeToReduceFurther(nowMicros: 119_999, acknowledgedBitsPerSecond: 425_000), "exactly half is not below")
        XCTAssertTrue(control.timeToReduceFurther(nowMicros: 120_000, acknowledgedBitsPerSecond: 425_000))
    }

    /// ``AIMDRateControl/setEstimate(_:nowMicros:fromProbe:)``: clamped, starts the clock, marks a decrease only
    /// when lower; a probe result above the capacity band drops the estimate, anything else keeps it.
    func testSetEstimate() {
        var control = aimd(1_000_000, min: 100_000, max: 3_000_000)
        control.update(usage: .overusing, acknowledgedBitsPerSecond: 1_000_000, nowMicros: 0)  // capacity 1 M, band ±60 k
        control.setEstimate(5_000_000, nowMicros: 100_000)
        XCTAssertEqual(control.bitrate, 3_000_000, "clamped to max")
        XCTAssertEqual(control.lastDecreaseMicros, 0, "a raise is no decrease")
        XCTAssertTrue(control.linkCapacity.hasEstimate, "not from a probe: the estimate stays")
        control.setEstimate(50_000, nowMicros: 200_000)
        XCTAssertEqual(control.bitrate, 100_000, "clamped to min")
        XCTAssertEqual(control.lastDecreaseMicros, 200_000)
        control.setEstimate(1_050_000, nowMicros: 300_000, fromProbe: true)
        XCTAssertTrue(control.linkCapacity.hasEstimate, "1.05 M is inside the band")
        control.setEstimate(1_070_000, nowMicros: 400_000, fromProbe: true)
        XCTAssertFalse(control.linkCapacity.hasEstimate, "1.07 M is above 1.06 M: the path changed")
        XCTAssertFalse(control.timeToReduceFurther(nowMicros: 500_000, acknowledgedBitsPerSecond: 1_000_000),
                       "the probe result counts as a change: one RTT (200 ms) from it")
    }

    /// ``LinkCapacityEstimator``: the estimate moves 5 % towards each sample; the normalized variance
    /// 0.95 v + 0.05 (estimate − sample)² / estimate, clamped to 0.4…2.5; the band ±3 √(v × estimate).
    func testLinkCapacityVarianceAndBand() {
        var capacity = LinkCapacityEstimator()
        capacity.onOveruse(acknowledgedBitsPerSecond: 1_000_000)
        capacity.onOveruse(acknowledgedBitsPerSecond: 500_000)
        // 975 kbit/s; error 475 → 0.38 + 0.05 × 475² / 975 = 11.95: clamped to 2.5.
        XCTAssertEqual(capacity.estimate, 975_000, accuracy: 1e-6)
        let wide = 3 * (2.5 * 975.0).squareRoot()
        XCTAssertEqual(capacity.upperBound, (975 + wide) * 1000, accuracy: 1e-6)
        XCTAssertEqual(capacity.lowerBound, (975 - wide) * 1000, accuracy: 1e-6)
        // A sample near the estimate: 975 → 974.25 with error 14.25 kbit/s: v = 0.95 × 2.5 + 0.05 × 14.25² / 974.25.
        capacity.onOveruse(acknowledgedBitsPerSecond: 960_000)
        let estimate = 0.95 * 975 + 0.05 * 960
        let variance = 0.95 * 2.5 + 0.05 * (estimate - 960) * (estimate - 960) / estimate
        XCTAssertEqual(capacity.estimate, estimate * 1000, accuracy: 1e-6)
        XCTAssertEqual(capacity.upperBound, (estimate + 3 * (variance * estimate).squareRoot()) * 1000, accuracy: 1e-6)
        // Many samples at the estimate shrink the variance to its floor 0.4, not below.
        for _ in 0..<200 { capacity.onOveruse(acknowledgedBitsPerSecond: capacity.estimate) }
        XCTAssertEqual(capacity.upperBound - capacity.estimate, 3 * (0.4 * capacity.estimate / 1000).squareRoot() * 1000, accuracy: 1e-3)
        // A reset forgets the estimate, not the variance: the next band is as wide as the variance left it.
        capacity.reset()
        XCTAssertEqual(capacity.estimate, 0)
        XCTAssertEqual(capacity.lowerBound, 0)
        capacity.onOveruse(acknowledgedBitsPerSecond: 2_000_000)
        XCTAssertEqual(capacity.estimate, 2_000_000)
        XCTAssertEqual(capacity.upperBound, (2000 + 3 * (0.4 * 2000.0).squareRoot()) * 1000, accuracy: 1e-3)
        // The lower bound never goes below 0 (tiny estimates with the widest variance).
        var tiny = LinkCapacityEstimator()
        tiny.onOveruse(acknowledgedBitsPerSecond: 10_000)
        tiny.onOveruse(acknowledgedBitsPerSecond: 100_000)  // 14.5 kbit/s, v 2.5: 3 √(36.25) = 18 kbit/s > 14.5
        XCTAssertEqual(tiny.estimate, 14_500, accuracy: 1e-6)
        XCTAssertEqual(tiny.lowerBound, 0)
    }
}
