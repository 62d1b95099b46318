import RTP
import XCTest

/// Sender and Receiver Report fields at their edges (RFC 3550 §6.4.1, §6.4.2): the 24-bit signed
/// cumulative loss, 31 report blocks, profile-specific extensions, an empty RR, and the round-trip time
/// A − LSR − DLSR around the 32-bit wrap.
///
/// Fixtures written by hand from the SR/RR diagrams of RFC 3550 §6.4.1–6.4.2.
final class RTCPReportEdgeTests: XCTestCase {
    private func block(_ ssrc: UInt32, lost: Int32 = 0, lsr: UInt32 = 0, dlsr: UInt32 = 0) -> RTCPReportBlock {
        RTCPReportBlock(ssrc: ssrc, fractionLost: 0, cumulativeLost: lost, extendedHighestSequenceNumber: 0, jitter: 0,
                        lastSenderReport: lsr, delaySinceLastSenderReport: dlsr)
    }

    /// Cumulative loss is a signed 24-bit field: duplicates can make it negative (RFC 3550 §6.4.1).
    func testCumulativeLostIsSignedTwentyFourBits() throws {
        for (wire, value): ([UInt8], Int32) in [
            ([0x7F, 0xFF, 0xFF], 0x7F_FFFF), ([0x80, 0x00, 0x00], -0x80_0000), ([0xFF, 0xFF, 0xFF], -1), ([0x00, 0x00, 0x00], 0),
            ([0x00, 0x00, 0x01], 1),
        ] {
            let bytes = hex("81 c9 00 07 00 00 00 01 00 00 00 02 40") + wire + [UInt8](repeating: 0, count: 16)
            guard case .receiverReport(let rr) = try XCTUnwrap(RTCPPacket.parseCompound(bytes).first) else { return XCTFail() }
            XCTAssertEqual(rr.reports.first?.cumulativeLost, value, "\(wire)")
            XCTAssertEqual(rr.reports.first?.fractionLost, 0x40, "64/256 lost")
            XCTAssertEqual(try RTCPPacket.serializeCompound([.receiverReport(rr)]), bytes)
        }
        // Values beyond 24 bits are clamped on writing, never wrapped into the opposite sign.
        for (value, wire): (Int32, [UInt8]) in [(0x100_0000, [0x7F, 0xFF, 0xFF]), (-0x100_0000, [0x80, 0x00, 0x00]), (.max, [0x7F, 0xFF, 0xFF])] {
            let bytes = try RTCPPacket.serializeCompound([.receiverReport(.init(ssrc: 1, reports: [block(2, lost: value)]))])
            XCTAssertEqual(Array(bytes[13..<16]), wire, "\(value)")
        }
    }

    /// 31 blocks is the most RC can say; 32 is refused on writing. A Receiver Report with no blocks (what a
    /// sender that received nothing sends) is 8 bytes.
    func testReportCountLimits() throws {
        let blocks = (0..<31).map { block(UInt32($0)) }
        let rr = try RTCPPacket.serializeCompound([.receiverReport(.init(ssrc: 9, reports: blocks))])
        XCTAssertEqual(rr.count, 8 + 31 * 24)
        XCTAssertEqual(rr[0], 0x80 | 31)
        XCTAssertEqual(Array(rr[2...3]), [0x00, UInt8(rr.count / 4 - 1)])
        XCTAssertEqual(try RTCPPacket.parseCompound(rr), [.receiverReport(.init(ssrc: 9, reports: blocks))])
        assertThrowsRTPError(try RTCPPacket.serializeCompound([.receiverReport(.init(ssrc: 9, reports: blocks + [block(99)]))]),
                             .tooMany(.receiverReport, count: 32, limit: 31))
        let sr = RTCPSenderReport(ssrc: 1, ntpTimestamp: NTPTimestamp(seconds: 0, fraction: 0), rtpTimestamp: 0, packetCount: 0,
                                  octetCount: 0, reports: blocks + [block(99)])
        assertThrowsRTPError(try RTCPPacket.serializeCompound([.senderReport(sr)]), .tooMany(.senderReport, count: 32, limit: 31))
        XCTAssertEqual(try RTCPPacket.serializeCompound([.receiverReport(.init(ssrc: 0xFFFF_FFFF))]), hex("80 c9 00 01 ff ff ff ff"))
    }

    /// RC says more blocks than the length holds: truncated, with what the RC needs; extensions after the
    /// blocks are skipped.
    func testBlocksBeyondTheLengthAndProfileExtensions() throws {
        // RR, RC = 2, one block's worth of body.
        let short = hex("82 c9 00 07 00 00 00 01") + [UInt8](repeating: 0, count: 24)
        assertThrowsRTPError(try RTCPPacket.parseCompound(short), .truncated(.receiverReport, needed: 56, available: 32))
        // SR, RC = 1, with no block.
        let sr = hex("81 c8 00 06 00 00 00 01 00 00 00 02 00 00 00 03 00 00 00 04 00 00 00 05 00 00 00 06")
        assertThrowsRTPError(try RTCPPacket.parseCompound(sr), .truncated(.senderReport, needed: 52, available: 28))
        // SR, RC = 0, plus 8 bytes of profile-specific extension: read, extension skipped, written without it.
        var extended = sr
        extended[0] = 0x80
        extended[3] = 0x08
        extended += hex("de ad be ef 01 02 03 04")
        guard case .senderReport(let report) = try XCTUnwrap(RTCPPacket.parseCompound(extended).first) else { return XCTFail() }
        XCTAssertEqual(report.ssrc, 1)
        XCTAssertEqual(report.ntpTimestamp, NTPTimestamp(seconds: 2, fraction: 3))
        XCTAssertEqual([report.rtpTimestamp, report.packetCount, report.octetCount], [4, 5, 6])
        XCTAssertEqual(report.reports, [])
        var plain = sr
        plain[0] = 0x80
        XCTAssertEqual(try RTCPPacket.serializeCompound([.senderReport(report)]), plain)
    }

    /// RTT = A − LSR − DLSR in 1/65536 s (RFC 3550 §6.4.1), across the 32-bit wrap of the compact NTP time.
    func testRoundTripAcrossTheWrap() throws {
        // A = 0x0000:8000 (0.5 s past a wrap), LSR = 0xFFFF:8000 (0.5 s before it), DLSR = 0x0000:4000 (0.25 s):
        // RTT = 1 s − 0.25 s = 750 ms.
        let arrival = NTPTimestamp(seconds: 0x1_0000, fraction: 0x8000_0000)
        XCTAssertEqual(arrival.compact, 0x0000_8000)
        XCTAssertEqual(try XCTUnwrap(block(1, lsr: 0xFFFF_8000, dlsr: 0x4000).roundTripTimeMilliseconds(arrival: arrival)), 750, accuracy: 1e-9)
        // DLSR larger than A − LSR (clock rounding): 0, not a huge positive value.
        XCTAssertEqual(block(1, lsr: 0xFFFF_8000, dlsr: 0x1_0001).roundTripTimeMilliseconds(arrival: arrival), 0)
        // LSR = 0: no SR received yet.
        XCTAssertNil(block(1, lsr: 0, dlsr: 0x4000).roundTripTimeMilliseconds(arrival: arrival))
        // One unit is 1/65536 s.
        XCTAssertEqual(try XCTUnwrap(block(1, lsr: 0x0000_7FFF).roundTripTimeMilliseconds(arrival: arrival)), 1000.0 / 65536, accuracy: 1e-12)
    }
}
