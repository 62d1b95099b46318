import RTP
import XCTest

/// The VP8 payload descriptor (RFC 7741 §4.2) at its edges: reserved bits, the largest picture IDs, T
/// without K and K without T sharing one byte, exact truncation errors, and slices not starting at 0.
final class VP8DescriptorEdgeTests: XCTestCase {
    /// R (first byte, 0x40) and RSV (X byte, low 4 bits) "MUST be ignored by receivers" (RFC 7741 §4.2).
    func testReservedBitsAreIgnored() throws {
        let (plain, _) = try VP8PayloadDescriptor.parse(hex("90 80 7f 00")[...])
        let (reserved, size) = try VP8PayloadDescriptor.parse(hex("d0 8f 7f 00")[...])
        XCTAssertEqual(reserved, plain)
        XCTAssertEqual(size, 3)
        var written: [UInt8] = []
        reserved.serialize(into: &written)
        XCTAssertEqual(written, hex("90 80 7f"), "written with reserved bits zero")
    }

    /// The largest values of every field: 15-bit picture ID 0x7FFF, 7-bit 0x7F, TL0PICIDX 255, TID 3, KEYIDX 31.
    func testLargestFieldValues() throws {
        let bytes = hex("b7 f0 ff ff ff ff")  // X S PID 7 | I L T K | M=1 0x7fff | TL0PICIDX 255 | TID 3 Y KEYIDX 31
        let (descriptor, size) = try VP8PayloadDescriptor.parse((bytes + [0])[...])
        XCTAssertEqual(size, 6)
        XCTAssertEqual(descriptor.partitionIndex, 7)
        XCTAssertTrue(descriptor.nonReference)
        XCTAssertEqual(descriptor.pictureID, 0x7FFF)
        XCTAssertTrue(descriptor.pictureIDIs15Bit)
        XCTAssertEqual(descriptor.tl0PictureIndex, 255)
        XCTAssertEqual(descriptor.temporalLayer?.id, 3)
        XCTAssertEqual(descriptor.temporalLayer?.sync, true)
        XCTAssertEqual(descriptor.keyIndex, 31)
        XCTAssertFalse(descriptor.isFrameStart, "PID 7 is not a frame's start")
        var written: [UInt8] = []
        descriptor.serialize(into: &written)
        XCTAssertEqual(written, bytes)
        XCTAssertEqual(try VP8PayloadDescriptor.parse(hex("90 80 7f 00")[...]).0.pictureID, 0x7F)
    }

    /// T and K share one byte (TID | Y | KEYIDX); with only one flag set, the other's bits are not read.
    func testTemporalLayerAndKeyIndexShareAByte() throws {
        let tOnly = try VP8PayloadDescriptor.parse(hex("80 20 ff 00")[...]).0
        XCTAssertEqual(tOnly.temporalLayer?.id, 3)
        XCTAssertEqual(tOnly.temporalLayer?.sync, true)
        XCTAssertNil(tOnly.keyIndex, "K = 0: KEYIDX bits are not a key index")
        let kOnly = try VP8PayloadDescriptor.parse(hex("80 10 ff 00")[...]).0
        XCTAssertNil(kOnly.temporalLayer, "T = 0: TID and Y are not read")
        XCTAssertEqual(kOnly.keyIndex, 31)
        XCTAssertEqual(try VP8PayloadDescriptor.parse(hex("80 10 ff 00")[...]).size, 3)
    }

    /// Each cut says what it needed: the X byte, each picture-ID byte, TL0PICIDX, the T/K byte, then one
    /// byte of VP8 data.
    func testTruncationsSayWhatTheyNeeded() {
        let full = hex("90 f0 80 01 17 b5 42")
        let expected: [(Int, Int)] = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7)]
        for (length, needed) in expected {
            assertThrowsRTPError(try VP8PayloadDescriptor.parse(full[0..<length]),
                                 .truncated(.vp8Descriptor, needed: needed, available: length), "\(length) bytes")
        }
        XCTAssertEqual(try VP8PayloadDescriptor.parse(full[...]).size, 6)
        // Without the X byte: one descriptor byte, and VP8 data after it.
        assertThrowsRTPError(try VP8PayloadDescriptor.parse(hex("10")[...]), .truncated(.vp8Descriptor, needed: 2, available: 1))
    }

    /// A payload slice that does not start at index 0 (the RTP payload inside a datagram) reads the same.
    func testSlicesReadFromTheirOwnStart() throws {
        let datagram = hex("ff ff ff 90 80 ab cd 9d 01 2a")
        let payload = datagram[3...]
        let (descriptor, size) = try VP8PayloadDescriptor.parse(payload)
        XCTAssertEqual(descriptor.pictureID, 0x2BCD)
        XCTAssertEqual(size, 4)
        XCTAssertTrue(descriptor.isFrameStart)
        XCTAssertEqual(Array(payload.dropFirst(size)), [0x9D, 0x01, 0x2A])
    }
}
