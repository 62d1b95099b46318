import RTP
import XCTest

/// The playout-delay header extension (libwebrtc `rtp-hdrext/playout-delay`: 12-bit MIN and MAX in 10 ms
/// units) and ``RTPHeaderExtension/appendingOneByte(_:to:)``, which adds it beside the TWCC number.
///
/// Fixture origin: constructed by hand from the extension's diagram inside the RFC 8285 §4.2 one-byte form,
/// with the IDs Chromium 156 offers (playout delay 5, transport-wide sequence number 4).
final class PlayoutDelayTests: XCTestCase {
    static let packet = hex("""
        90 60 12 34        # V=2 X=1 | PT=96 | sequence number 0x1234
        00 01 e2 40        # timestamp
        3a 5e 91 c7        # SSRC
        be de 00 02        # one-byte form, 2 words
        52 00 00 00        # ID 5, L=2: MIN 0, MAX 0
        41 ab 00 00        # ID 4, L=1: transport-wide sequence number 0xab00 | padding
        01 02 03           # payload
        """)

    func testElementBytes() throws {
        XCTAssertEqual(PlayoutDelay.uri, "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay")
        XCTAssertEqual(PlayoutDelay.Limits.immediate.bytes, [0, 0, 0])
        XCTAssertEqual(try PlayoutDelay.Limits(minimumUnits: 1, maximumUnits: 0xFFF).bytes, [0x00, 0x1F, 0xFF])
        XCTAssertEqual(try PlayoutDelay.Limits(minimumUnits: 0xABC, maximumUnits: 0xDEF).bytes, [0xAB, 0xCD, 0xEF])
        let element = PlayoutDelay.element(id: 5, limits: .immediate)
        XCTAssertEqual(element.id, 5)
        XCTAssertEqual(Array(element.data), [0, 0, 0])
    }

    func testLimitsRefused() {
        for (minimum, maximum) in [(UInt16(0x1000), UInt16(0x1000)), (0, 0x1000), (2, 1)] {
            XCTAssertThrowsError(try PlayoutDelay.Limits(minimumUnits: minimum, maximumUnits: maximum), "\(minimum)…\(maximum)") { error in
                guard case .malformed(.headerExtension, _)? = error as? RTPError else { return XCTFail("\(error)") }
            }
        }
    }

    /// Our block as the chain builds it (the playout delay first, then the TWCC number appended), byte for
    /// byte, and read back from the serialized packet.
    func testBlockBesideTransportWideNumberAndReading() throws {
        var block = try RTPHeaderExtension.appendingOneByte(PlayoutDelay.element(id: 5, limits: .immediate), to: nil)
        XCTAssertEqual(Array(block.data), [0x52, 0, 0, 0])
        block = try RTPHeaderExtension.appendingOneByte(TransportWideSequenceNumber.element(id: 4, sequenceNumber: 0xAB00), to: block)
        let packet = RTPPacket(payloadType: 96, sequenceNumber: 0x1234, timestamp: 0x1_E240, ssrc: 0x3A5E_91C7,
                               headerExtension: block, payload: [1, 2, 3])
        XCTAssertEqual(try packet.serialized(), Self.packet)
        let parsed = try RTPPacket(parsing: Self.packet)
        let extensionBlock = try XCTUnwrap(parsed.headerExtension)
        XCTAssertEqual(try PlayoutDelay.read(from: extensionBlock, id: 5), .immediate)
        XCTAssertNil(try PlayoutDelay.read(from: extensionBlock, id: 6))
        XCTAssertEqual(try TransportWideSequenceNumber.read(from: parsed, id: 4), 0xAB00)
        // ID 4 holds 2 bytes: not a playout delay.
        assertThrowsRTPError(try PlayoutDelay.read(from: extensionBlock, id: 4))
        // MIN above MAX on the wire.
        let inverted = RTPHeaderExtension(profile: RTPHeaderExtension.oneByteProfile, data: [0x52, 0x00, 0x20, 0x01][...])
        assertThrowsRTPError(try PlayoutDelay.read(from: inverted, id: 5))
        // Every cut of the block's data is refused or reads nothing, never a wrong value.
        for length in 0..<4 {
            let cut = RTPHeaderExtension(profile: RTPHeaderExtension.oneByteProfile, data: extensionBlock.data.prefix(length))
            if length == 0 { XCTAssertNil(try PlayoutDelay.read(from: cut, id: 5)) } else { assertThrowsRTPError(try PlayoutDelay.read(from: cut, id: 5)) }
        }
    }

    /// Appending after elements whose data ends in zero bytes keeps those bytes (they are not padding), and
    /// skips the padding of the old block; refusals leave nothing half-built.
    func testAppendingOneByte() throws {
        let twcc = RTPHeaderExtension(profile: RTPHeaderExtension.oneByteProfile, data: [0x41, 0x12, 0x00, 0x00][...])
        let appended = try RTPHeaderExtension.appendingOneByte(.init(id: 5, data: [0, 0, 0][...]), to: twcc)
        XCTAssertEqual(Array(appended.data), [0x41, 0x12, 0x00, 0x52, 0x00, 0x00, 0x00, 0x00])
        XCTAssertEqual(try appended.elements().map(\.id), [4, 5])
        let padded = RTPHeaderExtension(profile: RTPHeaderExtension.oneByteProfile, data: [0x00, 0x20, 0x07, 0x00][...])
        XCTAssertEqual(Array(try RTPHeaderExtension.appendingOneByte(.init(id: 3, data: [9][...]), to: padded).data),
                       [0x00, 0x20, 0x07, 0x30, 0x09, 0x00, 0x00, 0x00])
        let sixteen = try RTPHeaderExtension.appendingOneByte(.init(id: 14, data: Array(repeating: 1, count: 16)[...]), to: nil)
        XCTAssertEqual(sixteen.data.count, 20)
        XCTAssertEqual(sixteen.data.first, 0xEF)

        func refused(_ element: RTPHeaderExtensionElement, _ block: RTPHeaderExtension?, _ message: String) {
            XCTAssertThrowsError(try RTPHeaderExtension.appendingOneByte(element, to: block), message) { error in
                XCTAssertNotNil(error as? RTPError, message)
            }
        }
        refused(.init(id: 0, data: [1][...]), nil, "ID 0")
        refused(.init(id: 15, data: [1][...]), nil, "ID 15")
        refused(.init(id: 5, data: [][...]), nil, "no data")
        refused(.init(id: 5, data: Array(repeating: 0, count: 17)[...]), nil, "17 bytes")
        refused(.init(id: 4, data: [1][...]), twcc, "ID already present")
        refused(.init(id: 5, data: [1][...]), RTPHeaderExtension(profile: 0x1000, data: [1, 1, 0, 0][...]), "two-byte form")
        refused(.init(id: 5, data: [1][...]), RTPHeaderExtension(profile: 0x1234, data: [][...]), "opaque profile")
        refused(.init(id: 5, data: [1][...]), RTPHeaderExtension(profile: 0xBEDE, data: [0xF0, 0, 0, 0][...]), "ID 15 ends the block")
        refused(.init(id: 5, data: [1][...]), RTPHeaderExtension(profile: 0xBEDE, data: [0x01, 0, 0, 0][...]), "ID 0 with a length")
        for length in 1..<3 {
            refused(.init(id: 5, data: [1][...]), RTPHeaderExtension(profile: 0xBEDE, data: twcc.data.prefix(length)), "cut at \(length)")
        }
    }
}
