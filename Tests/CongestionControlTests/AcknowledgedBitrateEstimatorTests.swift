@testable import CongestionControl
import XCTest

/// ``AcknowledgedBitrateEstimator`` (libwebrtc's `BitrateEstimator` behind `AcknowledgedBitrateEstimator`):
/// bytes summed over windows of arrival time (500 ms until the first estimate, then 150 ms), each window
/// a sample in kbit/s = bytes × 8 / window ms, merged as a Bayesian estimate:
///
///     u = 10 |e − s| / e,  σ²_s = u²,  σ²_p = σ² + 5,
///     e' = (σ²_s e + σ²_p s) / (σ²_s + σ²_p),  σ²' = σ²_s σ²_p / (σ²_s + σ²_p),  σ² starts at 50.
///
/// 1250-byte packets 10 ms apart are exactly 1 Mbit/s in every window (50 per 500 ms, 15 per 150 ms), so
/// the arithmetic below is exact.
final class AcknowledgedBitrateEstimatorTests: XCTestCase {
    /// The rule above, for the expected values.
    private func merge(_ estimate: Double, variance: Double, sample: Double) -> (estimate: Double, variance: Double) {
        let uncertainty = 10 * abs(estimate - sample) / estimate
        let sampleVariance = uncertainty * uncertainty
        let predicted = variance + 5
        return ((sampleVariance * estimate + predicted * sample) / (sampleVariance + predicted),
                sampleVariance * predicted / (sampleVariance + predicted))
    }

    private struct Stream {
        var estimator = AcknowledgedBitrateEstimator()
        var time: Int64 = 0

        init() { estimator.add(arrivalMicros: 0, bytes: 1250) }

        /// `count` more 1250-byte packets, `spacing` µs apart; the kbit/s estimate after each.
        @discardableResult
        mutating func run(spacing: Int64, count: Int) -> [Double?] {
            (0..<count).map { _ in
                time += spacing
                estimator.add(arrivalMicros: time, bytes: 1250)
                return estimator.bitsPerSecond.map { $0 / 1000 }
            }
        }
    }

    /// The first estimate is the first 500 ms window's rate, from the packet that closes it on; then one
    /// sample per 150 ms.
    func testTheFirstWindowIsFiveHundredMilliseconds() {
        var stream = Stream()
        let estimates = stream.run(spacing: 10_000, count: 80)
        XCTAssertTrue(estimates[..<49].allSatisfy { $0 == nil }, "packets 1…49: the window is open")
        XCTAssertEqual(estimates[49], 1000, "packet 50 closes 0…500 ms: 50 × 1250 B × 8 / 500 ms")
        XCTAssertEqual(stream.estimator.bitsPerSecond, 1_000_000)

        // 1000-byte packets 8 ms apart: 63 packets (0…62) by 504 ms, then 19 per 152 ms — 1008 and 1013.3 kbit/s.
        var uneven = AcknowledgedBitrateEstimator()
        var samples: [Double] = []
        for index in 0...82 {
            uneven.add(arrivalMicros: Int64(index) * 8000, bytes: 1000)
            if let estimate = uneven.bitsPerSecond, samples.last != estimate / 1000 { samples.append(estimate / 1000) }
        }
        XCTAssertEqual(samples.first, 1008)
        XCTAssertEqual(samples.count, 2)
        XCTAssertEqual(samples[1], merge(1008, variance: 50, sample: 19.0 * 1000 * 8 / 150).estimate, accuracy: 1e-9)
    }

    /// Steady 1 Mbit/s stays exactly 1 Mbit/s (samples equal to the estimate carry no uncertainty), and its
    /// variance shrinks to 0: then a step to 2 Mbit/s moves the first window only 5/105 of the way.
    func testAStepFromASteadyRate() throws {
        var stream = Stream()
        stream.run(spacing: 10_000, count: 200)  // windows close at packets 50, 65, …, 200
        XCTAssertEqual(stream.estimator.bitsPerSecond, 1_000_000)
        let step = stream.run(spacing: 5000, count: 30)  // 30 × 1250 B per 150 ms: 2000 kbit/s
        XCTAssertTrue(step[..<29].allSatisfy { $0 == 1000 })
        let first = merge(1000, variance: 0, sample: 2000)
        XCTAssertEqual(try XCTUnwrap(step[29]), first.estimate, accuracy: 1e-9)
        XCTAssertEqual(first.estimate, 1000 + 1000 * 5 / 105, accuracy: 1e-9)
        // Window after window it follows: the k-th estimate by the rule, each with its variance.
        var expected = first
        for window in 2...12 {
            let estimates = stream.run(spacing: 5000, count: 30)
            expected = merge(expected.estimate, variance: expected.variance, sample: 2000)
            XCTAssertEqual(try XCTUnwrap(estimates.last ?? nil), expected.estimate, accuracy: 1e-6, "window \(window)")
        }
        // The weights: far samples are doubted at first, then trusted as the estimate's own variance grows —
        // within 1 % of the new rate from the 6th window (900 ms), there by the 12th.
        XCTAssertEqual(try XCTUnwrap(stream.estimator.bitsPerSecond), 2_000_000, accuracy: 1)
    }

    /// ``AcknowledgedBitrateEstimator/expectFastRateChange()`` adds 200 to the variance: the same step then
    /// moves the first window 205/305 of the way instead of 5/105.
    func testExpectingAFastChangeFollowsTheStepSooner() throws {
        var stream = Stream()
        stream.run(spacing: 10_000, count: 200)
        stream.estimator.expectFastRateChange()
        let step = stream.run(spacing: 5000, count: 30)
        XCTAssertEqual(try XCTUnwrap(step[29]), merge(1000, variance: 200, sample: 2000).estimate, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(step[29]), (100 * 1000 + 205 * 2000) / 305.0, accuracy: 1e-9)
    }

    /// One window at 4× the rate is an outlier: its variance (u = 30, 900) outweighs the prediction's 5, so it
    /// moves the estimate by 5/905 of the jump; the next steady window all but undoes it.
    func testAnOutlierWindowBarelyMovesIt() throws {
        var stream = Stream()
        stream.run(spacing: 10_000, count: 200)
        let burst = stream.run(spacing: 2500, count: 60)  // 60 × 1250 B per 150 ms: 4000 kbit/s
        let outlier = merge(1000, variance: 0, sample: 4000)
        XCTAssertEqual(try XCTUnwrap(burst.last ?? nil), outlier.estimate, accuracy: 1e-9)
        XCTAssertEqual(outlier.estimate, 1000 + 3000 * 5 / 905, accuracy: 1e-9)
        let after = stream.run(spacing: 10_000, count: 15)
        let back = merge(outlier.estimate, variance: outlier.variance, sample: 1000)
        XCTAssertEqual(try XCTUnwrap(after.last ?? nil), back.estimate, accuracy: 1e-9)
        XCTAssertEqual(back.estimate, 1000, accuracy: 0.1)
    }

    /// Nothing received for longer than a window: the partial sum is dropped and the window's elapsed time
    /// taken modulo its length, so the silence is not read as a low rate of the bytes before it.
    func testAGapDropsThePartialWindow() throws {
        var stream = Stream()
        stream.run(spacing: 10_000, count: 200)  // a window closed at packet 200: 1250 B in the new one
        stream.run(spacing: 10_000, count: 7)    // 8 packets in the window, 70 ms elapsed
        // 400 ms of silence: 70 + 400 = 470 ms elapsed, the sum dropped, 470 mod 150 = 20 ms left.
        let resumed = stream.run(spacing: 400_000, count: 1) + stream.run(spacing: 10_000, count: 13)
        XCTAssertTrue(resumed[..<13].allSatisfy { $0 == 1000 }, "20 + 120 ms: the window is not full")
        // The 14th packet brings it to 150 ms: the packets after the gap only — 13 of them (the 14th opens the
        // next window), 13 × 1250 B × 8 / 150 ms.
        let sample = 13.0 * 1250 * 8 / 150
        XCTAssertEqual(try XCTUnwrap(resumed[13]), merge(1000, variance: 0, sample: sample).estimate, accuracy: 1e-9)
    }

    /// A silence of exactly one window is not a gap (the rule is "longer than a window"): the window closes
    /// with the one packet in it — a 66.7 kbit/s sample — as libwebrtc's `BitrateEstimator::UpdateWindow` does.
    func testASilenceOfExactlyOneWindowIsNotAGap() throws {
        var stream = Stream()
        stream.run(spacing: 10_000, count: 200)  // a window closed at packet 200: 1250 B in the new one
        let next = stream.run(spacing: 150_000, count: 1)
        XCTAssertEqual(try XCTUnwrap(next[0]), merge(1000, variance: 0, sample: 1250.0 * 8 / 150).estimate, accuracy: 1e-9)
        var gap = Stream()
        gap.run(spacing: 10_000, count: 200)
        XCTAssertEqual(gap.run(spacing: 150_001, count: 1)[0], 1000, "1 µs longer: the partial window is dropped")
    }

    /// Arrival time running backwards (reordered feedback) starts the window over from that arrival.
    func testTimeGoingBackwardsStartsTheWindowOver() throws {
        var stream = Stream()
        stream.run(spacing: 10_000, count: 200)  // t = 2.0 s
        stream.run(spacing: 10_000, count: 7)    // 2.07 s, 8 packets in the window
        stream.time = 1_900_000
        stream.estimator.add(arrivalMicros: stream.time, bytes: 1250)  // back to 1.9 s: sum and elapsed restart
        let step = stream.run(spacing: 5000, count: 30)
        XCTAssertTrue(step[..<29].allSatisfy { $0 == 1000 })
        // The window holds exactly the 30 packets from 1.9 s on: 2000 kbit/s, not inflated by the 8 before.
        XCTAssertEqual(try XCTUnwrap(step[29]), merge(1000, variance: 0, sample: 2000).estimate, accuracy: 1e-9)
    }

    /// ``AcknowledgedBitrateEstimator/update(_:)`` skips lost packets and takes the received ones by arrival
    /// time, whatever order they come in (its contract): a feedback's results in sequence order may arrive out
    /// of order.
    func testUpdateTakesPacketsByArrivalTime() {
        func results(_ arrivals: [Int64?]) -> [PacketResult] {
            arrivals.enumerated().map { index, arrival in
                PacketResult(sent: SentPacket(sequenceNumber: Int64(index), sendTimeMicros: Int64(index) * 10_000, sizeBytes: 1250),
                             arrivalMicros: arrival)
            }
        }
        // 1 Mbit/s for 1.5 s, every 10th packet lost (reported, not received), pairs swapped in arrival order.
        var arrivals: [Int64?] = (0...150).map { Int64($0) * 10_000 }
        for index in stride(from: 0, to: 150, by: 2) { arrivals.swapAt(index, index + 1) }
        for index in stride(from: 5, to: 150, by: 10) { arrivals[index] = nil }
        var sorted = AcknowledgedBitrateEstimator()
        for arrival in arrivals.compactMap({ $0 }).sorted() { sorted.add(arrivalMicros: arrival, bytes: 1250) }
        var shuffled = AcknowledgedBitrateEstimator()
        for chunk in stride(from: 0, to: arrivals.count, by: 10) {
            shuffled.update(results(Array(arrivals[chunk..<min(chunk + 10, arrivals.count)])))
        }
        XCTAssertNotNil(sorted.bitsPerSecond)
        XCTAssertEqual(shuffled.bitsPerSecond, sorted.bitsPerSecond)
        var none = AcknowledgedBitrateEstimator()
        none.update(results(Array(repeating: nil, count: 100)))
        XCTAssertNil(none.bitsPerSecond, "lost packets carry no bytes")
    }
}
