import CongestionControl
import RTP
import XCTest

/// ``SendSideCongestionController``'s feedback timeout (libwebrtc lowers the target when feedback stops
/// while it sends: here ×0.8 once a second after 3 s), its external ceiling (REMB, an SFU's cap: target =
/// min(delay-based, loss-based, ceiling)) and the stats it reports. Feedback is built in memory: each batch
/// arrives 40 ms after it was sent and is reported in one feedback 20 ms after its last arrival.
final class ControllerTimeoutAndCeilingTests: XCTestCase {
    private struct Sender {
        var gcc: SendSideCongestionController
        var sequence: UInt16 = 0
        var count: UInt8 = 0

        init(start: Int = 1_000_000) throws {
            var probing = ProbeController.Configuration()
            (probing.firstScale, probing.secondScale) = (1, 1)
            probing.periodicIntervalMicros = 0
            gcc = try SendSideCongestionController(configuration: .init(startBitsPerSecond: start, probing: probing))
            _ = gcc.start(atMicros: 0)
        }

        /// Sends `packets` of 1250 B every 10 ms from `start`; nothing is reported yet.
        mutating func send(_ packets: Int, from start: Int64) -> [(UInt16, Int64)] {
            (0..<packets).map { index in
                let at = start + Int64(index) * 10_000
                gcc.onPacketSent(sequenceNumber: sequence, sizeBytes: 1250, atMicros: at)
                defer { sequence &+= 1 }
                return (sequence, at)
            }
        }

        /// Reports `sent` (each 40 ms after sending) in one feedback at `at`.
        mutating func report(_ sent: [(UInt16, Int64)], at: Int64) -> CongestionUpdate {
            var generator = TransportFeedbackGenerator(configuration: .init(senderSSRC: 1, mediaSSRC: 2))
            for (sequence, time) in sent { generator.record(sequenceNumber: sequence, arrivalMicros: time + 40_000) }
            var feedback = generator.flush(nowMicros: at)[0]
            feedback.feedbackPacketCount = count
            count &+= 1
            return gcc.onTransportFeedback(feedback, atMicros: at)
        }
    }

    /// Nothing sent since the last feedback: an idle sender is not punished for the silence.
    func testAnIdleSenderHasNoFeedbackTimeout() throws {
        var sender = try Sender()
        let sent = sender.send(50, from: 0)
        let target = sender.report(sent, at: 600_000).targetBitsPerSecond
        for second in 1...20 {
            XCTAssertFalse(sender.gcc.onTick(atMicros: Int64(second) * 1_000_000).targetChanged, "second \(second)")
        }
        XCTAssertEqual(sender.gcc.targetBitsPerSecond, target)
    }

    /// Sending on without feedback: more than 3 s after the last feedback the target drops ×0.8, then again
    /// each full second; a feedback stops it, and the next timeout counts 3 s from that feedback.
    func testTheTimeoutCountsFromTheLastFeedback() throws {
        var sender = try Sender()
        let first = sender.send(50, from: 0)
        let target = sender.report(first, at: 600_000).targetBitsPerSecond
        _ = sender.send(300, from: 500_000)  // keeps sending, nothing reported
        XCTAssertFalse(sender.gcc.onTick(atMicros: 3_600_000).targetChanged, "3 s exactly: not more than 3 s")
        let lowered = sender.gcc.onTick(atMicros: 3_600_001)
        XCTAssertEqual(lowered.targetBitsPerSecond, Int(0.8 * Double(target)))
        XCTAssertFalse(sender.gcc.onTick(atMicros: 4_600_000).targetChanged, "999 999 µs later: not yet")
        XCTAssertEqual(sender.gcc.onTick(atMicros: 4_600_001).targetBitsPerSecond, Int(0.8 * Double(Int(0.8 * Double(target)))))
        // Feedback again (about some packets of the batch sent since): no timeout until 3 s after it.
        let more = sender.send(10, from: 5_000_000)
        _ = sender.report(more, at: 5_200_000)
        _ = sender.send(100, from: 5_200_000)
        let afterFeedback = sender.gcc.targetBitsPerSecond
        XCTAssertFalse(sender.gcc.onTick(atMicros: 8_200_000).targetChanged)
        XCTAssertEqual(sender.gcc.onTick(atMicros: 8_200_001).targetBitsPerSecond, Int(0.8 * Double(afterFeedback)))
        // With nothing ever reported, the timeout counts from the first packet sent.
        var silent = try Sender()
        _ = silent.send(300, from: 1_000_000)
        XCTAssertFalse(silent.gcc.onTick(atMicros: 4_000_000).targetChanged)
        XCTAssertEqual(silent.gcc.onTick(atMicros: 4_000_001).targetBitsPerSecond, 800_000)
    }

    /// The timeout lowers the loss-based side; once feedback flows again without loss it grows back ×1.05 per
    /// measurement (200 ms apart at most), capped by the delay-based side.
    func testRecoveryAfterATimeoutIsLossBased() throws {
        var sender = try Sender()
        _ = sender.report(sender.send(50, from: 0), at: 600_000)
        _ = sender.send(50, from: 600_000)
        _ = sender.gcc.onTick(atMicros: 3_700_000)
        let lowered = sender.gcc.targetBitsPerSecond
        XCTAssertEqual(sender.gcc.stats.lossBasedBitsPerSecond, lowered)
        XCTAssertGreaterThan(sender.gcc.stats.delayBasedBitsPerSecond, lowered)
        var expected = Double(lowered)
        for step in 0..<3 {  // 20 packets per feedback, 200 ms apart: one measurement each, no loss
            let at = 4_000_000 + Int64(step) * 200_000
            let update = sender.report(sender.send(20, from: at - 260_000), at: at)
            expected *= 1.05
            XCTAssertEqual(Double(update.targetBitsPerSecond), expected, accuracy: 1, "step \(step)")
        }
    }

    /// A ceiling below the estimates is the target (never below the min); above them it changes nothing; the
    /// loss-based side is held at or below it, so lifting it lets the target grow back only at the loss-based
    /// pace, ×1.05 per clean measurement.
    func testTheCeiling() throws {
        var sender = try Sender()
        _ = sender.report(sender.send(20, from: 0), at: 260_000)  // delay +1 k; loss ×1.05, capped: 1.001 M
        XCTAssertEqual(sender.gcc.targetBitsPerSecond, 1_001_000)
        var update = sender.gcc.setCeiling(bitsPerSecond: 600_000, atMicros: 300_000)
        XCTAssertEqual(update.targetBitsPerSecond, 600_000)
        XCTAssertTrue(update.targetChanged)
        XCTAssertEqual(sender.gcc.stats.lossBasedBitsPerSecond, 600_000)
        XCTAssertGreaterThan(sender.gcc.stats.delayBasedBitsPerSecond, 1_000_000, "the delay-based side is not touched")
        update = sender.gcc.setCeiling(bitsPerSecond: 5_000_000, atMicros: 310_000)
        XCTAssertEqual(update.targetBitsPerSecond, 600_000, "the loss-based side stayed at the old ceiling")
        XCTAssertFalse(update.targetChanged)
        update = sender.report(sender.send(20, from: 300_000), at: 560_000)
        XCTAssertEqual(update.targetBitsPerSecond, 630_000, "×1.05")
        XCTAssertEqual(sender.gcc.setCeiling(bitsPerSecond: 0, atMicros: 600_000).targetBitsPerSecond, 100_000, "the min")
        XCTAssertEqual(sender.gcc.stats.ceilingBitsPerSecond, 0)
        XCTAssertEqual(sender.gcc.setCeiling(bitsPerSecond: -7, atMicros: 610_000).targetBitsPerSecond, 100_000)
        XCTAssertEqual(sender.gcc.stats.ceilingBitsPerSecond, 0, "negative counts as 0")
        _ = sender.gcc.setCeiling(bitsPerSecond: nil, atMicros: 620_000)
        XCTAssertNil(sender.gcc.stats.ceilingBitsPerSecond)
    }

    /// The stats: pacing 2.5 × the target, bytes in flight as sent minus reported, feedback counted, the RTT
    /// in ms (non-positive RTTs ignored).
    func testStats() throws {
        var sender = try Sender(start: 400_000)
        XCTAssertEqual(sender.gcc.stats.pacingBitsPerSecond, 1_000_000)
        let sent = sender.send(30, from: 0)
        XCTAssertEqual(sender.gcc.stats.bytesInFlight, 30 * 1250)
        _ = sender.report(Array(sent.prefix(12)), at: 300_000)
        XCTAssertEqual(sender.gcc.stats.bytesInFlight, 18 * 1250)
        XCTAssertEqual(sender.gcc.stats.feedbackPackets, 1)
        XCTAssertEqual(sender.gcc.stats.pacingBitsPerSecond, Int(2.5 * Double(sender.gcc.targetBitsPerSecond)))
        sender.gcc.onRoundTripTime(micros: 75_500)
        XCTAssertEqual(sender.gcc.stats.roundTripMillis, 75.5)
        sender.gcc.onRoundTripTime(micros: 0)
        sender.gcc.onRoundTripTime(micros: -3)
        XCTAssertEqual(sender.gcc.stats.roundTripMillis, 75.5)
        XCTAssertEqual(sender.gcc.stats.rateControlState, .increase)
        XCTAssertEqual(sender.gcc.stats.usage, .normal)
        XCTAssertNil(sender.gcc.stats.linkCapacityBitsPerSecond)
    }
}
