import RTP
import XCTest

/// The RTCP feedback messages byte by byte beyond the one-entry fixtures of ``RTCPTests``: several FCI
/// entries, fields at their edges, reserved bits, what is skipped, and every way the lengths can lie.
///
/// Fixture origin: written by hand from RFC 4585 §6.1 (common feedback header), §6.2.1 (Generic NACK),
/// RFC 5104 §4.3.1.1 (FIR FCI: SSRC, Seq nr, 24 reserved bits) and draft-alvestrand-rmcat-remb-03 §2.2.
final class RTCPFeedbackWireTests: XCTestCase {
    static let twoEntryFIR = hex("""
        84 ce 00 06        # V=2 P=0 FMT=4 | PT=206 PSFB | length 6 (28 bytes)
        7b 1f 00 2d        # SSRC of packet sender
        00 00 00 00        # SSRC of media source: 0 (RFC 5104 §4.3.1.2)
        3a 5e 91 c7        # FCI 1: SSRC
        ff 00 00 00        # seq nr 255 | reserved
        00 00 00 01        # FCI 2: SSRC 1
        00 00 00 00        # seq nr 0 | reserved
        """)

    func testFIRWithTwoEntriesAndReservedBits() throws {
        let expected = RTCPFullIntraRequest(senderSSRC: 0x7B1F_002D, entries: [
            .init(ssrc: 0x3A5E_91C7, sequenceNumber: 255), .init(ssrc: 1, sequenceNumber: 0),
        ])
        XCTAssertEqual(try RTCPPacket.parseCompound(Self.twoEntryFIR), [.fullIntraRequest(expected)])
        XCTAssertEqual(try RTCPPacket.serializeCompound([.fullIntraRequest(expected)]), Self.twoEntryFIR)
        // Reserved bits set by a sender are ignored on reading and written as zero (RFC 5104 §4.3.1.1).
        var reserved = Self.twoEntryFIR
        reserved[17...19] = [0xAB, 0xCD, 0xEF]
        XCTAssertEqual(try RTCPPacket.parseCompound(reserved), [.fullIntraRequest(expected)])
        // A FIR with no FCI parses to no entries (nothing to act on, but well formed).
        let empty = hex("84 ce 00 02 7b 1f 00 2d 00 00 00 00")
        XCTAssertEqual(try RTCPPacket.parseCompound(empty), [.fullIntraRequest(.init(senderSSRC: 0x7B1F_002D, entries: []))])
        // Half an entry (4 of 8 FCI bytes) is malformed.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("84 ce 00 03 7b 1f 00 2d 00 00 00 00 3a 5e 91 c7")))
    }

    /// Two NACK FCI entries, one with all 16 BLP bits across the sequence-number wrap.
    func testNACKEntriesBitmaskAndWrap() throws {
        let bytes = hex("""
            81 cd 00 04        # FMT=1 | PT=205 RTPFB | length 4
            00 00 00 01        # sender SSRC
            00 00 00 02        # media SSRC
            ff fa ff ff        # PID 65530, BLP: all 16 following
            00 64 80 01        # PID 100, BLP bits 0 and 15: 101 and 116
            """)
        guard case .nack(let nack) = try XCTUnwrap(RTCPPacket.parseCompound(bytes).first) else { return XCTFail("not NACK") }
        XCTAssertEqual(nack.entries, [.init(packetID: 65530, lostBitmask: 0xFFFF), .init(packetID: 100, lostBitmask: 0x8001)])
        XCTAssertEqual(nack.sequenceNumbers, [65530, 65531, 65532, 65533, 65534, 65535, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100, 101, 116])
        XCTAssertEqual(try RTCPPacket.serializeCompound([.nack(nack)]), bytes)
        // Built from those numbers, the entries are the same.
        XCTAssertEqual(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, sequenceNumbers: nack.sequenceNumbers).entries, nack.entries)
        // An FCI of 2 bytes (a word with 2 bytes of RTCP padding, P = 1) is malformed, not read past.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("a1 cd 00 03 00 00 00 01 00 00 00 02 ff fa 00 02")))
    }

    /// The exponent/mantissa field at the byte level: 2.5 Mbit/s = 156 250 × 2^4 → `12 62 5a`; the largest
    /// exact value with exponent 0 is 262 143 (`03 ff ff`).
    func testREMBBitrateFieldBytes() throws {
        let bytes = try RTCPPacket.serializeCompound([.estimatedBitrate(RTCPRemb(senderSSRC: 1, bitrate: 2_500_000, ssrcs: []))])
        XCTAssertEqual(bytes, hex("8f ce 00 04 00 00 00 01 00 00 00 00 52 45 4d 42 00 12 62 5a"))
        let exact = try RTCPPacket.serializeCompound([.estimatedBitrate(RTCPRemb(senderSSRC: 1, bitrate: 262_143, ssrcs: [9]))])
        XCTAssertEqual(Array(exact.suffix(8)), hex("01 03 ff ff 00 00 00 09"))
        XCTAssertEqual(RTCPRemb.encode(bitrate: 262_144).exponent, 1)
        XCTAssertEqual(RTCPRemb.encode(bitrate: 262_144).mantissa, 131_072)
        XCTAssertEqual(try RTCPPacket.parseCompound(bytes), [.estimatedBitrate(RTCPRemb(senderSSRC: 1, bitrate: 2_500_000, ssrcs: []))])
        assertThrowsRTPError(try RTCPPacket.serializeCompound([.estimatedBitrate(RTCPRemb(senderSSRC: 1, bitrate: 1, ssrcs: Array(repeating: 7, count: 256)))]),
                             .tooMany(.feedback, count: 256, limit: 255))
    }

    /// Lengths that lie: each fails with what it needed and what was there.
    func testTruncatedFeedbackSaysWhatItNeeded() {
        // A PLI with only the sender SSRC (length 1): the common feedback header needs 12 bytes.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("81 ce 00 01 00 00 00 01")), .truncated(.feedback, needed: 12, available: 8))
        // A REMB that ends after its identifier: the bitrate word is missing.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("8f ce 00 03 00 00 00 01 00 00 00 00 52 45 4d 42")),
                             .truncated(.feedback, needed: 20, available: 16))
        // A REMB that names 2 SSRCs and carries 1.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("8f ce 00 05 00 00 00 01 00 00 00 00 52 45 4d 42 02 12 62 5a 00 00 00 09")),
                             .truncated(.feedback, needed: 28, available: 24))
        // A length field past the datagram's end.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("81 ce 00 03 00 00 00 01 00 00 00 02")),
                             .truncated(.rtcpHeader, needed: 16, available: 12))
    }

    /// What is not modelled is skipped, and the compound goes on: application-layer feedback that is not
    /// REMB (PSFB FMT 15 with another identifier), TMMBR (RTPFB FMT 3), SLI (PSFB FMT 2), APP (PT 204).
    func testOtherFeedbackIsSkipped() throws {
        let pli = hex("81 ce 00 02 00 00 00 01 00 00 00 02")
        let others = [
            hex("8f ce 00 04 00 00 00 01 00 00 00 00 41 42 43 44 00 00 00 00"),  // ALFB "ABCD"
            hex("83 cd 00 04 00 00 00 01 00 00 00 00 00 00 00 02 04 00 00 00"),  // TMMBR
            hex("82 ce 00 03 00 00 00 01 00 00 00 02 00 00 00 00"),  // SLI
            hex("80 cc 00 02 00 00 00 01 6e 61 6d 65"),  // APP "name"
        ]
        for other in others {
            XCTAssertEqual(try RTCPPacket.parseCompound(other + pli),
                           [.pictureLossIndication(.init(senderSSRC: 1, mediaSSRC: 2))], "\(other)")
        }
        // A PSFB FMT 15 too short to hold an identifier is skipped as well (it cannot be REMB).
        XCTAssertEqual(try RTCPPacket.parseCompound(hex("8f ce 00 02 00 00 00 01 00 00 00 00") + pli).count, 1)
    }
}
