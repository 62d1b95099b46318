import RTP
import RTPSession
import XCTest

/// ``RetransmissionBudget`` and the repair it bounds: what NACKs resend over the last 500 ms stays within
/// the congestion target (or the REMB), as libwebrtc's retransmission rate limiter keeps it.
final class RetransmissionBudgetTests: XCTestCase {
    /// 300 kbit/s over 500 ms is 18 750 bytes: fifteen 1 250-byte packets fit, the sixteenth does not (and
    /// spends nothing); 499 ms later still nothing fits; at 500 ms the first fifteen have left the window.
    func testTheWindowHoldsRateTimesWindowBytes() {
        var budget = RetransmissionBudget(maxBitsPerSecond: 300_000)
        XCTAssertEqual(budget.windowBytes, 18_750)
        for _ in 0..<15 { XCTAssertTrue(budget.tryUse(bytes: 1250, nowMicros: 1_000_000)) }
        XCTAssertFalse(budget.tryUse(bytes: 1250, nowMicros: 1_000_000))
        XCTAssertFalse(budget.tryUse(bytes: 1, nowMicros: 1_499_999))
        XCTAssertEqual(budget.spentBytes, 18_750)
        XCTAssertEqual(budget.refused, 2)
        XCTAssertTrue(budget.tryUse(bytes: 18_750, nowMicros: 1_500_000))
        XCTAssertEqual(budget.spentBytes, 18_750)
    }

    /// The window slides: bytes spent at 0, 200 and 400 ms leave it one by one at 500, 700 and 900 ms.
    func testBytesLeaveTheWindowWhenTheyAge() {
        var budget = RetransmissionBudget(maxBitsPerSecond: 160_000)  // 10 000 bytes per 500 ms
        XCTAssertTrue(budget.tryUse(bytes: 4000, nowMicros: 0))
        XCTAssertTrue(budget.tryUse(bytes: 4000, nowMicros: 200_000))
        XCTAssertTrue(budget.tryUse(bytes: 2000, nowMicros: 400_000))
        XCTAssertFalse(budget.tryUse(bytes: 1, nowMicros: 499_999))
        XCTAssertTrue(budget.tryUse(bytes: 4000, nowMicros: 500_000))
        XCTAssertFalse(budget.tryUse(bytes: 1, nowMicros: 699_999))
        XCTAssertTrue(budget.tryUse(bytes: 4000, nowMicros: 700_000))
        XCTAssertEqual(budget.spentBytes, 10_000)
    }

    /// Without a rate nothing is refused; a new rate applies to the next packet; nil unbounds again.
    func testRateChangesApplyAtOnce() {
        var budget = RetransmissionBudget()
        XCTAssertNil(budget.windowBytes)
        for index in 0..<100 { XCTAssertTrue(budget.tryUse(bytes: 1200, nowMicros: UInt64(index))) }
        budget.setRate(bitsPerSecond: 4_000_000)  // 250 000 bytes per window: 120 000 spent
        XCTAssertTrue(budget.tryUse(bytes: 130_000, nowMicros: 100))
        XCTAssertFalse(budget.tryUse(bytes: 1, nowMicros: 100))
        budget.setRate(bitsPerSecond: nil)
        XCTAssertTrue(budget.tryUse(bytes: 1_000_000, nowMicros: 100))
        XCTAssertEqual(budget.refused, 1)
    }

    /// At most ``RetransmissionBudget/maxEntries`` packets are remembered: the oldest count as expired.
    func testMemoryIsBounded() {
        var budget = RetransmissionBudget()
        for _ in 0..<(RetransmissionBudget.maxEntries + 904) { XCTAssertTrue(budget.tryUse(bytes: 10, nowMicros: 5)) }
        XCTAssertEqual(budget.spentBytes, RetransmissionBudget.maxEntries * 10)
    }

    /// A NACK of ten 1 200-byte packets with 96 kbit/s of budget (6 000 bytes a window): four RTX packets
    /// (1 202 bytes each) are resent, the other six are over the budget, counted, and not marked as resent,
    /// so the next NACK 500 ms later has them at once (within the 20 ms resend interval of the first four).
    func testNACKsBeyondTheBudgetWaitForTheNextNACK() throws {
        var responder = NACKResponder(configuration: .init(
            ssrc: Session.ssrc, rtx: RTXStream(ssrc: Session.rtxSSRC, payloadType: 97), duplicatesAboveLoss: nil))
        for packet in Session.packets(10) {
            responder.packetized(PacketizedFrame(packets: [packet], isKeyframe: false, captureMicros: 0, nowMicros: 0))
        }
        responder.setRetransmissionRate(bitsPerSecond: 96_000)
        let nack = Session.nack((0..<10).map { UInt16($0) })
        let first = Session.feed(&responder, nack, nowMicros: 100_000)
        XCTAssertEqual(try first.retransmissions.map {
            try RTXPacketizer.unwrap($0, originalSSRC: Session.ssrc, originalPayloadType: 96).sequenceNumber
        }, [0, 1, 2, 3])
        XCTAssertEqual(responder.statistics.retransmissionsOverBudget, 6)
        XCTAssertEqual(responder.statistics.retransmissionsSkipped, 0)
        XCTAssertEqual(responder.statistics.bytesRetransmitted, 4 * 1202)
        let second = Session.feed(&responder, nack, nowMicros: 600_000)
        let resent = try second.retransmissions.map {
            try RTXPacketizer.unwrap($0, originalSSRC: Session.ssrc, originalPayloadType: 96).sequenceNumber
        }
        XCTAssertEqual(resent, [0, 1, 2, 3], "a window later the budget again holds four, the first of the six among them")
        responder.setRetransmissionRate(bitsPerSecond: nil)
        let third = Session.feed(&responder, nack, nowMicros: 600_000)
        XCTAssertEqual(try third.retransmissions.map {
            try RTXPacketizer.unwrap($0, originalSSRC: Session.ssrc, originalPayloadType: 96).sequenceNumber
        }, [4, 5, 6, 7, 8, 9], "unbounded: the six not yet resent go now; the four just resent wait for the interval")
    }

    /// On a lossy link a second copy goes only while the budget has room for it too: with room for three
    /// RTX packets, two NACKed packets give the first two copies and the second one copy.
    func testSecondCopiesNeedTheBudgetToo() throws {
        var responder = NACKResponder(configuration: .init(
            ssrc: Session.ssrc, rtx: RTXStream(ssrc: Session.rtxSSRC, payloadType: 97), duplicatesAboveLoss: 0.02))
        for packet in Session.packets(2) {
            responder.packetized(PacketizedFrame(packets: [packet], isKeyframe: false, captureMicros: 0, nowMicros: 0))
        }
        responder.setRetransmissionRate(bitsPerSecond: 3 * 1202 * 16)  // 3 × 1 202 bytes per 500 ms
        let context = Session.feed(&responder, Session.nack([0, 1]), nowMicros: 10_000, link: LinkReport(fractionLost: 0.2))
        XCTAssertEqual(try context.retransmissions.map {
            try RTXPacketizer.unwrap($0, originalSSRC: Session.ssrc, originalPayloadType: 96).sequenceNumber
        }, [0, 0, 1])
        XCTAssertEqual(responder.statistics.duplicateRetransmissions, 1)
        XCTAssertEqual(responder.statistics.packetsRetransmitted, 2)
    }

    /// The chain bounds repair by the congestion target when it has one, else by the receiver's REMB.
    func testTheChainSetsTheBudgetFromREMB() throws {
        var chain = try RTPSenderChain(configuration: RTPSenderChain.Configuration(
            ssrc: Session.ssrc, payloadType: 96, rtx: RTXStream(ssrc: Session.rtxSSRC, payloadType: 97), cname: "c",
            timestampOffset: 0, initialSequenceNumber: 0, initialPictureID: 0, initialRTXSequenceNumber: 0))
        XCTAssertNil(chain.nack?.budget.maxBitsPerSecond)
        _ = chain.receiveRTCP(try Session.compound([
            .estimatedBitrate(.init(senderSSRC: 7, bitrate: 640_000, ssrcs: [Session.ssrc])),
        ]), nowMicros: 0, arrival: Session.anyArrival)
        XCTAssertEqual(chain.nack?.budget.maxBitsPerSecond, 640_000)
        chain.setTargetBitrate(250_000, nowMicros: 0)
        XCTAssertEqual(chain.nack?.budget.maxBitsPerSecond, 250_000)
    }
}
