@testable import CongestionControl
import XCTest

/// ``SentPacketHistory``: the ring of packets sent, by unwrapped transport-wide number — wrap, replacement
/// after `capacity` packets, and the bytes in flight through every outcome.
final class SentPacketHistoryTests: XCTestCase {
    func testCapacityIsAPowerOfTwoOfAtLeastSixteen() {
        XCTAssertEqual(SentPacketHistory(capacity: 0).capacity, 16)
        XCTAssertEqual(SentPacketHistory(capacity: 16).capacity, 16)
        XCTAssertEqual(SentPacketHistory(capacity: 17).capacity, 32)
        XCTAssertEqual(SentPacketHistory(capacity: 1000).capacity, 1024)
        XCTAssertEqual(SentPacketHistory().capacity, 16_384)
    }

    /// Numbers unwrap across 65535 → 0, and feedback's 16-bit numbers map to the nearest sent.
    func testUnwrapsAcrossTheSixteenBitWrap() throws {
        var history = SentPacketHistory(capacity: 64)
        var numbers: [Int64] = []
        for (offset, number) in [UInt16](arrayLiteral: 65533, 65534, 65535, 0, 1, 2).enumerated() {
            numbers.append(history.record(sequenceNumber: number, sendTimeMicros: Int64(offset) * 1000, sizeBytes: 100 + offset,
                                          probeClusterID: offset == 4 ? 7 : nil).sequenceNumber)
        }
        XCTAssertEqual(numbers, [65533, 65534, 65535, 65536, 65537, 65538])
        XCTAssertEqual(history.unwrap(0), 65536)
        XCTAssertEqual(history.unwrap(65534), 65534, "behind the newest: the earlier cycle")
        let found = try XCTUnwrap(history.lookup(65537))
        XCTAssertEqual(found.packet, SentPacket(sequenceNumber: 65537, sendTimeMicros: 4000, sizeBytes: 104, probeClusterID: 7))
        XCTAssertEqual(found.outcome, .unacknowledged)
        XCTAssertNil(history.lookup(1), "the 16-bit 1 of the first cycle was never sent")
        XCTAssertNil(history.lookup(65539), "not sent yet")
        XCTAssertEqual(history.bytesInFlight, 100 + 101 + 102 + 103 + 104 + 105)
    }

    /// Bytes in flight fall once per packet when feedback first reports it (received or lost), not again
    /// when a lost packet is later reported received, and not for packets we never sent.
    func testBytesInFlightThroughEveryOutcome() {
        var history = SentPacketHistory(capacity: 16)
        for number in UInt16(10)..<UInt16(14) {
            history.record(sequenceNumber: number, sendTimeMicros: 0, sizeBytes: 1000, probeClusterID: nil)
        }
        XCTAssertEqual(history.bytesInFlight, 4000)
        history.mark(10, .received)
        XCTAssertEqual(history.bytesInFlight, 3000)
        history.mark(11, .reportedLost)
        XCTAssertEqual(history.bytesInFlight, 2000)
        history.mark(11, .received)
        XCTAssertEqual(history.bytesInFlight, 2000, "a late arrival of a packet reported lost: already out of flight")
        XCTAssertEqual(history.lookup(11)?.outcome, .received)
        history.mark(10, .received)
        XCTAssertEqual(history.bytesInFlight, 2000, "reported twice")
        history.mark(99, .received)
        XCTAssertEqual(history.bytesInFlight, 2000, "never sent: nothing changes")
        history.mark(12, .unacknowledged)
        XCTAssertEqual(history.bytesInFlight, 2000, "back to unacknowledged changes nothing")
    }

    /// After `capacity` newer packets a slot is reused: the old packet is gone, and if it was never
    /// acknowledged its bytes leave the count with it.
    func testReplacementAfterCapacityPackets() {
        var history = SentPacketHistory(capacity: 16)
        history.record(sequenceNumber: 0, sendTimeMicros: 0, sizeBytes: 500, probeClusterID: nil)
        history.record(sequenceNumber: 1, sendTimeMicros: 0, sizeBytes: 700, probeClusterID: nil)
        history.mark(1, .received)
        for number in UInt16(2)..<UInt16(16) {
            history.record(sequenceNumber: number, sendTimeMicros: 0, sizeBytes: 10, probeClusterID: nil)
        }
        XCTAssertEqual(history.bytesInFlight, 500 + 14 * 10)
        XCTAssertNotNil(history.lookup(0))
        history.record(sequenceNumber: 16, sendTimeMicros: 0, sizeBytes: 20, probeClusterID: nil)
        XCTAssertNil(history.lookup(0), "slot 0 now holds packet 16")
        XCTAssertEqual(history.lookup(16)?.packet.sizeBytes, 20)
        XCTAssertEqual(history.bytesInFlight, 14 * 10 + 20, "packet 0's 500 bytes went with it")
        history.record(sequenceNumber: 17, sendTimeMicros: 0, sizeBytes: 30, probeClusterID: nil)
        XCTAssertEqual(history.bytesInFlight, 14 * 10 + 20 + 30, "packet 1 was acknowledged: nothing to take back")
        history.mark(0, .received)
        XCTAssertEqual(history.bytesInFlight, 14 * 10 + 20 + 30, "feedback about a replaced packet changes nothing")
    }
}
