import RTP
import RTPSession
import XCTest

/// ``KeyframeRequests``: PLI (RFC 4585 §6.3.1) and FIR (RFC 5104 §4.3.1) about our SSRC ask for a keyframe.
final class KeyframeRequestsTests: XCTestCase {
    func pli(_ media: UInt32 = Session.ssrc) -> RTCPPacket { .pictureLossIndication(.init(senderSSRC: 7, mediaSSRC: media)) }
    func fir(_ sequence: UInt8, ssrc: UInt32 = Session.ssrc, others: [UInt32] = []) -> RTCPPacket {
        .fullIntraRequest(.init(senderSSRC: 7, entries: others.map { .init(ssrc: $0, sequenceNumber: 99) } + [.init(ssrc: ssrc, sequenceNumber: sequence)]))
    }

    func testPictureLossAsksEveryTime() {
        var requests = KeyframeRequests(ssrc: Session.ssrc)
        for _ in 0..<3 { XCTAssertEqual(Session.feed(&requests, pli()).outcome.keyframeRequest, .pictureLoss) }
        XCTAssertEqual(requests.statistics.plisReceived, 3)
    }

    /// A FIR repeated with the same sequence number is the same request (RFC 5104 §4.3.1.2); a new number
    /// asks again, also after the 8-bit wrap; our entry is found among others'.
    func testRepeatedFIRDoesNotAskAgain() {
        var requests = KeyframeRequests(ssrc: Session.ssrc)
        XCTAssertEqual(Session.feed(&requests, fir(255, others: [5, 6])).outcome.keyframeRequest, .pictureLoss)
        XCTAssertNil(Session.feed(&requests, fir(255)).outcome.keyframeRequest)
        XCTAssertEqual(Session.feed(&requests, fir(0)).outcome.keyframeRequest, .pictureLoss)
        XCTAssertEqual(Session.feed(&requests, fir(255)).outcome.keyframeRequest, .pictureLoss, "a different number than the last")
        XCTAssertEqual(requests.statistics.firsReceived, 4)
    }

    func testRequestsAboutOthersAreIgnored() {
        var requests = KeyframeRequests(ssrc: Session.ssrc)
        let pli = Session.feed(&requests, pli(42))
        XCTAssertNil(pli.outcome.keyframeRequest)
        XCTAssertEqual(pli.ignored, 1)
        let fir = Session.feed(&requests, fir(1, ssrc: 42))
        XCTAssertNil(fir.outcome.keyframeRequest)
        XCTAssertEqual(fir.ignored, 1)
        let nack = Session.feed(&requests, Session.nack([1]))
        XCTAssertEqual(nack.ignored, 0, "not its business")
        XCTAssertEqual(requests.statistics, KeyframeRequests.Statistics())
    }
}
