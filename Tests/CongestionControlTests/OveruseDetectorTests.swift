@testable import CongestionControl
import XCTest

/// ``OveruseDetector`` on hand-made samples (libwebrtc's `TrendlineEstimator::Detect` and `UpdateThreshold`;
/// the adaptive threshold of draft-ietf-rmcat-gcc-02 §5.4 / Holmer et al. 2016):
///
/// - over-use when the modified trend m stays above γ for more than 10 ms of send time — the timer starts at
///   half the first send delta and adds each next one — over at least two samples, and the trend is not
///   falling; under-use as soon as m < −γ; otherwise normal;
/// - γ += k (|m| − γ) Δt, k = 0.0087 (|m| ≥ γ) or 0.039 (|m| < γ), Δt in ms capped at 100, γ in 6…600, not
///   moved by a spike |m| > γ + 15.
final class OveruseDetectorTests: XCTestCase {
    private func sample(_ modified: Double, trend: Double? = nil, sendDelta: Double = 5, groups: Int = 100) -> TrendlineEstimator.Sample {
        .init(trend: trend ?? modified / 240, modifiedTrend: modified, groups: groups, sendDeltaMillis: sendDelta,
              accumulatedDelayMillis: 0, smoothedDelayMillis: 0)
    }

    /// The sample index (1-based) at which a run of samples above the threshold becomes over-use, for send
    /// deltas of `sendDelta` ms: the first n with sendDelta/2 + (n − 1) sendDelta > 10 and n ≥ 2.
    private func expectedOveruseSample(sendDelta: Double) -> Int {
        var n = 1
        while !(sendDelta / 2 + Double(n - 1) * sendDelta > 10 && n >= 2) { n += 1 }
        return n
    }

    func testOveruseNeedsMoreThanTenMillisecondsAndTwoSamples() {
        // 1 ms: 0.5, 1.5, …, 10.5 → the 11th. 2 ms: 1, 3, …, 11 → 6th. 8 ms: 4, 12 → 2nd. 20 ms: 10 (not more
        // than 10), 30 → 2nd. 30 ms: 15 after one sample is not enough (two needed) → 2nd.
        let cases: [(Double, Int)] = [(1, 11), (2, 6), (8, 2), (20, 2), (30, 2), (4, 4), (6.5, 3)]
        for (sendDelta, expected) in cases {
            XCTAssertEqual(expectedOveruseSample(sendDelta: sendDelta), expected, "the rule's arithmetic for \(sendDelta) ms")
            var detector = OveruseDetector()
            var at: Int?
            for n in 1...20 {
                // m = 13 (above 12.5, by less than 15: γ adapts up slowly, 0.0087 × 0.5 × Δt, and stays below 13).
                let usage = detector.detect(sample(13, trend: 0.1, sendDelta: sendDelta), nowMillis: Int64(n) * Int64(sendDelta))
                if usage == .overusing {
                    at = n
                    break
                }
                XCTAssertEqual(usage, .normal, "send delta \(sendDelta) ms, sample \(n)")
            }
            XCTAssertEqual(at, expected, "send delta \(sendDelta) ms")
        }
    }

    /// A sample back within ±γ resets the timer: the next run above needs its full 10 ms again.
    func testAnInterruptionRestartsTheTimer() {
        var detector = OveruseDetector()
        var now: Int64 = 0
        func feed(_ modified: Double) -> BandwidthUsage {
            now += 4
            return detector.detect(sample(modified, trend: 0.1, sendDelta: 4), nowMillis: now)
        }
        XCTAssertEqual([feed(13), feed(13), feed(0)], [.normal, .normal, .normal], "2 + 4 = 6 ms, then back to normal")
        // Again from 2 ms: 2, 6, 10 (not more than 10), 14.
        XCTAssertEqual([feed(13), feed(13), feed(13), feed(13)], [.normal, .normal, .normal, .overusing])
    }

    /// The trend must not be falling: with the timer long past 10 ms a falling trend keeps the state, and the
    /// first sample whose trend is not below the one before declares over-use at once.
    func testOveruseWaitsForARisingTrend() {
        var detector = OveruseDetector()
        let trends = [0.30, 0.29, 0.28, 0.27, 0.27]
        let usages = trends.enumerated().map { index, trend in
            detector.detect(sample(14, trend: trend, sendDelta: 20), nowMillis: Int64(index) * 20)
        }
        XCTAssertEqual(usages, [.normal, .normal, .normal, .normal, .overusing], "equal to the previous trend counts as rising")
    }

    /// Over-use persists while m stays above γ (the timer restarts from 0 but the state is kept), and ends
    /// with the first sample within ±γ; under-use is declared with the first sample below −γ, at once.
    func testStatesFollowTheModifiedTrend() {
        var detector = OveruseDetector()
        var now: Int64 = 0
        func feed(_ modified: Double, trend: Double = 0.1) -> BandwidthUsage {
            now += 10
            return detector.detect(sample(modified, trend: trend, sendDelta: 10), nowMillis: now)
        }
        XCTAssertEqual(feed(20), .normal)
        XCTAssertEqual(feed(20), .overusing)
        XCTAssertEqual(feed(20), .overusing, "still above: still over-using")
        XCTAssertEqual(feed(20, trend: 0.05), .overusing, "a falling trend above γ keeps the state")
        XCTAssertEqual(feed(0), .normal)
        XCTAssertEqual(feed(-20, trend: -0.1), .underusing, "below −γ: under-use without waiting")
        XCTAssertEqual(feed(-5, trend: -0.02), .normal)
        XCTAssertEqual(feed(-20, trend: -0.1), .underusing)
        XCTAssertEqual(feed(20), .underusing,
                       "above γ once is no verdict yet: the state stays what it was (libwebrtc's hypothesis does too)")
        XCTAssertEqual(feed(20), .overusing)
    }

    /// Before two groups there is no verdict: normal, and neither the threshold nor the modified trend moves.
    func testNoVerdictBeforeTwoGroups() {
        var detector = OveruseDetector()
        XCTAssertEqual(detector.detect(sample(500, groups: 1), nowMillis: 0), .normal)
        XCTAssertEqual(detector.detect(sample(-500, groups: 1), nowMillis: 100), .normal)
        XCTAssertEqual(detector.threshold, 12.5)
        XCTAssertEqual(detector.modifiedTrend, 0)
        // The first counted sample sets the threshold's clock: no time has elapsed for it.
        detector.detect(sample(20, groups: 2), nowMillis: 200)
        XCTAssertEqual(detector.threshold, 12.5)
        XCTAssertEqual(detector.modifiedTrend, 20)
    }

    /// γ approaches a steady |m| exponentially: after n updates Δt apart, γ_n = |m| + (γ_0 − |m|)(1 − k Δt)^n,
    /// with k_up above and k_down below; negative m counts by its magnitude.
    func testThresholdConvergesWithTheClosedForm() {
        for (modified, k) in [(20.0, OveruseDetector.kUp), (-25.0, OveruseDetector.kUp), (8.0, OveruseDetector.kDown),
                              (-7.0, OveruseDetector.kDown)] {
            var detector = OveruseDetector()
            detector.detect(sample(modified), nowMillis: 0)  // starts the clock
            for n in 1...50 {
                detector.detect(sample(modified), nowMillis: Int64(n) * 10)
                let expected = abs(modified) + (12.5 - abs(modified)) * pow(1 - k * 10, Double(n))
                XCTAssertEqual(detector.threshold, expected, accuracy: 1e-9, "m \(modified), update \(n)")
            }
        }
    }

    /// Δt counts at most 100 ms, never negative; a spike beyond γ + 15 does not adapt γ but does move the
    /// clock, so the next update counts only the time since the spike.
    func testThresholdClockRules() {
        var detector = OveruseDetector()
        detector.detect(sample(12), nowMillis: 1_000)
        detector.detect(sample(12), nowMillis: 6_000)  // 5 s: counts as 100 ms
        let afterLongGap = 12.5 - 0.039 * 0.5 * 100
        XCTAssertEqual(detector.threshold, afterLongGap, accuracy: 1e-12)
        detector.detect(sample(20), nowMillis: 5_000)  // time went back: Δt 0
        XCTAssertEqual(detector.threshold, afterLongGap, accuracy: 1e-12)
        // Spike at 5 010 ms: 40 > 10.55 + 15 — no change; then 8 at 5 020 ms counts 10 ms since the spike, not 20.
        detector.detect(sample(40), nowMillis: 5_010)
        XCTAssertEqual(detector.threshold, afterLongGap, accuracy: 1e-12)
        detector.detect(sample(8), nowMillis: 5_020)
        XCTAssertEqual(detector.threshold, afterLongGap + 0.039 * (8 - afterLongGap) * 10, accuracy: 1e-12)
        // Clamped at 6 from below: a long quiet stretch cannot make the detector hair-triggered.
        detector.detect(sample(0), nowMillis: 5_120)
        XCTAssertEqual(detector.threshold, 6)
    }

    /// A spike exactly γ + 15 still adapts γ (the rule is "more than"); above it does not.
    func testTheSpikeBoundary() {
        var at = OveruseDetector()
        at.detect(sample(0), nowMillis: 0)
        at.detect(sample(27.5), nowMillis: 10)
        XCTAssertEqual(at.threshold, 12.5 + 0.0087 * 15 * 10, accuracy: 1e-12)
        var beyond = OveruseDetector()
        beyond.detect(sample(0), nowMillis: 0)
        beyond.detect(sample(27.5001), nowMillis: 10)
        XCTAssertEqual(beyond.threshold, 12.5)
    }

    /// The threshold makes the detector follow the noise: a trend that hovers at a modified 11 (just under the
    /// initial 12.5) for a few seconds pulls γ down towards 11 — never below — and a modified 11.5 later is
    /// then judged against the adapted γ, not 12.5. A sustained 14 is over-use with either.
    func testAdaptationTracksTheNoiseLevel() {
        var detector = OveruseDetector()
        var now: Int64 = 0
        for _ in 0..<500 {
            now += 10
            XCTAssertEqual(detector.detect(sample(11, trend: 0.04, sendDelta: 10), nowMillis: now), .normal)
        }
        XCTAssertEqual(detector.threshold, 11 + 1.5 * pow(1 - 0.39, 499), accuracy: 1e-9)
        XCTAssertGreaterThanOrEqual(detector.threshold, 11, "never below the level it follows")
        now += 10
        XCTAssertEqual(detector.detect(sample(11.5, trend: 0.05, sendDelta: 10), nowMillis: now), .normal, "one sample")
        now += 10
        XCTAssertEqual(detector.detect(sample(11.5, trend: 0.05, sendDelta: 10), nowMillis: now), .overusing,
                       "11.5 is above the adapted γ (≈ 11.0) for 15 ms over two samples")
    }
}
