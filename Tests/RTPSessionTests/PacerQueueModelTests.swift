import RTP
import RTPSession
import TestSupport
import XCTest

/// ``PacerQueue`` against a model of what it promises, over seeded random schedules of enqueues, releases,
/// rate changes and overflows: nothing lost or duplicated, retransmissions before media, each kind in its
/// own order, the byte count exact, and no packet released before its pace allows.
final class PacerQueueModelTests: XCTestCase {
    func testRandomSchedulesKeepThePromises() {
        var generator = SeededGenerator(seed: 2024)
        for round in 0..<40 {
            var pacer = PacerQueue(configuration: .init(
                rateBitsPerSecond: Int.random(in: 200_000...50_000_000, using: &generator), burstBytes: Int.random(in: 1...20_000, using: &generator),
                maxQueuedBytes: Int.random(in: 5_000...200_000, using: &generator)))
            var waitingMedia: [UInt16] = []
            var waitingRetransmissions: [UInt16] = []
            var sequence: UInt16 = 0
            var now: UInt64 = UInt64.random(in: 0...1_000_000, using: &generator)
            var released = 0
            for _ in 0..<300 {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<4:  // a frame of 1…12 packets
                    let count = Int.random(in: 1...12, using: &generator)
                    let packets = (0..<count).map { _ -> RTPPacket in
                        defer { sequence &+= 1 }
                        return Session.packet(sequence: sequence, size: Int.random(in: 13...1200, using: &generator))
                    }
                    let size = packets.reduce(0) { $0 + $1.serializedSize }
                    let fits = pacer.queuedBytes + size <= pacer.configuration.maxQueuedBytes
                    XCTAssertEqual(pacer.enqueue(media: packets), fits, "round \(round)")
                    if fits {
                        waitingMedia += packets.map(\.sequenceNumber)
                    } else {
                        waitingMedia = []
                        waitingRetransmissions = []
                    }
                case 4:
                    let packet = Session.packet(sequence: 0x8000 | sequence, size: Int.random(in: 13...1200, using: &generator))
                    sequence &+= 1
                    let fits = pacer.queuedBytes + packet.serializedSize <= pacer.configuration.maxQueuedBytes
                    XCTAssertEqual(pacer.enqueue(retransmission: packet), fits)
                    if fits { waitingRetransmissions.append(packet.sequenceNumber) }
                case 5:
                    pacer.setRate(bitsPerSecond: Int.random(in: 0...20_000_000, using: &generator), nowMicros: now)
                default:
                    now += UInt64.random(in: 0...20_000, using: &generator)
                    let due = pacer.nextSendMicros(nowMicros: now)
                    let out = pacer.release(nowMicros: now)
                    if let due, due > now { XCTAssertEqual(out.count, 0, "released before its pace allows") }
                    if due == nil { XCTAssertEqual(out.count, 0) }
                    if due != nil, due! <= now { XCTAssertGreaterThan(out.count, 0, "due but nothing released") }
                    for packet in out {
                        if packet.kind == .retransmission {
                            XCTAssertEqual(packet.rtp.sequenceNumber, waitingRetransmissions.removeFirst())
                        } else {
                            XCTAssertTrue(waitingRetransmissions.isEmpty, "media before a waiting retransmission")
                            XCTAssertEqual(packet.rtp.sequenceNumber, waitingMedia.removeFirst())
                        }
                    }
                    released += out.count
                }
                XCTAssertEqual(pacer.count, waitingMedia.count + waitingRetransmissions.count)
                XCTAssertEqual(pacer.isEmpty, pacer.count == 0)
                XCTAssertLessThanOrEqual(pacer.queuedBytes, pacer.configuration.maxQueuedBytes)
            }
            XCTAssertEqual(pacer.packetsReleased, released)
            pacer.removeAll()
            XCTAssertEqual(pacer.queuedBytes, 0)
            XCTAssertNil(pacer.nextSendMicros(nowMicros: now))
        }
    }
}
