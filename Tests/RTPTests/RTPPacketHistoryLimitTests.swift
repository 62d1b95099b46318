import RTP
import XCTest

/// ``RTPPacketHistory`` at and past each of its named limits: the ring ``RTPPacketHistory/capacity`` (rounded to
/// a power of two in 16…32768), ``RTPPacketHistory/maxBytes``, the time window (max(minimum, 3 × RTT)) and the
/// per-packet resend interval — each on both sides of the edge, and across the 16-bit sequence wrap (RFC 3550
/// §5.1), where a ring slot is `sequence mod capacity`.
///
/// Every test also checks the bookkeeping (``RTPPacketHistory/count`` and ``RTPPacketHistory/bytes``) against
/// a recount of what ``RTPPacketHistory/packet(sequenceNumber:)`` still finds, so a slot overwritten without
/// being counted out shows up as a mismatch rather than as a quietly growing history.
final class RTPPacketHistoryLimitTests: XCTestCase {
    private let ssrc: UInt32 = 0x5EED_0001

    /// A packet of exactly `size` serialized bytes (12 of header), its payload tagged with the sequence number.
    private func packet(_ sequence: UInt16, size: Int = 100) -> RTPPacket {
        RTPPacket(payloadType: 96, sequenceNumber: sequence, timestamp: 3000, ssrc: ssrc,
                  payload: Array(repeating: UInt8(truncatingIfNeeded: sequence), count: size - 12)[...])
    }

    /// `count` and `bytes` agree with the packets the history actually returns for `candidates`.
    private func assertBookkeeping(
        _ history: RTPPacketHistory, candidates: some Sequence<UInt16>, file: StaticString = #filePath, line: UInt = #line
    ) {
        var found = 0
        var foundBytes = 0
        for sequence in candidates {
            if let held = history.packet(sequenceNumber: sequence) {
                XCTAssertEqual(held.sequenceNumber, sequence, file: file, line: line)
                found += 1
                foundBytes += held.serializedSize
            }
        }
        XCTAssertEqual(history.count, found, "count against the packets held", file: file, line: line)
        XCTAssertEqual(history.bytes, foundBytes, "bytes against the packets held", file: file, line: line)
    }

    // MARK: - Capacity

    /// The capacity is rounded up to a power of two and clamped to 16…32768, the powers of two that divide
    /// 65536 (so `sequence mod capacity` survives the wrap).
    func testCapacityIsAPowerOfTwoBetween16And32768() {
        let cases: [(asked: Int, kept: Int)] = [
            (Int.min, 16), (-1, 16), (0, 16), (1, 16), (15, 16), (16, 16), (17, 32), (1000, 1024), (2048, 2048),
            (2049, 4096), (16_384, 16_384), (16_385, 32_768), (32_768, 32_768), (32_769, 32_768), (65_536, 32_768),
            (Int.max, 32_768),
        ]
        for (asked, kept) in cases {
            XCTAssertEqual(RTPPacketHistory(ssrc: ssrc, capacity: asked).capacity, kept, "capacity \(asked)")
        }
        XCTAssertEqual(RTPPacketHistory(ssrc: ssrc).capacity, RTPPacketHistory.defaultCapacity)
    }

    /// 16 consecutive packets fill a 16-slot ring; the 17th evicts exactly the oldest.
    func testTheRingHoldsExactlyItsCapacity() throws {
        var history = RTPPacketHistory(ssrc: ssrc, capacity: 16)
        for sequence in UInt16(65_528)...65_535 { try history.insert(packet(sequence), sentMilliseconds: 0) }
        for sequence in UInt16(0)..<8 { try history.insert(packet(sequence), sentMilliseconds: 0) }
        XCTAssertEqual(history.count, 16, "65528 … 65535, 0 … 7: exactly the capacity")
        XCTAssertEqual(history.oldestSequenceNumber, 65_528)
        XCTAssertEqual(history.newestSequenceNumber, 7)
        XCTAssertNotNil(history.packet(sequenceNumber: 65_528))
        try history.insert(packet(8), sentMilliseconds: 0)
        XCTAssertEqual(history.count, 16)
        XCTAssertEqual(history.oldestSequenceNumber, 65_529)
        XCTAssertNil(history.packet(sequenceNumber: 65_528), "its slot (8 mod 16) now holds 8")
        XCTAssertEqual(history.packet(sequenceNumber: 8), packet(8))
        assertBookkeeping(history, candidates: UInt16.min...UInt16.max)
    }

    /// A jump of capacity − 1 keeps the newest packet and what is still within one ring of it; a jump of a
    /// whole ring (or more) starts over.
    func testJumpsOfOneRingLessAndOneRing() throws {
        var history = RTPPacketHistory(ssrc: ssrc, capacity: 16)
        for sequence in UInt16(100)...103 { try history.insert(packet(sequence), sentMilliseconds: 0) }
        try history.insert(packet(118), sentMilliseconds: 0)  // 15 ahead of 103
        XCTAssertEqual(history.count, 2, "103 and 118 are 15 apart: both fit; 100 … 102 do not")
        XCTAssertNil(history.packet(sequenceNumber: 102))
        XCTAssertNotNil(history.packet(sequenceNumber: 103))
        XCTAssertNotNil(history.packet(sequenceNumber: 118))
        assertBookkeeping(history, candidates: 90...140)

        try history.insert(packet(134), sentMilliseconds: 0)  // 16 ahead of 118: a whole ring
        XCTAssertEqual(history.count, 1)
        XCTAssertEqual(history.oldestSequenceNumber, 134)
        XCTAssertNil(history.packet(sequenceNumber: 118), "same slot as 134, and forgotten")
        assertBookkeeping(history, candidates: 90...140)
    }

    /// The largest ring, 32768 slots, is half the sequence space: a number one ring ahead of the oldest is
    /// −32768 away as a signed 16-bit distance. Filling it and going on must still evict the oldest packet
    /// before its slot is reused (this once overwrote the slot uncounted: `count` and `bytes` grew past
    /// the limit and an eviction walk over a history of phantom packets never ended).
    func testTheLargestRingEvictsBeforeReusingASlot() throws {
        var history = RTPPacketHistory(ssrc: ssrc, capacity: 32_768, maxBytes: .max)
        XCTAssertEqual(history.capacity, 32_768)
        for sequence in UInt16(0)..<32_768 { try history.insert(packet(sequence, size: 20), sentMilliseconds: 0) }
        XCTAssertEqual(history.count, 32_768)
        try history.insert(packet(32_768, size: 20), sentMilliseconds: 0)
        XCTAssertEqual(history.count, 32_768, "one in, one out")
        XCTAssertEqual(history.bytes, 32_768 * 20)
        XCTAssertEqual(history.oldestSequenceNumber, 1)
        XCTAssertNil(history.packet(sequenceNumber: 0))
        guard history.count == 32_768 else { return }  // the rest would only repeat the failure
        // Round the whole circle twice more, across the wrap, with the clock moving (time eviction walks
        // the ring too, but nothing is older than the window yet).
        var sequence: UInt16 = 32_769
        for step in 0..<(2 * 65_536) {
            try history.insert(packet(sequence, size: 20), sentMilliseconds: UInt64(step / 200))
            sequence &+= 1
        }
        XCTAssertEqual(history.count, 32_768)
        XCTAssertEqual(history.bytes, 32_768 * 20)
        XCTAssertEqual(history.newestSequenceNumber, 32_768)
        XCTAssertEqual(history.oldestSequenceNumber, 1)
        assertBookkeeping(history, candidates: UInt16.min...UInt16.max)
        // A long silence then evicts everything by time, and ends.
        XCTAssertNil(history.retransmission(of: 32_768, nowMilliseconds: 1_000_000, minimumIntervalMilliseconds: 0))
        XCTAssertEqual(history.count, 0)
        XCTAssertEqual(history.bytes, 0)
    }

    /// Every ring size, filled past its capacity across the wrap: never more than `capacity` packets, and the
    /// bookkeeping matches what is found.
    func testEveryRingSizeStaysWithinItsCapacityAcrossTheWrap() throws {
        for capacity in [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16_384] {
            var history = RTPPacketHistory(ssrc: ssrc, capacity: capacity, maxBytes: .max)
            var sequence = UInt16(truncatingIfNeeded: 65_536 - capacity / 2)
            for _ in 0..<(capacity + capacity / 2 + 3) {
                try history.insert(packet(sequence, size: 16), sentMilliseconds: 0)
                sequence &+= 1
            }
            XCTAssertEqual(history.count, capacity, "capacity \(capacity)")
            XCTAssertEqual(history.newestSequenceNumber, sequence &- 1)
            XCTAssertEqual(history.oldestSequenceNumber, sequence &- UInt16(capacity), "capacity \(capacity)")
            assertBookkeeping(history, candidates: UInt16.min...UInt16.max)
        }
    }

    // MARK: - Bytes

    /// Exactly `maxBytes` is allowed; one byte more evicts the oldest. The newest packet is kept even when it
    /// alone is larger than the limit (a limit of 0 is taken as 1).
    func testByteLimitAtAndPastTheLimit() throws {
        var history = RTPPacketHistory(ssrc: ssrc, capacity: 64, maxBytes: 1000)
        for sequence in UInt16(0)..<10 { try history.insert(packet(sequence), sentMilliseconds: 0) }
        XCTAssertEqual(history.count, 10)
        XCTAssertEqual(history.bytes, 1000, "exactly at the limit: nothing evicted")
        try history.insert(packet(10, size: 13), sentMilliseconds: 0)
        XCTAssertEqual(history.count, 10, "13 bytes over: the oldest 100-byte packet goes")
        XCTAssertEqual(history.bytes, 913)
        XCTAssertEqual(history.oldestSequenceNumber, 1)
        assertBookkeeping(history, candidates: 0...20)

        var tiny = RTPPacketHistory(ssrc: ssrc, maxBytes: 0)
        XCTAssertEqual(tiny.maxBytes, 1)
        for sequence in UInt16(0)..<5 {
            try tiny.insert(packet(sequence, size: 1200), sentMilliseconds: 0)
            XCTAssertEqual(tiny.count, 1)
            XCTAssertEqual(tiny.bytes, 1200)
            XCTAssertEqual(tiny.packet(sequenceNumber: sequence), packet(sequence, size: 1200), "the newest is always kept")
        }
    }

    /// Storing a number already held replaces it and accounts for the new size; an older number not held is
    /// not stored (it would sit behind the ring's order); a replacement that exceeds the byte limit evicts
    /// from the oldest end.
    func testReplacementsAndOlderNumbers() throws {
        var history = RTPPacketHistory(ssrc: ssrc, capacity: 16, maxBytes: 500)
        for sequence in UInt16(10)..<14 { try history.insert(packet(sequence), sentMilliseconds: 0) }
        try history.insert(packet(12, size: 150), sentMilliseconds: 0)
        XCTAssertEqual(history.count, 4)
        XCTAssertEqual(history.bytes, 450)
        XCTAssertEqual(history.packet(sequenceNumber: 12)?.serializedSize, 150)
        try history.insert(packet(9), sentMilliseconds: 0)
        XCTAssertNil(history.packet(sequenceNumber: 9), "older than the oldest held: not stored")
        XCTAssertEqual(history.count, 4)
        try history.insert(packet(13, size: 200), sentMilliseconds: 0)
        XCTAssertEqual(history.bytes, 450, "550 > 500: the oldest (10) went")
        // An older number sharing a slot with a held packet (65533 = 13 − 16 mod 2¹⁶: slot 13) does not displace it.
        try history.insert(packet(UInt16(65_533)), sentMilliseconds: 0)
        XCTAssertNil(history.packet(sequenceNumber: 65_533))
        XCTAssertEqual(history.packet(sequenceNumber: 13)?.serializedSize, 200, "13 is still held")
        XCTAssertNil(history.packet(sequenceNumber: 10))
        XCTAssertEqual(history.oldestSequenceNumber, 11)
        assertBookkeeping(history, candidates: 0...30)
    }

    // MARK: - Time window

    /// A packet sent exactly one window before now is kept; one millisecond more and it is evicted.
    func testWindowEdgeToTheMillisecond() throws {
        var history = RTPPacketHistory(ssrc: ssrc)
        try history.insert(packet(1), sentMilliseconds: 5000)
        try history.insert(packet(2), sentMilliseconds: 5500)
        XCTAssertNotNil(history.retransmission(of: 1, nowMilliseconds: 6000, minimumIntervalMilliseconds: 0),
                        "sent exactly 1000 ms ago")
        XCTAssertNil(history.retransmission(of: 1, nowMilliseconds: 6001, minimumIntervalMilliseconds: 0))
        XCTAssertEqual(history.count, 1)
        XCTAssertEqual(history.oldestSequenceNumber, 2)
        XCTAssertNotNil(history.retransmission(of: 2, nowMilliseconds: 6500, minimumIntervalMilliseconds: 0))
        XCTAssertNil(history.retransmission(of: 2, nowMilliseconds: 6501, minimumIntervalMilliseconds: 0))
        XCTAssertEqual(history.count, 0)
        XCTAssertNil(history.oldestSequenceNumber)
        // Empty again, it takes a new stream from any number.
        try history.insert(packet(40_000), sentMilliseconds: 7000)
        XCTAssertEqual(history.oldestSequenceNumber, 40_000)
        XCTAssertEqual(history.count, 1)
    }

    /// A minimum window of 0 keeps only what was sent this millisecond; an RTT raises the window to
    /// exactly 3 × RTT above the minimum, never below it.
    func testMinimumWindowAndRoundTripFactorEdges() throws {
        var history = RTPPacketHistory(ssrc: ssrc, minimumWindowMilliseconds: 0)
        XCTAssertEqual(history.windowMilliseconds, 0)
        try history.insert(packet(1), sentMilliseconds: 10)
        try history.insert(packet(2), sentMilliseconds: 10)
        XCTAssertEqual(history.count, 2, "same millisecond: both kept")
        try history.insert(packet(3), sentMilliseconds: 11)
        XCTAssertEqual(history.count, 1)
        XCTAssertEqual(history.oldestSequenceNumber, 3)

        var rtt = RTPPacketHistory(ssrc: ssrc, minimumWindowMilliseconds: 300)
        rtt.roundTripMilliseconds = 99
        XCTAssertEqual(rtt.windowMilliseconds, 300, "3 × 99 = 297 is under the minimum")
        rtt.roundTripMilliseconds = 100
        XCTAssertEqual(rtt.windowMilliseconds, 300)
        rtt.roundTripMilliseconds = 101
        XCTAssertEqual(rtt.windowMilliseconds, 303)
        rtt.roundTripMilliseconds = UInt64.max / 3
        XCTAssertEqual(rtt.windowMilliseconds, UInt64.max / 3 * 3, "the largest RTT that does not overflow")
        rtt.roundTripMilliseconds = UInt64.max / 3 + 1
        XCTAssertEqual(rtt.windowMilliseconds, .max, "overflow saturates")
        rtt.roundTripMilliseconds = nil
        XCTAssertEqual(rtt.windowMilliseconds, 300)
        try rtt.insert(packet(1), sentMilliseconds: 0)
        XCTAssertNotNil(rtt.packet(sequenceNumber: 1))
        XCTAssertNil(rtt.retransmission(of: 1, nowMilliseconds: .max, minimumIntervalMilliseconds: 0),
                     "at the end of time the packet is long gone")
        XCTAssertEqual(rtt.count, 0)
    }

    // MARK: - Resend interval

    /// A second resend is refused until exactly `minimumIntervalMilliseconds` after the first; each resend
    /// restarts the interval; an interval of 0 never throttles.
    func testResendIntervalToTheMillisecond() throws {
        var history = RTPPacketHistory(ssrc: ssrc)
        try history.insert(packet(7), sentMilliseconds: 0)
        XCTAssertNotNil(history.retransmission(of: 7, nowMilliseconds: 100, minimumIntervalMilliseconds: 50))
        XCTAssertNil(history.retransmission(of: 7, nowMilliseconds: 149, minimumIntervalMilliseconds: 50))
        XCTAssertNotNil(history.retransmission(of: 7, nowMilliseconds: 150, minimumIntervalMilliseconds: 50))
        XCTAssertNil(history.retransmission(of: 7, nowMilliseconds: 199, minimumIntervalMilliseconds: 50), "restarted at 150")
        for now: UInt64 in [200, 200, 200] {
            XCTAssertNotNil(history.retransmission(of: 7, nowMilliseconds: now, minimumIntervalMilliseconds: 0))
        }
        XCTAssertEqual(history.sentMilliseconds(of: 7), 0, "resends do not change when it was first sent")
        XCTAssertNil(history.sentMilliseconds(of: 8))
    }

    /// An interval of "never again" (the largest value) answers the first NACK and refuses every later one —
    /// without overflowing `last + interval`, which used to trap.
    func testResendIntervalOfNeverAgainDoesNotOverflow() throws {
        var history = RTPPacketHistory(ssrc: ssrc)
        try history.insert(packet(7), sentMilliseconds: 10)
        XCTAssertNotNil(history.retransmission(of: 7, nowMilliseconds: 20, minimumIntervalMilliseconds: .max))
        XCTAssertNil(history.retransmission(of: 7, nowMilliseconds: 21, minimumIntervalMilliseconds: .max))
        XCTAssertNil(history.retransmission(of: 7, nowMilliseconds: 900, minimumIntervalMilliseconds: .max - 100))
        XCTAssertNotNil(history.retransmission(of: 7, nowMilliseconds: 900, minimumIntervalMilliseconds: 880))
    }

    // MARK: - Clearing and SSRC

    func testRemoveAllForgetsEverythingAndRefusedPacketsChangeNothing() throws {
        var history = RTPPacketHistory(ssrc: ssrc, capacity: 16)
        for sequence in UInt16(0)..<12 { try history.insert(packet(sequence), sentMilliseconds: 0) }
        history.removeAll()
        XCTAssertEqual(history.count, 0)
        XCTAssertEqual(history.bytes, 0)
        XCTAssertNil(history.oldestSequenceNumber)
        XCTAssertNil(history.newestSequenceNumber)
        XCTAssertNil(history.packet(sequenceNumber: 5))
        XCTAssertNil(history.retransmission(of: 5, nowMilliseconds: 1, minimumIntervalMilliseconds: 0))
        try history.insert(packet(3), sentMilliseconds: 0)
        XCTAssertEqual(history.oldestSequenceNumber, 3, "an older number than before is a fresh start")
        XCTAssertEqual(history.count, 1)

        let foreign = RTPPacket(payloadType: 96, sequenceNumber: 4, timestamp: 0, ssrc: ssrc &+ 1, payload: [1][...])
        assertThrowsRTPError(try history.insert(foreign, sentMilliseconds: 0), .wrongSSRC(expected: ssrc, found: ssrc &+ 1))
        XCTAssertEqual(history.count, 1)
        XCTAssertEqual(history.bytes, 100)
        XCTAssertEqual(history.newestSequenceNumber, 3)
    }
}
