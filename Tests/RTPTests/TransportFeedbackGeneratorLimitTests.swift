import RTP
import XCTest

/// The receiver's transport-wide CC feedback generator at its limits: the configuration's clamps, the cap of
/// statuses per feedback packet, a loss burst longer than that cap, a gap beyond ``TransportFeedbackGenerator/maxSpan``,
/// the 16-bit receive delta to the rounding step (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1.5:
/// 250 µs ticks, signed 16 bits), the signed 24-bit reference time's wrap, and the feedback packet count a
/// sender uses to notice lost feedback (consecutive, mod 256).
final class TransportFeedbackGeneratorLimitTests: XCTestCase {
    private func generator(maxPackets: Int = 400, history: Int = 1024) -> TransportFeedbackGenerator {
        TransportFeedbackGenerator(configuration: .init(senderSSRC: 1, mediaSSRC: 2, maxPacketsPerFeedback: maxPackets,
                                                        historyPackets: history))
    }

    /// Every (sequence number, arrival µs) the packets report, through their bytes, in order.
    private func reported(_ packets: [RTCPTransportFeedback]) throws -> [(sequence: UInt16, arrival: Int64?)] {
        var bytes: [UInt8] = []
        for packet in packets { try packet.serialize(into: &bytes) }
        var result: [(UInt16, Int64?)] = []
        for packet in try RTCPTransportFeedback.packets(inCompound: bytes) { packet.forEachPacket { result.append(($0, $1)) } }
        return result
    }

    func testConfigurationClamps() {
        let low = TransportFeedbackGenerator.Configuration(senderSSRC: 1, mediaSSRC: 2, intervalMicros: 0, maxPacketsPerFeedback: 0,
                                                           historyPackets: -5)
        XCTAssertEqual(low.intervalMicros, 1)
        XCTAssertEqual(low.maxPacketsPerFeedback, 1)
        XCTAssertEqual(low.historyPackets, 0)
        let high = TransportFeedbackGenerator.Configuration(senderSSRC: 1, mediaSSRC: 2, intervalMicros: .max, maxPacketsPerFeedback: 1 << 20)
        XCTAssertEqual(high.maxPacketsPerFeedback, 65_535, "the status count field's limit")
        XCTAssertEqual(high.intervalMicros, .max)
        XCTAssertEqual(TransportFeedbackGenerator.maxSpan, 16_384)
    }

    /// A loss burst longer than the per-packet cap, then a packet: the feedback reports the burst as not
    /// received and the packet after it (as libwebrtc does, from the expected first number), and keeps
    /// reporting afterwards. (The cap once counted the burst too: the packet came out empty, was dropped, and
    /// the generator never reported again.)
    func testALossBurstLongerThanThePerPacketCapIsReported() throws {
        var feedback = generator()
        for sequence in UInt16(0)..<10 { feedback.record(sequenceNumber: sequence, arrivalMicros: 1_000_000 + Int64(sequence) * 1000) }
        let first = feedback.flush(nowMicros: 1_100_000)
        XCTAssertEqual(first.map(\.packetStatusCount), [10])
        // 500 lost (an outage), then 510 arrives.
        feedback.record(sequenceNumber: 510, arrivalMicros: 2_000_000)
        let second = feedback.feedback(nowMicros: 2_000_000)
        XCTAssertEqual(second.map(\.baseSequenceNumber), [10], "from the first number not yet reported")
        let report = try reported(second)
        XCTAssertEqual(report.map(\.sequence), Array(10...510))
        XCTAssertEqual(report.filter { $0.arrival != nil }.map(\.sequence), [510])
        XCTAssertEqual(report.last?.arrival, 2_000_000)
        // And it goes on.
        feedback.record(sequenceNumber: 511, arrivalMicros: 2_050_000)
        let third = feedback.feedback(nowMicros: 2_100_000)
        XCTAssertEqual(try reported(third).map(\.sequence), [511])
        XCTAssertEqual((first + second + third).map(\.feedbackPacketCount), [0, 1, 2], "consecutive: no feedback seems lost")
        XCTAssertEqual(feedback.statistics.feedbackPackets, 3)
    }

    /// With a cap of one status per packet each packet carries one received packet; a loss between two
    /// arrivals goes with the arrival after it.
    func testCapOfOneStatusPerPacket() throws {
        var feedback = generator(maxPackets: 1)
        for sequence: UInt16 in [0, 1, 3] { feedback.record(sequenceNumber: sequence, arrivalMicros: 500_000 + Int64(sequence) * 250) }
        let packets = feedback.flush(nowMicros: 600_000)
        XCTAssertEqual(packets.map(\.baseSequenceNumber), [0, 1, 2])
        XCTAssertEqual(packets.map(\.packetStatusCount), [1, 1, 2])
        XCTAssertEqual(packets.map(\.feedbackPacketCount), [0, 1, 2])
        XCTAssertEqual(try reported(packets).map(\.arrival), [500_000, 500_250, nil, 500_750])
    }

    /// A gap of more than ``TransportFeedbackGenerator/maxSpan`` numbers: the oldest of it are given up, and the
    /// feedback covers the last 16384 numbers, 16383 of them lost.
    func testAGapBeyondMaxSpanGivesTheOldestUp() throws {
        var feedback = generator()
        for sequence in UInt16(0)..<10 { feedback.record(sequenceNumber: sequence, arrivalMicros: Int64(sequence) * 1000) }
        _ = feedback.flush(nowMicros: 100_000)
        feedback.record(sequenceNumber: 20_010, arrivalMicros: 5_000_000)
        let packets = feedback.flush(nowMicros: 5_000_000)
        XCTAssertEqual(packets.first?.baseSequenceNumber, 20_011 - 16_384)
        XCTAssertEqual(packets.map(\.packetStatusCount).reduce(0) { $0 + Int($1) }, 16_384)
        let report = try reported(packets)
        XCTAssertEqual(report.first?.sequence, 3627)
        XCTAssertEqual(report.last?.sequence, 20_010)
        XCTAssertEqual(report.last?.arrival, 5_000_000)
        XCTAssertEqual(report.filter { $0.arrival != nil }.count, 1)
        XCTAssertLessThan(try packets.map { try $0.serialized().count }.reduce(0, +), 100, "the losses ride on run-length chunks")
    }

    /// Deltas are rounded half away from zero to 250 µs; the largest that fits is 32767 ticks (8191.75 ms,
    /// reached from 8191.874 ms) and the most negative −32768 (−8192 ms). One rounding step more starts a new
    /// packet with its own reference time; arrival times are reported to the tick either way.
    func testDeltaRangeToTheRoundingStep() throws {
        let first: Int64 = 64_000 * 400  // a multiple of 64 ms: the first delta is 0
        for (gap, packetCount): (Int64, Int) in [(8_191_874, 1), (8_191_875, 2), (-8_192_000, 1), (-8_192_124, 1), (-8_192_125, 2)] {
            var feedback = generator()
            feedback.record(sequenceNumber: 7, arrivalMicros: first)
            feedback.record(sequenceNumber: 8, arrivalMicros: first + gap)
            let packets = feedback.flush(nowMicros: first + 20_000_000)
            XCTAssertEqual(packets.count, packetCount, "gap \(gap) µs")
            let report = try reported(packets)
            XCTAssertEqual(report.map(\.sequence), [7, 8])
            XCTAssertEqual(report[0].arrival, first)
            XCTAssertEqual(packets[0].receiveDeltas.first, 0)
            let second = try XCTUnwrap(report[1].arrival)
            XCTAssertLessThanOrEqual(abs(second - (first + gap)), 125, "gap \(gap) µs: within half a tick")
        }
    }

    /// The reference time is 24 signed bits of 64 ms: past 2²³ × 64 ms (about 149 hours of receiver clock) it
    /// wraps to −2²³, and the arrival times a sender reads are the true ones modulo 2²⁴ × 64 ms (to the 250 µs tick). Negative
    /// receiver times round down to the 64 ms grid, not towards zero.
    func testReferenceTimeWrapsAndNegativeTimesRoundDown() throws {
        let wrap: Int64 = (1 << 24) * 64_000
        for arrival: Int64 in [(1 << 23) * 64_000 - 1, (1 << 23) * 64_000, (1 << 23) * 64_000 + 63_999, wrap + 5_000, -1, -64_000, -64_001] {
            var feedback = generator()
            feedback.record(sequenceNumber: 100, arrivalMicros: arrival)
            let packets = feedback.flush(nowMicros: arrival + 1)
            let packet = try XCTUnwrap(packets.first)
            XCTAssertTrue(RTCPTransportFeedback.referenceTimeRange.contains(packet.referenceTime), "\(arrival)")
            let read = try XCTUnwrap(reported(packets).first?.arrival)
            var difference = (read - arrival) % wrap
            if difference > wrap / 2 { difference -= wrap }
            if difference < -wrap / 2 { difference += wrap }
            XCTAssertLessThanOrEqual(abs(difference), 125, "arrival \(arrival) read as \(read): the same modulo the wrap, to half a tick")
            XCTAssertLessThanOrEqual(packet.receiveDeltas[0], 256, "the first delta is under 64 ms of its reference")
            XCTAssertGreaterThanOrEqual(packet.receiveDeltas[0], 0)
        }
        var feedback = generator()
        feedback.record(sequenceNumber: 1, arrivalMicros: (1 << 23) * 64_000)
        XCTAssertEqual(feedback.flush(nowMicros: 0).first?.referenceTime, -(1 << 23))
        feedback.record(sequenceNumber: 2, arrivalMicros: -64_001)
        XCTAssertEqual(feedback.flush(nowMicros: 0).first?.referenceTime, -2, "−64.001 ms is in the 64 ms step from −128 ms")
    }

    /// The feedback packet count runs 0…255 and wraps to 0, one per packet made, with no gaps.
    func testFeedbackPacketCountWraps() {
        var feedback = generator()
        var counts: [UInt8] = []
        for sequence in UInt16(0)..<300 {
            feedback.record(sequenceNumber: sequence, arrivalMicros: Int64(sequence) * 10_000)
            counts += feedback.flush(nowMicros: Int64(sequence) * 10_000).map(\.feedbackPacketCount)
        }
        XCTAssertEqual(counts.count, 300)
        XCTAssertEqual(counts, (0..<300).map { UInt8(truncatingIfNeeded: $0) })
    }

    /// With no history kept, an arrival behind what was already reported is too late; at the edge of a
    /// history of 3 it is reported again, one further back it is not.
    func testHistoryEdge() throws {
        var none = generator(history: 0)
        for sequence: UInt16 in [0, 2] { none.record(sequenceNumber: sequence, arrivalMicros: Int64(sequence) * 1000) }
        _ = none.flush(nowMicros: 10_000)
        none.record(sequenceNumber: 1, arrivalMicros: 11_000)
        XCTAssertEqual(none.statistics.tooLate, 1)
        XCTAssertNil(none.nextFeedbackMicros)

        var three = generator(history: 3)
        for sequence: UInt16 in [10, 14] { three.record(sequenceNumber: sequence, arrivalMicros: Int64(sequence) * 1000) }
        _ = three.flush(nowMicros: 20_000)  // reported through 14; next to report 15
        three.record(sequenceNumber: 11, arrivalMicros: 21_000)  // 15 − 11 = 4 > 3: too late
        XCTAssertEqual(three.statistics.tooLate, 1)
        three.record(sequenceNumber: 12, arrivalMicros: 22_000)  // 15 − 12 = 3: kept, reported again from 12
        XCTAssertEqual(three.statistics.tooLate, 1)
        XCTAssertEqual(try reported(three.flush(nowMicros: 30_000)).map(\.sequence), [12, 13, 14])
    }
}
