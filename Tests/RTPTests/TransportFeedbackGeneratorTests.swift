import RTP
import XCTest

/// The receiver's TWCC feedback generator: what it reports must be what arrived, to the 250 µs of the format.
final class TransportFeedbackGeneratorTests: XCTestCase {
    private func generator(interval: Int64 = 100_000, maxPackets: Int = 400, history: Int = 1024) -> TransportFeedbackGenerator {
        TransportFeedbackGenerator(configuration: .init(senderSSRC: 0xAAAA, mediaSSRC: 0xBBBB, intervalMicros: interval,
                                                        maxPacketsPerFeedback: maxPackets, historyPackets: history))
    }

    /// Serializes, parses back and returns (sequence number, arrival µs) for every packet reported.
    private func reported(_ packets: [RTCPTransportFeedback]) throws -> [(UInt16, Int64?)] {
        var bytes: [UInt8] = []
        for packet in packets { try packet.serialize(into: &bytes) }
        var result: [(UInt16, Int64?)] = []
        for packet in try RTCPTransportFeedback.packets(inCompound: bytes) { packet.forEachPacket { result.append(($0, $1)) } }
        return result
    }

    func testReportsArrivalsWithinRoundingAndLossesAsNotReceived() throws {
        var feedback = generator()
        let start: Int64 = 5_000_123
        // 20 packets 3.3 ms apart, numbers crossing the wrap; 65535 and 2 lost.
        let lost: Set<UInt16> = [65535, 2]
        var sent: [(UInt16, Int64)] = []
        for index in 0..<20 {
            let sequence = UInt16(truncatingIfNeeded: 65530 + index)
            let arrival = start + Int64(index) * 3300
            sent.append((sequence, arrival))
            if !lost.contains(sequence) { feedback.record(sequenceNumber: sequence, arrivalMicros: arrival) }
        }
        XCTAssertEqual(feedback.nextFeedbackMicros, start + 100_000)
        XCTAssertEqual(feedback.feedback(nowMicros: start + 99_999), [], "not due yet")
        let packets = feedback.feedback(nowMicros: start + 100_000)
        XCTAssertEqual(packets.count, 1)
        XCTAssertEqual(packets.first?.baseSequenceNumber, 65530)
        XCTAssertEqual(packets.first?.packetStatusCount, 20)
        XCTAssertEqual(packets.first?.feedbackPacketCount, 0)
        XCTAssertEqual(packets.first?.referenceTime, Int32(start / 64_000))
        let report = try reported(packets)
        XCTAssertEqual(report.map(\.0), sent.map(\.0))
        for ((sequence, arrival), (_, reportedArrival)) in zip(sent, report) {
            if lost.contains(sequence) {
                XCTAssertNil(reportedArrival, "\(sequence)")
            } else {
                // Each delta is rounded to 250 µs but the running sum is kept exact: no error accumulates.
                XCTAssertLessThanOrEqual(abs(try XCTUnwrap(reportedArrival) - arrival), 125, "\(sequence)")
            }
        }
        XCTAssertNil(feedback.nextFeedbackMicros, "nothing left to report")
        XCTAssertEqual(feedback.feedback(nowMicros: start + 500_000), [])

        // The next arrivals go into the next feedback, one interval after the last one, counted 1.
        feedback.record(sequenceNumber: 14, arrivalMicros: start + 150_000)
        XCTAssertEqual(feedback.nextFeedbackMicros, start + 200_000)
        let next = feedback.feedback(nowMicros: start + 200_000)
        XCTAssertEqual(next.first?.baseSequenceNumber, 14)
        XCTAssertEqual(next.first?.feedbackPacketCount, 1)
        XCTAssertEqual(feedback.statistics.feedbackPackets, 2)
        XCTAssertEqual(feedback.statistics.packetsRecorded, 19)
    }

    func testLateArrivalIsReportedAgainAndDuplicatesIgnored() throws {
        var feedback = generator(history: 4)
        for sequence: UInt16 in [100, 101, 103] { feedback.record(sequenceNumber: sequence, arrivalMicros: Int64(sequence) * 1000) }
        let first = try reported(feedback.flush(nowMicros: 200_000))
        XCTAssertEqual(first.map(\.0), [100, 101, 102, 103])
        XCTAssertNil(first[2].1)
        // 102 arrives late, after it was reported lost: it is reported again from there, with what followed.
        feedback.record(sequenceNumber: 102, arrivalMicros: 250_000)
        feedback.record(sequenceNumber: 102, arrivalMicros: 251_000)
        feedback.record(sequenceNumber: 104, arrivalMicros: 252_000)
        let second = try reported(feedback.flush(nowMicros: 300_000))
        XCTAssertEqual(second.map(\.0), [102, 103, 104])
        XCTAssertEqual(second.map(\.1), [250_000, 103_000, 252_000])
        XCTAssertEqual(feedback.statistics.duplicates, 1)
        // More than the history (4) behind the reported edge (105): too late.
        feedback.record(sequenceNumber: 100, arrivalMicros: 253_000)
        XCTAssertEqual(feedback.statistics.tooLate, 1)
    }

    func testSplitsWhenADeltaOverflowsOrThePacketIsFull() throws {
        var feedback = generator(maxPackets: 10)
        // 25 packets: a cap of 10 per feedback gives 3 packets; then a 9 s silence overflows the 16-bit delta.
        for index in 0..<25 { feedback.record(sequenceNumber: UInt16(index), arrivalMicros: 1_000_000 + Int64(index) * 500) }
        feedback.record(sequenceNumber: 25, arrivalMicros: 10_500_000)
        let packets = feedback.flush(nowMicros: 11_000_000)
        XCTAssertEqual(packets.map(\.baseSequenceNumber), [0, 10, 20, 25])
        XCTAssertEqual(packets.map(\.packetStatusCount), [10, 10, 5, 1])
        XCTAssertEqual(packets.map(\.feedbackPacketCount), [0, 1, 2, 3])
        let report = try reported(packets)
        XCTAssertEqual(report.count, 26)
        XCTAssertEqual(report.last?.1, 10_500_000)
        for (index, entry) in report.dropLast().enumerated() {
            XCTAssertEqual(entry.1, 1_000_000 + Int64(index) * 500)
        }
    }

    func testReorderedArrivalsGiveNegativeDeltasAndLongRunsStayCompact() throws {
        var feedback = generator()
        feedback.record(sequenceNumber: 1, arrivalMicros: 1_010_000)
        feedback.record(sequenceNumber: 0, arrivalMicros: 1_020_000)
        feedback.record(sequenceNumber: 2, arrivalMicros: 1_000_000)
        // A burst of 300 lost, then one.
        feedback.record(sequenceNumber: 303, arrivalMicros: 1_030_000)
        let packets = feedback.flush(nowMicros: 1_100_000)
        let report = try reported(packets)
        XCTAssertEqual(report.count, 304)
        XCTAssertEqual(report[0].1, 1_020_000)
        XCTAssertEqual(report[1].1, 1_010_000)
        XCTAssertEqual(report[2].1, 1_000_000)
        XCTAssertEqual(report[303].1, 1_030_000)
        XCTAssertEqual(report[3..<303].filter { $0.1 != nil }.count, 0)
        let bytes = try packets[0].serialized()
        XCTAssertLessThanOrEqual(bytes.count, 40, "a run-length chunk carries the 300 losses")
    }

    func testLongRunStaysBounded() {
        var feedback = generator(history: 64)
        var generator = SplitMix64(seed: 42)
        var time: Int64 = 0
        for index in 0..<200_000 {
            time += Int64.random(in: 100...2000, using: &generator)
            if Int.random(in: 0..<50, using: &generator) != 0 {
                feedback.record(sequenceNumber: UInt16(truncatingIfNeeded: index), arrivalMicros: time)
            }
            _ = feedback.feedback(nowMicros: time)
        }
        XCTAssertGreaterThan(feedback.statistics.feedbackPackets, 2000)
        XCTAssertEqual(feedback.statistics.tooLate, 0)
        XCTAssertEqual(feedback.statistics.duplicates, 0)
    }
}
