import RTP
import XCTest

/// Compound RTCP as RFC 3550 §6.1 builds it — a report first, then SDES with a CNAME, and BYE last when a
/// source leaves — and the rules every packet of a compound shares: the length field in words minus one,
/// padding (P = 1, the last byte counts it, §6.4.1), SDES chunks ending in one to four null bytes up to a
/// word (§6.5), BYE's optional reason (§6.6).
///
/// Fixture origin: written by hand from the diagrams of RFC 3550 §6.4.1 (SR), §6.5 (SDES) and §6.6 (BYE);
/// the SDES packet has three chunks chosen so each needs a different amount of null padding (3, 2 and a
/// whole word of 4), the last because its items end exactly on a word boundary.
final class RTCPCompoundTests: XCTestCase {
    static let senderReport = hex("""
        80 c8 00 06        # V=2 P=0 RC=0 | PT=200 SR | length 6 (28 bytes)
        12 34 56 78        # SSRC of sender
        e9 3c 8a 00        # NTP timestamp, seconds
        40 00 00 00        # NTP timestamp, fraction: 0.25 s
        ff ff ff f0        # RTP timestamp, 16 ticks before the 32-bit wrap
        ff ff ff ff        # sender's packet count, about to wrap
        00 12 d6 87        # sender's octet count 1234567
        """)
    static let sourceDescription = hex("""
        83 ca 00 0a        # V=2 P=0 SC=3 | PT=202 SDES | length 10 (44 bytes)
        12 34 56 78        # chunk 1: SSRC
        01 02 61 62        #   CNAME, 2 bytes: "ab"
        06 03 73 63 31     #   TOOL, 3 bytes: "sc1"
        00 00 00           #   end of items, padded to the word (3 null bytes)
        9a bc de f0        # chunk 2: SSRC
        01 04 77 78 79 7a  #   CNAME, 4 bytes: "wxyz"
        00 00              #   end of items (2 null bytes)
        00 00 00 03        # chunk 3: SSRC 3
        01 02 78 79        #   CNAME, 2 bytes: "xy" — the items end on a word boundary ...
        00 00 00 00        #   ... so the end takes a whole word of nulls
        """)
    static let goodbye = hex("""
        82 cb 00 04        # V=2 P=0 SC=2 | PT=203 BYE | length 4 (20 bytes)
        12 34 56 78        # SSRC
        9a bc de f0        # SSRC
        04 67 6f 6e 65     # reason: 4 bytes, "gone"
        00 00 00           # padding to the word
        """)
    static var compound: [UInt8] { senderReport + sourceDescription + goodbye }

    static let expectedSenderReport = RTCPSenderReport(
        ssrc: 0x1234_5678, ntpTimestamp: NTPTimestamp(seconds: 0xE93C_8A00, fraction: 0x4000_0000), rtpTimestamp: 0xFFFF_FFF0,
        packetCount: 0xFFFF_FFFF, octetCount: 1_234_567)
    static let expectedSourceDescription = RTCPSourceDescription(chunks: [
        .init(ssrc: 0x1234_5678, items: [.init(type: 1, text: "ab"), .init(type: 6, text: "sc1")]),
        .init(ssrc: 0x9ABC_DEF0, items: [.init(type: 1, text: "wxyz")]),
        .init(ssrc: 3, items: [.init(type: 1, text: "xy")]),
    ])
    static let expectedGoodbye = RTCPGoodbye(ssrcs: [0x1234_5678, 0x9ABC_DEF0], reason: "gone")

    func testSenderReportSourceDescriptionGoodbyeFieldByField() throws {
        let packets = try RTCPPacket.parseCompound(Self.compound)
        XCTAssertEqual(packets.count, 3)
        guard case .senderReport(let sr) = packets[0], case .sourceDescription(let sdes) = packets[1],
              case .goodbye(let bye) = packets[2] else { return XCTFail("wrong packets: \(packets)") }

        XCTAssertEqual(sr.ssrc, 0x1234_5678)
        XCTAssertEqual(sr.ntpTimestamp.seconds, 0xE93C_8A00)
        XCTAssertEqual(sr.ntpTimestamp.fraction, 0x4000_0000)
        XCTAssertEqual(sr.ntpTimestamp.compact, 0x8A00_4000, "the LSR a receiver echoes: middle 32 bits")
        XCTAssertEqual(sr.rtpTimestamp, 0xFFFF_FFF0)
        XCTAssertEqual(sr.packetCount, 0xFFFF_FFFF)
        XCTAssertEqual(sr.octetCount, 1_234_567)
        XCTAssertEqual(sr.reports, [])
        XCTAssertEqual(sr, Self.expectedSenderReport)

        XCTAssertEqual(sdes.chunks.map(\.ssrc), [0x1234_5678, 0x9ABC_DEF0, 3])
        XCTAssertEqual(sdes.chunks[0].items.map(\.type), [1, 6])
        XCTAssertEqual(sdes.chunks[0].items.map(\.text), ["ab", "sc1"])
        XCTAssertEqual(sdes.cname(of: 0x1234_5678), "ab")
        XCTAssertEqual(sdes.cname(of: 0x9ABC_DEF0), "wxyz")
        XCTAssertEqual(sdes.cname(of: 3), "xy")
        XCTAssertNil(sdes.cname(of: 4))
        XCTAssertEqual(sdes, Self.expectedSourceDescription)

        XCTAssertEqual(bye.ssrcs, [0x1234_5678, 0x9ABC_DEF0])
        XCTAssertEqual(bye.reason, "gone")

        XCTAssertEqual(try RTCPPacket.serializeCompound(packets), Self.compound)
        XCTAssertEqual(try RTCPPacket.serializeCompound([
            .senderReport(Self.expectedSenderReport), .sourceDescription(Self.expectedSourceDescription),
            .goodbye(Self.expectedGoodbye),
        ]), Self.compound, "built from the values, the same bytes")
    }

    /// Each packet's length field is its size in words minus one (§6.4.1): walk the built compound by it.
    func testLengthFieldsWalkTheCompound() throws {
        let bytes = Self.compound
        var offset = 0
        var types: [UInt8] = []
        while offset < bytes.count {
            XCTAssertEqual(bytes[offset] >> 6, 2, "version at \(offset)")
            types.append(bytes[offset + 1])
            offset += (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]) + 1) * 4
        }
        XCTAssertEqual(offset, bytes.count, "the last length ends exactly at the datagram's end")
        XCTAssertEqual(types, [200, 202, 203])
    }

    // MARK: - SDES

    /// A chunk's items end with a null byte and nulls up to the word; the number of nulls depends on where the
    /// items end, 1 to 4. Every item length 0…12 and chunk layout round-trips, and the items never run into
    /// the next chunk.
    func testSDESNullPaddingForEveryItemEnd() throws {
        for length in 0...12 {
            let value = Array("abcdefghijkl".utf8.prefix(length))
            let bytes = try RTCPPacket.serializeCompound([.sourceDescription(RTCPSourceDescription(chunks: [
                .init(ssrc: 1, items: [.init(type: 2, value: value)]), .init(ssrc: 2, items: [.init(type: 1, text: "z")]),
            ]))])
            // Chunk 1: SSRC, type, length, value, then 1…4 nulls to the word.
            let itemsEnd = 4 + 4 + 2 + length
            let nulls = 4 - (itemsEnd % 4)
            XCTAssertEqual(Array(bytes[itemsEnd..<(itemsEnd + nulls)]), Array(repeating: 0, count: nulls), "length \(length)")
            XCTAssertEqual(Array(bytes[(itemsEnd + nulls)..<(itemsEnd + nulls + 4)]), [0, 0, 0, 2], "chunk 2's SSRC follows")
            XCTAssertEqual(bytes.count, itemsEnd + nulls + 8)
            XCTAssertEqual(Int(bytes[3]), bytes.count / 4 - 1)
            guard case .sourceDescription(let parsed)? = try RTCPPacket.parseCompound(bytes).first else { return XCTFail() }
            XCTAssertEqual(parsed.chunks[0].items.first?.value, value)
            XCTAssertEqual(parsed.cname(of: 2), "z")
        }
    }

    /// Chunks with no items (just the null word), SDES with no chunks, an item of the largest length, and
    /// the first CNAME winning when a chunk repeats it.
    func testSDESEmptyChunksAndLongestItem() throws {
        let empty = hex("""
            82 ca 00 04        # SC=2 | SDES | length 4
            00 00 00 01 00 00 00 00   # chunk: SSRC 1, no items
            00 00 00 02 00 00 00 00   # chunk: SSRC 2, no items
            """)
        let parsed = RTCPSourceDescription(chunks: [.init(ssrc: 1, items: []), .init(ssrc: 2, items: [])])
        XCTAssertEqual(try RTCPPacket.parseCompound(empty), [.sourceDescription(parsed)])
        XCTAssertEqual(try RTCPPacket.serializeCompound([.sourceDescription(parsed)]), empty)
        XCTAssertNil(parsed.cname(of: 1))

        let none = hex("80 ca 00 00")
        XCTAssertEqual(try RTCPPacket.parseCompound(none), [.sourceDescription(RTCPSourceDescription(chunks: []))])
        XCTAssertEqual(try RTCPPacket.serializeCompound([.sourceDescription(RTCPSourceDescription(chunks: []))]), none)

        let longest = RTCPSourceDescription(chunks: [.init(ssrc: 9, items: [.init(type: 1, value: Array(repeating: 0x78, count: 255))])])
        let bytes = try RTCPPacket.serializeCompound([.sourceDescription(longest)])
        XCTAssertEqual(bytes.count, 4 + 4 + 2 + 255 + 3, "257 item bytes after the SSRC, one null, two to the word")
        XCTAssertEqual(Array(bytes[8...9]), [0x01, 0xFF])
        XCTAssertEqual(try RTCPPacket.parseCompound(bytes), [.sourceDescription(longest)])

        let twice = RTCPSourceDescription(chunks: [.init(ssrc: 5, items: [.init(type: 1, text: "first"), .init(type: 1, text: "second")])])
        XCTAssertEqual(twice.cname(of: 5), "first")
    }

    /// SDES that lies: more chunks than present, an item longer than the packet, items without their null
    /// end. Each says what it needed (bytes counted from the packet's start).
    func testSDESTruncationsSayWhatTheyNeeded() {
        // SC = 2, one chunk: SSRC 1 + CNAME "a" + null.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("82 ca 00 02 00 00 00 01 01 01 61 00")),
                             .truncated(.sourceDescription, needed: 16, available: 12))
        // An item claiming 9 bytes with 2 left.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("81 ca 00 02 00 00 00 01 01 09 61 62")),
                             .truncated(.sourceDescription, needed: 19, available: 12))
        // An item that fills the packet exactly, with no null after it.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("81 ca 00 02 00 00 00 01 01 02 61 62")),
                             .truncated(.sourceDescription, needed: 13, available: 12))
        // A type byte as the last byte, its length byte missing.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("81 ca 00 02 00 00 00 01 01 01 61 02")),
                             .truncated(.sourceDescription, needed: 13, available: 12))
        // SC = 1 and nothing at all.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("81 ca 00 00")),
                             .truncated(.sourceDescription, needed: 8, available: 4))
    }

    /// Writing refuses item type 0 (it would end the chunk), items over 255 bytes and a 32nd chunk, and leaves
    /// the buffer as it was.
    func testSDESWritingLimits() throws {
        let at31 = RTCPSourceDescription(chunks: (0..<31).map { .init(ssrc: UInt32($0), items: [.init(type: 1, text: "c")]) })
        let bytes = try RTCPPacket.serializeCompound([.sourceDescription(at31)])
        XCTAssertEqual(bytes[0], 0x80 | 31)
        XCTAssertEqual(bytes.count, 4 + 31 * 8)
        XCTAssertEqual(try RTCPPacket.parseCompound(bytes), [.sourceDescription(at31)])

        var over = at31
        over.chunks.append(.init(ssrc: 99, items: []))
        let refusals: [(RTCPSourceDescription, RTPError)] = [
            (over, .tooMany(.sourceDescription, count: 32, limit: 31)),
            (RTCPSourceDescription(chunks: [.init(ssrc: 1, items: [.init(type: 1, text: "a"), .init(type: 0, text: "b")])]),
             .malformed(.sourceDescription, "item type 0")),
            (RTCPSourceDescription(chunks: [.init(ssrc: 1, items: []), .init(ssrc: 2, items: [.init(type: 1, value: Array(repeating: 1, count: 256))])]),
             .tooMany(.sourceDescription, count: 256, limit: 255)),
        ]
        for (sdes, error) in refusals {
            var buffer = Self.senderReport
            assertThrowsRTPError(try RTCPPacket.sourceDescription(sdes).serialize(into: &buffer), error)
            XCTAssertEqual(buffer, Self.senderReport, "\(error): the buffer is as it was")
        }
    }

    // MARK: - BYE

    /// BYE with no reason, an empty reason, a reason of every length up to 8 (padding 0…3), the longest reason,
    /// and no SSRC at all.
    func testGoodbyeReasonsAndPadding() throws {
        XCTAssertEqual(try RTCPPacket.serializeCompound([.goodbye(RTCPGoodbye(ssrcs: [7]))]), hex("81 cb 00 01 00 00 00 07"))
        XCTAssertEqual(try RTCPPacket.serializeCompound([.goodbye(RTCPGoodbye(ssrcs: [7], reason: ""))]),
                       hex("81 cb 00 02 00 00 00 07 00 00 00 00"), "an empty reason is a zero length byte, padded")
        XCTAssertEqual(try RTCPPacket.parseCompound(hex("81 cb 00 02 00 00 00 07 00 00 00 00")),
                       [.goodbye(RTCPGoodbye(ssrcs: [7], reason: ""))])
        XCTAssertEqual(try RTCPPacket.parseCompound(hex("80 cb 00 00")), [.goodbye(RTCPGoodbye(ssrcs: []))])
        for length in 0...8 {
            let reason = String("timeout!".prefix(length))
            let bytes = try RTCPPacket.serializeCompound([.goodbye(RTCPGoodbye(ssrcs: [1, 2], reason: reason))])
            XCTAssertEqual(bytes.count, 12 + (1 + length + 3) / 4 * 4, "reason of \(length)")
            XCTAssertEqual(bytes[12], UInt8(length))
            XCTAssertTrue(bytes[(13 + length)...].allSatisfy { $0 == 0 }, "null padding after the reason")
            XCTAssertEqual(try RTCPPacket.parseCompound(bytes), [.goodbye(RTCPGoodbye(ssrcs: [1, 2], reason: reason))])
        }
        let longest = String(repeating: "r", count: 255)
        let bytes = try RTCPPacket.serializeCompound([.goodbye(RTCPGoodbye(ssrcs: [1], reason: longest))])
        XCTAssertEqual(bytes.count, 8 + 256)
        XCTAssertEqual(try RTCPPacket.parseCompound(bytes), [.goodbye(RTCPGoodbye(ssrcs: [1], reason: longest))])
    }

    func testGoodbyeLimitsAndTruncations() {
        var buffer: [UInt8] = [1, 2]
        assertThrowsRTPError(try RTCPPacket.goodbye(RTCPGoodbye(ssrcs: [1], reason: String(repeating: "r", count: 256))).serialize(into: &buffer),
                             .tooMany(.goodbye, count: 256, limit: 255))
        assertThrowsRTPError(try RTCPPacket.goodbye(RTCPGoodbye(ssrcs: Array(0..<32))).serialize(into: &buffer),
                             .tooMany(.goodbye, count: 32, limit: 31))
        XCTAssertEqual(buffer, [1, 2])
        XCTAssertEqual(try RTCPPacket.serializeCompound([.goodbye(RTCPGoodbye(ssrcs: Array(0..<31)))]).count, 4 + 31 * 4)
        // SC = 2 with one SSRC.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("82 cb 00 01 00 00 00 01")), .truncated(.goodbye, needed: 12, available: 8))
        // A reason of 9 bytes in a packet holding 3 after the length byte.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("81 cb 00 02 00 00 00 01 09 61 62 63")),
                             .truncated(.goodbye, needed: 18, available: 12))
    }

    // MARK: - Every packet at every length

    /// Each packet's length field lowered word by word (the datagram cut to match, so only the inner parser
    /// can notice): every result is a typed error or a packet that writes back to exactly those bytes —
    /// never a crash, never a packet that silently lost or invented a field.
    func testEveryShorterLengthFieldIsAnErrorOrAnExactPacket() throws {
        let fixtures = [
            Self.senderReport, Self.sourceDescription, Self.goodbye, RTCPTests.senderReport, RTCPTests.receiverReport,
            RTCPTests.sourceDescription, RTCPTests.goodbye, RTCPTests.nack, RTCPTests.pli, RTCPTests.fir, RTCPTests.remb,
            RTCPFeedbackWireTests.twoEntryFIR,
        ]
        var parsedCount = 0
        var refusedCount = 0
        for fixture in fixtures {
            for words in 0..<(fixture.count / 4 - 1) {
                var bytes = Array(fixture.prefix((words + 1) * 4))
                bytes[2] = UInt8(words >> 8)
                bytes[3] = UInt8(words & 0xFF)
                do {
                    let packets = try RTCPPacket.parseCompound(bytes)
                    if packets.isEmpty {
                        // Only application-layer feedback too short to hold "REMB" is skipped as unknown.
                        XCTAssertEqual(Array(bytes.prefix(2)), [0x8F, 0xCE], "\(words) words")
                        XCTAssertLessThan(words, 3)
                        continue
                    }
                    XCTAssertEqual(packets.count, 1, "\(fixture.prefix(2)) in \(words) words")
                    XCTAssertEqual(try RTCPPacket.serializeCompound(packets), bytes, "\(fixture.prefix(2)) in \(words) words")
                    parsedCount += 1
                } catch {
                    refusedCount += 1
                }
            }
        }
        // Shortened BYEs (fewer words: no reason) and NACK/FIR with fewer entries are still well formed; the
        // rest are refused.
        XCTAssertGreaterThan(parsedCount, 0)
        XCTAssertGreaterThan(refusedCount, 30)
    }

    /// Every packet type, padded (P = 1) by 4 and by 8 bytes, parses to what it was without padding, and so
    /// does a compound whose middle packet is padded.
    func testPaddingIsRemovedBeforeEveryPacketsBody() throws {
        let fixtures = [
            Self.senderReport, Self.sourceDescription, Self.goodbye, RTCPTests.receiverReport, RTCPTests.nack,
            RTCPTests.pli, RTCPTests.fir, RTCPTests.remb,
        ]
        for fixture in fixtures {
            let plain = try RTCPPacket.parseCompound(fixture)
            for padding in [4, 8] {
                var padded = fixture + Array(repeating: 0, count: padding - 1) + [UInt8(padding)]
                padded[0] |= 0x20
                let words = padded.count / 4 - 1
                padded[2] = UInt8(words >> 8)
                padded[3] = UInt8(words & 0xFF)
                XCTAssertEqual(try RTCPPacket.parseCompound(padded), plain, "\(fixture.prefix(2)) + \(padding)")
                XCTAssertEqual(try RTCPPacket.parseCompound(padded + RTCPTests.pli), plain + (try RTCPPacket.parseCompound(RTCPTests.pli)),
                               "padded packet inside a compound")
            }
        }
        // A padding count equal to the whole body is allowed (a PLI body of 8 bytes cannot be, it needs them).
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("a1 ce 00 02 00 00 00 01 00 00 00 08")),
                             .truncated(.feedback, needed: 12, available: 4))
        XCTAssertEqual(try RTCPPacket.parseCompound(hex("a0 cb 00 01 00 00 00 04")), [.goodbye(RTCPGoodbye(ssrcs: []))])
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("a0 cb 00 01 00 00 00 05")), .badPadding(count: 5, available: 4))
    }

    /// A bad version or a length past the end in the second packet fails the whole datagram.
    func testAnyBadPacketFailsTheWholeCompound() {
        var badVersion = Self.compound
        badVersion[Self.senderReport.count] = 0xC3  // version 3 on the SDES
        assertThrowsRTPError(try RTCPPacket.parseCompound(badVersion), .badVersion(3))
        var badLength = Self.compound
        badLength[Self.senderReport.count + 3] = 0x0B  // SDES one word longer than it is
        assertThrowsRTPError(try RTCPPacket.parseCompound(badLength))
        assertThrowsRTPError(try RTCPPacket.parseCompound(Self.compound + [0x80, 0xC9]),
                             .truncated(.rtcpHeader, needed: 4, available: 2))
        XCTAssertEqual(try RTCPPacket.parseCompound([]), [])
    }

    // MARK: - Round-trip time from the wire

    /// The SR/RR exchange of RFC 3550 §6.4.1 through bytes: the sender stamps an SR from its wall clock, the
    /// receiver echoes LSR = the SR's middle 32 bits and DLSR = its holding time in 1/65536 s, and the sender
    /// computes A − LSR − DLSR when the RR arrives. An 80 ms path and a 1.5 s hold give 80 ms, to the
    /// 1/65536 s of the format.
    func testRoundTripTimeThroughSenderAndReceiverReports() throws {
        let sentMicros: UInt64 = 1_704_067_200_250_000
        let report = RTCPSenderReport(
            ssrc: 0xAAAA, ntpTimestamp: NTPTimestamp(unixMicroseconds: sentMicros), rtpTimestamp: 0xFFFF_0000,
            packetCount: 10, octetCount: 12_000)
        let srBytes = try RTCPPacket.serializeCompound([.senderReport(report)])
        guard case .senderReport(let received)? = try RTCPPacket.parseCompound(srBytes).first else { return XCTFail() }
        let holdSeconds = 1.5
        let block = RTCPReportBlock(
            ssrc: received.ssrc, fractionLost: 0, cumulativeLost: 0, extendedHighestSequenceNumber: 65_546, jitter: 3,
            lastSenderReport: received.ntpTimestamp.compact, delaySinceLastSenderReport: UInt32(holdSeconds * 65_536))
        let rrBytes = try RTCPPacket.serializeCompound([.receiverReport(RTCPReceiverReport(ssrc: 0xBBBB, reports: [block]))])
        XCTAssertEqual(Array(rrBytes[28..<32]), [0x00, 0x01, 0x80, 0x00], "DLSR 1.5 s = 0x0001:8000")
        guard case .receiverReport(let rr)? = try RTCPPacket.parseCompound(rrBytes).first else { return XCTFail() }
        let arrival = NTPTimestamp(unixMicroseconds: sentMicros + 1_500_000 + 80_000)
        let rtt = try XCTUnwrap(rr.reports.first?.roundTripTimeMilliseconds(arrival: arrival))
        XCTAssertEqual(rtt, 80, accuracy: 1000.0 / 65_536, "within one unit of the compact format")
    }
}
