@testable import CongestionControl
import XCTest

/// ``DelayBasedEstimator`` on feedback built in memory (libwebrtc's `DelayBasedBwe::IncomingPacketFeedbackVector`
/// and `MaybeUpdateEstimate`): groups → trendline → detector → AIMD per feedback; over-use lowers the rate to
/// 0.85 × acknowledged at most once per RTT (or halves it every 200 ms before any acknowledged rate); a probe
/// result above the estimate sets it; a 2 s silence restarts the delay state.
///
/// The trace: 1250-byte packets sent every 10 ms (1 Mbit/s), one feedback per 10 packets at the last one's
/// arrival + 10 ms. Phase A: a constant 50 ms path (no queue). Phase B: the path carries 10 ms of sending
/// in 12 ms (833 kbit/s) — each packet waits 2 ms more than the one before. Per the trendline's closed form
/// (s_k = d (k − 9 (1 − 0.9^k)) in the window of 20, modified trend 240 × slope against a threshold that
/// fell to its floor of 6 ms during phase A) the modified trend first exceeds 6 at the 9th delta of phase B
/// and over-use (> 10 ms over two deltas) is declared at the 10th: in phase B's second feedback, since a
/// group's delta comes with the next packet.
final class DelayBasedEstimatorTests: XCTestCase {
    private struct Trace {
        var index = 0
        var send: Int64 = 0
        var arrival: Int64 = 50_000

        /// The next feedback of 10 packets; `spacing`: arrival spacing (µs), nil for the 50 ms path.
        mutating func feedback(arrivalSpacing spacing: Int64?, gapMicros: Int64 = 0) -> TransportPacketsFeedback {
            send += gapMicros
            arrival += gapMicros
            var results: [PacketResult] = []
            for _ in 0..<10 {
                if index > 0 {
                    send += 10_000
                    arrival = spacing.map { arrival + $0 } ?? send + 50_000
                }
                results.append(PacketResult(sent: SentPacket(sequenceNumber: Int64(index), sendTimeMicros: send, sizeBytes: 1250),
                                            arrivalMicros: arrival))
                index += 1
            }
            return TransportPacketsFeedback(feedbackTimeMicros: arrival + 10_000, results: results, priorBytesInFlight: 0)
        }
    }

    /// Phase A (1 s): normal throughout, the rate compounding ×1.08 per second from the +1 kbit/s first step.
    private func phaseA(_ estimator: inout DelayBasedEstimator, _ trace: inout Trace, acknowledged: Double?) {
        for step in 0..<10 {
            let result = estimator.onFeedback(trace.feedback(arrivalSpacing: nil), acknowledgedBitsPerSecond: acknowledged,
                                              probeBitsPerSecond: nil)
            XCTAssertTrue(result.updated)
            XCTAssertEqual(estimator.usage, .normal, "phase A, feedback \(step)")
        }
        XCTAssertEqual(estimator.bitrate, 1_001_000 * pow(1.08, 0.9), accuracy: 1e-3)
        XCTAssertEqual(estimator.detector.threshold, 6, "no delay variation: the threshold sank to its floor")
    }

    /// Phase B's first feedback comes 120 ms after phase A's last (10 arrivals 12 ms apart): ×1.08^0.12.
    private let phaseBStart = 1_001_000 * pow(1.08, 0.9 + 0.12)

    /// With a short RTT (50 ms) the decrease comes in the feedback that saw the over-use: 0.85 × acknowledged.
    func testAGrowingQueueDecreasesToEightyFivePercentOfAcknowledgedInTheSecondFeedback() {
        var estimator = DelayBasedEstimator(startBitrate: 1_000_000, minBitrate: 100_000, maxBitrate: 3_000_000)
        estimator.setRoundTrip(micros: 50_000)
        var trace = Trace()
        phaseA(&estimator, &trace, acknowledged: 1_000_000)
        let first = estimator.onFeedback(trace.feedback(arrivalSpacing: 12_000), acknowledgedBitsPerSecond: 1_000_000,
                                         probeBitsPerSecond: nil)
        XCTAssertEqual(estimator.usage, .normal, "9 deltas of phase B: not yet")
        XCTAssertEqual(first.bitrate, phaseBStart, accuracy: 1e-3)
        let acknowledged = 1250.0 * 8 / 0.012  // what the 12 ms spacing delivers
        let second = estimator.onFeedback(trace.feedback(arrivalSpacing: 12_000), acknowledgedBitsPerSecond: acknowledged,
                                          probeBitsPerSecond: nil)
        XCTAssertEqual(estimator.usage, .overusing)
        XCTAssertTrue(second.updated)
        XCTAssertEqual(second.bitrate, 0.85 * acknowledged, accuracy: 1e-6)
        XCTAssertEqual(estimator.rateControl.state, .hold)
    }

    /// With the default RTT (200 ms) a decrease waits one RTT after the last change — the increase of phase
    /// B's first feedback, 120 ms before the over-use was seen: the decrease comes with the next feedback
    /// (240 ms), then none for 200 ms unless the acknowledged rate fell below half the estimate.
    func testDecreasesArePacedByTheRoundTrip() {
        var estimator = DelayBasedEstimator(startBitrate: 1_000_000, minBitrate: 100_000, maxBitrate: 3_000_000)
        var trace = Trace()
        phaseA(&estimator, &trace, acknowledged: 1_000_000)
        _ = estimator.onFeedback(trace.feedback(arrivalSpacing: 12_000), acknowledgedBitsPerSecond: 1_000_000, probeBitsPerSecond: nil)
        let acknowledged = 1250.0 * 8 / 0.012
        var results: [DelayBasedEstimator.Result] = []
        for _ in 0..<4 {
            results.append(estimator.onFeedback(trace.feedback(arrivalSpacing: 12_000), acknowledgedBitsPerSecond: acknowledged,
                                                probeBitsPerSecond: nil))
            XCTAssertEqual(estimator.usage, .overusing)
        }
        XCTAssertEqual(results.map(\.updated), [false, true, false, true])
        XCTAssertEqual(results[0].bitrate, phaseBStart, accuracy: 1e-3, "over-use seen 120 ms after the last increase")
        XCTAssertEqual(results[1].bitrate, 0.85 * acknowledged, accuracy: 1e-6)
        XCTAssertEqual(results[2].bitrate, 0.85 * acknowledged, accuracy: 1e-6, "120 ms after the decrease")
        XCTAssertEqual(results[3].bitrate, 0.85 * acknowledged, accuracy: 1e-6, "due again, but 0.85 × the same rate is no lower")
        // 120 ms after that: too soon, unless the acknowledged rate collapsed below half the estimate.
        let collapsed = estimator.onFeedback(trace.feedback(arrivalSpacing: 12_000), acknowledgedBitsPerSecond: 300_000,
                                             probeBitsPerSecond: nil)
        XCTAssertTrue(collapsed.updated)
        XCTAssertEqual(collapsed.bitrate, 255_000, accuracy: 1e-6)
    }

    /// Before any acknowledged rate, over-use halves the estimate, at most every 200 ms.
    func testOveruseWithoutAnAcknowledgedRateHalves() {
        var estimator = DelayBasedEstimator(startBitrate: 1_000_000, minBitrate: 100_000, maxBitrate: 3_000_000)
        var trace = Trace()
        phaseA(&estimator, &trace, acknowledged: nil)
        _ = estimator.onFeedback(trace.feedback(arrivalSpacing: 12_000), acknowledgedBitsPerSecond: nil, probeBitsPerSecond: nil)
        let before = estimator.bitrate
        XCTAssertEqual(before, phaseBStart, accuracy: 1e-3)
        var rates: [Double] = []
        var updated: [Bool] = []
        for _ in 0..<5 {  // feedback every 120 ms (10 arrivals 12 ms apart)
            let result = estimator.onFeedback(trace.feedback(arrivalSpacing: 12_000), acknowledgedBitsPerSecond: nil, probeBitsPerSecond: nil)
            XCTAssertEqual(estimator.usage, .overusing)
            rates.append(result.bitrate)
            updated.append(result.updated)
        }
        // Halved at the first; 120 ms later too soon; 240 ms after the first, again; and so on.
        XCTAssertEqual(updated, [true, false, true, false, true])
        XCTAssertEqual(rates[0], before / 2, accuracy: 1e-6)
        XCTAssertEqual(rates[1], before / 2, accuracy: 1e-6)
        XCTAssertEqual(rates[2], before / 4, accuracy: 1e-6)
        XCTAssertEqual(rates[4], max(before / 8, 100_000), accuracy: 1e-6)
    }

    /// A probe result above the estimate sets it (marked as a probe); one at or below it is ignored and the
    /// AIMD step runs instead. During over-use a probe result is not taken.
    func testProbeResults() {
        var estimator = DelayBasedEstimator(startBitrate: 500_000, minBitrate: 100_000, maxBitrate: 3_000_000)
        var trace = Trace()
        let probed = estimator.onFeedback(trace.feedback(arrivalSpacing: nil), acknowledgedBitsPerSecond: nil, probeBitsPerSecond: 1_700_000)
        XCTAssertTrue(probed.probe)
        XCTAssertEqual(probed.bitrate, 1_700_000)
        let lower = estimator.onFeedback(trace.feedback(arrivalSpacing: nil), acknowledgedBitsPerSecond: nil,
                                         probeBitsPerSecond: 1_200_000)
        XCTAssertFalse(lower.probe)
        XCTAssertEqual(lower.bitrate, 1_701_000, "the AIMD step: hold → increase, +1 kbit/s")
        let capped = estimator.onFeedback(trace.feedback(arrivalSpacing: nil), acknowledgedBitsPerSecond: nil,
                                          probeBitsPerSecond: 9_000_000)
        XCTAssertEqual(capped.bitrate, 3_000_000, "clamped to the max")

        var overusing = DelayBasedEstimator(startBitrate: 1_000_000, minBitrate: 100_000, maxBitrate: 3_000_000)
        var queue = Trace()
        phaseA(&overusing, &queue, acknowledged: 1_000_000)
        _ = overusing.onFeedback(queue.feedback(arrivalSpacing: 12_000), acknowledgedBitsPerSecond: 1_000_000, probeBitsPerSecond: nil)
        let during = overusing.onFeedback(queue.feedback(arrivalSpacing: 12_000), acknowledgedBitsPerSecond: 1_000_000,
                                          probeBitsPerSecond: 2_500_000)
        XCTAssertEqual(overusing.usage, .overusing)
        XCTAssertFalse(during.probe, "over-use wins over a probe result")
        XCTAssertFalse(during.updated, "and the decrease waits its RTT")
        XCTAssertEqual(during.bitrate, phaseBStart, accuracy: 1e-3)
    }

    /// A feedback without received packets changes nothing and says so.
    func testAFeedbackOfLossesOnlyChangesNothing() {
        var estimator = DelayBasedEstimator(startBitrate: 500_000, minBitrate: 100_000, maxBitrate: 3_000_000)
        let lost = TransportPacketsFeedback(feedbackTimeMicros: 1_000_000, results: [
            PacketResult(sent: SentPacket(sequenceNumber: 1, sendTimeMicros: 0, sizeBytes: 1000), arrivalMicros: nil),
        ], priorBytesInFlight: 1000)
        let result = estimator.onFeedback(lost, acknowledgedBitsPerSecond: 1_000_000, probeBitsPerSecond: 2_000_000)
        XCTAssertEqual(result, DelayBasedEstimator.Result(updated: false, probe: false, recoveredFromOveruse: false, bitrate: 500_000))
        XCTAssertEqual(estimator.rateControl.state, .hold)
    }

    /// More than 2 s between feedbacks restarts grouping, the trendline and the detector: the group count
    /// starts again; 2 s exactly does not.
    func testAFeedbackSilenceRestartsTheDelayState() throws {
        for (gap, restarted) in [(Int64(2_000_000), false), (2_000_001, true)] {
            var estimator = DelayBasedEstimator(startBitrate: 500_000, minBitrate: 100_000, maxBitrate: 3_000_000)
            var trace = Trace()
            for _ in 0..<5 {
                _ = estimator.onFeedback(trace.feedback(arrivalSpacing: nil), acknowledgedBitsPerSecond: nil, probeBitsPerSecond: nil)
            }
            XCTAssertEqual(estimator.lastSample?.groups, 48, "50 packets: a delta from the 3rd on")
            // The next feedback comes `gap` after the last one (the stream paused: its packets `gap` − 100 ms later).
            _ = estimator.onFeedback(trace.feedback(arrivalSpacing: nil, gapMicros: gap - 100_000), acknowledgedBitsPerSecond: nil,
                                     probeBitsPerSecond: nil)
            XCTAssertEqual(try XCTUnwrap(estimator.lastSample).groups, restarted ? 8 : 58, "gap \(gap) µs")
        }
    }

    /// The detector going from under-use back to normal within a feedback is reported once, with the AIMD
    /// step of that feedback (the probe controller's cue for a recovery probe).
    func testRecoveryFromUnderuseIsReported() {
        var estimator = DelayBasedEstimator(startBitrate: 1_000_000, minBitrate: 100_000, maxBitrate: 3_000_000)
        var trace = Trace()
        phaseA(&estimator, &trace, acknowledged: 1_000_000)
        var usages: [BandwidthUsage] = []
        var recovered: [Int] = []
        // A queue builds for 1 s, drains for 0.5 s (8 ms arrivals), then the path is steady again (10 ms).
        for (count, spacing) in [(10, Int64(12_000)), (5, 8_000), (10, 10_000)] {
            for _ in 0..<count {
                let result = estimator.onFeedback(trace.feedback(arrivalSpacing: spacing), acknowledgedBitsPerSecond: 830_000,
                                                  probeBitsPerSecond: nil)
                if result.recoveredFromOveruse { recovered.append(usages.count) }
                usages.append(estimator.usage)
            }
        }
        XCTAssertTrue(usages[0..<10].contains(.overusing))
        let underuse = usages.firstIndex(of: .underusing)
        XCTAssertNotNil(underuse)
        XCTAssertEqual(recovered.count, 1, "\(usages)")
        if let feedback = recovered.first, let underuse {
            XCTAssertGreaterThanOrEqual(feedback, underuse)
            XCTAssertEqual(usages[feedback], .normal)
            XCTAssertTrue(usages[underuse..<feedback].allSatisfy { $0 == .underusing }, "\(usages)")
        }
    }
}
