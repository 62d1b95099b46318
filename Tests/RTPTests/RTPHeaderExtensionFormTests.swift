import RTP
import XCTest

/// The two element forms of RFC 8285 inside the RFC 3550 §5.3.1 extension block: the one-byte form (§4.2,
/// profile 0xBEDE, 4-bit ID and L = length − 1) and the two-byte form (§4.3, profile 0x100 << 4 | appbits,
/// 8-bit ID and L = length), their padding, the reserved ID 15, the builder's choice of form, and every
/// truncation of each block.
///
/// Fixture origin: the two example diagrams of RFC 8285 §4.2 and §4.3 filled in with concrete IDs and data:
/// §4.2's "ID L=0 data | ID L=1 data... | ...data 0 0 | ID L=3 | data" and §4.3's "ID L=0 | ID L=1 | data 0 |
/// ID L=4 | data", padding bytes where the figures draw them.
final class RTPHeaderExtensionFormTests: XCTestCase {
    /// RFC 8285 §4.2's figure with IDs 1, 2, 3: 1, 2 and 4 data bytes, two padding bytes in the middle.
    static let oneBytePacket = hex("""
        90 60 00 07        # V=2 X=1 | PT=96 | seq 7
        00 00 00 08        # timestamp
        00 00 00 09        # SSRC
        be de 00 03        # one-byte form, length 3 words
        10 aa              # ID 1, L=0: 1 byte  aa
        21 bb cc           # ID 2, L=1: 2 bytes bb cc
        00 00              # padding
        33 d1 d2 d3 d4     # ID 3, L=3: 4 bytes
        77                 # payload
        """)
    /// RFC 8285 §4.3's figure with IDs 1, 2, 3: 0, 1 and 4 data bytes, one padding byte, appbits 0.
    static let twoBytePacket = hex("""
        90 60 00 07 00 00 00 08 00 00 00 09
        10 00 00 03        # two-byte form (0x100, appbits 0), length 3 words
        01 00              # ID 1, L=0: no data
        02 01 ee           # ID 2, L=1: ee
        00                 # padding
        03 04 d1 d2 d3 d4  # ID 3, L=4
        77                 # payload
        """)

    func testOneByteFigureFieldByField() throws {
        let packet = try RTPPacket(parsing: Self.oneBytePacket)
        let block = try XCTUnwrap(packet.headerExtension)
        XCTAssertEqual(block.profile, 0xBEDE)
        XCTAssertTrue(block.isOneByte)
        XCTAssertFalse(block.isTwoByte)
        XCTAssertEqual(block.data.count, 12)
        let elements = try block.elements()
        XCTAssertEqual(elements.map(\.id), [1, 2, 3])
        XCTAssertEqual(elements.map { Array($0.data) }, [[0xAA], [0xBB, 0xCC], [0xD1, 0xD2, 0xD3, 0xD4]])
        XCTAssertEqual(try block.element(id: 2).map(Array.init), [0xBB, 0xCC])
        XCTAssertNil(try block.element(id: 4))
        XCTAssertEqual(Array(packet.payload), [0x77])
        XCTAssertEqual(packet.headerSize, 12 + 4 + 12)
        XCTAssertEqual(try packet.serialized(), Self.oneBytePacket, "the block is kept as read, padding included")
        // Built from the elements, the block is packed without the inner padding; the elements are the same.
        let rebuilt = try RTPHeaderExtension(elements: elements)
        XCTAssertEqual(Array(rebuilt.data), hex("10 aa 21 bb cc 33 d1 d2 d3 d4 00 00"))
        XCTAssertEqual(try rebuilt.elements(), elements)
    }

    func testTwoByteFigureFieldByField() throws {
        let packet = try RTPPacket(parsing: Self.twoBytePacket)
        let block = try XCTUnwrap(packet.headerExtension)
        XCTAssertEqual(block.profile, 0x1000)
        XCTAssertTrue(block.isTwoByte)
        XCTAssertFalse(block.isOneByte)
        let elements = try block.elements()
        XCTAssertEqual(elements.map(\.id), [1, 2, 3])
        XCTAssertEqual(elements.map { Array($0.data) }, [[], [0xEE], [0xD1, 0xD2, 0xD3, 0xD4]])
        XCTAssertEqual(try block.element(id: 1).map(Array.init), [], "present and empty is not absent")
        XCTAssertNil(try block.element(id: 0), "ID 0 is padding, never an element")
        XCTAssertEqual(try packet.serialized(), Self.twoBytePacket)
        // An empty element needs the two-byte form; the builder packs it without the inner padding.
        let rebuilt = try RTPHeaderExtension(elements: elements)
        XCTAssertEqual(rebuilt.profile, 0x1000)
        XCTAssertEqual(Array(rebuilt.data), hex("01 00 02 01 ee 03 04 d1 d2 d3 d4 00"))
    }

    /// The low 4 bits of the two-byte profile are appbits (§4.3): 0x1000 … 0x100F are the two-byte form,
    /// 0x0FFF and 0x1010 are other profiles whose data is opaque.
    func testAppbitsAndOtherProfiles() throws {
        let data = hex("05 02 ab cd")[...]
        for appbits: UInt16 in 0...15 {
            let block = RTPHeaderExtension(profile: 0x1000 | appbits, data: data)
            XCTAssertTrue(block.isTwoByte, "appbits \(appbits)")
            XCTAssertEqual(try block.elements(), [RTPHeaderExtensionElement(id: 5, data: data.dropFirst(2))])
        }
        for profile: UInt16 in [0x0FFF, 0x1010, 0xBEDF, 0xBEDC, 0x0000, 0xFFFF] {
            let block = RTPHeaderExtension(profile: profile, data: data)
            XCTAssertFalse(block.isOneByte || block.isTwoByte, "profile \(profile)")
            XCTAssertEqual(try block.elements(), [], "profile \(profile): opaque")
            XCTAssertNil(try block.element(id: 5))
        }
    }

    /// Every ID 1…14 with every length 1…16 in the one-byte form: the header byte is ID << 4 | (length − 1),
    /// padding fills to the word, and parsing gives the element back.
    func testOneByteHeaderForEveryIDAndLength() throws {
        for id in UInt8(1)...14 {
            for length in 1...16 {
                let data = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 1) }
                let block = try RTPHeaderExtension(elements: [.init(id: id, data: data[...])])
                XCTAssertEqual(block.profile, RTPHeaderExtension.oneByteProfile)
                XCTAssertEqual(block.data.first, id << 4 | UInt8(length - 1), "ID \(id) length \(length)")
                XCTAssertEqual(Array(block.data.dropFirst().prefix(length)), data)
                XCTAssertEqual(block.data.count, (1 + length + 3) / 4 * 4)
                XCTAssertTrue(block.data.dropFirst(1 + length).allSatisfy { $0 == 0 })
                XCTAssertEqual(try block.elements(), [.init(id: id, data: data[...])])
            }
        }
    }

    /// The builder uses the one-byte form only when every element fits it (ID 1…14, 1…16 bytes); one element
    /// that does not — ID 15 or above, no data, 17 bytes or more — moves all of them to the two-byte form.
    func testBuilderChoosesTheFormByItsMostDemandingElement() throws {
        let small = RTPHeaderExtensionElement(id: 3, data: [9][...])
        let cases: [(RTPHeaderExtensionElement, String)] = [
            (.init(id: 15, data: [1][...]), "ID 15"), (.init(id: 255, data: [1][...]), "ID 255"),
            (.init(id: 4, data: [][...]), "no data"), (.init(id: 4, data: Array(repeating: 1, count: 17)[...]), "17 bytes"),
            (.init(id: 4, data: Array(repeating: 2, count: 255)[...]), "255 bytes"),
        ]
        for (element, name) in cases {
            let block = try RTPHeaderExtension(elements: [small, element])
            XCTAssertEqual(block.profile, RTPHeaderExtension.twoByteProfile, name)
            XCTAssertEqual(Array(block.data.prefix(3)), [3, 1, 9], "\(name): the small one in two-byte form too")
            XCTAssertEqual(Array(block.data[3...4]), [element.id, UInt8(element.data.count)], name)
            XCTAssertEqual(block.data.count % 4, 0)
            XCTAssertEqual(try block.elements(), [small, element], name)
        }
        XCTAssertEqual(try RTPHeaderExtension(elements: [small, .init(id: 14, data: Array(repeating: 3, count: 16)[...])]).profile,
                       RTPHeaderExtension.oneByteProfile)
        // No elements: an empty one-byte block (the X bit with a zero-length extension).
        let empty = try RTPHeaderExtension(elements: [])
        XCTAssertEqual(empty.data.count, 0)
        let packet = RTPPacket(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, headerExtension: empty, payload: [4][...])
        XCTAssertEqual(try packet.serialized(), hex("90 60 00 01 00 00 00 02 00 00 00 03 be de 00 00 04"))
        XCTAssertEqual(try RTPPacket(parsing: packet.serialized()), packet)
    }

    /// ID 0 is padding in both forms, so no element may have it; 256 bytes do not fit L; a block over 65535
    /// words does not fit the length field — and exactly 65535 words does.
    func testBuilderLimits() throws {
        assertThrowsRTPError(try RTPHeaderExtension(elements: [.init(id: 0, data: [1][...])]), .malformed(.headerExtension, "element ID 0"))
        assertThrowsRTPError(try RTPHeaderExtension(elements: [.init(id: 200, data: Array(repeating: 0, count: 256)[...])]),
                             .tooMany(.headerExtension, count: 256, limit: 255))
        // 1020 elements of 2 + 255 bytes: 262140 bytes, exactly 65535 words.
        let full = (0..<1020).map { RTPHeaderExtensionElement(id: UInt8($0 % 255 + 1), data: Array(repeating: 0xAB, count: 255)[...]) }
        let block = try RTPHeaderExtension(elements: full)
        XCTAssertEqual(block.data.count, 65_535 * 4)
        let packet = RTPPacket(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, headerExtension: block, payload: [][...])
        let bytes = try packet.serialized()
        XCTAssertEqual(Array(bytes[12..<16]), [0x10, 0x00, 0xFF, 0xFF])
        XCTAssertEqual(try RTPPacket(parsing: bytes).headerExtension?.elements().count, 1020)
        assertThrowsRTPError(try RTPHeaderExtension(elements: full + [.init(id: 1, data: [1][...])]),
                             .tooMany(.headerExtension, count: 65_536, limit: 65_535))
        // The same limit when writing a block made by hand.
        var tooLong = packet
        tooLong.headerExtension = RTPHeaderExtension(profile: 0x1000, data: Array(repeating: 0, count: 65_536 * 4)[...])
        assertThrowsRTPError(try tooLong.serialized())
    }

    /// §4.2: ID 15 ends the block — its length is ignored and nothing after it is read, not even garbage.
    /// In the two-byte form 15 is an ordinary ID.
    func testIDFifteenEndsOnlyTheOneByteForm() throws {
        let oneByte = RTPHeaderExtension(profile: 0xBEDE, data: hex("10 01 ff 23 ff ff")[...])
        XCTAssertEqual(try oneByte.elements(), [.init(id: 1, data: [0x01][...])])
        XCTAssertNil(try oneByte.element(id: 2), "after ID 15: not read")
        XCTAssertEqual(try RTPHeaderExtension(profile: 0xBEDE, data: hex("f0 10 aa 00")[...]).elements(), [], "ID 15 first")
        let twoByte = RTPHeaderExtension(profile: 0x1000, data: hex("0f 01 aa 10 00 00 00 00")[...])
        XCTAssertEqual(try twoByte.elements(), [.init(id: 15, data: [0xAA][...]), .init(id: 16, data: [][...])])
    }

    /// One-byte padding bytes must be zero whole bytes (an ID 0 with a nonzero L is not padding); two-byte
    /// padding may sit anywhere between elements; the first of two elements with one ID is the one returned.
    func testPaddingAndRepeatedIDs() throws {
        assertThrowsRTPError(try RTPHeaderExtension(profile: 0xBEDE, data: hex("10 aa 01 00")[...]).elements())
        let padded = RTPHeaderExtension(profile: 0x1000, data: hex("00 00 05 01 aa 00 00 05 01 bb 00 00")[...])
        XCTAssertEqual(try padded.elements().map(\.id), [5, 5])
        XCTAssertEqual(try padded.element(id: 5).map(Array.init), [0xAA])
        let allPadding = RTPHeaderExtension(profile: 0xBEDE, data: Array(repeating: 0, count: 8)[...])
        XCTAssertEqual(try allPadding.elements(), [])
    }

    /// Every prefix of each figure's block, offered as the block's data: a typed error, or elements that are a
    /// prefix of the whole block's — never an element with wrong data.
    func testEveryCutOfEachFormIsAnErrorOrAPrefix() throws {
        for fixture in [Self.oneBytePacket, Self.twoBytePacket] {
            let block = try XCTUnwrap(RTPPacket(parsing: fixture).headerExtension)
            let whole = try block.elements()
            var refused = 0
            for length in 0...block.data.count {
                let cut = RTPHeaderExtension(profile: block.profile, data: block.data.prefix(length))
                do {
                    let elements = try cut.elements()
                    XCTAssertEqual(elements, Array(whole.prefix(elements.count)), "\(block.profile) cut at \(length)")
                } catch {
                    refused += 1
                }
            }
            XCTAssertGreaterThan(refused, 0)
        }
        // Cut inside an element: what it needed, counted in the block's data.
        assertThrowsRTPError(try RTPHeaderExtension(profile: 0xBEDE, data: hex("10 aa 21 bb")[...]).elements(),
                             .truncated(.headerExtension, needed: 5, available: 4))
        assertThrowsRTPError(try RTPHeaderExtension(profile: 0x1000, data: hex("01 00 02")[...]).elements(),
                             .truncated(.headerExtension, needed: 4, available: 3))
        assertThrowsRTPError(try RTPHeaderExtension(profile: 0x1000, data: hex("02 05 aa bb")[...]).elements(),
                             .truncated(.headerExtension, needed: 7, available: 4))
    }

    /// In a packet: every datagram cut inside the extension block is refused as a truncated extension; the
    /// block's length is counted after CSRCs.
    func testTheBlockInsideThePacket() throws {
        for length in 12..<28 {
            assertThrowsRTPError(try RTPPacket(parsing: Array(Self.oneBytePacket.prefix(length))), nil, "cut at \(length)")
        }
        assertThrowsRTPError(try RTPPacket(parsing: Array(Self.oneBytePacket.prefix(27))),
                             .truncated(.headerExtension, needed: 28, available: 27))
        assertThrowsRTPError(try RTPPacket(parsing: Array(Self.oneBytePacket.prefix(15))),
                             .truncated(.headerExtension, needed: 16, available: 15))
        // With a CSRC before it (CC = 1), the block starts 4 bytes later.
        var withCSRC = Array(Self.oneBytePacket.prefix(12)) + hex("00 00 00 0c") + Array(Self.oneBytePacket.dropFirst(12))
        withCSRC[0] = 0x91
        let packet = try RTPPacket(parsing: withCSRC)
        XCTAssertEqual(packet.csrcs, [12])
        XCTAssertEqual(try packet.headerExtension?.elements().map(\.id), [1, 2, 3])
        XCTAssertEqual(packet.headerSize, 32)
        XCTAssertEqual(try packet.serialized(), withCSRC)
    }
}
