import RTP
import RTPSession
import XCTest

/// ``PacerQueue``: a peer's send pacing, driven by an injected clock. Packets of 1200 serialized bytes.
final class PacerQueueTests: XCTestCase {
    func packets(_ count: Int, size: Int = 1200) -> [RTPPacket] { Session.packets(count, size: size) }
    func drain(_ pacer: inout PacerQueue, from start: UInt64) -> [(UInt64, PacerQueue.Packet)] { Session.drain(&pacer, from: start) }

    /// A 60 kB keyframe leaves over a few milliseconds (40 Mbit/s after a 12 kB burst), in order, not at once.
    func testKeyframeIsSpreadOverAFewMilliseconds() {
        var pacer = PacerQueue()
        XCTAssertTrue(pacer.enqueue(media: packets(50)))
        let released = drain(&pacer, from: 1_000_000)
        XCTAssertEqual(released.count, 50)
        XCTAssertEqual(released.map { $0.1.rtp.sequenceNumber }, (0..<50).map { UInt16($0) })
        XCTAssertEqual(released.map { $0.1.size }, Array(repeating: 1200, count: 50))
        let atOnce = released.filter { $0.0 == 1_000_000 }.count
        XCTAssertEqual(atOnce, 11, "the burst: up to 12 000 bytes of debt")
        let duration = Double(released.last!.0 - released.first!.0) / 1000
        XCTAssertEqual(duration, (60_000.0 - 13_200) * 8 / 40_000, accuracy: 0.5, "ms")
        XCTAssertGreaterThan(duration, 5)
        XCTAssertLessThan(duration, 15)
        XCTAssertTrue(pacer.isEmpty)
        XCTAssertEqual(pacer.queuedBytes, 0)
    }

    /// An interframe of a few packets goes out at once once the bucket has drained.
    func testSmallFrameLeavesAtOnce() {
        var pacer = PacerQueue()
        _ = pacer.enqueue(media: packets(50))
        _ = drain(&pacer, from: 0)
        XCTAssertTrue(pacer.enqueue(media: packets(3)))
        XCTAssertEqual(pacer.release(nowMicros: 100_000).count, 3, "33 ms later the bucket is empty again")
    }

    /// Retransmissions go before media that waits.
    func testRetransmissionsJumpTheQueue() {
        var pacer = PacerQueue()
        _ = pacer.enqueue(media: packets(30))
        let first = pacer.release(nowMicros: 0)
        XCTAssertEqual(first.count, 11)
        XCTAssertTrue(pacer.enqueue(retransmission: Session.packet(sequence: 0xEEEE, size: 1000)))
        let rest = drain(&pacer, from: 0)
        XCTAssertEqual(rest.first?.1.kind, .retransmission)
        XCTAssertEqual(rest.first?.1.rtp.sequenceNumber, 0xEEEE)
        XCTAssertEqual(rest.count, 20)
    }

    /// A frame that does not fit empties the queue and is refused (the peer then waits for a keyframe).
    func testOverflowEmptiesTheQueue() {
        var pacer = PacerQueue(configuration: .init(maxQueuedBytes: 10_000))
        XCTAssertTrue(pacer.enqueue(media: packets(8)))
        XCTAssertFalse(pacer.enqueue(media: packets(2)))
        XCTAssertTrue(pacer.isEmpty)
        XCTAssertEqual(pacer.overflows, 1)
        XCTAssertNil(pacer.nextSendMicros(nowMicros: 0))
        XCTAssertTrue(pacer.enqueue(media: packets(2)))
    }

    /// A retransmission that does not fit is dropped, and the queue keeps what it had.
    func testRetransmissionThatDoesNotFitIsDropped() {
        var pacer = PacerQueue(configuration: .init(maxQueuedBytes: 3000))
        XCTAssertTrue(pacer.enqueue(media: packets(2)))
        XCTAssertFalse(pacer.enqueue(retransmission: Session.packet(sequence: 9, size: 1000)))
        XCTAssertEqual(pacer.count, 2)
        XCTAssertEqual(pacer.queuedBytes, 2400)
        XCTAssertEqual(pacer.overflows, 0)
    }

    /// A target rate changes the pace from now on: 60 kB at 4 Mbit/s takes ten times as long as at 40.
    func testRateFollowsTheTarget() {
        var fast = PacerQueue()
        _ = fast.enqueue(media: packets(50))
        let quick = drain(&fast, from: 0)
        var slow = PacerQueue()
        slow.setRate(bitsPerSecond: 4_000_000, nowMicros: 0)
        XCTAssertEqual(slow.configuration.rateBitsPerSecond, 4_000_000)
        _ = slow.enqueue(media: packets(50))
        let paced = drain(&slow, from: 0)
        XCTAssertEqual(Double(paced.last!.0), (60_000.0 - 13_200) * 8 / 4, accuracy: 600, "µs")
        XCTAssertEqual(Double(paced.last!.0) / Double(quick.last!.0), 10, accuracy: 0.2)
        slow.setRate(bitsPerSecond: 10, nowMicros: 0)
        XCTAssertEqual(slow.configuration.rateBitsPerSecond, 100_000, "the floor")
    }

    /// Debt accrued at the old rate drains at the old rate until the change: slowing down mid-stream does not
    /// hold back what had already drained.
    func testRateChangeKeepsWhatAlreadyDrained() {
        var pacer = PacerQueue()
        _ = pacer.enqueue(media: packets(20))
        XCTAssertEqual(pacer.release(nowMicros: 0).count, 11)  // 13 200 bytes of debt
        // 2 ms at 40 Mbit/s drains 10 000 bytes; then 1 Mbit/s.
        pacer.setRate(bitsPerSecond: 1_000_000, nowMicros: 2_000)
        let next = pacer.release(nowMicros: 2_000)
        XCTAssertEqual(next.count, 8, "3 200 bytes of debt left: 8 packets until it exceeds 12 000")
        XCTAssertEqual(pacer.nextSendMicros(nowMicros: 2_000), 2_000 + UInt64((12_800.0 - 12_000) * 8), "µs at 1 Mbit/s")
    }
}
