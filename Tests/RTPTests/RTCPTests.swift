import RTP
import XCTest

/// RTCP packets, each against a fixture.
///
/// Fixture origin: constructed by hand from the packet diagrams of RFC 3550 §6.4.1 (SR), §6.4.2 (RR),
/// §6.5 (SDES), §6.6 (BYE), RFC 4585 §6.1/§6.2.1/§6.3.1 (NACK, PLI), RFC 5104 §4.3.1 (FIR) and
/// draft-alvestrand-rmcat-remb-03 §2.2 (REMB), with field values of the kind Chrome sends; the LSR/DLSR
/// values of the RR are the worked example of RFC 3550 §6.4.1 (A = 0xb710:8000, LSR = 0xb705:2000,
/// DLSR = 0x0005:4000 → RTT 6.125 s). Each test parses, compares every field, serializes and compares bytes.
/// During development the fixtures were also fed to an independent implementation, aiortc 1.16.0
/// (`RtcpPacket.parse`, `unpack_remb_fci`), which read the same field values and re-serialized the same
/// bytes (BYE aside: aiortc drops the reason); that check is not part of this test run.
final class RTCPTests: XCTestCase {
    static let senderReport = hex("""
        81 c8 00 0c        # V=2 P=0 RC=1 | PT=200 SR | length 12 (52 bytes)
        3a 5e 91 c7        # SSRC of sender
        e9 3c 8a 00        # NTP timestamp, seconds
        80 00 00 00        # NTP timestamp, fraction (0.5 s)
        01 2c 4f a0        # RTP timestamp
        00 00 05 dc        # sender's packet count 1500
        00 1a 2b 3c        # sender's octet count
        7b 1f 00 2d        # report block: SSRC_1
        0c ff ff fe        # fraction lost 12/256 | cumulative lost −2
        00 01 04 d2        # extended highest sequence number: cycle 1, seq 1234
        00 00 00 6e        # jitter 110
        8a 00 80 00        # LSR
        00 02 40 00        # DLSR 2.25 s
        """)
    static let receiverReport = hex("""
        81 c9 00 07        # RC=1 | PT=201 RR | length 7 (32 bytes)
        7b 1f 00 2d        # SSRC of packet sender
        3a 5e 91 c7        # SSRC_1
        05 00 00 1f        # fraction lost 5/256 | cumulative lost 31
        00 00 ff f0        # extended highest sequence number 65520
        00 00 01 2c        # jitter 300
        b7 05 20 00        # LSR 0xb705:2000
        00 05 40 00        # DLSR 0x0005:4000
        """)
    static let sourceDescription = hex("""
        81 ca 00 06        # SC=1 | PT=202 SDES | length 6 (28 bytes)
        3a 5e 91 c7        # SSRC
        01 10              # CNAME, 16 bytes
        78 37 59 6b 51 6d 32 52 62 39 73 54 7a 34 4c 64   # "x7YkQm2Rb9sTz4Ld"
        00 00              # end of items + padding to the word
        """)
    static let goodbye = hex("""
        81 cb 00 02        # SC=1 | PT=203 BYE | length 2
        3a 5e 91 c7        # SSRC
        03 62 79 65        # reason: 3 bytes "bye"
        """)
    static let nack = hex("""
        81 cd 00 03        # FMT=1 | PT=205 RTPFB | length 3
        7b 1f 00 2d        # SSRC of packet sender
        3a 5e 91 c7        # SSRC of media source
        04 d2 00 05        # PID 1234 | BLP 0b101: 1235 and 1237 lost too
        """)
    static let pli = hex("""
        81 ce 00 02        # FMT=1 | PT=206 PSFB | length 2
        7b 1f 00 2d        # SSRC of packet sender
        3a 5e 91 c7        # SSRC of media source
        """)
    static let fir = hex("""
        84 ce 00 04        # FMT=4 | PT=206 PSFB | length 4
        7b 1f 00 2d        # SSRC of packet sender
        00 00 00 00        # SSRC of media source: 0 (RFC 5104 §4.3.1.2)
        3a 5e 91 c7        # FCI: SSRC
        07 00 00 00        # FCI: Seq nr. 7 | reserved
        """)
    static let remb = hex("""
        8f ce 00 05        # FMT=15 | PT=206 PSFB | length 5
        7b 1f 00 2d        # SSRC of packet sender
        00 00 00 00        # SSRC of media source: 0
        52 45 4d 42        # "REMB"
        01 12 62 5a        # Num SSRC 1 | BR Exp 4 | BR Mantissa 156250 → 2 500 000 bit/s
        3a 5e 91 c7        # SSRC feedback
        """)
    /// Extended report (RFC 3611, PT 207): not modelled, must be skipped.
    static let extendedReport = hex("""
        80 cf 00 04        # PT=207 XR | length 4
        7b 1f 00 2d        # SSRC
        04 00 00 02        # RRTR block, length 2
        e9 3c 8a 00 80 00 00 00   # NTP timestamp
        """)
    /// Transport-wide congestion control feedback (RTPFB FMT 15): not modelled, must be skipped.
    static let transportCC = hex("""
        8f cd 00 05        # FMT=15 | PT=205 RTPFB | length 5
        7b 1f 00 2d 3a 5e 91 c7
        00 01 00 02 00 01 f4 00 20 02 08 04
        """)

    func testSenderReportFields() throws {
        guard case .senderReport(let sr) = try single(Self.senderReport) else { return XCTFail("not an SR") }
        XCTAssertEqual(sr.ssrc, 0x3A5E_91C7)
        XCTAssertEqual(sr.ntpTimestamp, NTPTimestamp(seconds: 0xE93C_8A00, fraction: 0x8000_0000))
        XCTAssertEqual(sr.rtpTimestamp, 0x012C_4FA0)
        XCTAssertEqual(sr.packetCount, 1500)
        XCTAssertEqual(sr.octetCount, 0x001A_2B3C)
        XCTAssertEqual(sr.reports, [RTCPReportBlock(
            ssrc: 0x7B1F_002D, fractionLost: 12, cumulativeLost: -2, extendedHighestSequenceNumber: 0x0001_04D2,
            jitter: 110, lastSenderReport: 0x8A00_8000, delaySinceLastSenderReport: 0x0002_4000)])
        XCTAssertEqual(try RTCPPacket.serializeCompound([.senderReport(sr)]), Self.senderReport)
    }

    func testReceiverReportFieldsAndRoundTripTime() throws {
        guard case .receiverReport(let rr) = try single(Self.receiverReport) else { return XCTFail("not an RR") }
        XCTAssertEqual(rr.ssrc, 0x7B1F_002D)
        let block = try XCTUnwrap(rr.reports.first)
        XCTAssertEqual(block.ssrc, 0x3A5E_91C7)
        XCTAssertEqual(block.fractionLost, 5)
        XCTAssertEqual(block.cumulativeLost, 31)
        XCTAssertEqual(block.extendedHighestSequenceNumber, 65520)
        XCTAssertEqual(block.jitter, 300)
        XCTAssertEqual(block.lastSenderReport, 0xB705_2000)
        XCTAssertEqual(block.delaySinceLastSenderReport, 0x0005_4000)
        // RFC 3550 §6.4.1's example: arrival 0xb710:8000 gives 6.125 s.
        let arrival = NTPTimestamp(seconds: 0xB710, fraction: 0x8000_0000)
        XCTAssertEqual(block.roundTripTimeMilliseconds(arrival: arrival), 6125)
        // No SR received yet: no RTT. Clock skew making it negative: 0.
        var noSR = block
        noSR.lastSenderReport = 0
        XCTAssertNil(noSR.roundTripTimeMilliseconds(arrival: arrival))
        XCTAssertEqual(block.roundTripTimeMilliseconds(arrival: NTPTimestamp(seconds: 0xB705, fraction: 0)), 0)
        XCTAssertEqual(try RTCPPacket.serializeCompound([.receiverReport(rr)]), Self.receiverReport)
    }

    func testSourceDescriptionAndGoodbye() throws {
        guard case .sourceDescription(let sdes) = try single(Self.sourceDescription) else { return XCTFail("not SDES") }
        XCTAssertEqual(sdes.chunks.count, 1)
        XCTAssertEqual(sdes.cname(of: 0x3A5E_91C7), "x7YkQm2Rb9sTz4Ld")
        XCTAssertEqual(sdes, RTCPSourceDescription(ssrc: 0x3A5E_91C7, cname: "x7YkQm2Rb9sTz4Ld"))
        XCTAssertEqual(try RTCPPacket.serializeCompound([.sourceDescription(sdes)]), Self.sourceDescription)

        guard case .goodbye(let bye) = try single(Self.goodbye) else { return XCTFail("not BYE") }
        XCTAssertEqual(bye, RTCPGoodbye(ssrcs: [0x3A5E_91C7], reason: "bye"))
        XCTAssertEqual(try RTCPPacket.serializeCompound([.goodbye(bye)]), Self.goodbye)
        XCTAssertEqual(try RTCPPacket.serializeCompound([.goodbye(RTCPGoodbye(ssrcs: [1, 2]))]),
                       hex("82 cb 00 02 00 00 00 01 00 00 00 02"))
    }

    func testSDESItemsOfEveryLengthPadCorrectly() throws {
        for length in 0...9 {
            let sdes = RTCPSourceDescription(chunks: [
                .init(ssrc: 1, items: [.init(type: 1, value: Array(repeating: 0x61, count: length))]),
                .init(ssrc: 2, items: [.init(type: 1, text: "b"), .init(type: 6, text: "screencast")]),
            ])
            let bytes = try RTCPPacket.serializeCompound([.sourceDescription(sdes)])
            XCTAssertEqual(bytes.count % 4, 0)
            XCTAssertEqual(try RTCPPacket.parseCompound(bytes), [.sourceDescription(sdes)], "length \(length)")
        }
    }

    func testFeedbackMessages() throws {
        guard case .nack(let nack) = try single(Self.nack) else { return XCTFail("not NACK") }
        XCTAssertEqual(nack.senderSSRC, 0x7B1F_002D)
        XCTAssertEqual(nack.mediaSSRC, 0x3A5E_91C7)
        XCTAssertEqual(nack.entries, [.init(packetID: 1234, lostBitmask: 0b101)])
        XCTAssertEqual(nack.sequenceNumbers, [1234, 1235, 1237])
        XCTAssertEqual(RTCPGenericNACK(senderSSRC: 0x7B1F_002D, mediaSSRC: 0x3A5E_91C7, sequenceNumbers: [1237, 1234, 1235]), nack)
        XCTAssertEqual(try RTCPPacket.serializeCompound([.nack(nack)]), Self.nack)

        guard case .pictureLossIndication(let pli) = try single(Self.pli) else { return XCTFail("not PLI") }
        XCTAssertEqual(pli, RTCPPictureLossIndication(senderSSRC: 0x7B1F_002D, mediaSSRC: 0x3A5E_91C7))
        XCTAssertEqual(try RTCPPacket.serializeCompound([.pictureLossIndication(pli)]), Self.pli)

        guard case .fullIntraRequest(let fir) = try single(Self.fir) else { return XCTFail("not FIR") }
        XCTAssertEqual(fir, RTCPFullIntraRequest(senderSSRC: 0x7B1F_002D, entries: [.init(ssrc: 0x3A5E_91C7, sequenceNumber: 7)]))
        XCTAssertEqual(try RTCPPacket.serializeCompound([.fullIntraRequest(fir)]), Self.fir)

        guard case .estimatedBitrate(let remb) = try single(Self.remb) else { return XCTFail("not REMB") }
        XCTAssertEqual(remb.senderSSRC, 0x7B1F_002D)
        XCTAssertEqual(remb.mediaSSRC, 0)
        XCTAssertEqual(remb.bitrate, 2_500_000)
        XCTAssertEqual(remb.kilobitsPerSecond, 2500)
        XCTAssertEqual(remb.ssrcs, [0x3A5E_91C7])
        XCTAssertEqual(try RTCPPacket.serializeCompound([.estimatedBitrate(remb)]), Self.remb)
    }

    func testNACKPackingAcrossTheWrap() {
        let nack = RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, sequenceNumbers: [65534, 65535, 0, 15, 16, 40])
        // 65535 and 0 ride on 65534's bitmask; 15 is 17 away, so it opens an entry that carries 16.
        XCTAssertEqual(nack.entries, [
            .init(packetID: 65534, lostBitmask: 0b11), .init(packetID: 15, lostBitmask: 0b1), .init(packetID: 40, lostBitmask: 0),
        ])
        XCTAssertEqual(nack.sequenceNumbers, [65534, 65535, 0, 15, 16, 40])
        XCTAssertEqual(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, sequenceNumbers: [5, 5, 5]).entries,
                       [.init(packetID: 5, lostBitmask: 0)])
        XCTAssertEqual(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, sequenceNumbers: []).entries, [])
    }

    func testREMBExponentAndMantissa() throws {
        for bitrate: UInt64 in [0, 1, 262_143, 262_144, 300_000, 2_500_000, 1_000_000_000, 1 << 40] {
            let (exponent, mantissa) = RTCPRemb.encode(bitrate: bitrate)
            XCTAssertLessThanOrEqual(mantissa, 0x3_FFFF)
            let decoded = UInt64(mantissa) << exponent
            XCTAssertLessThanOrEqual(decoded, bitrate)
            XCTAssertLessThan(bitrate - decoded, max(1, bitrate >> 17), "\(bitrate)")
            let packet = RTCPRemb(senderSSRC: 1, bitrate: bitrate, ssrcs: [2, 3])
            let bytes = try RTCPPacket.serializeCompound([.estimatedBitrate(packet)])
            XCTAssertEqual(try RTCPPacket.parseCompound(bytes), [.estimatedBitrate(RTCPRemb(senderSSRC: 1, bitrate: decoded, ssrcs: [2, 3]))])
        }
        // Exponent 63 with a full mantissa saturates instead of overflowing.
        let huge = hex("8f ce 00 04 00 00 00 01 00 00 00 00 52 45 4d 42 00 ff ff ff")
        guard case .estimatedBitrate(let remb) = try single(huge) else { return XCTFail("not REMB") }
        XCTAssertEqual(remb.bitrate, .max)
    }

    /// A compound packet as a browser's receiver sends it: RR, SDES, REMB, with an XR and a transport-cc
    /// packet that are skipped, and padding on the last packet.
    static var compound: [UInt8] {
        receiverReport + sourceDescription + extendedReport + remb + transportCC
            + hex("a1 ce 00 03 7b 1f 00 2d 3a 5e 91 c7 00 00 00 04")  // PLI with P=1, 4 padding bytes
    }

    func testCompoundPacketSkipsUnknownTypes() throws {
        let packets = try RTCPPacket.parseCompound(Self.compound)
        XCTAssertEqual(packets.count, 4)
        guard case .receiverReport = packets[0], case .sourceDescription = packets[1],
              case .estimatedBitrate = packets[2], case .pictureLossIndication = packets[3] else {
            return XCTFail("wrong packets: \(packets)")
        }
        XCTAssertEqual(try RTCPPacket.serializeCompound(packets),
                       Self.receiverReport + Self.sourceDescription + Self.remb + Self.pli)
    }

    func testEveryTruncationOfACompoundThrowsOrStopsAtAPacketBoundary() throws {
        let whole = Self.compound
        let all = try RTCPPacket.parseCompound(whole)
        for length in 0..<whole.count {
            do {
                let packets = try RTCPPacket.parseCompound(Array(whole[0..<length]))
                // Only a prefix cut exactly between packets parses; it yields the packets before the cut.
                XCTAssertEqual(packets, Array(all.prefix(packets.count)), "length \(length)")
            } catch {
                // Expected for every cut inside a packet.
            }
        }
        for fixture in [Self.senderReport, Self.receiverReport, Self.sourceDescription, Self.goodbye, Self.nack,
                        Self.pli, Self.fir, Self.remb] {
            for length in 1..<fixture.count {
                assertThrowsRTPError(try RTCPPacket.parseCompound(Array(fixture[0..<length])), nil, "cut at \(length)")
            }
        }
    }

    func testMalformedPacketsThrow() {
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("41 c8 00 00")), .badVersion(1))
        // RC says 2 report blocks, the length holds one.
        var sr = Self.senderReport
        sr[0] = 0x82
        assertThrowsRTPError(try RTCPPacket.parseCompound(sr))
        // Length beyond the datagram.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("81 c9 00 09 00 00 00 01")))
        // NACK FCI not a whole number of entries (length covers 2 bytes of FCI plus padding words).
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("a1 cd 00 03 00 00 00 01 00 00 00 02 00 01 00 02")))
        // Padding count larger than the packet.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("a1 ce 00 02 00 00 00 01 00 00 00 09")))
        // SDES item running past the packet.
        assertThrowsRTPError(try RTCPPacket.parseCompound(hex("81 ca 00 02 00 00 00 01 01 09 61 62")))
    }

    func testGarbageNeverCrashes() {
        var generator = SplitMix64(seed: 0xBAD)
        for round in 0..<20_000 {
            var bytes = randomBytes(Int.random(in: 0...80, using: &generator), using: &generator)
            if bytes.count >= 4, round % 2 == 0 {
                bytes[0] = 0x80 | (bytes[0] & 0x3F)
                bytes[1] = UInt8.random(in: 200...206, using: &generator)
                let words = (bytes.count / 4) - 1
                bytes[2] = 0
                bytes[3] = UInt8(max(0, min(words, Int.random(in: 0...20, using: &generator))))
            }
            if let packets = try? RTCPPacket.parseCompound(bytes) {
                _ = try? RTCPPacket.serializeCompound(packets)
            }
        }
    }

    func testSerializeRefusesTooManyItems() {
        let block = RTCPReportBlock(ssrc: 1, fractionLost: 0, cumulativeLost: 0, extendedHighestSequenceNumber: 0,
                                    jitter: 0, lastSenderReport: 0, delaySinceLastSenderReport: 0)
        assertThrowsRTPError(try RTCPPacket.serializeCompound([.receiverReport(.init(ssrc: 1, reports: Array(repeating: block, count: 32)))]))
        let tooLong = RTCPSourceDescription(chunks: [.init(ssrc: 1, items: [.init(type: 1, value: Array(repeating: 0, count: 256))])])
        var buffer: [UInt8] = [9]
        assertThrowsRTPError(try RTCPPacket.sourceDescription(tooLong).serialize(into: &buffer))
        XCTAssertEqual(buffer, [9], "a failed write leaves the buffer as it was")
        // Cumulative loss beyond 24 bits is clamped.
        var big = block
        big.cumulativeLost = -10_000_000
        let bytes = try? RTCPPacket.serializeCompound([.receiverReport(.init(ssrc: 1, reports: [big]))])
        XCTAssertEqual(bytes.map { Array($0[12..<16]) }, [0x00, 0x80, 0x00, 0x00])
    }

    private func single(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws -> RTCPPacket {
        let packets = try RTCPPacket.parseCompound(bytes)
        XCTAssertEqual(packets.count, 1, file: file, line: line)
        return try XCTUnwrap(packets.first, file: file, line: line)
    }
}
