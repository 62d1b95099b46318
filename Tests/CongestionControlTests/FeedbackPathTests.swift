@testable import CongestionControl
import RTP
import XCTest

/// From TWCC feedback to per-packet results, send groups and the acknowledged rate.
final class FeedbackPathTests: XCTestCase {
    private func feedback(base: UInt16, reference: Int32, count: UInt8 = 0, _ statuses: [RTCPTransportFeedback.PacketStatus])
        throws -> RTCPTransportFeedback
    {
        try RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: base, referenceTime: reference,
                                  feedbackPacketCount: count, statuses: statuses)
    }

    func testAdapterMapsArrivalsOntoOurClockAndSkipsWhatItKnows() throws {
        var adapter = TransportFeedbackAdapter()
        for index in 0..<6 {
            adapter.onPacketSent(sequenceNumber: UInt16((65533 + index) & 0xFFFF), sendTimeMicros: 1_000_000 + Int64(index) * 1000,
                                 sizeBytes: 1000 + index, probeClusterID: index == 2 ? 7 : nil)
        }
        XCTAssertEqual(adapter.history.bytesInFlight, 6015)
        // Reference time 100 × 64 ms; deltas 1 ms, (lost), 2 ms, −0.5 ms; reaches us at 1.2 s.
        let first = adapter.adapt(try feedback(base: 65533, reference: 100, count: 9, [
            .received(delta: 4), .notReceived, .received(delta: 8), .received(delta: -2),
        ]), receivedAtMicros: 1_200_000)
        XCTAssertEqual(first.results.map(\.sent.sequenceNumber), [65533, 65534, 65535, 65536])
        XCTAssertEqual(first.results.map(\.arrivalMicros), [1_201_000, nil, 1_203_000, 1_202_500])
        XCTAssertEqual(first.results[2].sent.probeClusterID, 7)
        XCTAssertEqual(first.results[2].sent.sizeBytes, 1002)
        XCTAssertEqual(first.lostCount, 1)
        XCTAssertEqual(first.receivedByArrival.map(\.sent.sequenceNumber), [65533, 65536, 65535])
        XCTAssertEqual(first.priorBytesInFlight, 6015)
        XCTAssertEqual(adapter.history.bytesInFlight, 6015 - 1000 - 1001 - 1002 - 1003)

        // The next feedback re-reports 65534 (now received, late), 65535 and 65536 (already known), reports
        // 65537 lost and 65538 received, and names 65539, which we never sent. Its reference time is 2 ticks
        // (128 ms) later.
        let second = adapter.adapt(try feedback(base: 65534, reference: 102, count: 11, [
            .received(delta: 40), .received(delta: 1), .received(delta: 4), .notReceived, .received(delta: 4), .received(delta: 4),
        ]), receivedAtMicros: 1_400_000)
        XCTAssertEqual(second.results.map(\.sent.sequenceNumber), [65534, 65537, 65538])
        XCTAssertEqual(second.results.map(\.arrivalMicros), [1_338_000, nil, 1_340_250])
        XCTAssertEqual(adapter.counters.unknownPackets, 1)
        XCTAssertEqual(adapter.counters.feedbackPacketsMissed, 1, "count 9 then 11: one feedback lost")
        XCTAssertEqual(adapter.history.bytesInFlight, 0)
    }

    func testReferenceTimeUnwrapsAcrossTheSignedEdge() throws {
        var adapter = TransportFeedbackAdapter()
        for sequence: UInt16 in 0...1 { adapter.onPacketSent(sequenceNumber: sequence, sendTimeMicros: 0, sizeBytes: 100, probeClusterID: nil) }
        let top = Int32((1 << 23) - 1)
        let first = adapter.adapt(try feedback(base: 0, reference: top, [.received(delta: 0)]), receivedAtMicros: 5_000_000)
        // The next reference time reads as −2²³: one tick later, not 12 days earlier.
        let second = adapter.adapt(try feedback(base: 1, reference: -(1 << 23), [.received(delta: 0)]), receivedAtMicros: 5_064_000)
        XCTAssertEqual(first.results.first?.arrivalMicros, 5_000_000)
        XCTAssertEqual(second.results.first?.arrivalMicros, 5_064_000)
    }

    func testInterArrivalGroupsBurstsOfFiveMilliseconds() {
        var groups = InterArrivalDelta()
        var deltas: [InterArrivalDelta.Deltas] = []
        func add(_ send: Int64, _ arrival: Int64, _ size: Int = 100) {
            if let delta = groups.add(sendMicros: send * 1000, arrivalMicros: arrival * 1000, localMicros: 0, sizeBytes: size) {
                deltas.append(delta)
            }
        }
        // Group 1: sent at 0, 2, 5 ms.  Group 2: sent at 20, 21 ms; 27 ms arrives 0.5 ms after 21 (queued
        // behind it: a burst) and joins.  Group 3 from 40 ms; a packet sent at 10 ms (before group 3 began) is
        // reordered and skipped.  Group 4 at 60 ms completes group 3.
        add(0, 100); add(2, 102); add(5, 106)
        add(20, 125); add(21, 130); add(27, 130)
        add(40, 150, 500); add(10, 151)
        add(60, 175)
        XCTAssertEqual(deltas, [
            .init(sendDeltaMicros: 22_000, arrivalDeltaMicros: 24_000, sizeDelta: 0),
            .init(sendDeltaMicros: 13_000, arrivalDeltaMicros: 20_000, sizeDelta: 200),
        ])
    }

    func testInterArrivalResetsAfterReordering() {
        var groups = InterArrivalDelta()
        var produced: [InterArrivalDelta.Deltas] = []
        func add(_ send: Int64, _ arrival: Int64) {
            let delta = groups.add(sendMicros: send * 1000, arrivalMicros: arrival * 1000, localMicros: 0, sizeBytes: 100)
            if let delta { produced.append(delta) }
        }
        // Group 1 (sent at 10 ms) ends with a packet that arrived before group 0 did (joined as a burst, since
        // it came sooner than its spacing predicts): each later group finds the groups reordered and yields
        // nothing; the third in a row starts over.
        add(0, 100)
        add(10, 120); add(11, 60)
        add(30, 130); add(40, 140); add(50, 150)
        XCTAssertEqual(produced, [])
        // Started over: 60 ms opens a group, 70 ms a second, 80 ms gives the delta between them.
        add(60, 160); add(70, 170); add(80, 180)
        XCTAssertEqual(produced, [.init(sendDeltaMicros: 10_000, arrivalDeltaMicros: 10_000, sizeDelta: 0)])
    }

    func testAcknowledgedBitrateFollowsARateStep() {
        var estimator = AcknowledgedBitrateEstimator()
        var time: Int64 = 0
        func feed(bitsPerSecond: Double, seconds: Double) {
            let interval = Int64(1000 * 8 / bitsPerSecond * 1_000_000)  // 1000-byte packets
            for _ in 0..<Int(seconds * 1_000_000 / Double(interval)) {
                time += interval
                estimator.add(arrivalMicros: time, bytes: 1000)
            }
        }
        feed(bitsPerSecond: 1_000_000, seconds: 0.45)
        XCTAssertNil(estimator.bitsPerSecond, "no estimate before the first 500 ms window")
        feed(bitsPerSecond: 1_000_000, seconds: 2)
        XCTAssertEqual(try XCTUnwrap(estimator.bitsPerSecond), 1_000_000, accuracy: 60_000)
        feed(bitsPerSecond: 2_000_000, seconds: 0.3)
        let early = try! XCTUnwrap(estimator.bitsPerSecond)
        XCTAssertLessThan(early, 1_700_000, "two windows do not jump the whole step")
        feed(bitsPerSecond: 2_000_000, seconds: 3)
        XCTAssertEqual(try XCTUnwrap(estimator.bitsPerSecond), 2_000_000, accuracy: 110_000)
        // One 150 ms window at 4 Mbit/s among steady ones barely moves it.
        feed(bitsPerSecond: 4_000_000, seconds: 0.15)
        feed(bitsPerSecond: 2_000_000, seconds: 0.15)
        XCTAssertEqual(try XCTUnwrap(estimator.bitsPerSecond), 2_000_000, accuracy: 250_000)
    }
}
