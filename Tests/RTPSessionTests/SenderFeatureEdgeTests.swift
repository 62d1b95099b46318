import RTP
import RTPSession
import XCTest

/// The sender features at their edges: hard history limits, the RTP clock's wrap, a CNAME RTCP cannot
/// carry, and the receiver's reported loss reaching the NACK responder through the chain.
final class SenderFeatureEdgeTests: XCTestCase {
    /// With hard limits of 16 packets and 5 000 bytes, however young, the oldest go first and NACKs for
    /// them are skipped.
    func testHistoryHardLimitsWin() throws {
        var responder = NACKResponder(configuration: .init(
            ssrc: Session.ssrc, historyMinimumMilliseconds: 60_000, historyPackets: 16, historyBytes: 5_000, duplicatesAboveLoss: nil))
        let packets = (0..<40).map { Session.packet(sequence: UInt16($0), size: 1000) }
        responder.packetized(PacketizedFrame(packets: packets, isKeyframe: true, captureMicros: 0, nowMicros: 0))
        XCTAssertEqual(responder.historyPacketCount, 5, "5 × 1000 bytes")
        XCTAssertEqual(responder.historyByteCount, 5000)
        let context = Session.feed(&responder, Session.nack([0, 20, 34, 35, 39]), nowMicros: 1000)
        XCTAssertEqual(context.retransmissions.map(\.sequenceNumber), [35, 39])
        XCTAssertEqual(responder.statistics.retransmissionsSkipped, 3)

        var ring = NACKResponder(configuration: .init(ssrc: Session.ssrc, historyPackets: 16, duplicatesAboveLoss: nil))
        ring.packetized(PacketizedFrame(packets: (0..<40).map { Session.packet(sequence: UInt16($0), size: 100) }, isKeyframe: true,
                                        captureMicros: 0, nowMicros: 0))
        XCTAssertEqual(ring.historyPacketCount, 16)
        XCTAssertEqual(Session.feed(&ring, Session.nack([23, 24, 39])).retransmissions.map(\.sequenceNumber), [24, 39])
    }

    /// RTP timestamps wrap modulo 2³² (RFC 3550 §5.1) and keep counting 90 kHz ticks of capture time across it.
    func testTimestampsWrapWithCaptureTime() throws {
        let offset: UInt32 = .max - 89_999  // one second before the wrap
        var stream = try OutgoingVideoStream(ssrc: 1, payloadType: 96, timestampOffset: offset, initialSequenceNumber: 0, initialPictureID: 0)
        let captures: [UInt64] = [0, 999_988, 1_000_000, 1_000_011, 2_500_000, 47_721_858_834]
        var last: UInt32?
        for capture in captures {
            let frame = try stream.packetize(OutgoingVideoFrame(bytes: [0x50, 1], isKeyframe: true, captureMicros: capture), nowMicros: capture)
            let timestamp = frame.packets[0].timestamp
            XCTAssertEqual(timestamp, offset &+ UInt32(truncatingIfNeeded: capture * 9 / 100), "\(capture) µs")
            if let last, capture < 47_000_000_000 { XCTAssertEqual(timestamp &- last < 1 << 31, true, "forward across the wrap") }
            last = timestamp
        }
        XCTAssertEqual(stream.rtpTimestamp(captureMicros: 1_000_000), 0, "the wrap, one second in")
    }

    /// A CNAME longer than SDES carries (255 bytes, RFC 3550 §6.5) makes no report: the call is told so, and
    /// the timer keeps its schedule without sending one.
    func testACNAMERTCPCannotCarry() throws {
        var reports = try SenderReports(
            ssrc: 1, cname: String(repeating: "c", count: 256), rtpClock: RTPTimestampMapper(offset: 0, originMicroseconds: 0))
        var media = OutgoingVideoStream.Statistics()
        media.packetsSent = 1
        XCTAssertThrowsError(try reports.senderReport(nowMicros: 0, ntp: NTPTimestamp(rawValue: 0), stream: media)) { error in
            guard case .invalidConfiguration? = error as? RTPSessionError else { return XCTFail("\(error)") }
        }
        reports.start(nowMicros: 0)
        var context = TimerContext(nowMicros: 1_000_000, ntp: NTPTimestamp(rawValue: 0), stream: media)
        reports.handleTimer(context: &context)
        XCTAssertEqual(context.outcome.rtcp, [])
        XCTAssertEqual(reports.nextDeadlineMicros, 2_000_000)
        XCTAssertEqual(reports.statistics.senderReportsSent, 0)
    }

    /// The receiver's reported loss reaches the NACK responder through the chain (reports first): at 5 %
    /// reported, a NACK in the same compound brings two RTX copies.
    func testReportedLossReachesTheResponderInTheSameCompound() throws {
        var chain = try RTPSenderChain(configuration: .init(
            ssrc: Session.ssrc, payloadType: 96, rtx: RTXStream(ssrc: Session.rtxSSRC, payloadType: 97), cname: "c", initialSequenceNumber: 10,
            initialRTXSequenceNumber: 500))
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        _ = try chain.send(OutgoingVideoFrame(bytes: Session.frame(100_000), isKeyframe: true, captureMicros: 0), nowMicros: 0)
        _ = chain.release(nowMicros: 0)
        let compound = try Session.compound([Session.receiverReport(fractionLost: 13), Session.nack([20])])
        _ = chain.receiveRTCP(compound, nowMicros: 1000, arrival: Session.anyArrival)
        let out = try chain.release(nowMicros: 1_000).filter { $0.kind == .retransmission }.map { try RTPPacket(parsing: $0.bytes) }
        XCTAssertEqual(out.map(\.sequenceNumber), [500, 501])
        XCTAssertEqual(out.map { $0.payload.prefix(2).map { $0 } }, [[0, 20], [0, 20]])
        XCTAssertEqual(chain.report.reports.link.fractionLost ?? 0, 13.0 / 256, accuracy: 1e-9)
        XCTAssertEqual(chain.report.nack.duplicateRetransmissions, 1)
    }
}
