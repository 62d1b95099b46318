import RTP
import XCTest

/// What probes send on the RTX stream: padding-only packets (RFC 3550 §5.1: P = 1, the last octet counts
/// the padding octets including itself) and RTX copies that keep the original's CSRCs and header
/// extension (RFC 4588 §4: only SSRC, sequence number and payload type change, the OSN leads the payload).
final class RTXPaddingTests: XCTestCase {
    func testPaddingOnlyPacketBytes() throws {
        var rtx = RTXPacketizer(ssrc: 0xBBBB_0001, payloadType: 97, initialSequenceNumber: 65535)
        let padding = rtx.padding(bytes: 4, timestamp: 0x0102_0304)
        XCTAssertEqual(try padding.serialized(), hex("""
            a0 61 ff ff        # V=2 P=1 X=0 CC=0 | M=0 PT=97 | seq 65535
            01 02 03 04        # timestamp (the newest media packet's)
            bb bb 00 01        # RTX SSRC
            00 00 00 04        # padding: three zeros, then the count 4
            """))
        XCTAssertEqual(rtx.nextSequenceNumber, 0, "RTX numbers wrap like media's")
        let parsed = try RTPPacket(parsing: padding.serialized())
        XCTAssertEqual(parsed.payload.count, 0, "no payload: not even an OSN")
        XCTAssertEqual(parsed.paddingCount, 4)
        // The count is one octet: 1…255, whatever is asked.
        XCTAssertEqual(rtx.padding(bytes: 0, timestamp: 0).paddingCount, 1)
        XCTAssertEqual(rtx.padding(bytes: -5, timestamp: 0).paddingCount, 1)
        XCTAssertEqual(rtx.padding(bytes: 255, timestamp: 0).paddingCount, 255)
        let big = rtx.padding(bytes: 1000, timestamp: 0)
        XCTAssertEqual(big.paddingCount, 255)
        XCTAssertEqual(try big.serialized().count, 12 + 255)
        XCTAssertEqual(big.serializedSize, 12 + 255)
        XCTAssertEqual(rtx.nextSequenceNumber, 4)
        // A single padding octet is the count itself.
        XCTAssertEqual(try RTPPacket(payloadType: 97, sequenceNumber: 1, timestamp: 0, ssrc: 1, payload: [][...], paddingCount: 1).serialized(),
                       hex("a0 61 00 01 00 00 00 00 00 00 00 01 01"))
    }

    /// An original with two CSRCs, a one-byte header extension, the marker and padding: the RTX copy keeps
    /// CSRCs, extension, marker and timestamp, drops the padding, and puts the OSN first (RFC 4588 §4).
    func testRTXCopyKeepsTheOriginalsHeader() throws {
        let original = hex("""
            b2 e0 12 34        # V=2 P=1 X=1 CC=2 | M=1 PT=96 | seq 0x1234
            00 00 5d c0        # timestamp
            00 00 aa aa        # SSRC
            00 00 00 01        # CSRC 1
            00 00 00 02        # CSRC 2
            be de 00 01        # one-byte extension profile, 1 word
            32 00 07 00        # ID 3, L=1: transport-wide number 7, then padding
            de ad be ef        # payload
            00 00 03           # 3 bytes of RTP padding
            """)
        var rtx = RTXPacketizer(ssrc: 0xBBBB, payloadType: 97, initialSequenceNumber: 500)
        let wrapped = try rtx.wrap(original)
        XCTAssertEqual(wrapped, hex("""
            92 e1 01 f4        # P cleared, X and CC kept | M=1 PT=97 | RTX seq 500
            00 00 5d c0        # timestamp kept
            00 00 bb bb        # RTX SSRC
            00 00 00 01 00 00 00 02
            be de 00 01 32 00 07 00
            12 34              # OSN
            de ad be ef        # the original payload, its padding dropped
            """))
        // The packet form gives the same bytes.
        var again = RTXPacketizer(ssrc: 0xBBBB, payloadType: 97, initialSequenceNumber: 500)
        XCTAssertEqual(try again.wrap(RTPPacket(parsing: original)).serialized(), wrapped)
        let back = try RTXPacketizer.unwrap(RTPPacket(parsing: wrapped), originalSSRC: 0xAAAA, originalPayloadType: 96)
        XCTAssertEqual(back.sequenceNumber, 0x1234)
        XCTAssertEqual(back.csrcs, [1, 2])
        XCTAssertEqual(Array(back.payload), [0xDE, 0xAD, 0xBE, 0xEF])
        XCTAssertEqual(back.headerExtension, try RTPPacket(parsing: original).headerExtension)
        // Every truncation of the original is refused, never wrapped into a short RTX packet.
        for length in 0..<original.count {
            var sink = RTXPacketizer(ssrc: 1, payloadType: 97, initialSequenceNumber: 0)
            assertThrowsRTPError(try sink.wrap(Array(original.prefix(length))), nil, "\(length) bytes")
            XCTAssertEqual(sink.nextSequenceNumber, 0, "no number spent on a refused packet")
        }
    }
}
