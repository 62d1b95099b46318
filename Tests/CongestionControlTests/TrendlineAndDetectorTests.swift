@testable import CongestionControl
import XCTest

/// The trendline estimator on crafted delay ramps, and the over-use detector's transitions and threshold.
final class TrendlineAndDetectorTests: XCTestCase {
    /// Feeds `count` groups sent `sendMillis` apart that arrive `arrivalMillis` apart; returns every sample.
    private func ramp(_ trendline: inout TrendlineEstimator, count: Int, sendMillis: Double, arrivalMillis: Double,
                      startArrivalMicros: inout Int64) -> [TrendlineEstimator.Sample] {
        (0..<count).map { _ in
            startArrivalMicros += Int64(arrivalMillis * 1000)
            let deltas = InterArrivalDelta.Deltas(sendDeltaMicros: Int64(sendMillis * 1000),
                                                  arrivalDeltaMicros: Int64(arrivalMillis * 1000), sizeDelta: 0)
            return trendline.update(deltas: deltas, arrivalMicros: startArrivalMicros)
        }
    }

    func testSlopeOfExactLines() {
        XCTAssertEqual(TrendlineEstimator.slope([(0, 1), (1, 4), (2, 7)]), 3)
        XCTAssertEqual(TrendlineEstimator.slope([(10, 5), (20, 5), (40, 5)]), 0)
        XCTAssertEqual(try XCTUnwrap(TrendlineEstimator.slope([(0, 0), (1, 1), (2, 0), (3, 1)])), 0.2, accuracy: 1e-12)
        XCTAssertNil(TrendlineEstimator.slope([(3, 1), (3, 9)]), "all x equal: no line")
        XCTAssertNil(TrendlineEstimator.slope([(3, 1)]))
    }

    func testSmoothingFollowsTheFormula() {
        var trendline = TrendlineEstimator()
        var time: Int64 = 0
        // Each group arrives 2 ms later than sent: accumulated 2, 4, 6; smoothed 0.2, 0.58, 1.122.
        let samples = ramp(&trendline, count: 3, sendMillis: 20, arrivalMillis: 22, startArrivalMicros: &time)
        XCTAssertEqual(samples.map(\.accumulatedDelayMillis), [2, 4, 6])
        XCTAssertEqual(samples[0].smoothedDelayMillis, 0.2, accuracy: 1e-12)
        XCTAssertEqual(samples[1].smoothedDelayMillis, 0.58, accuracy: 1e-12)
        XCTAssertEqual(samples[2].smoothedDelayMillis, 1.122, accuracy: 1e-12)
        XCTAssertEqual(samples.map(\.trend), [0, 0, 0], "no trend before the window of 20 is full")
    }

    func testSteadyDelayHasNoTrend() {
        var trendline = TrendlineEstimator()
        var time: Int64 = 0
        let samples = ramp(&trendline, count: 100, sendMillis: 20, arrivalMillis: 20, startArrivalMicros: &time)
        XCTAssertEqual(samples.last?.trend, 0)
        XCTAssertEqual(samples.last?.modifiedTrend, 0)
    }

    func testGrowingQueueGivesItsSlope() {
        var trendline = TrendlineEstimator()
        var time: Int64 = 0
        // 10 % more sent than the path carries: each 20 ms of sending takes 22 ms to arrive; delay grows 2 ms
        // per 22 ms of arrival time.
        let growing = ramp(&trendline, count: 100, sendMillis: 20, arrivalMillis: 22, startArrivalMicros: &time)
        let last = try! XCTUnwrap(growing.last)
        XCTAssertEqual(last.trend, 2.0 / 22, accuracy: 1e-4)
        XCTAssertEqual(last.modifiedTrend, 60 * 2.0 / 22 * 4, accuracy: 1e-2, "groups capped at 60, gain 4")
        XCTAssertEqual(last.groups, 100)
        // Draining at 1 ms per 18 ms of arrival: the slope turns negative and settles at −1/18.
        let draining = ramp(&trendline, count: 100, sendMillis: 20, arrivalMillis: 19, startArrivalMicros: &time)
        XCTAssertEqual(try! XCTUnwrap(draining.last).trend, -1.0 / 19, accuracy: 1e-4)
        XCTAssertLessThan(draining[25].trend, 0, "the window has turned within 25 groups")
    }

    func testOveruseNeedsTenMillisecondsAboveTheThreshold() {
        for (sendMillis, extraGroups) in [(20.0, 1), (5.0, 2), (2.0, 5)] {
            var trendline = TrendlineEstimator()
            var detector = OveruseDetector()
            var time: Int64 = 0
            var firstAbove: Int?
            var overuseAt: Int?
            for index in 0..<200 {
                let sample = ramp(&trendline, count: 1, sendMillis: sendMillis, arrivalMillis: sendMillis * 1.2,
                                  startArrivalMicros: &time)[0]
                let thresholdBefore = detector.threshold
                let usage = detector.detect(sample, nowMillis: time / 1000)
                if firstAbove == nil, sample.modifiedTrend > thresholdBefore { firstAbove = index }
                if usage == .overusing {
                    overuseAt = index
                    break
                }
            }
            let first = try! XCTUnwrap(firstAbove, "send \(sendMillis) ms")
            // Over-use counts half the first send delta, then each one, and needs more than 10 ms.
            XCTAssertEqual(overuseAt, first + extraGroups, "send \(sendMillis) ms")
            XCTAssertGreaterThanOrEqual(first, TrendlineEstimator.windowSize - 1)
        }
    }

    func testDetectorStateTransitions() {
        var trendline = TrendlineEstimator()
        var detector = OveruseDetector()
        var time: Int64 = 0
        var seen: [BandwidthUsage] = []
        func run(_ count: Int, arrival: Double) {
            for sample in ramp(&trendline, count: count, sendMillis: 20, arrivalMillis: arrival, startArrivalMicros: &time) {
                let usage = detector.detect(sample, nowMillis: time / 1000)
                if seen.last != usage { seen.append(usage) }
            }
        }
        run(40, arrival: 20)  // steady
        run(40, arrival: 24)  // queue building
        run(60, arrival: 14)  // draining
        run(80, arrival: 20)  // steady again
        XCTAssertEqual(seen, [.normal, .overusing, .normal, .underusing, .normal])
    }

    func testThresholdAdaptsWithKUpAndKDownAndClamps() {
        var detector = OveruseDetector()
        func sample(_ modified: Double, trend: Double = 0) -> TrendlineEstimator.Sample {
            .init(trend: trend, modifiedTrend: modified, groups: 100, sendDeltaMillis: 5, accumulatedDelayMillis: 0, smoothedDelayMillis: 0)
        }
        detector.detect(sample(12.5), nowMillis: 1000)  // first update: no time elapsed
        XCTAssertEqual(detector.threshold, 12.5)
        detector.detect(sample(20), nowMillis: 1150)  // 150 ms counts as 100
        XCTAssertEqual(detector.threshold, 12.5 + 0.0087 * 7.5 * 100, accuracy: 1e-9)
        detector.detect(sample(5), nowMillis: 1160)
        XCTAssertEqual(detector.threshold, 19.025 - 0.039 * 14.025 * 10, accuracy: 1e-9)
        let before = detector.threshold
        detector.detect(sample(before + 15.5), nowMillis: 1200)
        XCTAssertEqual(detector.threshold, before, "a spike beyond threshold + 15 ms does not move it")
        detector.detect(sample(0), nowMillis: 1300)
        XCTAssertEqual(detector.threshold, 6, "clamped below at 6 ms")
        var time: Int64 = 1300
        for _ in 0..<100 {
            time += 100
            detector.detect(sample(detector.threshold + 14), nowMillis: time)
        }
        XCTAssertEqual(detector.threshold, 600, "clamped above at 600 ms")
    }

    func testFallingTrendDoesNotTriggerOveruse() {
        var detector = OveruseDetector()
        // Above the threshold for long enough, but the trend falls at every step: never over-using.
        for (index, trend) in stride(from: 0.5, to: 0.3, by: -0.01).enumerated() {
            let usage = detector.detect(.init(trend: trend, modifiedTrend: 100 * trend, groups: 100, sendDeltaMillis: 20,
                                              accumulatedDelayMillis: 0, smoothedDelayMillis: 0), nowMillis: Int64(index * 20))
            XCTAssertEqual(usage, .normal)
        }
    }
}
