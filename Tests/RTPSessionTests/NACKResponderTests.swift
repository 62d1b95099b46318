import RTP
import RTPSession
import XCTest

/// ``NACKResponder``: NACKs (RFC 4585 §6.2.1) answered from the history, as RTX (RFC 4588) or plainly.
final class NACKResponderTests: XCTestCase {
    func responder(rtx: Bool = true, duplicates: Double? = nil) -> NACKResponder {
        NACKResponder(configuration: .init(
            ssrc: Session.ssrc, rtx: rtx ? RTXStream(ssrc: Session.rtxSSRC, payloadType: 97) : nil, initialRTXSequenceNumber: 100,
            duplicatesAboveLoss: duplicates))
    }

    /// Packetizes `count` frames of `size` bytes at `now` through a real stream and hands them over.
    func send(_ responder: inout NACKResponder, frames count: Int = 3, size: Int = 3000, nowMicros: UInt64 = 1_000_000) throws -> [RTPPacket] {
        var stream = try OutgoingVideoStream(
            ssrc: Session.ssrc, payloadType: 96, timestampOffset: 0, initialSequenceNumber: 65_530, initialPictureID: 0)
        var sent: [RTPPacket] = []
        for index in 0..<count {
            let frame = try stream.packetize(
                OutgoingVideoFrame(bytes: Session.frame(size, seed: UInt8(index)), isKeyframe: index == 0, captureMicros: UInt64(index) * 33_000),
                nowMicros: nowMicros)
            responder.packetized(frame)
            sent += frame.packets
        }
        return sent
    }

    /// With RTX: each lost packet comes back once per RTT on the RTX stream (its own SSRC, payload type and
    /// sequence numbers, the original sequence number first in the payload); packets not held are skipped.
    func testNACKIsAnsweredWithRTXOncePerRoundTrip() throws {
        var responder = responder()
        let sent = try send(&responder)
        let lost = [sent[2].sequenceNumber, sent[4].sequenceNumber]
        let first = Session.feed(&responder, Session.nack(lost + [12345]), nowMicros: 1_050_000)
        XCTAssertEqual(first.retransmissions.count, 2)
        for (index, rtx) in first.retransmissions.enumerated() {
            XCTAssertEqual(rtx.ssrc, Session.rtxSSRC)
            XCTAssertEqual(rtx.payloadType, 97)
            XCTAssertEqual(rtx.sequenceNumber, 100 + UInt16(index))
            let parsed = try RTPPacket(parsing: rtx.serialized())
            let original = try RTXPacketizer.unwrap(parsed, originalSSRC: Session.ssrc, originalPayloadType: 96)
            XCTAssertEqual(try original.serialized(), try sent[index == 0 ? 2 : 4].serialized())
        }
        // Again within the (default 20 ms) interval: nothing; after it: resent.
        XCTAssertTrue(Session.feed(&responder, Session.nack(lost + [12345]), nowMicros: 1_060_000).retransmissions.isEmpty)
        XCTAssertEqual(Session.feed(&responder, Session.nack(lost + [12345]), nowMicros: 1_100_000).retransmissions.count, 2)
        XCTAssertEqual(responder.statistics.nacksReceived, 3)
        XCTAssertEqual(responder.statistics.packetsNacked, 9)
        XCTAssertEqual(responder.statistics.packetsRetransmitted, 4)
        XCTAssertEqual(responder.statistics.retransmissionsSkipped, 5)
        XCTAssertEqual(responder.statistics.bytesRetransmitted, 2 * (sent[2].serializedSize + 2 + sent[4].serializedSize + 2))
    }

    /// The resend interval follows the reported RTT (clamped to 5…500 ms): with an RTT of 200 ms a second
    /// NACK 100 ms later is not answered, one 250 ms later is.
    func testResendIntervalFollowsTheRoundTripTime() throws {
        var responder = responder()
        let sent = try send(&responder)
        let link = LinkReport(roundTripMillis: 200)
        let nack = Session.nack([sent[0].sequenceNumber])
        XCTAssertEqual(Session.feed(&responder, nack, nowMicros: 1_010_000, link: link).retransmissions.count, 1)
        XCTAssertEqual(Session.feed(&responder, nack, nowMicros: 1_110_000, link: link).retransmissions.count, 0)
        XCTAssertEqual(Session.feed(&responder, nack, nowMicros: 1_260_000, link: link).retransmissions.count, 1)
    }

    /// Once the loss seen lately is ≥ 2 %, each retransmission goes out twice (two RTX packets of the same
    /// original, each with its own RTX sequence number); NACKs alone raise the estimate, and it decays as
    /// packets go through unNACKed.
    func testLossyLinkGetsDuplicateRetransmissions() throws {
        var quiet = responder(duplicates: 0.02)
        let sent = try send(&quiet, frames: 100, size: 500, nowMicros: 0)
        XCTAssertEqual(Session.feed(&quiet, Session.nack([sent[99].sequenceNumber])).retransmissions.count, 2)
        XCTAssertEqual(quiet.statistics.lossEstimate, 0.02, accuracy: 0.0001, "one of about 50 packets")
        _ = try send(&quiet, frames: 50, size: 500, nowMicros: 0)
        XCTAssertLessThan(quiet.statistics.lossEstimate, 0.01)

        var lossy = responder(duplicates: 0.02)
        let packets = try send(&lossy, frames: 1, size: 2500, nowMicros: 0)
        let outcome = Session.feed(&lossy, Session.nack([packets[0].sequenceNumber]), nowMicros: 50_000, link: LinkReport(fractionLost: 13.0 / 256))
        XCTAssertEqual(outcome.retransmissions.map(\.sequenceNumber), [100, 101])
        XCTAssertEqual(outcome.retransmissions[0].payload, outcome.retransmissions[1].payload, "the same original")
        XCTAssertEqual(lossy.statistics.packetsRetransmitted, 1)
        XCTAssertEqual(lossy.statistics.duplicateRetransmissions, 1)

        var never = responder(duplicates: nil)
        let once = try send(&never, frames: 1, size: 2500, nowMicros: 0)
        XCTAssertEqual(Session.feed(&never, Session.nack([once[0].sequenceNumber]), link: LinkReport(fractionLost: 0.5)).retransmissions.count, 1)
    }

    /// The history is kept by time (max(1 s, 3 × RTT), as libwebrtc does): 4.7 Mbit/s at 30 fps for 5 s
    /// leaves the last second (31 frames, about 0.6 MB) held, not the whole stream.
    func testHistoryHoldsAboutOneSecond() throws {
        var responder = responder(rtx: false)
        var stream = try OutgoingVideoStream(ssrc: Session.ssrc, payloadType: 96, timestampOffset: 0, initialSequenceNumber: 0, initialPictureID: 0)
        let frameBytes = 4_700_000 / 8 / 30
        var perFrame = 0
        for index in 0..<150 {
            let now = UInt64(index) * 33_333
            let frame = try stream.packetize(
                OutgoingVideoFrame(bytes: Session.frame(frameBytes, seed: UInt8(index & 0xFF)), isKeyframe: index == 0, captureMicros: now),
                nowMicros: now)
            responder.packetized(frame)
            perFrame = frame.packets.count
        }
        // Sent at 0, 33, 66 … 4966 ms: those at 3966 ms (frame 119) and later are within a second of the last.
        XCTAssertEqual(perFrame, 17)
        XCTAssertEqual(responder.historyPacketCount, 31 * perFrame)
        XCTAssertEqual(responder.historyByteCount, 31 * (frameBytes + perFrame * 16))  // 12-byte header + 4-byte VP8 descriptor
        XCTAssertLessThan(responder.historyByteCount, 700_000)
    }

    /// A packet 1.25 s old is gone with no RTT known (1 s window) and is resent once a report gives an
    /// RTT of 500 ms (a 1.5 s window).
    func testRoundTripTimeFromReportsExtendsTheHistory() throws {
        func run(roundTrip: Double?) throws -> (NACKResponder, FeedbackContext, RTPPacket) {
            var responder = responder(rtx: false)
            let first = try send(&responder, frames: 1, size: 2500, nowMicros: 0)
            if let roundTrip {
                _ = Session.feed(&responder, Session.receiverReport(), nowMicros: 100_000, link: LinkReport(roundTripMillis: roundTrip))
            }
            var stream = try OutgoingVideoStream(
                ssrc: Session.ssrc, payloadType: 96, timestampOffset: 0, initialSequenceNumber: 10, initialPictureID: 0)
            for index in 1...12 {
                let now = UInt64(index) * 100_000
                responder.packetized(try stream.packetize(OutgoingVideoFrame(bytes: Session.frame(500), isKeyframe: false, captureMicros: now), nowMicros: now))
            }
            let context = Session.feed(&responder, Session.nack([first[0].sequenceNumber]), nowMicros: 1_250_000)
            return (responder, context, first[0])
        }
        let (plain, lost, _) = try run(roundTrip: nil)
        XCTAssertEqual(lost.retransmissions, [])
        XCTAssertEqual(plain.statistics.retransmissionsSkipped, 1)
        XCTAssertEqual(plain.historyPacketCount, 10, "the 500-byte frames sent at 300 … 1200 ms")
        let (extended, resent, original) = try run(roundTrip: 500)
        XCTAssertEqual(resent.retransmissions, [original])
        XCTAssertEqual(extended.statistics.packetsRetransmitted, 1)
    }

    /// Without RTX, the original packet is resent as it was (SRTP allows the repeat for that).
    func testNACKWithoutRTXResendsTheOriginal() throws {
        var responder = responder(rtx: false)
        let packets = try send(&responder, frames: 1, size: 2500, nowMicros: 0)
        let context = Session.feed(&responder, Session.nack([packets[1].sequenceNumber]), nowMicros: 10_000)
        XCTAssertEqual(context.retransmissions, [packets[1]])
        XCTAssertEqual(try context.retransmissions[0].serialized(), try packets[1].serialized())
    }

    /// NACKs about another SSRC are counted as ignored and answered with nothing; other RTCP is not its business.
    func testFeedbackForOthersIsIgnored() throws {
        var responder = responder()
        let sent = try send(&responder)
        let other = Session.feed(&responder, Session.nack([sent[0].sequenceNumber], media: 42))
        XCTAssertEqual(other.ignored, 1)
        XCTAssertTrue(other.retransmissions.isEmpty)
        let pli = Session.feed(&responder, .pictureLossIndication(.init(senderSSRC: 7, mediaSSRC: Session.ssrc)))
        XCTAssertEqual(pli.ignored, 0)
        XCTAssertEqual(pli.outcome, SenderOutcome())
        XCTAssertEqual(responder.statistics.nacksReceived, 0)
    }
}
