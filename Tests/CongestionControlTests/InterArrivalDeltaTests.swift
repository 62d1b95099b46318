@testable import CongestionControl
import XCTest

/// ``InterArrivalDelta``: packet groups of 5 ms send bursts, the burst rule for packets that queued behind a
/// group, reordering, and arrival-time jumps (draft-ietf-rmcat-gcc-02 §5.2; libwebrtc's `InterArrivalDelta`:
/// `NewTimestampGroup`, `BelongsToBurst`, `ComputeDeltas`). Times are written in ms and fed in µs.
final class InterArrivalDeltaTests: XCTestCase {
    /// Feeds packets (send ms, arrival ms, size, local ms) and collects the deltas with the index of the packet
    /// that produced each.
    private struct Feeder {
        var groups = InterArrivalDelta()
        var produced: [(index: Int, deltas: InterArrivalDelta.Deltas)] = []
        var count = 0

        mutating func add(_ send: Double, _ arrival: Double, size: Int = 100, local: Double = 0) {
            if let deltas = groups.add(sendMicros: Int64((send * 1000).rounded()), arrivalMicros: Int64((arrival * 1000).rounded()),
                                       localMicros: Int64((local * 1000).rounded()), sizeBytes: size) {
                produced.append((count, deltas))
            }
            count += 1
        }

        var deltas: [InterArrivalDelta.Deltas] { produced.map(\.deltas) }
    }

    private func deltas(send: Double, arrival: Double, size: Int = 0) -> InterArrivalDelta.Deltas {
        .init(sendDeltaMicros: Int64((send * 1000).rounded()), arrivalDeltaMicros: Int64((arrival * 1000).rounded()), sizeDelta: size)
    }

    /// A group is complete only when a packet sent more than 5 ms after its first one arrives, and the first
    /// group has no predecessor: the first deltas come with the first packet of the third group.
    func testTheFirstDeltasNeedThreeGroups() {
        var feeder = Feeder()
        feeder.add(0, 50)
        feeder.add(10, 60)
        XCTAssertTrue(feeder.produced.isEmpty, "group 1 complete, but it has no predecessor")
        feeder.add(20, 70)
        XCTAssertEqual(feeder.produced.map(\.index), [2])
        XCTAssertEqual(feeder.deltas, [deltas(send: 10, arrival: 10)])
    }

    /// Send times exactly 5 ms after the group's first packet still belong to it (the rule is "more than");
    /// 5.001 ms opens a new group. Sizes add up per group and the size delta is this group minus the one before.
    func testTheFiveMillisecondBoundaryAndSizes() {
        var feeder = Feeder()
        // Group A: 0, 2.5, 5 ms (300 bytes). Group B: 5.001 … 10.001 ms (two packets, 700 bytes). Group C opens.
        feeder.add(0, 100, size: 100)
        feeder.add(2.5, 103, size: 100)
        feeder.add(5, 106, size: 100)
        feeder.add(5.001, 112, size: 300)
        feeder.add(10.001, 118, size: 400)
        feeder.add(20, 130, size: 100)
        feeder.add(40, 150, size: 100)
        XCTAssertEqual(feeder.deltas, [
            // B's last send 10.001 − A's last send 5; B's last arrival 118 − A's 106.
            .init(sendDeltaMicros: 5_001, arrivalDeltaMicros: 12_000, sizeDelta: 700 - 300),
            // C (one packet at 20 ms, 130) against B.
            .init(sendDeltaMicros: 9_999, arrivalDeltaMicros: 12_000, sizeDelta: 100 - 700),
        ])
    }

    /// Packets with the same send time always share a group (a frame's packets leaving together), however far
    /// apart they arrive.
    func testEqualSendTimesShareAGroup() {
        var feeder = Feeder()
        feeder.add(0, 100)
        feeder.add(10, 110)
        feeder.add(10, 180)  // same send time as the last: same group, its arrival is the group's last
        feeder.add(20, 190)
        feeder.add(30, 200)
        XCTAssertEqual(feeder.deltas, [deltas(send: 10, arrival: 80, size: 100), deltas(send: 10, arrival: 10, size: -100)])
    }

    /// The burst rule: a packet sent after the group's 5 ms joins it when it arrived at most 5 ms after the
    /// group's last arrival *and* sooner than its send spacing (propagation delta < 0: it queued behind the
    /// group). Each condition alone is not enough.
    func testTheBurstRuleNeedsBothConditions() {
        // Joins: sent 10 ms after, arrives 4 ms after (4 − 10 < 0, 4 ≤ 5).
        var joins = Feeder()
        joins.add(0, 100); joins.add(10, 104)
        joins.add(30, 130); joins.add(50, 150)
        XCTAssertEqual(joins.deltas, [deltas(send: 20, arrival: 26, size: -100)], "0…10 ms is one group (last arrival 104)")

        // Exactly 5 ms after the group's last arrival still joins (≤ 5 ms).
        var edge = Feeder()
        edge.add(0, 100); edge.add(10, 105)
        edge.add(30, 130); edge.add(50, 150)
        XCTAssertEqual(edge.deltas, [deltas(send: 20, arrival: 25, size: -100)])

        // Arrived 5.25 ms later: too late for a burst, a new group.
        var late = Feeder()
        late.add(0, 100); late.add(10, 105.25)
        late.add(30, 130); late.add(50, 150)
        XCTAssertEqual(late.deltas, [deltas(send: 10, arrival: 5.25), deltas(send: 20, arrival: 24.75)])

        // A group 0…4 ms (last send 4, last arrival 101); the next packet, sent 7 ms after the group's first,
        // arrives 3.5 ms after its last but was sent 3 ms after: a propagation delta of +0.5 ms — it did not
        // queue behind the group, so a new group, although it arrived within 5 ms.
        var spaced = Feeder()
        spaced.add(0, 100); spaced.add(4, 101); spaced.add(7, 104.5)
        spaced.add(30, 130); spaced.add(50, 150)
        XCTAssertEqual(spaced.deltas, [deltas(send: 3, arrival: 3.5, size: -100), deltas(send: 23, arrival: 25.5)])
        // The same packet arriving 2.5 ms after (sooner than its 3 ms spacing): it joins the burst.
        var queued = Feeder()
        queued.add(0, 100); queued.add(4, 101); queued.add(7, 103.5)
        queued.add(30, 130); queued.add(50, 150)
        XCTAssertEqual(queued.deltas, [deltas(send: 23, arrival: 26.5, size: -200)], "a group of 3 packets, then 1")
    }

    /// A burst spans less than 100 ms of arrivals: packets that keep queueing behind the group join it until
    /// their arrival is 100 ms after the group's first, then open a new group.
    func testABurstEndsAfterOneHundredMilliseconds() {
        var feeder = Feeder()
        feeder.add(0, 0)
        // A group at 100 ms, then packets sent 10 ms apart that arrive 4 ms apart (a queue draining at a
        // faster link): all join, while arrival − 200 < 100.
        for index in 0...30 { feeder.add(100 + Double(index) * 10, 200 + Double(index) * 4) }
        // Packet 25 arrives at 300 ms: 100 ms after the group's first arrival, so it opens a group; packet 26
        // arrives 4 ms later, sent 10 ms later: it joins that one.
        feeder.add(600, 600)
        XCTAssertEqual(feeder.deltas, [
            // Group 100…340 ms (sends) against the lone packet at 0: arrivals 0 → 296.
            deltas(send: 340, arrival: 296, size: 2500 - 100),
            // Group 350…400 ms (arrivals 300…320) against it.
            deltas(send: 60, arrival: 24, size: 600 - 2500),
        ])
        XCTAssertEqual(feeder.produced.map(\.index), [26, 32])
    }

    /// A packet sent before the current group began is a reordered one: skipped, it neither closes nor joins
    /// the group, and its size is not counted.
    func testPacketsSentBeforeTheGroupAreSkipped() {
        var feeder = Feeder()
        feeder.add(0, 100, size: 100)
        feeder.add(20, 120, size: 100)
        feeder.add(19.9, 121, size: 5000)  // sent before the group of 20 ms: skipped
        feeder.add(22, 123, size: 100)     // joins the group of 20 ms
        feeder.add(40, 140, size: 100)
        XCTAssertEqual(feeder.deltas, [.init(sendDeltaMicros: 22_000, arrivalDeltaMicros: 23_000, sizeDelta: 100)])
    }

    /// Groups whose last arrivals run backwards yield nothing; a good pair in between restarts the count, so
    /// only three reordered groups *in a row* reset the state.
    func testOnlyThreeReorderedGroupsInARowReset() {
        var feeder = Feeder()
        // Group 0 at 100 ms. Group 1 (sent at 10) ends with a packet arriving at 60: before group 0's arrival.
        feeder.add(0, 100)
        feeder.add(10, 110); feeder.add(11, 60)
        feeder.add(30, 130)   // closes group 1: arrival delta 60 − 100 < 0 → nothing (1 in a row); state kept
        XCTAssertTrue(feeder.produced.isEmpty)
        // Group 1 was not promoted: group 0 stays the reference. The packet at 30 ms was not added either:
        // the next packet (40 ms) compares group 1 (last arrival 60) with group 0 again.
        feeder.add(40, 140)   // 2 in a row
        XCTAssertTrue(feeder.produced.isEmpty)
        feeder.add(50, 150)   // 3 in a row: reset; this packet is dropped too
        XCTAssertTrue(feeder.produced.isEmpty)
        feeder.add(60, 160); feeder.add(70, 170); feeder.add(80, 180)
        XCTAssertEqual(feeder.deltas, [deltas(send: 10, arrival: 10)], "started over at 60 ms")

        // Two reordered, then a packet that joins the open group and arrives after group 0 (a good pair): the
        // counter restarts. Two more reordered groups then do not reset, and the next good pair yields deltas.
        var resumed = Feeder()
        resumed.add(0, 100)
        resumed.add(10, 110); resumed.add(11, 60)
        resumed.add(30, 130); resumed.add(40, 140)  // 2 reordered in a row
        resumed.add(12, 115)  // joins the group of 10 ms (sent 2 ms after its first): its last arrival is now 115
        resumed.add(50, 150)  // good: 12 − 0 sent, 115 − 100 arrived
        XCTAssertEqual(resumed.deltas, [deltas(send: 12, arrival: 15, size: 200)], "3 packets against 1")
        resumed.add(51, 100)  // the group of 50 ms now ends before the group of 10 ms did
        resumed.add(70, 170); resumed.add(80, 180)  // reordered: 1 and 2 in a row (3 and 4 had the count gone on)
        resumed.add(52, 160)  // joins the group of 50 ms: its last arrival 160
        resumed.add(90, 190)
        XCTAssertEqual(resumed.deltas, [deltas(send: 12, arrival: 15, size: 200), deltas(send: 40, arrival: 45)],
                       "no reset: the good pair restarted the count")
    }

    /// The receiver's clock jumped: an arrival delta that exceeds the local (feedback) time delta by 3 s or
    /// more resets the state, and the packet that showed it is dropped. 2.999 s more does not.
    func testAnArrivalTimeJumpOfThreeSecondsResets() {
        var jumped = Feeder()
        jumped.add(0, 100, local: 200)
        jumped.add(20, 120, local: 200)
        // The group at 20 ms closes with a local delta of 0 and an arrival delta of 20 ms: fine.
        jumped.add(40, 140, local: 300)
        XCTAssertEqual(jumped.deltas, [deltas(send: 20, arrival: 20)])
        // The next group's arrival is 3 s + 20 ms later than the last, but it was read only 20 ms later.
        jumped.add(60, 3160, local: 320)   // closes the group of 40 ms: (20, 20) again
        XCTAssertEqual(jumped.produced.count, 2)
        jumped.add(80, 3180, local: 340)   // closes the jumped group: 3020 − 20 ms = 3 s beyond local → reset
        XCTAssertEqual(jumped.produced.count, 2, "nothing from the jump")
        jumped.add(100, 3200, local: 360)
        jumped.add(120, 3220, local: 380)
        jumped.add(140, 3240, local: 400)
        XCTAssertEqual(jumped.deltas.last, deltas(send: 20, arrival: 20), "started over after the reset")
        XCTAssertEqual(jumped.produced.map(\.index), [2, 3, 7],
                       "the packet at 80 ms went with the reset: 100 ms opened the first group (else 6)")

        var almost = Feeder()
        almost.add(0, 100, local: 200)
        almost.add(20, 120, local: 200)
        almost.add(40, 3119, local: 200)  // arrival delta 2999 ms, local delta 0: below 3 s
        almost.add(60, 3139, local: 200)
        XCTAssertEqual(almost.deltas, [deltas(send: 20, arrival: 20), deltas(send: 20, arrival: 2999)])
    }

    /// After ``InterArrivalDelta/reset()`` the next packet starts from nothing: two more groups are needed.
    func testResetForgetsBothGroups() {
        var feeder = Feeder()
        feeder.add(0, 100); feeder.add(10, 110); feeder.add(20, 120)
        XCTAssertEqual(feeder.produced.count, 1)
        feeder.groups.reset()
        feeder.add(1000, 2000); feeder.add(1010, 2010)
        XCTAssertEqual(feeder.produced.count, 1)
        feeder.add(1020, 2020)
        XCTAssertEqual(feeder.deltas.last, deltas(send: 10, arrival: 10))
    }

    /// A steady stream through a queue that grows: every 20 ms frame of three packets sent 1 ms apart is one
    /// group, and each group's arrival delta exceeds its send delta by exactly the queue's growth per frame.
    func testFramesThroughAGrowingQueue() {
        var feeder = Feeder()
        for frame in 0..<10 {
            let send = Double(frame) * 20
            let arrival = 50 + Double(frame) * 23  // 3 ms more queueing per frame
            for packet in 0..<3 { feeder.add(send + Double(packet), arrival + Double(packet) * 2, size: 1000) }
        }
        XCTAssertEqual(feeder.deltas, Array(repeating: deltas(send: 20, arrival: 23), count: 8))
    }
}
