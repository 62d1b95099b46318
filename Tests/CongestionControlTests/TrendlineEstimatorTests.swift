@testable import CongestionControl
import XCTest

/// ``TrendlineEstimator`` against closed forms (libwebrtc's `TrendlineEstimator::UpdateTrendline`): the
/// accumulated delay is the running sum of (arrival delta − send delta); it is smoothed as
/// s_k = 0.9 s_(k−1) + 0.1 a_k; the window keeps the last 20 (x = arrival ms since the first group, s_k);
/// the trend is their least-squares slope, kept from before while the window is not full.
///
/// For a constant per-group delay growth d starting from s_0 = 0, a_k = d k and the smoothed value has the
/// closed form s_k = d (k − 9 (1 − 0.9^k)) (solve the recurrence: particular d (k − 9), homogeneous A 0.9^k,
/// A = 9 d from s_0 = 0). Its slope tends to d per group, i.e. d / (arrival spacing) per ms.
final class TrendlineEstimatorTests: XCTestCase {
    /// Feeds one group and returns the sample.
    private func feed(_ trendline: inout TrendlineEstimator, sendMillis: Double, arrivalMillis: Double,
                      atMicros arrival: Int64) -> TrendlineEstimator.Sample {
        trendline.update(deltas: .init(sendDeltaMicros: Int64((sendMillis * 1000).rounded()),
                                       arrivalDeltaMicros: Int64((arrivalMillis * 1000).rounded()), sizeDelta: 0),
                         arrivalMicros: arrival)
    }

    private func smoothed(growth d: Double, group k: Int) -> Double { d * (Double(k) - 9 * (1 - pow(0.9, Double(k)))) }

    func testSmoothedDelayFollowsTheClosedForm() {
        var trendline = TrendlineEstimator()
        var arrival: Int64 = 0
        for k in 1...80 {
            arrival += 25_000
            let sample = feed(&trendline, sendMillis: 20, arrivalMillis: 25, atMicros: arrival)
            XCTAssertEqual(sample.accumulatedDelayMillis, 5 * Double(k), accuracy: 1e-9, "group \(k)")
            XCTAssertEqual(sample.smoothedDelayMillis, smoothed(growth: 5, group: k), accuracy: 1e-9, "group \(k)")
            XCTAssertEqual(sample.sendDeltaMillis, 20)
            XCTAssertEqual(sample.groups, k)
        }
    }

    /// The trend is 0 until the 20th group, then exactly the slope of the 20 points (x from the first group's
    /// arrival, y by the closed form), and the modified trend min(k, 60) × trend × 4.
    func testTheTrendIsTheSlopeOfTheLastTwentyPoints() throws {
        var trendline = TrendlineEstimator()
        let spacing = 25.0  // ms between group arrivals
        var arrival: Int64 = 1_000_000  // any origin: x counts from the first group
        for k in 1...100 {
            arrival += Int64(spacing * 1000)
            let sample = feed(&trendline, sendMillis: 20, arrivalMillis: spacing, atMicros: arrival)
            guard k >= TrendlineEstimator.windowSize else {
                XCTAssertEqual(sample.trend, 0, "group \(k): window not full")
                XCTAssertEqual(sample.modifiedTrend, 0)
                continue
            }
            let points = ((k - 19)...k).map { (x: Double($0 - 1) * spacing, y: smoothed(growth: 5, group: $0)) }
            let expected = try XCTUnwrap(TrendlineEstimator.slope(points))
            XCTAssertEqual(sample.trend, expected, accuracy: 1e-9, "group \(k)")
            XCTAssertEqual(sample.modifiedTrend, Double(min(k, 60)) * expected * 4, accuracy: 1e-7, "group \(k)")
        }
        // Long after the transient (0.9^81 ≈ 2e-4) the slope is the growth per ms of arrival: 5 / 25.
        XCTAssertEqual(trendline.trend, 0.2, accuracy: 1e-3)
    }

    /// With the transient gone the slope of s_k = d (k − 9) over 20 evenly spaced points is d / spacing exactly;
    /// and it does not depend on the arrival origin nor on where the stream began.
    func testSteadyRampSlopeIsGrowthOverSpacing() {
        for (growth, spacing) in [(1.0, 10.0), (2.0, 22.0), (0.5, 5.0), (-1.0, 19.0)] {
            var trendline = TrendlineEstimator()
            var arrival: Int64 = 123_456_789
            var last: TrendlineEstimator.Sample?
            for _ in 0..<300 {
                arrival += Int64(spacing * 1000)
                last = feed(&trendline, sendMillis: spacing - growth, arrivalMillis: spacing, atMicros: arrival)
            }
            XCTAssertEqual(last?.trend ?? .nan, growth / spacing, accuracy: 1e-9, "growth \(growth) per \(spacing) ms")
            XCTAssertEqual(last?.modifiedTrend ?? .nan, 60 * growth / spacing * 4, accuracy: 1e-7, "capped at 60 groups")
        }
    }

    /// A step in delay that then stays flat: the trend rises while the step is in the window, and returns to
    /// (almost) 0 once 20 groups of flat delay have passed and the smoothing settled (0.9^n of the step).
    func testAOneOffDelayStepFadesFromTheTrend() {
        var trendline = TrendlineEstimator()
        var arrival: Int64 = 0
        for _ in 0..<40 {
            arrival += 20_000
            _ = feed(&trendline, sendMillis: 20, arrivalMillis: 20, atMicros: arrival)
        }
        XCTAssertEqual(trendline.trend, 0)
        arrival += 50_000
        let step = feed(&trendline, sendMillis: 20, arrivalMillis: 50, atMicros: arrival)  // 30 ms of queueing at once
        XCTAssertEqual(step.accumulatedDelayMillis, 30)
        XCTAssertEqual(step.smoothedDelayMillis, 3, accuracy: 1e-12)
        XCTAssertGreaterThan(step.trend, 0)
        var trends: [Double] = []
        for _ in 0..<120 {
            arrival += 20_000
            trends.append(feed(&trendline, sendMillis: 20, arrivalMillis: 20, atMicros: arrival).trend)
        }
        XCTAssertTrue(trends.prefix(5).allSatisfy { $0 > 0 }, "the step is in the window")
        // After n flat groups the smoothed delay is 30 (1 − 0.9^(n+1)); over the last 20 of 120 it moves by less
        // than r = 30 × 0.9^100 ≈ 8e-4 ms; a least-squares fit of 20 monotone points spanning r over 380 ms is at
        // most 1.43 r / 380 (a step at the middle: 50 r / 665 per point spacing).
        XCTAssertEqual(trends.last ?? .nan, 0, accuracy: 1.5 * 30 * pow(0.9, 100) / 380)
        XCTAssertEqual(trendline.update(deltas: .init(sendDeltaMicros: 20_000, arrivalDeltaMicros: 20_000, sizeDelta: 0),
                                        arrivalMicros: arrival + 20_000).accumulatedDelayMillis, 30,
                       "the accumulated delay keeps the step")
    }

    /// Groups that arrive at the same time as the group before (x does not move) still count; when all 20 x
    /// are equal there is no line and the previous trend stays.
    func testAWindowWithoutSpreadKeepsThePreviousTrend() {
        var trendline = TrendlineEstimator()
        var arrival: Int64 = 0
        for _ in 0..<30 {
            arrival += 10_000
            _ = feed(&trendline, sendMillis: 8, arrivalMillis: 10, atMicros: arrival)
        }
        XCTAssertGreaterThan(trendline.trend, 0)
        // Groups that all arrive at one instant, 10 ms on: while an older point remains the fit still moves.
        arrival += 10_000
        for _ in 0..<19 { _ = feed(&trendline, sendMillis: 8, arrivalMillis: 0, atMicros: arrival) }
        let kept = trendline.trend
        // The 20th replaces the last point with another x: all 20 share one x, no line — the trend is kept,
        // though the smoothed delay went on falling (8 ms per group).
        let sample = feed(&trendline, sendMillis: 8, arrivalMillis: 0, atMicros: arrival)
        XCTAssertEqual(sample.trend, kept)
        XCTAssertLessThan(sample.smoothedDelayMillis, 0)
        XCTAssertEqual(feed(&trendline, sendMillis: 8, arrivalMillis: 0, atMicros: arrival).trend, kept)
    }

    /// The group count saturates at 1000 and the gain's count at 60: the modified trend is linear in the
    /// count up to 60 groups and flat after.
    func testGroupCountsSaturate() {
        var trendline = TrendlineEstimator()
        var arrival: Int64 = 0
        var last: TrendlineEstimator.Sample?
        for k in 1...1100 {
            arrival += 10_000
            last = feed(&trendline, sendMillis: 9, arrivalMillis: 10, atMicros: arrival)
            if k == 59 || k == 60 || k == 61 {
                XCTAssertEqual(last!.modifiedTrend, Double(min(k, 60)) * last!.trend * 4, accuracy: 1e-9)
            }
        }
        XCTAssertEqual(last?.groups, 1000)
        XCTAssertEqual(last?.modifiedTrend ?? .nan, 60 * 0.1 * 4, accuracy: 1e-9)
    }

    func testSlopeIsTheLeastSquaresFit() throws {
        // y = 2x + 1 with symmetric noise ±1 on alternate points of an even count: the noise averages out of
        // Σ(x − x̄)(y − ȳ) only partly — slope 2 + Σ(x − x̄)e / Σ(x − x̄)², computed here by hand.
        let xs = (0..<6).map(Double.init)
        let noise: [Double] = [1, -1, 1, -1, 1, -1]
        let points = zip(xs, noise).map { (x: $0, y: 2 * $0 + 1 + $1) }
        let meanX = 2.5
        let sxx = xs.reduce(0) { $0 + ($1 - meanX) * ($1 - meanX) }  // 17.5
        let sxe = zip(xs, noise).reduce(0) { $0 + ($1.0 - meanX) * $1.1 }  // −3
        XCTAssertEqual(try XCTUnwrap(TrendlineEstimator.slope(points)), 2 + sxe / sxx, accuracy: 1e-12)
        // Invariant under shifting x and y.
        let shifted = points.map { (x: $0.x + 1e6, y: $0.y - 42) }
        XCTAssertEqual(try XCTUnwrap(TrendlineEstimator.slope(shifted)), 2 + sxe / sxx, accuracy: 1e-6)
    }
}
