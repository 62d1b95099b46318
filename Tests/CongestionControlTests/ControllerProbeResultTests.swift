import CongestionControl
import RTP
import XCTest

/// What ``SendSideCongestionController`` does with a probe cluster's result (libwebrtc's
/// `GoogCcNetworkController::OnTransportPacketsFeedback` → `ProbeBitrateEstimator`, then `DelayBasedBwe` with
/// the probe and `SendSideBandwidthEstimation::SetSendBitrate`): a result above the delay-based estimate sets
/// both estimates; an application-limited sender (``SendSideCongestionController/Configuration/capsProbesWhenApplicationLimited``)
/// gets at most max(target, 1.5 × acknowledged + 10 kbit/s), or 3 × the start rate before anything was
/// acknowledged; a result between the target and the delay-based estimate lifts a loss-based limit only
/// while the measured loss is under 5 %. Feedback is built in memory: each batch of packets arrives 40 ms
/// after it was sent and is reported in one feedback 20 ms after the last arrival.
final class ControllerProbeResultTests: XCTestCase {
    private struct Sender {
        var gcc: SendSideCongestionController
        var sequence: UInt16 = 0
        var feedbackCount: UInt8 = 0

        /// Sends `count` packets of `size` bytes `spacing` µs apart from `start` (tagged with `cluster`; those
        /// in `lost` dropped), then delivers their feedback; returns the controller's update.
        mutating func batch(count: Int, size: Int, spacing: Int64, from start: Int64, cluster: Int? = nil,
                            lost: Set<Int> = []) -> CongestionUpdate {
            var generator = TransportFeedbackGenerator(configuration: .init(senderSSRC: 1, mediaSSRC: 2))
            var last: Int64 = 0
            for index in 0..<count {
                let send = start + Int64(index) * spacing
                gcc.onPacketSent(sequenceNumber: sequence, sizeBytes: size, atMicros: send, probeClusterID: cluster)
                if !lost.contains(index) { generator.record(sequenceNumber: sequence, arrivalMicros: send + 40_000) }
                sequence &+= 1
                last = send + 40_000
            }
            var update: CongestionUpdate?
            for var feedback in generator.flush(nowMicros: last) {
                // One generator per batch: number the feedback packets across batches, as one receiver would.
                feedback.feedbackPacketCount = feedbackCount
                feedbackCount &+= 1
                update = gcc.onTransportFeedback(feedback, atMicros: last + 20_000)
            }
            return update!
        }
    }

    private func sender(capping: Bool = false, start: Int = 300_000) throws -> (Sender, [ProbeCluster]) {
        var configuration = SendSideCongestionController.Configuration(startBitsPerSecond: start)
        configuration.capsProbesWhenApplicationLimited = capping
        var gcc = try SendSideCongestionController(configuration: configuration)
        let probes = gcc.start(atMicros: 0).probes
        return (Sender(gcc: gcc), probes)
    }

    /// The 1.8 Mbit/s start cluster sent at 2 Mbit/s (8 × 500 B, 2 ms apart) on an idle path: send and
    /// receive rates are both 3500 B × 8 / 14 ms = 2 Mbit/s. With nothing acknowledged yet and no capping, the
    /// result sets the delay-based and loss-based estimates — the target is 2 Mbit/s — and, above 0.7 × the
    /// highest cluster, asks for a further cluster at 2 × 2 Mbit/s, capped at the 3 Mbit/s max.
    func testAResultAboveTheEstimateSetsTheTarget() throws {
        var (sender, probes) = try sender()
        XCTAssertEqual(probes.map(\.bitsPerSecond), [900_000, 1_800_000])
        let update = sender.batch(count: 8, size: 500, spacing: 2000, from: 10_000, cluster: probes[1].id)
        XCTAssertEqual(update.targetBitsPerSecond, 2_000_000)
        XCTAssertTrue(update.targetChanged)
        XCTAssertEqual(update.probes.map(\.bitsPerSecond), [3_000_000])
        let stats = sender.gcc.stats
        XCTAssertEqual(stats.delayBasedBitsPerSecond, 2_000_000)
        XCTAssertEqual(stats.lossBasedBitsPerSecond, 2_000_000)
        XCTAssertEqual(stats.probeResults, 1)
        XCTAssertEqual(stats.lastProbeBitsPerSecond, 2_000_000)
        XCTAssertEqual(stats.probeClustersRequested, 3)
    }

    /// The same cluster through a 1 Mbit/s bottleneck (arrivals 4 ms apart): receive 3500 B / 28 ms = 1 Mbit/s,
    /// below 90 % of the 2 Mbit/s sent, so the link saturated: 95 % of the receive rate, 950 kbit/s.
    func testASaturatedClusterGivesNinetyFivePercentOfWhatArrived() throws {
        var (sender, probes) = try sender()
        var generator = TransportFeedbackGenerator(configuration: .init(senderSSRC: 1, mediaSSRC: 2))
        for index in 0..<8 {
            sender.gcc.onPacketSent(sequenceNumber: UInt16(index), sizeBytes: 500, atMicros: 10_000 + Int64(index) * 2000,
                                    probeClusterID: probes[1].id)
            generator.record(sequenceNumber: UInt16(index), arrivalMicros: 50_000 + Int64(index) * 4000)
        }
        let feedback = try XCTUnwrap(generator.flush(nowMicros: 0).first)
        XCTAssertEqual(sender.gcc.onTransportFeedback(feedback, atMicros: 100_000).targetBitsPerSecond, 950_000)
        XCTAssertEqual(sender.gcc.stats.lastProbeBitsPerSecond, 950_000)
    }

    /// With capping and nothing acknowledged yet, a result counts for at most 3 × the start rate (the
    /// first start cluster's rate): 900 kbit/s, not 2 Mbit/s. The raw result stays in the stats.
    func testCappedBeforeAnythingWasAcknowledged() throws {
        var (sender, probes) = try sender(capping: true)
        let update = sender.batch(count: 8, size: 500, spacing: 2000, from: 10_000, cluster: probes[1].id)
        XCTAssertEqual(update.targetBitsPerSecond, 900_000)
        XCTAssertEqual(sender.gcc.stats.delayBasedBitsPerSecond, 900_000)
        XCTAssertEqual(sender.gcc.stats.lastProbeBitsPerSecond, 2_000_000)
    }

    /// With capping and an acknowledged rate under 90 % of the target (1500 B every 50 ms: exactly 240 kbit/s
    /// in every window), a result counts for at most 1.5 × 240 k + 10 k = 370 kbit/s.
    func testCappedAtOneAndAHalfTimesWhatIsAcknowledged() throws {
        var (sender, probes) = try sender(capping: true)
        var update = sender.batch(count: 20, size: 1500, spacing: 50_000, from: 0)
        XCTAssertEqual(sender.gcc.stats.acknowledgedBitsPerSecond, 240_000)
        XCTAssertLessThan(update.targetBitsPerSecond, 370_000)
        XCTAssertLessThan(240_000, 0.9 * Double(update.targetBitsPerSecond), "application-limited")
        // The cluster goes 250 ms after the last media arrival: longer than the 150 ms window, so the partial
        // window is dropped and the acknowledged rate stays 240 k. (At exactly 150 ms the window would close
        // holding one 1500-byte packet — an 80 kbit/s sample, pulling the estimate to 223.8 k.)
        update = sender.batch(count: 8, size: 500, spacing: 2000, from: 1_200_000, cluster: probes[1].id)
        XCTAssertEqual(sender.gcc.stats.acknowledgedBitsPerSecond, 240_000)
        XCTAssertEqual(update.targetBitsPerSecond, 370_000)
        XCTAssertEqual(sender.gcc.stats.lastProbeBitsPerSecond, 2_000_000)

        // Without capping the same evidence sets 2 Mbit/s.
        var (free, freeProbes) = try self.sender()
        _ = free.batch(count: 20, size: 1500, spacing: 50_000, from: 0)
        XCTAssertEqual(free.batch(count: 8, size: 500, spacing: 2000, from: 1_200_000, cluster: freeProbes[1].id).targetBitsPerSecond,
                       2_000_000)
    }

    /// A result at or below the delay-based estimate is no news: nothing moves, though it is counted.
    func testAResultBelowTheEstimateIsIgnored() throws {
        var (sender, probes) = try sender(start: 1_000_000)
        XCTAssertEqual(probes.map(\.bitsPerSecond), [3_000_000])
        // The cluster asks for 5625 B (15 ms at 3 Mbit/s): 12 × 500 B, 8 ms apart, 5500 B / 88 ms = 500 kbit/s.
        let update = sender.batch(count: 12, size: 500, spacing: 8000, from: 10_000, cluster: probes[0].id)
        XCTAssertEqual(sender.gcc.stats.lastProbeBitsPerSecond, 500_000)
        XCTAssertEqual(sender.gcc.stats.probeResults, 1)
        XCTAssertEqual(update.targetBitsPerSecond, 1_000_000, "the AIMD step from hold: +1 kbit/s for delay, loss not measured")
        XCTAssertEqual(sender.gcc.stats.delayBasedBitsPerSecond, 1_001_000)
    }

    /// A loss-based limit (20 % loss: ×0.9 → 450 k; then a clean measurement: ×1.05 → 472.5 k) under a higher
    /// delay-based estimate: a result of 480 kbit/s (7 × 600 B over 70 ms) lifts the loss-based side to it
    /// while the last measured loss is 0; with 20 % measured last, it keeps its back-off.
    func testAResultLiftsALossBasedLimitOnlyWhileLossIsLow() throws {
        func run(cleanMeasurement: Bool) throws -> (before: Int, after: Int) {
            var (sender, probes) = try sender(start: 500_000)
            XCTAssertEqual(probes.map(\.bitsPerSecond), [1_500_000, 3_000_000])
            var update = sender.batch(count: 20, size: 600, spacing: 10_000, from: 0, lost: [3, 8, 13, 18])
            XCTAssertEqual(sender.gcc.stats.lossFraction, 0.2)
            XCTAssertEqual(update.targetBitsPerSecond, 450_000)
            if cleanMeasurement {
                update = sender.batch(count: 20, size: 600, spacing: 10_000, from: 300_000)
                XCTAssertEqual(sender.gcc.stats.lossFraction, 0)
                XCTAssertEqual(update.targetBitsPerSecond, 472_500)
            }
            XCTAssertGreaterThan(sender.gcc.stats.delayBasedBitsPerSecond, 480_000)
            let before = update.targetBitsPerSecond
            update = sender.batch(count: 8, size: 600, spacing: 10_000, from: 600_000, cluster: probes[0].id)
            XCTAssertEqual(sender.gcc.stats.lastProbeBitsPerSecond, 480_000)
            return (before, update.targetBitsPerSecond)
        }
        XCTAssertEqual(try run(cleanMeasurement: true).after, 480_000)
        XCTAssertEqual(try run(cleanMeasurement: false).after, 450_000)
    }
}
