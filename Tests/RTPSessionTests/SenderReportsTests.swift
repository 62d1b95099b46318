import RTP
import RTPSession
import XCTest

/// ``SenderReports``: our SR + SDES (RFC 3550 §6.4.1, §6.5) on the injected clocks, and the receiver's
/// report blocks (RTT, loss, jitter).
final class SenderReportsTests: XCTestCase {
    static let clock = RTPTimestampMapper(clockRate: 90_000, offset: 0xFFFF_FF00, originMicroseconds: 0)

    func reports(interval: UInt64 = 1_000_000) throws -> SenderReports {
        try SenderReports(ssrc: Session.ssrc, cname: "cname-1", intervalMicros: interval, rtpClock: Self.clock)
    }

    func sentMedia(packets: Int = 5, payload: Int = 5020) -> OutgoingVideoStream.Statistics {
        var statistics = OutgoingVideoStream.Statistics()
        statistics.packetsSent = packets
        statistics.payloadBytesSent = payload
        return statistics
    }

    /// The Sender Report maps "now" to the stream's RTP clock and carries the packet and payload counts;
    /// SDES carries the CNAME; the bytes are the same for the same inputs.
    func testSenderReportMapsNowAndCounts() throws {
        var reports = try reports()
        let ntp = NTPTimestamp(seconds: 3_900_000_000, fraction: 0x8000_0000)
        let compound = try reports.senderReport(nowMicros: 2_500_000, ntp: ntp, stream: sentMedia())
        let parsed = try RTCPPacket.parseCompound(compound)
        XCTAssertEqual(parsed.count, 2)
        guard case .senderReport(let report) = parsed[0], case .sourceDescription(let sdes) = parsed[1] else { return XCTFail("\(parsed)") }
        XCTAssertEqual(report.ssrc, Session.ssrc)
        XCTAssertEqual(report.ntpTimestamp, ntp)
        XCTAssertEqual(report.rtpTimestamp, 0xFFFF_FF00 &+ UInt32(2_500_000 * 9 / 100))
        XCTAssertEqual(report.packetCount, 5)
        XCTAssertEqual(report.octetCount, 5020)
        XCTAssertEqual(sdes.cname(of: Session.ssrc), "cname-1")
        XCTAssertEqual(reports.statistics.senderReportsSent, 1)
        var again = try self.reports()
        XCTAssertEqual(try again.senderReport(nowMicros: 2_500_000, ntp: ntp, stream: sentMedia()), compound)
        // SR (28 bytes: header, sender info, no blocks) then SDES (header, SSRC, CNAME item, end, padding to 32 bits).
        XCTAssertEqual(compound.count, 28 + 4 + 4 + 2 + 7 + 1 + 2)
        XCTAssertEqual(Array(compound[0..<4]), [0x80, 200, 0x00, 0x06])
    }

    /// On the timer: the first report one interval after start, then every interval; none before media
    /// flows (it would map a stream nobody has seen), but the schedule goes on; none after stop.
    func testReportsFollowTheIntervalOnceMediaFlows() throws {
        var reports = try reports(interval: 500_000)
        XCTAssertNil(reports.nextDeadlineMicros, "not started")
        reports.start(nowMicros: 1_000_000)
        XCTAssertEqual(reports.nextDeadlineMicros, 1_500_000)
        func tick(_ now: UInt64, _ stream: OutgoingVideoStream.Statistics) -> [[UInt8]] {
            var context = TimerContext(nowMicros: now, ntp: NTPTimestamp(unixMicroseconds: 1_700_000_000_000_000 + now), stream: stream)
            reports.handleTimer(context: &context)
            return context.outcome.rtcp
        }
        XCTAssertEqual(tick(1_400_000, sentMedia()).count, 0, "not due yet")
        // No media yet: an RR with no report blocks (RC = 0) and SDES CNAME, byte for byte (RFC 3550 §6.4.2, §6.5).
        let empty = tick(1_500_000, OutgoingVideoStream.Statistics())
        XCTAssertEqual(empty.count, 1, "no media yet: a Receiver Report")
        let ssrc = reports.ssrc, cname = Array(reports.cname.utf8)
        let sdesLength = (4 + 2 + cname.count + 4) / 4 * 4  // SSRC, type + length, the name, at least one null, padded
        let expected: [UInt8] = [0x80, 201, 0, 1] + bigEndian(ssrc)
            + [0x81, 202] + [UInt8((sdesLength / 4) >> 8), UInt8((sdesLength / 4) & 0xFF)] + bigEndian(ssrc)
            + [1, UInt8(cname.count)] + cname + [UInt8](repeating: 0, count: sdesLength - 6 - cname.count)
        XCTAssertEqual(empty.first, expected)
        XCTAssertEqual(reports.statistics.receiverReportsSent, 1)
        XCTAssertEqual(reports.nextDeadlineMicros, 2_000_000)
        XCTAssertEqual(tick(2_000_100, sentMedia()).count, 1)
        XCTAssertEqual(reports.nextDeadlineMicros, 2_500_100, "from when it ran")
        XCTAssertEqual(tick(2_500_100, sentMedia()).count, 1)
        XCTAssertEqual(reports.statistics.senderReportsSent, 2)
        XCTAssertEqual(reports.statistics.receiverReportsSent, 1, "none once media flows")
        reports.stop()
        XCTAssertNil(reports.nextDeadlineMicros)
        XCTAssertEqual(tick(9_000_000, sentMedia()).count, 0)
        XCTAssertThrowsError(try self.reports(interval: 0))
    }

    /// A Receiver Report answering our SR gives the RTT (A − LSR − DLSR), the loss and the jitter, and passes
    /// the link on in the context; blocks about other sources are ignored.
    func testReceiverReportGivesRoundTripTimeAndLoss() throws {
        var reports = try reports()
        let sentAt = NTPTimestamp(seconds: 3_900_000_000, fraction: 0)
        let arrival = NTPTimestamp(rawValue: sentAt.rawValue + UInt64(0x1_0000_0000) * 125 / 1000)  // 125 ms later
        let block = RTCPReportBlock(
            ssrc: Session.ssrc, fractionLost: 64, cumulativeLost: 12, extendedHighestSequenceNumber: 1000, jitter: 900,
            lastSenderReport: sentAt.compact, delaySinceLastSenderReport: 65536 / 10)  // DLSR 100 ms
        let other = RTCPReportBlock(
            ssrc: 99, fractionLost: 255, cumulativeLost: 1000, extendedHighestSequenceNumber: 1, jitter: 1, lastSenderReport: 1,
            delaySinceLastSenderReport: 1)
        let context = Session.feed(&reports, .receiverReport(RTCPReceiverReport(ssrc: 7, reports: [other, block])), arrival: arrival)
        XCTAssertEqual(context.outcome, SenderOutcome())
        XCTAssertEqual(reports.statistics.receiverReports, 1)
        XCTAssertEqual(try XCTUnwrap(reports.statistics.link.roundTripMillis), 25, accuracy: 0.1)
        XCTAssertEqual(reports.statistics.link.fractionLost, 0.25)
        XCTAssertEqual(reports.statistics.cumulativeLost, 12)
        XCTAssertEqual(try XCTUnwrap(reports.statistics.jitterMillis), 10, accuracy: 0.001)
        XCTAssertEqual(context.link, reports.statistics.link)
    }

    /// Report blocks in an SR count too; a block with no LSR (the receiver has seen no SR of ours) keeps the
    /// last RTT and updates the loss.
    func testBlocksInSenderReportsAndWithoutLSR() throws {
        var reports = try reports()
        let (answer, arrival) = Session.roundTrip(rttMillis: 40)
        _ = Session.feed(&reports, answer, arrival: arrival)
        XCTAssertEqual(try XCTUnwrap(reports.statistics.link.roundTripMillis), 40, accuracy: 0.1)
        let block = RTCPReportBlock(
            ssrc: Session.ssrc, fractionLost: 128, cumulativeLost: 3, extendedHighestSequenceNumber: 10, jitter: 0, lastSenderReport: 0,
            delaySinceLastSenderReport: 0)
        let sr = RTCPSenderReport(
            ssrc: 7, ntpTimestamp: NTPTimestamp(seconds: 1, fraction: 0), rtpTimestamp: 0, packetCount: 0, octetCount: 0, reports: [block])
        let context = Session.feed(&reports, .senderReport(sr), link: reports.statistics.link)
        XCTAssertEqual(reports.statistics.receiverReports, 2)
        XCTAssertEqual(try XCTUnwrap(context.link.roundTripMillis), 40, accuracy: 0.1)
        XCTAssertEqual(context.link.fractionLost, 0.5)
        XCTAssertEqual(reports.statistics.cumulativeLost, 3)
    }
}

private func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
}
