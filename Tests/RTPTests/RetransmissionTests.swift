import RTP
import XCTest

/// Packet history for NACK and RTX packets (RFC 4588 §4).
final class RetransmissionTests: XCTestCase {
    /// A packet of `size` serialized bytes (12 of header).
    func packet(ssrc: UInt32 = 0xAAAA, sequence: UInt16, size: Int = 100) -> RTPPacket {
        RTPPacket(payloadType: 96, sequenceNumber: sequence, timestamp: 9, ssrc: ssrc,
                  payload: Array(repeating: UInt8(truncatingIfNeeded: sequence), count: size - 12)[...])
    }

    func testHistoryKeepsTheNewestPacketsAcrossTheWrap() throws {
        var history = RTPPacketHistory(ssrc: 0xAAAA, capacity: 2048)
        XCTAssertEqual(history.capacity, 2048)
        var sequence: UInt16 = 64_000
        for time in 0..<3000 {  // 10 packets a millisecond: all within the one-second window
            try history.insert(packet(sequence: sequence), sentMilliseconds: UInt64(time / 10))
            sequence &+= 1
        }
        // 3000 sent, 64000 … 65535 then 0 … 1463; the last 2048 are held: 64952 … 1463.
        XCTAssertEqual(history.count, 2048)
        XCTAssertEqual(history.bytes, 2048 * 100)
        XCTAssertEqual(history.newestSequenceNumber, 1463)
        XCTAssertEqual(history.oldestSequenceNumber, 64_952)
        XCTAssertNil(history.packet(sequenceNumber: 64_951))
        XCTAssertEqual(history.packet(sequenceNumber: 64_952), packet(sequence: 64_952))
        XCTAssertEqual(history.packet(sequenceNumber: 0), packet(sequence: 0))
        XCTAssertEqual(history.packet(sequenceNumber: 1463), packet(sequence: 1463))
        XCTAssertNil(history.packet(sequenceNumber: 64_500))
        XCTAssertEqual(history.sentMilliseconds(of: 1463), 299)
    }

    /// 100 packets a second for 3 s: only the last second (sent at 1990 … 2990 ms) is held; a NACK for an
    /// older packet finds nothing, one within the window gets the packet.
    func testPacketsOlderThanTheWindowAreEvicted() throws {
        var history = RTPPacketHistory(ssrc: 0xAAAA)
        XCTAssertEqual(history.windowMilliseconds, 1000)
        for step in 0..<300 { try history.insert(packet(sequence: UInt16(step), size: 1200), sentMilliseconds: UInt64(step) * 10) }
        XCTAssertEqual(history.count, 101)
        XCTAssertEqual(history.bytes, 101 * 1200)
        XCTAssertEqual(history.oldestSequenceNumber, 199)
        XCTAssertEqual(history.newestSequenceNumber, 299)
        XCTAssertNil(history.packet(sequenceNumber: 198))
        XCTAssertNil(history.retransmission(of: 198, nowMilliseconds: 2990, minimumIntervalMilliseconds: 20))
        XCTAssertNil(history.retransmission(of: 0, nowMilliseconds: 2990, minimumIntervalMilliseconds: 20))
        XCTAssertEqual(history.retransmission(of: 199, nowMilliseconds: 2990, minimumIntervalMilliseconds: 20), packet(sequence: 199, size: 1200))
        XCTAssertEqual(history.retransmission(of: 250, nowMilliseconds: 2990, minimumIntervalMilliseconds: 20), packet(sequence: 250, size: 1200))
        // 10 ms later 199 (sent at 1990 ms) is past the window too.
        XCTAssertNil(history.retransmission(of: 199, nowMilliseconds: 3000, minimumIntervalMilliseconds: 0))
        XCTAssertEqual(history.count, 100)
    }

    /// With nothing new sent (a still screen), a NACK still finds only packets within the window of now,
    /// and asking evicts the stale ones.
    func testNACKAfterAPauseFindsOnlyPacketsWithinTheWindow() throws {
        var history = RTPPacketHistory(ssrc: 0xAAAA)
        for step in 0..<10 { try history.insert(packet(sequence: UInt16(step)), sentMilliseconds: 5000 + UInt64(step) * 100) }
        XCTAssertEqual(history.count, 10)
        // At 6500 ms the packets sent before 5500 ms (0 … 4) are older than the window.
        XCTAssertNil(history.retransmission(of: 4, nowMilliseconds: 6500, minimumIntervalMilliseconds: 20))
        XCTAssertEqual(history.count, 5)
        XCTAssertEqual(history.oldestSequenceNumber, 5)
        XCTAssertNotNil(history.retransmission(of: 5, nowMilliseconds: 6500, minimumIntervalMilliseconds: 20))
        XCTAssertNil(history.retransmission(of: 9, nowMilliseconds: 8000, minimumIntervalMilliseconds: 20))
        XCTAssertEqual(history.count, 0)
        XCTAssertNil(history.oldestSequenceNumber)
    }

    /// The window is max(1 s, 3 × RTT): an RTT of 500 ms keeps 1.5 s, and it shrinks back when the RTT does.
    func testRoundTripTimeExtendsTheWindow() throws {
        var history = RTPPacketHistory(ssrc: 0xAAAA)
        history.roundTripMilliseconds = 200
        XCTAssertEqual(history.windowMilliseconds, 1000, "3 × 200 ms is under the 1 s floor")
        history.roundTripMilliseconds = 500
        XCTAssertEqual(history.windowMilliseconds, 1500)
        for step in 0..<300 { try history.insert(packet(sequence: UInt16(step)), sentMilliseconds: UInt64(step) * 10) }
        XCTAssertEqual(history.count, 151)
        XCTAssertEqual(history.oldestSequenceNumber, 149)
        XCTAssertNotNil(history.retransmission(of: 160, nowMilliseconds: 2990, minimumIntervalMilliseconds: 20),
                        "1.39 s old: beyond 1 s, within 3 RTT")
        history.roundTripMilliseconds = 100
        try history.insert(packet(sequence: 300), sentMilliseconds: 3000)
        XCTAssertEqual(history.count, 101)
        XCTAssertEqual(history.oldestSequenceNumber, 200)
        history.roundTripMilliseconds = .max
        XCTAssertEqual(history.windowMilliseconds, .max, "no overflow")
    }

    /// However long the window, the hard limits hold: packets (the ring) and bytes.
    func testHardLimitsHoldWhateverTheWindow() throws {
        XCTAssertEqual(RTPPacketHistory.defaultCapacity, 2048)
        XCTAssertEqual(RTPPacketHistory.defaultMaxBytes, 2 * 1024 * 1024)
        // 19.2 Mbit/s of 1200-byte packets (2 a millisecond) for 2 s, with an RTT of 2 s (a 6 s window).
        var fat = RTPPacketHistory(ssrc: 0xAAAA)
        fat.roundTripMilliseconds = 2000
        for step in 0..<4000 { try fat.insert(packet(sequence: UInt16(step), size: 1200), sentMilliseconds: UInt64(step / 2)) }
        XCTAssertEqual(fat.count, RTPPacketHistory.defaultMaxBytes / 1200)
        XCTAssertLessThanOrEqual(fat.bytes, RTPPacketHistory.defaultMaxBytes)
        XCTAssertEqual(fat.newestSequenceNumber, 3999)
        // Small packets, 5 a millisecond: the ring's 2048 packets, about 410 ms, hold first.
        var many = RTPPacketHistory(ssrc: 0xAAAA)
        for step in 0..<5000 { try many.insert(packet(sequence: UInt16(step), size: 100), sentMilliseconds: UInt64(step / 5)) }
        XCTAssertEqual(many.count, 2048)
        XCTAssertEqual(many.oldestSequenceNumber, 5000 - 2048)
    }

    func testHistoryIsBoundedByBytes() throws {
        var history = RTPPacketHistory(ssrc: 0xAAAA, capacity: 1024, maxBytes: 10_000)
        for sequence in UInt16(0)..<200 { try history.insert(packet(sequence: sequence, size: 1000), sentMilliseconds: 0) }
        XCTAssertEqual(history.count, 10)
        XCTAssertEqual(history.bytes, 10_000)
        XCTAssertEqual(history.oldestSequenceNumber, 190)
        XCTAssertNil(history.packet(sequenceNumber: 189))
        XCTAssertNotNil(history.packet(sequenceNumber: 190))
    }

    func testHistoryHandlesGapsAndJumps() throws {
        var history = RTPPacketHistory(ssrc: 0xAAAA, capacity: 16)
        try history.insert(packet(sequence: 10), sentMilliseconds: 0)
        try history.insert(packet(sequence: 12), sentMilliseconds: 0)  // 11 never stored
        XCTAssertNil(history.packet(sequenceNumber: 11))
        XCTAssertEqual(history.count, 2)
        try history.insert(packet(sequence: 30), sentMilliseconds: 0)  // pushes 10 and 12 out of a 16-slot ring
        XCTAssertEqual(history.count, 1)
        XCTAssertNil(history.packet(sequenceNumber: 12))
        try history.insert(packet(sequence: 5000), sentMilliseconds: 0)  // far jump: starts over
        XCTAssertEqual(history.count, 1)
        XCTAssertEqual(history.oldestSequenceNumber, 5000)
        // A packet of another SSRC is refused.
        assertThrowsRTPError(try history.insert(packet(ssrc: 0xBBBB, sequence: 5001), sentMilliseconds: 0),
                             .wrongSSRC(expected: 0xAAAA, found: 0xBBBB))
        XCTAssertEqual(history.count, 1)
    }

    func testRetransmissionIsThrottledPerPacket() throws {
        var history = RTPPacketHistory(ssrc: 0xAAAA)
        try history.insert(packet(sequence: 7), sentMilliseconds: 100)
        XCTAssertNotNil(history.retransmission(of: 7, nowMilliseconds: 150, minimumIntervalMilliseconds: 40))
        XCTAssertNil(history.retransmission(of: 7, nowMilliseconds: 170, minimumIntervalMilliseconds: 40))
        XCTAssertNotNil(history.retransmission(of: 7, nowMilliseconds: 190, minimumIntervalMilliseconds: 40))
        XCTAssertNil(history.retransmission(of: 8, nowMilliseconds: 190, minimumIntervalMilliseconds: 40))
    }

    /// An original with a one-byte extension, a CSRC and padding, wrapped by hand per RFC 4588 §4.
    func testRTXPacketLayout() throws {
        let original = hex("""
            b1 e0 12 34        # V=2 P=1 X=1 CC=1 | M=1 PT=96 | seq 0x1234
            00 00 75 30        # timestamp 30000
            00 00 aa aa        # SSRC
            00 00 00 cc        # CSRC
            be de 00 01 10 07 00 00   # one-byte extension: ID 1 = 07
            90 80 80 05 31     # VP8 descriptor + 1 byte
            00 02              # 2 bytes of padding
            """)
        var rtx = RTXPacketizer(ssrc: 0xBBBB, payloadType: 97, initialSequenceNumber: 65535)
        let wrapped = try rtx.wrap(original)
        XCTAssertEqual(wrapped, hex("""
            91 e1 ff ff        # P cleared | M=1 PT=97 | RTX seq 65535
            00 00 75 30        # same timestamp
            00 00 bb bb        # RTX SSRC
            00 00 00 cc        # same CSRC
            be de 00 01 10 07 00 00   # same extension
            12 34              # OSN
            90 80 80 05 31     # original payload, no padding
            """))
        XCTAssertEqual(rtx.nextSequenceNumber, 0)
        // The same packet as header + payload wraps to the same bytes.
        var headerAndPayload = RTXPacketizer(ssrc: 0xBBBB, payloadType: 97, initialSequenceNumber: 65535)
        XCTAssertEqual(try headerAndPayload.wrap(RTPPacket(parsing: original)).serialized(), wrapped)
        XCTAssertEqual(headerAndPayload.nextSequenceNumber, 0)
        let recovered = try RTXPacketizer.unwrap(RTPPacket(parsing: wrapped), originalSSRC: 0xAAAA, originalPayloadType: 96)
        var expected = try RTPPacket(parsing: original)
        expected.paddingCount = 0
        XCTAssertEqual(recovered, expected)
        assertThrowsRTPError(try RTXPacketizer.unwrap(RTPPacket(payloadType: 97, sequenceNumber: 1, timestamp: 1, ssrc: 1, payload: [1][...]),
                                                      originalSSRC: 0, originalPayloadType: 96))
        assertThrowsRTPError(try rtx.wrap([0x80, 0x60, 0x00]))
    }

    /// NACK → history → RTX → receiver: the end-to-end repair path in memory.
    func testNACKedPacketsComeBackThroughRTX() throws {
        var payloader = try VP8Payloader(ssrc: 0xAAAA, payloadType: 96, initialSequenceNumber: 65530, initialPictureID: 0)
        var history = RTPPacketHistory(ssrc: 0xAAAA)
        var generator = SplitMix64(seed: 11)
        let frame = [UInt8(0x50)] + randomBytes(9000, using: &generator)
        let sent = try payloader.packets(frame: frame[...], rtpTimestamp: 90_000)
        for packet in sent { try history.insert(packet, sentMilliseconds: 0) }
        // The receiver lost three packets (two across the wrap) and NACKs them.
        let lostIndexes = [2, 5, 6]
        var depayloader = VP8Depayloader()
        for (index, packet) in sent.enumerated() where !lostIndexes.contains(index) {
            XCTAssertEqual(try depayloader.insert(RTPPacket(parsing: packet.serialized()), arrivalMilliseconds: 0), [])
        }
        let missing = depayloader.missingSequenceNumbers()
        XCTAssertEqual(missing, [65532, 65535, 0])
        let nackBytes = try RTCPPacket.serializeCompound([.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 0xAAAA, sequenceNumbers: missing))])
        guard case .nack(let nack) = try RTCPPacket.parseCompound(nackBytes).first else { return XCTFail("no NACK") }
        var rtx = RTXPacketizer(ssrc: 0xBBBB, payloadType: 97, initialSequenceNumber: 100)
        var frames: [VP8Depayloader.Frame] = []
        for sequence in nack.sequenceNumbers {
            let original = try XCTUnwrap(history.retransmission(of: sequence, nowMilliseconds: 10, minimumIntervalMilliseconds: 20))
            let repaired = try RTXPacketizer.unwrap(RTPPacket(parsing: rtx.wrap(original).serialized()), originalSSRC: 0xAAAA, originalPayloadType: 96)
            frames += try depayloader.insert(repaired, arrivalMilliseconds: 10)
        }
        XCTAssertEqual(frames.map(\.data), [frame])
        XCTAssertTrue(frames[0].isKeyframe)
    }
}
