import RTP
import XCTest

/// The feedback generator against the truth of seeded random sessions — steady loss, loss bursts of up to
/// 3000 packets (longer than a feedback packet's cap of 400), reordering, duplicates, pauses, the 16-bit
/// wrap — checked through the bytes a sender would parse (draft-holmer-rmcat-transport-wide-cc-extensions-01
/// §3.1):
/// - every packet that arrived is reported as received, at its arrival time to the 250 µs of the format;
/// - nothing that did not arrive is ever reported as received, and every lost number is reported lost;
/// - feedback packets are numbered 0, 1, 2, … mod 256 without a gap (a gap means lost feedback to a sender);
/// - no packet is empty or over 1000 bytes, and asked when due, the generator reports.
final class TransportFeedbackGeneratorPropertyTests: XCTestCase {
    private struct Session {
        /// Arrivals in the order they happened: transport-wide number (extended) and µs.
        var arrivals: [(extended: Int64, micros: Int64)] = []
        var lost: Set<Int64> = []
        var endMicros: Int64 = 0
    }

    private func session(seed: UInt64) -> Session {
        var generator = SplitMix64(seed: seed)
        var session = Session()
        var time: Int64 = Int64.random(in: 0...10_000_000, using: &generator)
        var extended = Int64.random(in: 0...65_535, using: &generator)
        var pending: (Int64, Int64)?  // a packet held back to arrive after the next one
        for _ in 0..<6000 {
            time += Int64.random(in: 50...3000, using: &generator)
            if Int.random(in: 0..<500, using: &generator) == 0 { time += Int64.random(in: 200_000...3_000_000, using: &generator) }  // a pause
            if Int.random(in: 0..<800, using: &generator) == 0 {  // a burst
                let burst = Int64.random(in: 100...3000, using: &generator)
                for lost in extended..<(extended + burst) { session.lost.insert(lost) }
                extended += burst
            }
            if Int.random(in: 0..<50, using: &generator) == 0 {
                session.lost.insert(extended)
            } else if pending == nil, Int.random(in: 0..<40, using: &generator) == 0 {
                pending = (extended, time)
            } else {
                session.arrivals.append((extended, time))
                if let held = pending {
                    session.arrivals.append((held.0, time + 1))  // just after the packet that overtook it
                    pending = nil
                }
                if Int.random(in: 0..<100, using: &generator) == 0 { session.arrivals.append((extended, time + 2)) }  // duplicate
            }
            extended += 1
        }
        if let held = pending { session.arrivals.append((held.0, time + 1)) }
        session.endMicros = time + 1_000_000
        return session
    }

    func testReportsMatchTheTruthOfRandomSessions() throws {
        for seed: UInt64 in 1...12 {
            let truth = session(seed: seed)
            var feedback = TransportFeedbackGenerator(configuration: .init(senderSSRC: 1, mediaSSRC: 2))
            var packets: [RTCPTransportFeedback] = []
            var clock = truth.arrivals.first!.micros
            for arrival in truth.arrivals {
                // Feedback is asked for every 10 ms of the receiver's clock, as a timer would.
                while clock + 10_000 <= arrival.micros {
                    clock += 10_000
                    packets += feedback.feedback(nowMicros: clock)
                    if let due = feedback.nextFeedbackMicros { XCTAssertGreaterThan(due, clock, "seed \(seed): asked when due, it reported") }
                }
                feedback.record(sequenceNumber: UInt16(truncatingIfNeeded: arrival.extended), arrivalMicros: arrival.micros)
            }
            packets += feedback.flush(nowMicros: truth.endMicros)
            XCTAssertNil(feedback.nextFeedbackMicros, "seed \(seed): everything reported")

            // Through the bytes, as a sender reads them.
            var bytes: [UInt8] = []
            for packet in packets {
                let size = bytes.count
                try packet.serialize(into: &bytes)
                XCTAssertLessThanOrEqual(bytes.count - size, 1000, "seed \(seed): one packet's bytes")
            }
            let parsed = try RTCPTransportFeedback.packets(inCompound: bytes)
            XCTAssertEqual(parsed.map(\.feedbackPacketCount), (0..<parsed.count).map { UInt8(truncatingIfNeeded: $0) }, "seed \(seed)")
            XCTAssertTrue(parsed.allSatisfy { $0.packetStatusCount > 0 })

            var unwrapper = SequenceNumberUnwrapper()
            _ = unwrapper.unwrap(UInt16(truncatingIfNeeded: truth.arrivals.first!.extended))
            let offset = truth.arrivals.first!.extended - unwrapper.highest!
            var reportedReceived: [Int64: [Int64]] = [:]
            var reportedLost: Set<Int64> = []
            for packet in parsed {
                packet.forEachPacket { sequence, micros in
                    let extended = unwrapper.unwrap(sequence) + offset
                    if let micros { reportedReceived[extended, default: []].append(micros) } else { reportedLost.insert(extended) }
                }
            }
            var firstArrival: [Int64: Int64] = [:]
            for arrival in truth.arrivals where firstArrival[arrival.extended] == nil { firstArrival[arrival.extended] = arrival.micros }
            for (extended, micros) in firstArrival {
                guard let reported = reportedReceived[extended] else {
                    XCTFail("seed \(seed): \(extended) arrived and was never reported received")
                    continue
                }
                for time in reported {
                    XCTAssertLessThanOrEqual(abs(time - micros), 125, "seed \(seed): \(extended) reported at \(time), arrived at \(micros)")
                }
            }
            for extended in reportedReceived.keys { XCTAssertNotNil(firstArrival[extended], "seed \(seed): \(extended) never arrived") }
            // Losses before the lowest or after the highest arrival are invisible to a receiver.
            let (lowest, highest) = (firstArrival.keys.min()!, firstArrival.keys.max()!)
            let neverArrived = truth.lost.subtracting(firstArrival.keys).filter { $0 > lowest && $0 < highest }
            XCTAssertEqual(neverArrived.subtracting(reportedLost), [], "seed \(seed): every lost number is reported lost")
            XCTAssertGreaterThan(neverArrived.count, 50, "seed \(seed): the session has losses")
        }
    }
}
