@testable import CongestionControl
import RTP
import XCTest

/// ``TransportFeedbackAdapter`` (libwebrtc's `TransportFeedbackAdapter::ProcessTransportFeedback`): TWCC
/// feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1) mapped onto the packets sent — the
/// 16-bit transport-wide numbers unwrapped against what was sent, the receiver's clock shifted once onto
/// ours, each packet reported once received (and once lost before that), the rest counted.
final class TransportFeedbackAdapterTests: XCTestCase {
    private func feedback(base: UInt16, reference: Int32 = 0, count: UInt8 = 0, _ statuses: [RTCPTransportFeedback.PacketStatus])
        throws -> RTCPTransportFeedback {
        try RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: base, referenceTime: reference,
                                  feedbackPacketCount: count, statuses: statuses)
    }

    /// 70 000 packets from number 60 000 on — across the 16-bit wrap, past the history's 16 384 slots — each
    /// reported once by the receiver's generator: every result has its own unwrapped number in order, its send
    /// time and size, and its arrival on our clock exactly 40 ms after its send (the path's constant delay),
    /// with nothing unknown, lost or in flight at the end.
    func testALongStreamAcrossTheWrap() throws {
        var adapter = TransportFeedbackAdapter()
        var generator = TransportFeedbackGenerator(configuration: .init(senderSSRC: 1, mediaSSRC: 2))
        var seen: [PacketResult] = []
        var offset: Int64?
        for index in 0..<70_000 {
            let sequence = UInt16(truncatingIfNeeded: 60_000 + index)
            let send = 1_000_000 + Int64(index) * 1000  // 1 ms apart
            adapter.onPacketSent(sequenceNumber: sequence, sendTimeMicros: send, sizeBytes: 200 + index % 1000, probeClusterID: nil)
            // The receiver's clock is 7.3 s ahead of ours; arrivals on a 250 µs grid (the feedback's unit).
            generator.record(sequenceNumber: sequence, arrivalMicros: send + 40_000 + 7_300_000)
            for packet in generator.feedback(nowMicros: send + 40_000 + 7_300_000) {
                let results = adapter.adapt(packet, receivedAtMicros: send + 60_000)
                XCTAssertEqual(results.lostCount, 0)
                seen += results.results
            }
        }
        for packet in generator.flush(nowMicros: 0) { seen += adapter.adapt(packet, receivedAtMicros: 71_100_000).results }
        XCTAssertEqual(seen.count, 70_000)
        XCTAssertEqual(seen.map(\.sent.sequenceNumber), (0..<70_000).map { 60_000 + Int64($0) })
        for (index, result) in seen.enumerated() {
            XCTAssertEqual(result.sent.sendTimeMicros, 1_000_000 + Int64(index) * 1000)
            XCTAssertEqual(result.sent.sizeBytes, 200 + index % 1000)
            let arrival = try XCTUnwrap(result.arrivalMicros)
            // Arrival − send is the same for every packet: one shift for the whole stream.
            if let offset { XCTAssertEqual(arrival - result.sent.sendTimeMicros, offset, "packet \(index)") } else {
                offset = arrival - result.sent.sendTimeMicros
            }
        }
        XCTAssertEqual(adapter.counters.unknownPackets, 0)
        XCTAssertEqual(adapter.counters.feedbackPacketsMissed, 0)
        XCTAssertEqual(adapter.history.bytesInFlight, 0)
    }

    /// The receiver's clock is mapped once, at the first feedback: its reference time lands on the moment that
    /// feedback reached us. Later feedback keeps that shift whenever it arrives (jitter on the way back
    /// moves nothing), so arrival deltas across feedbacks are the receiver's own.
    func testTheClockShiftIsFixedAtTheFirstFeedback() throws {
        var adapter = TransportFeedbackAdapter()
        for sequence: UInt16 in 0..<4 {
            adapter.onPacketSent(sequenceNumber: sequence, sendTimeMicros: Int64(sequence) * 10_000, sizeBytes: 500, probeClusterID: nil)
        }
        // Reference 1000 × 64 ms = 64 s on the receiver's clock; arrives at our 2.5 s.
        let first = adapter.adapt(try feedback(base: 0, reference: 1000, count: 0, [.received(delta: 8), .received(delta: 40)]),
                                  receivedAtMicros: 2_500_000)
        XCTAssertEqual(first.results.map(\.arrivalMicros), [2_502_000, 2_512_000])
        // The next reference is 1 tick later (64 ms); it reaches us late (3 s), which changes nothing.
        let second = adapter.adapt(try feedback(base: 2, reference: 1001, count: 1, [.received(delta: 4), .received(delta: 40)]),
                                   receivedAtMicros: 3_000_000)
        XCTAssertEqual(second.results.map(\.arrivalMicros), [2_565_000, 2_575_000])
        XCTAssertEqual(second.feedbackTimeMicros, 3_000_000)
    }

    /// A feedback reordered on the way back carries an older reference time: the shortest way round the
    /// 24-bit circle is backwards, and its arrivals land before the newer feedback's on the same scale — also
    /// across the circle's edge (2²⁴ − 1 → 0 ticks).
    func testAnOlderReferenceTimeGoesBackwards() throws {
        for (newer, older) in [(Int32(100), Int32(98)), (Int32(1), Int32(-1))] {
            var adapter = TransportFeedbackAdapter()
            for sequence: UInt16 in 0..<4 {
                adapter.onPacketSent(sequenceNumber: sequence, sendTimeMicros: 0, sizeBytes: 100, probeClusterID: nil)
            }
            let first = adapter.adapt(try feedback(base: 2, reference: newer, count: 1, [.received(delta: 4), .received(delta: 4)]),
                                      receivedAtMicros: 1_000_000)
            let late = adapter.adapt(try feedback(base: 0, reference: older, count: 0, [.received(delta: 4), .received(delta: 4)]),
                                     receivedAtMicros: 1_010_000)
            XCTAssertEqual(first.results.map(\.arrivalMicros), [1_001_000, 1_002_000])
            // Two ticks (128 ms) earlier on the receiver's clock.
            XCTAssertEqual(late.results.map(\.arrivalMicros), [1_001_000 - 128_000, 1_002_000 - 128_000], "references \(newer), \(older)")
        }
    }

    /// A feedback delivered twice adds nothing the second time (all its packets are known) and is not counted
    /// as a missed feedback; a lost packet reported again stays one loss.
    func testDuplicateFeedback() throws {
        var adapter = TransportFeedbackAdapter()
        for sequence: UInt16 in 0..<5 { adapter.onPacketSent(sequenceNumber: sequence, sendTimeMicros: 0, sizeBytes: 100, probeClusterID: nil) }
        let packet = try feedback(base: 0, count: 3, [.received(delta: 4), .notReceived, .received(delta: 4), .received(delta: 4)])
        let first = adapter.adapt(packet, receivedAtMicros: 100_000)
        XCTAssertEqual(first.results.count, 4)
        XCTAssertEqual(first.lostCount, 1)
        XCTAssertEqual(first.priorBytesInFlight, 500)
        let again = adapter.adapt(packet, receivedAtMicros: 110_000)
        XCTAssertEqual(again.results, [])
        XCTAssertEqual(again.priorBytesInFlight, 100, "packet 4 is still in flight")
        XCTAssertEqual(adapter.counters.feedbackPackets, 2)
        XCTAssertEqual(adapter.counters.feedbackPacketsMissed, 0)
    }

    /// A packet first reported lost and later received yields two results — a loss, then the arrival (the
    /// late arrival's delay counts) — and leaves the bytes in flight once. A second arrival report is ignored:
    /// the first one stands.
    func testLostThenReceivedThenReceivedAgain() throws {
        var adapter = TransportFeedbackAdapter()
        for sequence: UInt16 in 100..<103 {
            adapter.onPacketSent(sequenceNumber: sequence, sendTimeMicros: Int64(sequence) * 1000, sizeBytes: 1000, probeClusterID: nil)
        }
        let lost = adapter.adapt(try feedback(base: 100, reference: 10, count: 0, [.received(delta: 0), .notReceived, .received(delta: 8)]),
                                 receivedAtMicros: 1_000_000)
        XCTAssertEqual(lost.results.map(\.arrivalMicros), [1_000_000, nil, 1_002_000])
        XCTAssertEqual(adapter.history.bytesInFlight, 0)
        let late = adapter.adapt(try feedback(base: 101, reference: 10, count: 1, [.received(delta: 20), .received(delta: 0)]),
                                 receivedAtMicros: 1_100_000)
        XCTAssertEqual(late.results.map(\.sent.sequenceNumber), [101])
        XCTAssertEqual(late.results.map(\.arrivalMicros), [1_005_000])
        XCTAssertEqual(late.lostCount, 0)
        XCTAssertEqual(late.priorBytesInFlight, 0)
        let twice = adapter.adapt(try feedback(base: 101, reference: 11, count: 2, [.received(delta: 0)]), receivedAtMicros: 1_200_000)
        XCTAssertEqual(twice.results, [], "already reported received: the first arrival stands")
    }

    /// Gaps in the feedback count are feedback lost on the way back, counted mod 256 across the wrap; a
    /// feedback older than the last (reordered on the way) is not a loss of 250 of them, and does not move
    /// the count back: the next in-order feedback counts no false losses.
    func testMissedFeedbackCounting() throws {
        var adapter = TransportFeedbackAdapter()
        for sequence: UInt16 in 0..<10 { adapter.onPacketSent(sequenceNumber: sequence, sendTimeMicros: 0, sizeBytes: 100, probeClusterID: nil) }
        func deliver(_ count: UInt8, _ sequence: UInt16) throws {
            _ = adapter.adapt(try feedback(base: sequence, count: count, [.received(delta: 1)]), receivedAtMicros: 0)
        }
        try deliver(253, 0)
        try deliver(255, 1)  // 254 missed
        XCTAssertEqual(adapter.counters.feedbackPacketsMissed, 1)
        try deliver(0, 2)    // across the wrap: none missed
        try deliver(4, 3)    // 1, 2, 3 missed
        XCTAssertEqual(adapter.counters.feedbackPacketsMissed, 4)
        try deliver(2, 4)    // a reordered one (2 was counted missed; it came late)
        XCTAssertEqual(adapter.counters.feedbackPacketsMissed, 4)
        try deliver(5, 5)    // the next after 4: nothing missed
        XCTAssertEqual(adapter.counters.feedbackPacketsMissed, 4, "the late feedback did not move the count back")
        XCTAssertEqual(adapter.counters.feedbackPackets, 6)
    }

    /// Statuses for numbers never sent, or sent so long ago that their slot was reused, are counted as
    /// unknown and give no result.
    func testUnknownAndReplacedPackets() throws {
        var adapter = TransportFeedbackAdapter(historyCapacity: 16)
        for sequence: UInt16 in 0..<20 { adapter.onPacketSent(sequenceNumber: sequence, sendTimeMicros: 0, sizeBytes: 10, probeClusterID: nil) }
        // 0…3 were replaced by 16…19; 20 and 21 were never sent.
        let results = adapter.adapt(try feedback(base: 2, count: 0, Array(repeating: .received(delta: 1), count: 20)), receivedAtMicros: 0)
        XCTAssertEqual(results.results.map(\.sent.sequenceNumber), Array(4...19))
        XCTAssertEqual(adapter.counters.unknownPackets, 2 + 2)
    }

    /// After ``TransportFeedbackAdapter/forgetInFlight()`` (a new path) nothing is in flight, but feedback
    /// that comes late for the old path's packets still finds them: a received one is reported (once).
    func testForgetInFlightKeepsThePacketsForLateFeedback() throws {
        var adapter = TransportFeedbackAdapter()
        for sequence: UInt16 in 0..<3 { adapter.onPacketSent(sequenceNumber: sequence, sendTimeMicros: 0, sizeBytes: 700, probeClusterID: 4) }
        adapter.forgetInFlight()
        XCTAssertEqual(adapter.history.bytesInFlight, 0)
        adapter.onPacketSent(sequenceNumber: 3, sendTimeMicros: 1000, sizeBytes: 300, probeClusterID: nil)
        XCTAssertEqual(adapter.history.bytesInFlight, 300)
        let late = adapter.adapt(try feedback(base: 0, count: 0, [.received(delta: 4), .notReceived, .received(delta: 4)]),
                                 receivedAtMicros: 50_000)
        XCTAssertEqual(late.results.map(\.sent.sequenceNumber), [0, 2], "already counted lost: only the arrivals are news")
        XCTAssertEqual(late.results.map(\.sent.probeClusterID), [4, 4])
        XCTAssertEqual(adapter.history.bytesInFlight, 300)
    }

    /// Results come in sequence order; ``TransportPacketsFeedback/receivedByArrival`` orders the received ones
    /// by arrival, ties by sequence number, and leaves the lost ones out.
    func testReceivedByArrivalOrder() throws {
        var adapter = TransportFeedbackAdapter()
        for sequence: UInt16 in 0..<5 { adapter.onPacketSent(sequenceNumber: sequence, sendTimeMicros: 0, sizeBytes: 100, probeClusterID: nil) }
        // Arrivals (ticks of 250 µs from the reference): 8, 4 (−4), lost, 4 (0), 12 (+8).
        let packets = adapter.adapt(try feedback(base: 0, count: 0, [.received(delta: 8), .received(delta: -4), .notReceived,
                                                                     .received(delta: 0), .received(delta: 8)]),
                                    receivedAtMicros: 0)
        XCTAssertEqual(packets.results.map(\.sent.sequenceNumber), [0, 1, 2, 3, 4])
        XCTAssertEqual(packets.receivedByArrival.map(\.sent.sequenceNumber), [1, 3, 0, 4])
        XCTAssertEqual(packets.receivedByArrival.map(\.arrivalMicros), [1000, 1000, 2000, 3000])
        XCTAssertEqual(packets.lostCount, 1)
    }
}
