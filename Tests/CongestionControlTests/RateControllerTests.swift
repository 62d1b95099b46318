@testable import CongestionControl
import XCTest

/// The AIMD and loss-based controllers, number by number.
final class RateControllerTests: XCTestCase {
    func testAIMDIncreaseDecreaseAndAdditiveNearCapacity() {
        var aimd = AIMDRateControl(startBitrate: 1_000_000, minBitrate: 100_000, maxBitrate: 3_000_000)
        XCTAssertEqual(aimd.state, .hold)
        // hold → increase; no time elapsed yet, so the minimum step of 1 kbit/s.
        XCTAssertEqual(aimd.update(usage: .normal, acknowledgedBitsPerSecond: 900_000, nowMicros: 0), 1_001_000)
        XCTAssertEqual(aimd.state, .increase)
        // Far from any capacity estimate: ×1.08 per second.
        XCTAssertEqual(aimd.update(usage: .normal, acknowledgedBitsPerSecond: 900_000, nowMicros: 1_000_000), 1_001_000 * 1.08,
                       accuracy: 1e-6)
        // Half a second: ×1.08^0.5.
        let before = aimd.bitrate
        XCTAssertEqual(aimd.update(usage: .normal, acknowledgedBitsPerSecond: 900_000, nowMicros: 1_500_000),
                       before * 1.08.squareRoot(), accuracy: 1e-6)
        // No increase while above 1.5 × acknowledged + 10 kbit/s (1.06 Mbit/s), and no decrease either.
        XCTAssertEqual(aimd.update(usage: .normal, acknowledgedBitsPerSecond: 700_000, nowMicros: 2_500_000),
                       before * 1.08.squareRoot(), accuracy: 1e-6)

        // Over-use: 0.85 × the acknowledged rate, then hold.
        XCTAssertEqual(aimd.update(usage: .overusing, acknowledgedBitsPerSecond: 800_000, nowMicros: 3_000_000), 680_000, accuracy: 1e-6)
        XCTAssertEqual(aimd.state, .hold)
        XCTAssertEqual(aimd.linkCapacity.estimate, 800_000, accuracy: 1e-6)
        // Under-use keeps holding.
        XCTAssertEqual(aimd.update(usage: .underusing, acknowledgedBitsPerSecond: 700_000, nowMicros: 3_200_000), 680_000, accuracy: 1e-6)
        // Normal again: increase, now additive (the acknowledged rate is within the capacity's band): one average
        // packet per response time. 680 kbit/s at 30 fps: 22 667-bit frames in 3 packets of 7556 bits; response
        // time 2 × (200 ms RTT + 100 ms) = 0.6 s → 12 593 bit/s per second.
        XCTAssertEqual(aimd.update(usage: .normal, acknowledgedBitsPerSecond: 700_000, nowMicros: 4_000_000), 680_000, accuracy: 1e-6,
                       "the step from hold only starts the clock")
        XCTAssertEqual(aimd.update(usage: .normal, acknowledgedBitsPerSecond: 700_000, nowMicros: 5_000_000),
                       680_000 + 680_000 / 30 / 3 / 0.6, accuracy: 1e-3)
        // A faster RTT gives a faster additive increase.
        aimd.roundTripMicros = 50_000
        let rate = aimd.bitrate
        let perSecond = aimd.nearMaxIncreasePerSecond
        XCTAssertEqual(perSecond, rate / 30 / 3 / 0.3, accuracy: 1e-6)
        XCTAssertEqual(aimd.update(usage: .normal, acknowledgedBitsPerSecond: 700_000, nowMicros: 5_500_000), rate + perSecond / 2,
                       accuracy: 1e-3)
        // The acknowledged rate far above the band: the capacity estimate is dropped, multiplicative again.
        XCTAssertEqual(aimd.update(usage: .normal, acknowledgedBitsPerSecond: 2_000_000, nowMicros: 6_500_000),
                       (rate + perSecond / 2) * 1.08, accuracy: 1e-3)
        XCTAssertFalse(aimd.linkCapacity.hasEstimate)
    }

    func testAIMDDecreaseNeverRaisesAndClampsToMinMax() {
        var aimd = AIMDRateControl(startBitrate: 500_000, minBitrate: 100_000, maxBitrate: 2_000_000)
        // Acknowledged above the current rate: no increase on over-use (0.85 × 1.2 M > 500 k → stays 500 k).
        XCTAssertEqual(aimd.update(usage: .overusing, acknowledgedBitsPerSecond: 1_200_000, nowMicros: 0), 500_000)
        XCTAssertEqual(aimd.update(usage: .overusing, acknowledgedBitsPerSecond: 50_000, nowMicros: 100_000), 100_000, "clamped to min")
        var fast = AIMDRateControl(startBitrate: 1_900_000, minBitrate: 100_000, maxBitrate: 2_000_000)
        fast.update(usage: .normal, acknowledgedBitsPerSecond: 1_900_000, nowMicros: 0)
        XCTAssertEqual(fast.update(usage: .normal, acknowledgedBitsPerSecond: 1_900_000, nowMicros: 1_000_000), 2_000_000, "clamped to max")
        XCTAssertEqual(AIMDRateControl(startBitrate: 5_000_000, minBitrate: 100_000, maxBitrate: 2_000_000).bitrate, 2_000_000)
    }

    func testTimeToReduceFurther() {
        var aimd = AIMDRateControl(startBitrate: 1_000_000, minBitrate: 100_000, maxBitrate: 3_000_000)
        aimd.roundTripMicros = 50_000
        XCTAssertTrue(aimd.timeToReduceFurther(nowMicros: 0, acknowledgedBitsPerSecond: 900_000), "no change yet")
        aimd.update(usage: .overusing, acknowledgedBitsPerSecond: 900_000, nowMicros: 0)  // → 765 000
        XCTAssertFalse(aimd.timeToReduceFurther(nowMicros: 49_000, acknowledgedBitsPerSecond: 400_000), "within one RTT")
        XCTAssertTrue(aimd.timeToReduceFurther(nowMicros: 49_000, acknowledgedBitsPerSecond: 380_000), "below half the estimate")
        XCTAssertTrue(aimd.timeToReduceFurther(nowMicros: 50_000, acknowledgedBitsPerSecond: 900_000), "one RTT later")
        aimd.roundTripMicros = 5_000_000
        XCTAssertTrue(aimd.timeToReduceFurther(nowMicros: 200_000, acknowledgedBitsPerSecond: 900_000), "the interval is capped at 200 ms")
    }

    func testLossBasedNumbers() {
        var loss = LossBasedController(startBitrate: 1_000_000, minBitrate: 100_000, maxBitrate: 3_000_000)
        XCTAssertFalse(loss.onFeedback(lost: 1, received: 4, nowMicros: 0), "fewer than 20 packets: no measurement")
        XCTAssertTrue(loss.onFeedback(lost: 0, received: 15, nowMicros: 10_000))
        XCTAssertEqual(loss.lossFraction, 0.05, "1 of 20 across both feedbacks")
        XCTAssertEqual(loss.bitrate, 1_000_000, "2…10 %: hold")

        loss.onFeedback(lost: 0, received: 20, nowMicros: 100_000)
        XCTAssertEqual(loss.bitrate, 1_050_000, accuracy: 1e-6, "below 2 %: ×1.05")
        loss.onFeedback(lost: 0, received: 20, nowMicros: 250_000)
        XCTAssertEqual(loss.bitrate, 1_050_000, accuracy: 1e-6, "at most once per 200 ms")
        loss.onFeedback(lost: 0, received: 20, nowMicros: 300_000)
        XCTAssertEqual(loss.bitrate, 1_102_500, accuracy: 1e-6)

        loss.roundTripMicros = 100_000
        loss.onFeedback(lost: 3, received: 17, nowMicros: 400_000)
        XCTAssertEqual(loss.lossFraction, 0.15)
        XCTAssertEqual(loss.bitrate, 1_102_500 * (1 - 0.5 * 0.15), accuracy: 1e-6, "above 10 %: ×(1 − 0.5 p)")
        loss.onFeedback(lost: 10, received: 10, nowMicros: 799_000)
        XCTAssertEqual(loss.bitrate, 1_102_500 * 0.925, accuracy: 1e-6, "at most once per 300 ms + RTT")
        loss.onFeedback(lost: 10, received: 10, nowMicros: 800_000)
        XCTAssertEqual(loss.bitrate, 1_102_500 * 0.925 * 0.75, accuracy: 1e-6)

        loss.cap(at: 500_000)
        XCTAssertEqual(loss.bitrate, 500_000)
        loss.cap(at: 10_000)
        XCTAssertEqual(loss.bitrate, 100_000, "never below min")
        loss.set(9_000_000)
        XCTAssertEqual(loss.bitrate, 3_000_000, "never above max")
        for step in 0..<20 { loss.onFeedback(lost: 20, received: 0, nowMicros: 2_000_000 + Int64(step) * 1_000_000) }
        XCTAssertEqual(loss.bitrate, 100_000, "100 % loss halves down to min, no further")
    }

    func testLinkCapacityBand() {
        var capacity = LinkCapacityEstimator()
        XCTAssertEqual(capacity.upperBound, .infinity)
        XCTAssertEqual(capacity.lowerBound, 0)
        capacity.onOveruse(acknowledgedBitsPerSecond: 1_000_000)
        // Estimate 1000 kbit/s, variance 0.4 × 0.95 clamped to 0.4: deviation √(0.4 × 1000) = 20 kbit/s.
        XCTAssertEqual(capacity.estimate, 1_000_000)
        XCTAssertEqual(capacity.upperBound, (1000 + 3 * 400.0.squareRoot()) * 1000, accuracy: 1e-6)
        XCTAssertEqual(capacity.lowerBound, (1000 - 3 * 400.0.squareRoot()) * 1000, accuracy: 1e-6)
        capacity.onOveruse(acknowledgedBitsPerSecond: 800_000)
        XCTAssertEqual(capacity.estimate, 990_000, accuracy: 1e-6, "5 % towards the new sample")
        capacity.reset()
        XCTAssertFalse(capacity.hasEstimate)
    }
}
