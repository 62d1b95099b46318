import RTP
import XCTest

/// The transport-wide sequence number header extension (draft-holmer-rmcat-transport-wide-cc-extensions-01 §2).
///
/// Fixture origin: constructed by hand from the draft's §2 diagram inside the RFC 8285 §4.2 one-byte form,
/// with the ID Chromium 156 offers for the extension (3) and an abs-send-time element (ID 2) beside it.
final class TransportWideSequenceNumberTests: XCTestCase {
    static let packet = hex("""
        90 60 12 34        # V=2 X=1 | PT=96 | sequence number 0x1234
        00 01 e2 40        # timestamp
        3a 5e 91 c7        # SSRC
        be de 00 02        # one-byte form, 2 words
        22 12 34 56        # ID 2, L=2: abs-send-time 0x123456
        31 ab cd 00        # ID 3, L=1: transport-wide sequence number 0xabcd | padding
        01 02 03           # payload
        """)

    func testElementBytesAndReading() throws {
        let element = TransportWideSequenceNumber.element(id: 3, sequenceNumber: 0xABCD)
        XCTAssertEqual(element.id, 3)
        XCTAssertEqual(Array(element.data), [0xAB, 0xCD])
        let block = try RTPHeaderExtension(elements: [.init(id: 2, data: [0x12, 0x34, 0x56]), element])
        let packet = RTPPacket(payloadType: 96, sequenceNumber: 0x1234, timestamp: 0x1_E240, ssrc: 0x3A5E_91C7,
                               headerExtension: block, payload: [1, 2, 3])
        XCTAssertEqual(try packet.serialized(), Self.packet)

        let parsed = try RTPPacket(parsing: Self.packet)
        XCTAssertEqual(try TransportWideSequenceNumber.read(from: parsed, id: 3), 0xABCD)
        XCTAssertNil(try TransportWideSequenceNumber.read(from: parsed, id: 5))
        XCTAssertNil(try TransportWideSequenceNumber.read(
            from: RTPPacket(payloadType: 96, sequenceNumber: 1, timestamp: 1, ssrc: 1, payload: []), id: 3))
        // ID 2 holds 3 bytes: not a transport-wide sequence number.
        assertThrowsRTPError(try TransportWideSequenceNumber.read(from: parsed, id: 2))
    }

    func testStampingInPlace() throws {
        var bytes = Self.packet
        try TransportWideSequenceNumber.stamp(0x0102, id: 3, inSerializedPacket: &bytes)
        var expected = Self.packet
        expected[21] = 0x01
        expected[22] = 0x02
        XCTAssertEqual(bytes, expected, "only the two sequence bytes change")
        // Two-byte form (RFC 8285 §4.3) and a CSRC before it.
        let block = try RTPHeaderExtension(elements: [.init(id: 200, data: []), TransportWideSequenceNumber.element(id: 3, sequenceNumber: 0)])
        var twoByte = try RTPPacket(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, csrcs: [4], headerExtension: block,
                                    payload: [9]).serialized()
        try TransportWideSequenceNumber.stamp(65535, id: 3, inSerializedPacket: &twoByte)
        XCTAssertEqual(try TransportWideSequenceNumber.read(from: RTPPacket(parsing: twoByte), id: 3), 65535)

        var noExtension = try RTPPacket(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, payload: [9]).serialized()
        assertThrowsRTPError(try TransportWideSequenceNumber.stamp(1, id: 3, inSerializedPacket: &noExtension))
        var wrongID = Self.packet
        assertThrowsRTPError(try TransportWideSequenceNumber.stamp(1, id: 4, inSerializedPacket: &wrongID))
        XCTAssertEqual(wrongID, Self.packet)
        for length in 0..<22 {
            var cut = Array(Self.packet[0..<length])
            assertThrowsRTPError(try TransportWideSequenceNumber.stamp(1, id: 3, inSerializedPacket: &cut), nil, "cut at \(length)")
        }
    }

    func testSequencerWraps() {
        var sequencer = TransportWideSequencer(first: 65534)
        XCTAssertEqual([sequencer.next(), sequencer.next(), sequencer.next()], [65534, 65535, 0])
        XCTAssertEqual(sequencer.nextSequenceNumber, 1)
    }
}
