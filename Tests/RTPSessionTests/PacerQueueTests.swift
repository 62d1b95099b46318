import RTPSession
import XCTest

/// ``PacerQueue`` and ``KeyframeLobby``: the timing parts of a peer connection, driven by an injected clock.
final class PeerConnectionPacingTests: XCTestCase {
    func packets(_ count: Int, size: Int = 1200) -> [[UInt8]] { (0..<count).map { [UInt8](repeating: UInt8($0 & 0xFF), count: size) } }

    /// Runs the pacer as the peer's timer would, returning (time µs, packet) for each release.
    func drain(_ pacer: inout PacerQueue, from start: UInt64) -> [(UInt64, PacerQueue.Packet)] {
        var now = start
        var out: [(UInt64, PacerQueue.Packet)] = []
        while let next = pacer.nextSendMicros(nowMicros: now) {
            now = max(now, next)
            out += pacer.release(nowMicros: now).map { (now, $0) }
        }
        return out
    }

    /// A 60 kB keyframe leaves over a few milliseconds (40 Mbit/s after a 12 kB burst), in order, not at once.
    func testKeyframeIsSpreadOverAFewMilliseconds() {
        var pacer = PacerQueue()
        XCTAssertTrue(pacer.enqueue(media: packets(50)))
        let released = drain(&pacer, from: 1_000_000)
        XCTAssertEqual(released.count, 50)
        XCTAssertEqual(released.map { $0.1.bytes[0] }, (0..<50).map { UInt8($0) })
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
        XCTAssertTrue(pacer.enqueue(retransmission: [UInt8](repeating: 0xEE, count: 1000)))
        let rest = drain(&pacer, from: 0)
        XCTAssertEqual(rest.first?.1.kind, .retransmission)
        XCTAssertEqual(rest.first?.1.bytes.first, 0xEE)
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

    /// Nothing before the first keyframe; from it on, everything; requests repeat until it comes.
    func testKeyframeLobby() {
        var lobby = KeyframeLobby(retryIntervalMicros: 1_000_000)
        XCTAssertFalse(lobby.admit(isKeyframe: true, nowMicros: 0), "closed until the peer is ready")
        XCTAssertTrue(lobby.enter(nowMicros: 10_000))
        XCTAssertEqual(lobby.stateName, "waiting")
        XCTAssertFalse(lobby.admit(isKeyframe: false, nowMicros: 20_000))
        XCTAssertFalse(lobby.keyframeRequestDue(nowMicros: 500_000))
        XCTAssertTrue(lobby.keyframeRequestDue(nowMicros: 1_010_000))
        lobby.markRequested(nowMicros: 1_010_000)
        XCTAssertEqual(lobby.nextRequestMicros, 2_010_000)
        XCTAssertTrue(lobby.admit(isKeyframe: true, nowMicros: 1_100_000))
        XCTAssertEqual(lobby.lastWaitMicros, 1_090_000)
        XCTAssertTrue(lobby.admit(isKeyframe: false, nowMicros: 1_133_000))
        XCTAssertNil(lobby.nextRequestMicros)
        XCTAssertEqual(lobby.framesDropped, 2)
        XCTAssertTrue(lobby.reset(nowMicros: 2_000_000), "fell behind: wait for a keyframe again")
        XCTAssertFalse(lobby.reset(nowMicros: 2_000_001), "already waiting")
        XCTAssertFalse(lobby.admit(isKeyframe: false, nowMicros: 2_033_000))
    }
}
