import RTP
import XCTest

/// Building feedback messages from what a receiver knows, and their fields at the limits: Generic NACK packing
/// (RFC 4585 §6.2.1: PID + a 16-bit BLP for PID + 1 … PID + 16), the RTCP length field's 65535 words as the
/// bound on NACK entries, and REMB's 6-bit exponent and 18-bit mantissa (draft-alvestrand-rmcat-remb-03 §2.2)
/// at every exponent step, on writing and on reading.
final class RTCPFeedbackBuildingTests: XCTestCase {
    // MARK: - Generic NACK

    /// PID + 16 is the last number a BLP reaches (bit 15); PID + 17 opens a new entry.
    func testBitmaskReachesSixteenAndNoFurther() throws {
        let sixteen = RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, sequenceNumbers: [100, 116])
        XCTAssertEqual(sixteen.entries, [.init(packetID: 100, lostBitmask: 0x8000)])
        XCTAssertEqual(try RTCPPacket.serializeCompound([.nack(sixteen)]), hex("81 cd 00 03 00 00 00 01 00 00 00 02 00 64 80 00"))
        let seventeen = RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, sequenceNumbers: [100, 117])
        XCTAssertEqual(seventeen.entries, [.init(packetID: 100, lostBitmask: 0), .init(packetID: 117, lostBitmask: 0)])
        // Eighteen in a row across the wrap: a PID with all 16 BLP bits, then one more entry.
        let run = RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, sequenceNumbers: Array(65_530...65_535) + Array(0...11))
        XCTAssertEqual(run.entries, [.init(packetID: 65_530, lostBitmask: 0xFFFF), .init(packetID: 11, lostBitmask: 0)])
        XCTAssertEqual(run.sequenceNumbers, Array(65_530...65_535) + Array(0...11))
    }

    /// Order does not matter, nor which number comes first, as long as all lie within half the circle of it:
    /// entries follow sending order and every number is named once.
    func testPackingIgnoresInputOrderAndDuplicates() {
        let sorted = RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, sequenceNumbers: [5, 10, 30])
        for order: [UInt16] in [[10, 5, 30], [30, 10, 5], [5, 30, 10, 10, 5]] {
            XCTAssertEqual(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, sequenceNumbers: order), sorted, "\(order)")
        }
        XCTAssertEqual(sorted.entries, [.init(packetID: 5, lostBitmask: 1 << 4), .init(packetID: 30, lostBitmask: 0)])
        // Across the wrap, whichever number is given first.
        let wrapped = RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, sequenceNumbers: [3, 65_534])
        XCTAssertEqual(wrapped.entries, [.init(packetID: 65_534, lostBitmask: 1 << 4)])
    }

    /// Random loss patterns near the wrap: the NACK names exactly the lost numbers, each once, in sending
    /// order, in as few entries as possible (counted independently: a new entry for each number more than 16
    /// after the current entry's PID), and survives the wire.
    func testRandomLossPatternsPackMinimallyAndExactly() throws {
        var generator = SplitMix64(seed: 0x4ACC)
        for round in 0..<300 {
            let start = UInt16.random(in: 0...UInt16.max, using: &generator)
            let span = Int.random(in: 1...2000, using: &generator)
            let density = Double.random(in: 0.01...0.9, using: &generator)
            var offsets: [Int] = []
            for offset in 0..<span where Double.random(in: 0..<1, using: &generator) < density { offsets.append(offset) }
            if offsets.isEmpty { offsets = [0] }
            let lost = offsets.map { start &+ UInt16($0) }
            let nack = RTCPGenericNACK(senderSSRC: 7, mediaSSRC: 8, sequenceNumbers: lost.shuffled(using: &generator) + lost.prefix(3))
            XCTAssertEqual(nack.sequenceNumbers, lost, "round \(round)")
            var minimal = 0
            var entryStart = Int.min
            for offset in offsets where offset > entryStart + 16 {
                minimal += 1
                entryStart = offset
            }
            XCTAssertEqual(nack.entries.count, minimal, "round \(round)")
            let bytes = try RTCPPacket.serializeCompound([.nack(nack)])
            XCTAssertEqual(bytes.count, 12 + 4 * minimal)
            XCTAssertEqual(try RTCPPacket.parseCompound(bytes), [.nack(nack)])
        }
    }

    /// The length field bounds a NACK at 65533 entries (2 SSRC words + entries = 65535 words); one more is
    /// refused with the buffer left as it was.
    func testEntryCountBoundedByTheLengthField() throws {
        let entries = (0..<65_533).map { RTCPGenericNACK.Entry(packetID: UInt16(truncatingIfNeeded: $0 * 17), lostBitmask: 0) }
        let bytes = try RTCPPacket.serializeCompound([.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, entries: entries))])
        XCTAssertEqual(bytes.count, 4 * 65_536)
        XCTAssertEqual(Array(bytes[0...3]), [0x81, 0xCD, 0xFF, 0xFF])
        guard case .nack(let parsed)? = try RTCPPacket.parseCompound(bytes).first else { return XCTFail("not a NACK") }
        XCTAssertEqual(parsed.entries.count, 65_533)
        XCTAssertEqual(parsed.entries.last, entries.last)
        var buffer = hex("81 ce 00 02 00 00 00 01 00 00 00 02")
        let over = RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, entries: entries + [.init(packetID: 1, lostBitmask: 1)])
        assertThrowsRTPError(try RTCPPacket.nack(over).serialize(into: &buffer), .tooMany(.rtcpHeader, count: 65_536, limit: 65_535))
        XCTAssertEqual(buffer, hex("81 ce 00 02 00 00 00 01 00 00 00 02"), "the PLI before it is untouched")
    }

    // MARK: - REMB

    /// At every exponent: the largest mantissa (2¹⁸ − 1) shifted by it is exact with that exponent, and one
    /// more needs the next exponent with mantissa 2¹⁷ (exact too). The largest 64-bit rate takes exponent 46.
    func testEveryExponentStep() throws {
        for exponent in 0...45 {
            let largest = UInt64(0x3_FFFF) << exponent
            XCTAssertEqual(RTCPRemb.encode(bitrate: largest).exponent, UInt8(exponent))
            XCTAssertEqual(RTCPRemb.encode(bitrate: largest).mantissa, 0x3_FFFF)
            let next = largest + (UInt64(1) << exponent)
            XCTAssertEqual(RTCPRemb.encode(bitrate: next).exponent, UInt8(exponent + 1), "\(next)")
            XCTAssertEqual(RTCPRemb.encode(bitrate: next).mantissa, 0x2_0000)
            for bitrate in [largest, next] {
                let bytes = try RTCPPacket.serializeCompound([.estimatedBitrate(RTCPRemb(senderSSRC: 1, bitrate: bitrate, ssrcs: []))])
                guard case .estimatedBitrate(let parsed)? = try RTCPPacket.parseCompound(bytes).first else { return XCTFail() }
                XCTAssertEqual(parsed.bitrate, bitrate, "exact at \(bitrate)")
            }
        }
        XCTAssertEqual(RTCPRemb.encode(bitrate: .max).exponent, 46)
        XCTAssertEqual(RTCPRemb.encode(bitrate: .max).mantissa, 0x3_FFFF)
        XCTAssertEqual(RTCPRemb.encode(bitrate: 0).exponent, 0)
        XCTAssertEqual(RTCPRemb.encode(bitrate: 0).mantissa, 0)
        // Between steps the rate is rounded down, never up.
        XCTAssertEqual(RTCPRemb.encode(bitrate: 0x3_FFFF * 2 + 1).mantissa, 0x3_FFFF)
        XCTAssertEqual(RTCPRemb.encode(bitrate: 0x3_FFFF * 2 + 1).exponent, 1)
    }

    /// Reading exponent/mantissa pairs no sender of ours writes: whatever fits 64 bits is exact, anything
    /// larger saturates, and a zero mantissa is 0 at any exponent.
    func testReadingSaturatesOnlyBeyondSixtyFourBits() throws {
        func read(exponent: UInt32, mantissa: UInt32) throws -> UInt64? {
            let field = exponent << 18 | mantissa
            let bytes = hex("8f ce 00 04 00 00 00 01 00 00 00 00 52 45 4d 42 00")
                + [UInt8(field >> 16), UInt8(field >> 8 & 0xFF), UInt8(field & 0xFF)]
            guard case .estimatedBitrate(let remb)? = try RTCPPacket.parseCompound(bytes).first else { return nil }
            return remb.bitrate
        }
        XCTAssertEqual(try read(exponent: 46, mantissa: 0x3_FFFF), 0x3_FFFF << 46, "exactly 64 bits")
        XCTAssertEqual(try read(exponent: 47, mantissa: 0x3_FFFF), .max)
        XCTAssertEqual(try read(exponent: 47, mantissa: 0x1_FFFF), 0x1_FFFF << 47)
        XCTAssertEqual(try read(exponent: 63, mantissa: 1), 1 << 63)
        XCTAssertEqual(try read(exponent: 63, mantissa: 2), .max)
        XCTAssertEqual(try read(exponent: 63, mantissa: 0), 0)
        XCTAssertEqual(try read(exponent: 0, mantissa: 0x3_FFFF), 262_143)
        XCTAssertEqual(try read(exponent: 10, mantissa: 1000), 1_024_000)
    }

    /// 255 SSRCs fill the count byte; the media SSRC in the common header is kept as read (0 by the draft);
    /// bytes after the listed SSRCs are ignored.
    func testSSRCCountAndMediaSSRC() throws {
        let ssrcs = (1...255).map { UInt32($0) << 24 | 0xABCD }
        let remb = RTCPRemb(senderSSRC: 9, mediaSSRC: 0x1234, bitrate: 1_500_000, ssrcs: ssrcs)
        let bytes = try RTCPPacket.serializeCompound([.estimatedBitrate(remb)])
        XCTAssertEqual(bytes.count, 20 + 4 * 255)
        XCTAssertEqual(bytes[16], 255)
        XCTAssertEqual(Array(bytes[8..<12]), [0, 0, 0x12, 0x34])
        guard case .estimatedBitrate(let parsed)? = try RTCPPacket.parseCompound(bytes).first else { return XCTFail() }
        XCTAssertEqual(parsed.ssrcs, ssrcs)
        XCTAssertEqual(parsed.mediaSSRC, 0x1234)
        XCTAssertEqual(parsed.bitrate, 1_500_000)
        XCTAssertEqual(parsed.kilobitsPerSecond, 1500)
        // One SSRC listed, a second word present: the word is not an SSRC.
        let extra = hex("8f ce 00 06 00 00 00 01 00 00 00 00 52 45 4d 42 01 12 62 5a 00 00 00 07 de ad be ef")
        guard case .estimatedBitrate(let one)? = try RTCPPacket.parseCompound(extra).first else { return XCTFail() }
        XCTAssertEqual(one.ssrcs, [7])
    }

    // MARK: - PLI and FIR

    /// A PLI carries no FCI; bytes after the two SSRCs are not read, and it is written back without them.
    /// FIR sequence numbers are one byte and wrap (RFC 5104 §4.3.1.2: incremented per new request).
    func testPLIWithoutFCIAndFIRSequenceWrap() throws {
        let withFCI = hex("81 ce 00 03 00 00 00 01 00 00 00 02 ff ff ff ff")
        XCTAssertEqual(try RTCPPacket.parseCompound(withFCI), [.pictureLossIndication(.init(senderSSRC: 1, mediaSSRC: 2))])
        XCTAssertEqual(try RTCPPacket.serializeCompound(RTCPPacket.parseCompound(withFCI)), hex("81 ce 00 02 00 00 00 01 00 00 00 02"))
        var request = RTCPFullIntraRequest(senderSSRC: 1, entries: [.init(ssrc: 5, sequenceNumber: 254)])
        var seen: [UInt8] = []
        for _ in 0..<3 {
            let bytes = try RTCPPacket.serializeCompound([.fullIntraRequest(request)])
            seen.append(bytes[16])
            guard case .fullIntraRequest(let parsed)? = try RTCPPacket.parseCompound(bytes).first else { return XCTFail() }
            XCTAssertEqual(parsed, request)
            request.entries[0].sequenceNumber &+= 1
        }
        XCTAssertEqual(seen, [254, 255, 0])
    }
}
