import CongestionControl
import XCTest

/// ``LossBasedController`` (draft-ietf-rmcat-gcc-02 §6: p < 2 % → ×1.05, p > 10 % → ×(1 − 0.5 p), else
/// hold; libwebrtc's `SendSideBandwidthEstimation` v1 for the pacing of steps: an increase at most every
/// 200 ms, a decrease at most every 300 ms + RTT; loss measured over at least 20 packets).
final class LossBasedControllerTests: XCTestCase {
    private func controller(_ start: Double = 1_000_000) -> LossBasedController {
        LossBasedController(startBitrate: start, minBitrate: 100_000, maxBitrate: 5_000_000)
    }

    /// The band edges: exactly 2 % and exactly 10 % hold (the rules say "below 2 %" and "above 10 %").
    func testTheBandEdgesHold() {
        let cases: [(lost: Int, received: Int, factor: Double)] = [
            (0, 100, 1.05),        // 0 %
            (1, 99, 1.05),         // 1 %
            (1, 50, 1.05),         // 1.96 %
            (1, 49, 1),            // 2 % exactly
            (2, 48, 1),            // 4 %
            (2, 18, 1),            // 10 % exactly
            (21, 179, 1 - 0.5 * 0.105),  // 10.5 %
            (10, 10, 0.75),        // 50 %
            (20, 0, 0.5),          // 100 %
        ]
        for (lost, received, factor) in cases {
            var loss = controller()
            XCTAssertTrue(loss.onFeedback(lost: lost, received: received, nowMicros: 0))
            XCTAssertEqual(loss.lossFraction, Double(lost) / Double(lost + received), accuracy: 1e-12)
            XCTAssertEqual(loss.bitrate, 1_000_000 * factor, accuracy: 1e-6, "\(lost) of \(lost + received)")
        }
    }

    /// Counts add up across feedbacks until 20 packets are covered; the measurement then starts afresh, so the
    /// next one does not include the packets already judged.
    func testAMeasurementSpansFeedbacksAndThenStartsAfresh() {
        var loss = controller()
        XCTAssertFalse(loss.onFeedback(lost: 3, received: 7, nowMicros: 0))
        XCTAssertFalse(loss.onFeedback(lost: 0, received: 9, nowMicros: 100_000))
        XCTAssertEqual(loss.lossFraction, 0, "no measurement yet")
        XCTAssertEqual(loss.bitrate, 1_000_000)
        XCTAssertTrue(loss.onFeedback(lost: 0, received: 1, nowMicros: 200_000))
        XCTAssertEqual(loss.lossFraction, 3.0 / 20)
        XCTAssertEqual(loss.bitrate, 1_000_000 * (1 - 0.5 * 0.15), accuracy: 1e-6)
        // The next 20 are clean: 0 %, not (3 + 0) / 40.
        XCTAssertTrue(loss.onFeedback(lost: 0, received: 20, nowMicros: 300_000))
        XCTAssertEqual(loss.lossFraction, 0)
        XCTAssertEqual(loss.bitrate, 1_000_000 * 0.925 * 1.05, accuracy: 1e-6)
        // A feedback with nothing in it changes nothing.
        XCTAssertFalse(loss.onFeedback(lost: 0, received: 0, nowMicros: 400_000))
    }

    /// Increases come at most every 200 ms, timed from the last increase (a hold in between does not restart
    /// it): with clean feedback every 100 ms the estimate grows ×1.05 per 200 ms, ×1.05⁵ per second.
    func testIncreasePacing() {
        var loss = controller(200_000)
        for step in 0...10 { loss.onFeedback(lost: 0, received: 20, nowMicros: Int64(step) * 100_000) }
        // Increases at 0, 200, …, 1000 ms: six.
        XCTAssertEqual(loss.bitrate, 200_000 * pow(1.05, 6), accuracy: 1e-6)

        var held = controller(200_000)
        held.onFeedback(lost: 0, received: 20, nowMicros: 0)            // ×1.05 at 0
        held.onFeedback(lost: 1, received: 19, nowMicros: 150_000)      // 5 %: hold
        held.onFeedback(lost: 0, received: 20, nowMicros: 199_999)      // clean but 199.999 ms after the increase
        XCTAssertEqual(held.bitrate, 210_000, accuracy: 1e-6)
        held.onFeedback(lost: 0, received: 20, nowMicros: 200_000)
        XCTAssertEqual(held.bitrate, 220_500, accuracy: 1e-6)
    }

    /// Decreases come at most every 300 ms + RTT: the reaction to the last one needs a round trip to show.
    func testDecreasePacingFollowsTheRoundTrip() {
        for rtt: Int64 in [0, 50_000, 200_000, 700_000] {
            var loss = controller()
            loss.roundTripMicros = rtt
            loss.onFeedback(lost: 4, received: 16, nowMicros: 1_000_000)  // 20 %: ×0.9
            XCTAssertEqual(loss.bitrate, 900_000, accuracy: 1e-6)
            loss.onFeedback(lost: 4, received: 16, nowMicros: 1_000_000 + 300_000 + rtt - 1)
            XCTAssertEqual(loss.bitrate, 900_000, accuracy: 1e-6, "RTT \(rtt) µs: too soon")
            loss.onFeedback(lost: 4, received: 16, nowMicros: 1_000_000 + 300_000 + rtt)
            XCTAssertEqual(loss.bitrate, 810_000, accuracy: 1e-6, "RTT \(rtt) µs: due")
        }
    }

    /// Increase and decrease timers are separate: a decrease right after an increase is not delayed, and an
    /// increase right after a decrease neither.
    func testIncreaseAndDecreaseTimersAreIndependent() {
        var loss = controller()
        loss.onFeedback(lost: 0, received: 20, nowMicros: 0)            // ×1.05
        loss.onFeedback(lost: 6, received: 14, nowMicros: 10_000)       // 30 %: ×0.85
        XCTAssertEqual(loss.bitrate, 1_050_000 * 0.85, accuracy: 1e-6)
        loss.onFeedback(lost: 0, received: 20, nowMicros: 200_000)      // 200 ms after the increase: ×1.05
        XCTAssertEqual(loss.bitrate, 1_050_000 * 0.85 * 1.05, accuracy: 1e-6)
    }

    /// Constant loss drives the estimate to a fixed point only in the hold band; above 10 % it falls
    /// geometrically to the minimum at the decrease pace, below 2 % it grows to the maximum.
    func testConstantLossTrajectories() {
        var hold = controller()
        var falling = controller()
        var rising = controller()
        falling.roundTripMicros = 100_000
        var decreases = 0
        for step in 0..<100 {  // 10 s of feedback every 100 ms
            let now = Int64(step) * 100_000
            hold.onFeedback(lost: 3, received: 47, nowMicros: now)  // 6 %
            let before = falling.bitrate
            falling.onFeedback(lost: 10, received: 40, nowMicros: now)  // 20 %
            if falling.bitrate < before { decreases += 1 }
            rising.onFeedback(lost: 0, received: 50, nowMicros: now)
        }
        XCTAssertEqual(hold.bitrate, 1_000_000)
        // Every 400 ms (300 + RTT 100) from 0: at 0, 400, …, 9600 ms — 25 decreases of ×0.9, floor 100 k.
        XCTAssertEqual(decreases, 22, "0.9²² × 1 M = 98 k: the 22nd reaches the floor")
        XCTAssertEqual(falling.bitrate, 100_000)
        // Every 200 ms: 50 increases of ×1.05 (1.05^50 = 11.5) — capped at 5 M.
        XCTAssertEqual(rising.bitrate, 5_000_000)
    }

    /// ``LossBasedController/cap(at:)`` and ``LossBasedController/set(_:)`` stay within min…max; the start is
    /// clamped too.
    func testCapSetAndClamping() {
        XCTAssertEqual(LossBasedController(startBitrate: 50_000, minBitrate: 100_000, maxBitrate: 1_000_000).bitrate, 100_000)
        XCTAssertEqual(LossBasedController(startBitrate: 5_000_000, minBitrate: 100_000, maxBitrate: 1_000_000).bitrate, 1_000_000)
        var loss = controller()
        loss.cap(at: 2_000_000)
        XCTAssertEqual(loss.bitrate, 1_000_000, "a cap above the estimate raises nothing")
        loss.cap(at: 400_000)
        XCTAssertEqual(loss.bitrate, 400_000)
        loss.set(1_500_000)
        XCTAssertEqual(loss.bitrate, 1_500_000, "set may raise")
        loss.onFeedback(lost: 0, received: 20, nowMicros: 0)
        XCTAssertEqual(loss.bitrate, 1_575_000, accuracy: 1e-6, "and the next increase builds on it")
    }
}
