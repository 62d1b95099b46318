import RTP
import XCTest

/// RTP packets (RFC 3550 §5.1) with RFC 8285 header extensions, padding and CSRCs.
///
/// Fixture origin: constructed by hand from the RFC 3550 §5.1 and RFC 8285 §4.2/§4.3 diagrams, with field
/// values of the kind a browser sends (VP8 PT 96, one-byte extensions carrying abs-send-time and a
/// transport-wide sequence number); every field is annotated beside its bytes and checked one by one.
/// Cross-checked once by hand with aiortc 1.16.0's `RtpPacket.parse` (same header fields, abs-send-time
/// 0x1c3e94, transport sequence number 1235); not part of this test run.
final class RTPPacketTests: XCTestCase {
    /// A Chrome-style VP8 packet: X = 1, M = 1, two one-byte extension elements and one padding byte.
    static let vp8WithExtensions = hex("""
        90 e0 2b 7c        # V=2 P=0 X=1 CC=0 | M=1 PT=96 | seq 0x2b7c = 11132
        5f 3a 81 20        # timestamp 0x5f3a8120
        6c 2d 0a 91        # SSRC 0x6c2d0a91
        be de 00 02        # one-byte extension profile, 2 words
        22 1c 3e 94        # ID 2 L=2: abs-send-time 1c 3e 94
        41 04 d3 00        # ID 4 L=1: transport seq 0x04d3 | padding byte
        90 80 80 01        # VP8 descriptor: X S | I | M PictureID 0x0001 ...
        50 02 00 9d 01 2a  # ... VP8 key frame header and start code
        """)

    func testParsesBrowserStyleVP8PacketFieldByField() throws {
        let packet = try RTPPacket(parsing: Self.vp8WithExtensions)
        XCTAssertTrue(packet.marker)
        XCTAssertEqual(packet.payloadType, 96)
        XCTAssertEqual(packet.sequenceNumber, 11132)
        XCTAssertEqual(packet.timestamp, 0x5F3A_8120)
        XCTAssertEqual(packet.ssrc, 0x6C2D_0A91)
        XCTAssertEqual(packet.csrcs, [])
        XCTAssertEqual(packet.paddingCount, 0)
        XCTAssertEqual(packet.headerSize, 24)
        let ext = try XCTUnwrap(packet.headerExtension)
        XCTAssertTrue(ext.isOneByte)
        let elements = try ext.elements()
        XCTAssertEqual(elements.map(\.id), [2, 4])
        XCTAssertEqual(Array(elements[0].data), [0x1C, 0x3E, 0x94])
        XCTAssertEqual(Array(elements[1].data), [0x04, 0xD3])
        XCTAssertEqual(try ext.element(id: 4).map(Array.init), [0x04, 0xD3])
        XCTAssertNil(try ext.element(id: 3))
        XCTAssertEqual(Array(packet.payload), hex("90 80 80 01 50 02 00 9d 01 2a"))
        XCTAssertEqual(try packet.serialized(), Self.vp8WithExtensions)
    }

    func testCSRCsAndPaddingRoundTrip() throws {
        let bytes = hex("""
            a2 08 ff ff        # V=2 P=1 X=0 CC=2 | M=0 PT=8 | seq 65535
            00 00 03 20        # timestamp 800
            11 22 33 44        # SSRC
            aa aa aa aa        # CSRC 1
            bb bb bb bb        # CSRC 2
            d5 d5 d5 d5 d5     # payload (5 bytes of PCMA)
            00 00 03           # padding: 3 bytes, count last
            """)
        let packet = try RTPPacket(parsing: bytes)
        XCTAssertFalse(packet.marker)
        XCTAssertEqual(packet.payloadType, 8)
        XCTAssertEqual(packet.sequenceNumber, 65535)
        XCTAssertEqual(packet.csrcs, [0xAAAA_AAAA, 0xBBBB_BBBB])
        XCTAssertEqual(packet.paddingCount, 3)
        XCTAssertEqual(Array(packet.payload), [0xD5, 0xD5, 0xD5, 0xD5, 0xD5])
        XCTAssertEqual(packet.serializedSize, bytes.count)
        XCTAssertEqual(try packet.serialized(), bytes)
    }

    func testTwoByteExtensionRoundTrip() throws {
        let bytes = hex("""
            90 60 00 01 00 00 00 01 00 00 00 02   # X=1 PT=96 seq 1 ts 1 SSRC 2
            10 00 00 03                          # two-byte profile 0x1000, 3 words
            01 00                                # ID 1, L=0 (empty element)
            0f 05 61 62 63 64 65                 # ID 15, L=5 "abcde"
            00 00 00                             # padding
            ff                                   # payload
            """)
        let packet = try RTPPacket(parsing: bytes)
        let ext = try XCTUnwrap(packet.headerExtension)
        XCTAssertTrue(ext.isTwoByte)
        let elements = try ext.elements()
        XCTAssertEqual(elements.map(\.id), [1, 15])
        XCTAssertEqual(elements[0].data.count, 0)
        XCTAssertEqual(String(decoding: elements[1].data, as: UTF8.self), "abcde")
        XCTAssertEqual(try packet.serialized(), bytes)
        // Rebuilt from its elements, the two-byte form is chosen (an empty element needs it).
        let rebuilt = try RTPHeaderExtension(elements: elements)
        XCTAssertEqual(rebuilt, ext)
    }

    func testExtensionBuilderPicksOneByteFormWhenItFits() throws {
        let ext = try RTPHeaderExtension(elements: [
            RTPHeaderExtensionElement(id: 2, data: [0x1C, 0x3E, 0x94]),
            RTPHeaderExtensionElement(id: 4, data: [0x04, 0xD3]),
        ])
        XCTAssertEqual(ext.profile, 0xBEDE)
        XCTAssertEqual(Array(ext.data), hex("22 1c 3e 94 41 04 d3 00"))
    }

    func testOneByteIDFifteenStopsParsing() throws {
        let ext = RTPHeaderExtension(profile: 0xBEDE, data: hex("10 aa f0 ff")[...])
        XCTAssertEqual(try ext.elements().map(\.id), [1])
    }

    func testOpaqueExtensionProfileIsKeptAndSkipped() throws {
        let bytes = hex("90 60 00 01 00 00 00 01 00 00 00 02  ab cd 00 01  de ad be ef  42")
        let packet = try RTPPacket(parsing: bytes)
        XCTAssertEqual(packet.headerExtension?.profile, 0xABCD)
        XCTAssertEqual(try packet.headerExtension?.elements(), [])
        XCTAssertEqual(Array(packet.payload), [0x42])
        XCTAssertEqual(try packet.serialized(), bytes)
    }

    func testEveryTruncationThrowsOrYieldsAShorterPayload() throws {
        let whole = Self.vp8WithExtensions
        for length in 0..<whole.count {
            let prefix = Array(whole[0..<length])
            if length < 24 {
                assertThrowsRTPError(try RTPPacket(parsing: prefix), nil, "length \(length)")
            } else {
                // Past the header only the payload shrinks.
                let packet = try RTPPacket(parsing: prefix)
                XCTAssertEqual(packet.payload.count, length - 24)
            }
        }
        assertThrowsRTPError(try RTPPacket(parsing: Array(whole[0..<11])), .truncated(.rtpHeader, needed: 12, available: 11))
        assertThrowsRTPError(try RTPPacket(parsing: Array(whole[0..<20])), .truncated(.headerExtension, needed: 24, available: 20))
    }

    func testTruncatedExtensionElementsAndBadPaddingThrow() {
        // One-byte element claiming 4 bytes with only 3 left.
        let ext = RTPHeaderExtension(profile: 0xBEDE, data: hex("23 01 02 03")[...])
        assertThrowsRTPError(try ext.elements())
        // Padding count larger than the packet's payload region.
        assertThrowsRTPError(try RTPPacket(parsing: hex("a0 60 00 01 00 00 00 01 00 00 00 02 00 09")),
                             .badPadding(count: 9, available: 2))
        // Padding count 0.
        assertThrowsRTPError(try RTPPacket(parsing: hex("a0 60 00 01 00 00 00 01 00 00 00 02 00")),
                             .badPadding(count: 0, available: 1))
        // CSRC count beyond the bytes.
        assertThrowsRTPError(try RTPPacket(parsing: hex("83 60 00 01 00 00 00 01 00 00 00 02 00 00 00 01")))
        // Version 1.
        assertThrowsRTPError(try RTPPacket(parsing: hex("40 60 00 01 00 00 00 01 00 00 00 02")), .badVersion(1))
    }

    func testGarbageNeverCrashes() {
        var generator = SplitMix64(seed: 0x5EED)
        var parsed = 0
        for _ in 0..<20_000 {
            var bytes = randomBytes(Int.random(in: 0...64, using: &generator), using: &generator)
            if !bytes.isEmpty, Bool.random(using: &generator) { bytes[0] = 0x80 | (bytes[0] & 0x3F) }
            if let packet = try? RTPPacket(parsing: bytes) {
                parsed += 1
                _ = try? packet.headerExtension?.elements()
                // Whatever parses re-serializes to the same length.
                XCTAssertEqual(packet.serializedSize, bytes.count)
            }
        }
        XCTAssertGreaterThan(parsed, 0)
    }

    func testSerializeRefusesFieldsThatDoNotFit() {
        var packet = RTPPacket(payloadType: 200, sequenceNumber: 1, timestamp: 1, ssrc: 1, payload: [1][...])
        assertThrowsRTPError(try packet.serialized())
        packet.payloadType = 96
        packet.csrcs = Array(repeating: 1, count: 16)
        assertThrowsRTPError(try packet.serialized(), .tooMany(.rtpHeader, count: 16, limit: 15))
        packet.csrcs = []
        packet.headerExtension = RTPHeaderExtension(profile: 0xBEDE, data: [1, 2, 3][...])
        assertThrowsRTPError(try packet.serialized())
    }
}
