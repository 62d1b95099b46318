import RTP
import XCTest

/// The RTP fixed header (RFC 3550 §5.1) at the edges of each field: the 4-bit CSRC count at 15 and past what
/// the datagram holds, the 7-bit payload type beside the marker, padding that takes the whole payload or one
/// byte more, versions other than 2, the largest field values, and parsing from a slice inside a larger
/// buffer; then every single-byte change to a full packet is either refused or read back to the same bytes.
///
/// Fixture origin: written by hand from the RFC 3550 §5.1 diagram, with every optional part present (CSRCs,
/// an RFC 8285 one-byte extension, padding).
final class RTPHeaderLimitTests: XCTestCase {
    static let everything = hex("""
        b2 ff ff ff        # V=2 P=1 X=1 CC=2 | M=1 PT=127 | seq 65535
        ff ff ff ff        # timestamp 2^32 − 1
        ff ff ff fe        # SSRC
        00 00 00 00        # CSRC 0
        ff ff ff ff        # CSRC 2^32 − 1
        be de 00 01        # one-byte extension, 1 word
        e0 2a 00 00        # ID 14, L=0: 2a | padding
        01 02 03           # payload
        00 00 00 04        # padding: 4 bytes, count last
        """)

    func testEveryFieldAtItsLargest() throws {
        let packet = try RTPPacket(parsing: Self.everything)
        XCTAssertTrue(packet.marker)
        XCTAssertEqual(packet.payloadType, 127)
        XCTAssertEqual(packet.sequenceNumber, 65_535)
        XCTAssertEqual(packet.timestamp, 0xFFFF_FFFF)
        XCTAssertEqual(packet.ssrc, 0xFFFF_FFFE)
        XCTAssertEqual(packet.csrcs, [0, 0xFFFF_FFFF])
        XCTAssertEqual(try packet.headerExtension?.elements(), [.init(id: 14, data: [0x2A][...])])
        XCTAssertEqual(Array(packet.payload), [1, 2, 3])
        XCTAssertEqual(packet.paddingCount, 4)
        XCTAssertEqual(packet.headerSize, 28)
        XCTAssertEqual(packet.serializedSize, Self.everything.count)
        XCTAssertEqual(try packet.serialized(), Self.everything)
        // Without the marker the same PT: the second byte is 0x7f.
        var unmarked = packet
        unmarked.marker = false
        XCTAssertEqual(try unmarked.serialized()[1], 0x7F)
    }

    /// Fifteen CSRCs (CC = 15) round-trip; a CC of 15 with 14 present is truncated with what it needed; 16
    /// CSRCs are refused on writing.
    func testCSRCCountLimit() throws {
        let csrcs = (1...15).map { UInt32($0) * 0x0101_0101 }
        let packet = RTPPacket(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, csrcs: csrcs, payload: [9][...])
        let bytes = try packet.serialized()
        XCTAssertEqual(bytes[0], 0x8F)
        XCTAssertEqual(bytes.count, 12 + 60 + 1)
        XCTAssertEqual(Array(bytes[68..<72]), [0x0F, 0x0F, 0x0F, 0x0F])
        XCTAssertEqual(try RTPPacket(parsing: bytes), packet)
        assertThrowsRTPError(try RTPPacket(parsing: Array(bytes.prefix(68))), .truncated(.rtpHeader, needed: 72, available: 68))
        XCTAssertEqual(try RTPPacket(parsing: Array(bytes.prefix(72))).payload.count, 0, "all CSRCs and no payload")
        var sixteen = packet
        sixteen.csrcs.append(16)
        assertThrowsRTPError(try sixteen.serialized(), .tooMany(.rtpHeader, count: 16, limit: 15))
    }

    /// Padding may take every byte after the header (an empty payload) but not one more, counted after the
    /// extension; a padding count of 0 is refused.
    func testPaddingAtAndPastThePayloadRegion() throws {
        // Header 12 + extension 8, then 5 bytes: padding count 5 takes them all.
        var bytes = Array(Self.everything.prefix(4)) + Array(repeating: 0, count: 8)
        bytes[0] = 0xB0  // P, X, no CSRC
        bytes += hex("be de 00 01 e0 2a 00 00 00 00 00 00 05")
        let packet = try RTPPacket(parsing: bytes)
        XCTAssertEqual(packet.payload.count, 0)
        XCTAssertEqual(packet.paddingCount, 5)
        XCTAssertEqual(try packet.serialized(), bytes)
        bytes[bytes.count - 1] = 6
        assertThrowsRTPError(try RTPPacket(parsing: bytes), .badPadding(count: 6, available: 5))
        bytes[bytes.count - 1] = 0
        assertThrowsRTPError(try RTPPacket(parsing: bytes), .badPadding(count: 0, available: 5))
        // P = 1 and nothing after the header at all: the count byte would be part of the SSRC.
        assertThrowsRTPError(try RTPPacket(parsing: hex("a0 60 00 01 00 00 00 02 00 00 00 01")), .badPadding(count: 1, available: 0))
    }

    /// Versions 0, 1 and 3 are refused with their value, whatever else the packet holds.
    func testOnlyVersionTwo() {
        for version: UInt8 in [0, 1, 3] {
            var bytes = Self.everything
            bytes[0] = version << 6 | (bytes[0] & 0x3F)
            assertThrowsRTPError(try RTPPacket(parsing: bytes), .badVersion(version))
        }
    }

    /// Parsing a slice of a larger buffer (the datagram after a prefix) reads from the slice's start and ends
    /// at its end; the payload's indices lie inside the slice.
    func testParsingASliceInsideABuffer() throws {
        let buffer = hex("ee ee ee ee ee") + Self.everything + hex("dd dd dd")
        let slice = buffer[5..<(5 + Self.everything.count)]
        let packet = try RTPPacket(parsing: slice)
        XCTAssertEqual(try packet.serialized(), Self.everything)
        XCTAssertEqual(Array(packet.payload), [1, 2, 3])
        XCTAssertEqual(packet.payload.startIndex, 5 + 28)
        XCTAssertEqual(try RTPPacket(parsing: Array(slice)), packet)
    }

    /// Every single-byte change to the full packet (all 256 values at every position) is refused with a
    /// typed error or parses to a packet of the same size; with P = 0, or zero padding bytes, it writes back
    /// to exactly the bytes read.
    func testEverySingleByteChangeIsRefusedOrReadBackExactly() throws {
        var parsed = 0
        var refused = 0
        for index in Self.everything.indices {
            for value in UInt8.min...UInt8.max {
                var bytes = Self.everything
                bytes[index] = value
                guard let packet = try? RTPPacket(parsing: bytes) else {
                    refused += 1
                    continue
                }
                parsed += 1
                XCTAssertEqual(packet.serializedSize, bytes.count, "byte \(index) = \(value)")
                let paddingZero = packet.paddingCount == 0
                    || bytes[(bytes.count - Int(packet.paddingCount))..<(bytes.count - 1)].allSatisfy { $0 == 0 }
                if paddingZero, let written = try? packet.serialized() {
                    XCTAssertEqual(written, bytes, "byte \(index) = \(value)")
                }
                _ = try? packet.headerExtension?.elements()
            }
        }
        XCTAssertGreaterThan(parsed, 0)
        XCTAssertGreaterThan(refused, 0)
    }
}
