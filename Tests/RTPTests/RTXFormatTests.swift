import RTP
import XCTest

/// RTP retransmission payload format (RFC 4588 §4) beyond the two hand-made fixtures of ``RetransmissionTests``
/// and ``RTXPaddingTests``: both wrap paths against each other on random originals (CSRCs, one- and two-byte
/// extensions, padding, marker), recovery of the original on the receiver's side, the RTX stream's own
/// sequence numbers across their wrap, appending into a buffer that already holds bytes, and what a receiver
/// must not take for a retransmission (a padding-only probe has no OSN).
///
/// RFC 4588 §4's layout: the RTP header of the RTX stream (its SSRC, PT and sequence number; the original's
/// timestamp, marker, CSRCs and extension), then the 2-byte original sequence number (OSN), then the original
/// payload.
final class RTXFormatTests: XCTestCase {
    /// A random original: 0…15 CSRCs, no extension or a one- or two-byte one, 0…300 payload bytes, optional
    /// padding, either marker.
    private func randomOriginal(using generator: inout SplitMix64) throws -> RTPPacket {
        let csrcs = (0..<Int.random(in: 0...15, using: &generator)).map { _ in UInt32.random(in: 0...UInt32.max, using: &generator) }
        var headerExtension: RTPHeaderExtension?
        switch Int.random(in: 0...2, using: &generator) {
        case 1:
            headerExtension = try RTPHeaderExtension(elements: [
                TransportWideSequenceNumber.element(id: 3, sequenceNumber: UInt16.random(in: 0...UInt16.max, using: &generator)),
            ])
        case 2:
            headerExtension = try RTPHeaderExtension(elements: [
                .init(id: 200, data: randomBytes(Int.random(in: 0...40, using: &generator), using: &generator)[...]),
            ])
        default:
            break
        }
        return RTPPacket(
            marker: Bool.random(using: &generator), payloadType: 96, sequenceNumber: UInt16.random(in: 0...UInt16.max, using: &generator),
            timestamp: UInt32.random(in: 0...UInt32.max, using: &generator), ssrc: 0xAAAA_0001, csrcs: csrcs,
            headerExtension: headerExtension, payload: randomBytes(Int.random(in: 0...300, using: &generator), using: &generator)[...],
            paddingCount: Bool.random(using: &generator) ? UInt8.random(in: 1...255, using: &generator) : 0)
    }

    /// The bytes path and the header + payload path give the same RTX packet for any original; its header is the
    /// original's but for PT, sequence number, SSRC and P; its payload is OSN + the original payload; and the
    /// receiver recovers the original exactly, padding aside.
    func testBothPathsAgreeAndTheOriginalComesBack() throws {
        var generator = SplitMix64(seed: 4588)
        var bytesPath = RTXPacketizer(ssrc: 0xBBBB_0002, payloadType: 97, initialSequenceNumber: 65_500)
        var packetPath = bytesPath
        for round in 0..<400 {
            let original = try randomOriginal(using: &generator)
            let originalBytes = try original.serialized()
            let wrapped = try bytesPath.wrap(originalBytes)
            let structured = packetPath.wrap(original)
            XCTAssertEqual(try structured.serialized(), wrapped, "round \(round)")
            XCTAssertEqual(wrapped.count, originalBytes.count - Int(original.paddingCount) + 2, "round \(round)")

            let rtx = try RTPPacket(parsing: wrapped)
            XCTAssertEqual(rtx.ssrc, 0xBBBB_0002)
            XCTAssertEqual(rtx.payloadType, 97)
            XCTAssertEqual(rtx.sequenceNumber, UInt16(truncatingIfNeeded: 65_500 + round))
            XCTAssertEqual(rtx.paddingCount, 0)
            XCTAssertEqual(rtx.marker, original.marker)
            XCTAssertEqual(rtx.timestamp, original.timestamp)
            XCTAssertEqual(rtx.csrcs, original.csrcs)
            XCTAssertEqual(rtx.headerExtension, original.headerExtension)
            XCTAssertEqual(Array(rtx.payload.prefix(2)), [UInt8(original.sequenceNumber >> 8), UInt8(original.sequenceNumber & 0xFF)])
            XCTAssertEqual(Array(rtx.payload.dropFirst(2)), Array(original.payload))

            var expected = original
            expected.paddingCount = 0
            XCTAssertEqual(try RTXPacketizer.unwrap(rtx, originalSSRC: 0xAAAA_0001, originalPayloadType: 96), expected, "round \(round)")
        }
        XCTAssertEqual(bytesPath.nextSequenceNumber, UInt16(truncatingIfNeeded: 65_500 + 400))
        XCTAssertEqual(packetPath.nextSequenceNumber, bytesPath.nextSequenceNumber)
    }

    /// The RTX stream numbers its packets itself, one by one across the wrap, whatever the originals' numbers;
    /// padding-only probes take numbers from the same sequence.
    func testRTXSequenceNumbersAreTheStreamsOwn() throws {
        var rtx = RTXPacketizer(ssrc: 2, payloadType: 97, initialSequenceNumber: 65_534)
        let originals: [UInt16] = [9, 9, 40_000, 3]
        var numbers: [UInt16] = []
        for sequence in originals {
            let original = RTPPacket(payloadType: 96, sequenceNumber: sequence, timestamp: 0, ssrc: 1, payload: [1][...])
            numbers.append(rtx.wrap(original).sequenceNumber)
        }
        numbers.append(rtx.padding(bytes: 100, timestamp: 0).sequenceNumber)
        XCTAssertEqual(numbers, [65_534, 65_535, 0, 1, 2])
        XCTAssertEqual(rtx.nextSequenceNumber, 3)
    }

    /// Appending into a buffer that already holds a packet leaves those bytes alone and appends exactly what
    /// the standalone call returns; a refused original appends nothing.
    func testAppendingAfterExistingBytes() throws {
        let original = hex("""
            91 e0 00 2a        # V=2 X=1 CC=1 | M=1 PT=96 | seq 42
            00 00 00 64        # timestamp 100
            00 00 00 01        # SSRC
            00 00 00 0c        # CSRC
            be de 00 01 31 00 07 00   # one-byte extension: ID 3 = 0x0007
            de ad              # payload
            """)
        var alone = RTXPacketizer(ssrc: 0xB, payloadType: 97, initialSequenceNumber: 7)
        var appending = alone
        let expected = try alone.wrap(original)
        XCTAssertEqual(expected, hex("""
            91 e1 00 07        # M=1 PT=97 | RTX seq 7
            00 00 00 64
            00 00 00 0b        # RTX SSRC
            00 00 00 0c
            be de 00 01 31 00 07 00
            00 2a              # OSN 42
            de ad
            """))
        var buffer: [UInt8] = [0xFF, 0xEE, 0xDD]
        try appending.wrap(original, into: &buffer)
        XCTAssertEqual(buffer, [0xFF, 0xEE, 0xDD] + expected)
        let before = buffer
        assertThrowsRTPError(try appending.wrap(Array(original.prefix(20)), into: &buffer))
        XCTAssertEqual(buffer, before)
        XCTAssertEqual(appending.nextSequenceNumber, 8)
    }

    /// A padding-only probe (no payload, so no OSN) is not a retransmission: unwrapping it is refused, as is a
    /// payload of one byte. Two bytes are an OSN and an empty original payload.
    func testPaddingProbesAreNotRetransmissions() throws {
        var rtx = RTXPacketizer(ssrc: 2, payloadType: 97, initialSequenceNumber: 0)
        let probe = try RTPPacket(parsing: rtx.padding(bytes: 200, timestamp: 9).serialized())
        XCTAssertEqual(probe.payload.count, 0)
        XCTAssertEqual(probe.paddingCount, 200)
        assertThrowsRTPError(try RTXPacketizer.unwrap(probe, originalSSRC: 1, originalPayloadType: 96), .truncated(.rtx, needed: 2, available: 0))
        let oneByte = RTPPacket(payloadType: 97, sequenceNumber: 1, timestamp: 0, ssrc: 2, payload: [0x12][...])
        assertThrowsRTPError(try RTXPacketizer.unwrap(oneByte, originalSSRC: 1, originalPayloadType: 96), .truncated(.rtx, needed: 2, available: 1))
        let empty = try RTXPacketizer.unwrap(RTPPacket(payloadType: 97, sequenceNumber: 1, timestamp: 0, ssrc: 2, payload: [0xFF, 0xFE][...]),
                                             originalSSRC: 1, originalPayloadType: 96)
        XCTAssertEqual(empty.sequenceNumber, 0xFFFE)
        XCTAssertEqual(empty.payload.count, 0)
    }

    /// Payload types are 7 bits: the RTX type is masked on creation, the restored original's on unwrapping,
    /// and the marker bit beside PT is never disturbed.
    func testPayloadTypesAreSevenBits() throws {
        var rtx = RTXPacketizer(ssrc: 2, payloadType: 0xFF, initialSequenceNumber: 0)
        XCTAssertEqual(rtx.payloadType, 127)
        let original = try RTPPacket(marker: false, payloadType: 96, sequenceNumber: 5, timestamp: 0, ssrc: 1, payload: [1][...]).serialized()
        let wrapped = try rtx.wrap(original)
        XCTAssertEqual(wrapped[1], 0x7F, "marker 0, PT 127")
        let marked = try RTPPacket(marker: true, payloadType: 0, sequenceNumber: 5, timestamp: 0, ssrc: 1, payload: [1][...]).serialized()
        XCTAssertEqual(try rtx.wrap(marked)[1], 0xFF, "marker 1, PT 127")
        let back = try RTXPacketizer.unwrap(RTPPacket(parsing: wrapped), originalSSRC: 1, originalPayloadType: 0xE0)
        XCTAssertEqual(back.payloadType, 0x60)
        XCTAssertFalse(back.marker)
        XCTAssertEqual(try back.serialized(), original)
    }
}
