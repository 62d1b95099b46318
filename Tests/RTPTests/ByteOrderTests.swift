@testable import RTP
import XCTest

/// The module's big-endian readers and writers (network byte order, RFC 3550 §4): values at offsets
/// relative to a slice's own start, all-ones and single-bit edges, and word padding.
final class ByteOrderTests: XCTestCase {
    func testReadersAreBigEndianFromTheSlicesStart() {
        let bytes: [UInt8] = [0xEE, 0x01, 0x02, 0x03, 0x04, 0x05, 0xFF, 0xFF, 0xFF, 0xFF, 0x80, 0x00, 0x00, 0x01]
        let slice = bytes[1...]
        XCTAssertEqual(slice.u8(0), 0x01)
        XCTAssertEqual(slice.u16(0), 0x0102)
        XCTAssertEqual(slice.u24(0), 0x01_0203)
        XCTAssertEqual(slice.u32(0), 0x0102_0304)
        XCTAssertEqual(slice.u32(1), 0x0203_0405)
        XCTAssertEqual(slice.u32(5), 0xFFFF_FFFF)
        XCTAssertEqual(slice.u24(6), 0xFF_FFFF)
        XCTAssertEqual(slice.u24(7), 0xFF_FF80)
        XCTAssertEqual(slice.u32(9), 0x8000_0001, "top and bottom bits in their places")
        XCTAssertEqual(slice.u16(11), 0x0001)
        XCTAssertEqual(Array(slice.sub(2, 3)), [0x03, 0x04, 0x05])
        XCTAssertEqual(Array(slice.sub(from: 10)), [0x00, 0x00, 0x01])
        XCTAssertEqual(slice.sub(2, 3).u16(1), 0x0405, "a sub-slice reads from its own start too")
        XCTAssertTrue(slice.sub(from: 13).isEmpty)
    }

    func testWritersAndTheirRoundTrip() {
        var bytes: [UInt8] = [0xAA]
        bytes.appendU16(0xBEEF)
        bytes.appendU24(0x12_3456)
        bytes.appendU32(0x8000_0001)
        XCTAssertEqual(bytes, [0xAA, 0xBE, 0xEF, 0x12, 0x34, 0x56, 0x80, 0x00, 0x00, 0x01])
        bytes.appendU24(0xFF12_3456)
        XCTAssertEqual(Array(bytes.suffix(3)), [0x12, 0x34, 0x56], "24 bits: the top byte is dropped")
        bytes.setU16(0x0102, at: 1)
        XCTAssertEqual(Array(bytes.prefix(3)), [0xAA, 0x01, 0x02])
        for value: UInt32 in [0, 1, 0xFF, 0x100, 0xFFFF, 0x1_0000, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF] {
            var out: [UInt8] = []
            out.appendU32(value)
            out.appendU16(UInt16(truncatingIfNeeded: value))
            out.appendU24(value & 0xFF_FFFF)
            XCTAssertEqual(out[...].u32(0), value)
            XCTAssertEqual(out[...].u16(4), UInt16(truncatingIfNeeded: value))
            XCTAssertEqual(out[...].u24(6), value & 0xFF_FFFF)
        }
    }

    /// RTCP packets are whole 32-bit words (RFC 3550 §6.4.1): padding counts from the packet's start.
    func testPadToWordCountsFromTheStart() {
        for length in 0...9 {
            var bytes: [UInt8] = [0xFF, 0xFF, 0xFF] + Array(repeating: 7, count: length)
            bytes.padToWord(from: 3)
            XCTAssertEqual((bytes.count - 3) % 4, 0, "\(length)")
            XCTAssertEqual(bytes.count - 3, (length + 3) / 4 * 4, "at most 3 zero bytes, none when already a word")
            XCTAssertTrue(bytes.dropFirst(3 + length).allSatisfy { $0 == 0 })
        }
    }
}
