import DTLS
import ICE
import PeerConnection
import RTPSession
import SDP
import TestSupport
import XCTest

/// ``PeerAnswer`` (answering without sockets) and ``TrickleFragment`` (WHEP PATCH bodies, RFC 8840).
final class AnswerAndTrickleTests: XCTestCase {
    func configuration() throws -> PeerConnection.Configuration {
        PeerConnection.Configuration(
            ice: .init(role: .controlled), certificate: try DTLSCertificate.shared(), pacer: .init(rateBitsPerSecond: 8_000_000),
            keyframeRetryMicros: 700_000, senderReportIntervalMicros: 400_000)
    }

    func answer(_ offer: String, seed: UInt64) throws -> PeerAnswer {
        let configuration = try configuration()
        var random = SeededGenerator(seed: seed)
        return try PeerAnswer(
            offer: PeerAnswer.check(offer: offer, fingerprint: configuration.certificate.fingerprint),
            ice: .init(ufrag: "ours", password: "0123456789abcdefghijkl"),
            candidates: [try ICECandidate(parsing: "candidate:1 1 udp 2130706431 127.0.0.1 5000 typ host")],
            configuration: configuration, using: &random)
    }

    /// Chromium's WHEP offer: the answer carries our credentials, fingerprint and candidate; the same seed
    /// gives the same answer and starting points, another seed other SSRCs; the sender chain gets what was
    /// negotiated and the call's pacing and timers.
    func testAnswerToChromiumIsReproducibleFromASeed() throws {
        let offer = try SDPFixture.text("chromium-whep-offer.sdp")
        let first = try answer(offer, seed: 1), again = try answer(offer, seed: 1), other = try answer(offer, seed: 2)
        XCTAssertEqual(first.answer, again.answer)
        XCTAssertEqual(first.sender, again.sender)
        XCTAssertNotEqual(first.local.videoSSRC, other.local.videoSSRC)
        XCTAssertNotEqual(first.local.videoSSRC, first.local.rtxSSRC)
        XCTAssertEqual(first.local.cname.count, 16)
        XCTAssertTrue(first.local.cname.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
        let lines = first.answer.components(separatedBy: "\r\n")
        XCTAssertTrue(lines.contains("a=ice-ufrag:ours"))
        XCTAssertTrue(lines.contains("a=fingerprint:\(try configuration().certificate.fingerprint.sdpValue)"))
        XCTAssertTrue(lines.contains("a=candidate:1 1 udp 2130706431 127.0.0.1 5000 typ host"))
        XCTAssertTrue(lines.contains("a=end-of-candidates"))
        let sender = first.sender
        XCTAssertEqual(sender.ssrc, first.local.videoSSRC)
        XCTAssertEqual(sender.payloadType, first.negotiated.vp8PayloadType)
        XCTAssertEqual(sender.rtx, first.negotiated.rtxPayloadType.map { RTXStream(ssrc: first.local.rtxSSRC, payloadType: $0) })
        XCTAssertEqual(sender.cname, first.local.cname)
        XCTAssertEqual(sender.feedback, RTPSenderChain.Configuration.Feedback(first.negotiated.feedback))
        XCTAssertEqual(sender.pacer.rateBitsPerSecond, 8_000_000)
        XCTAssertEqual(sender.keyframeRetryMicros, 700_000)
        XCTAssertEqual(sender.senderReportIntervalMicros, 400_000)
        XCTAssertLessThanOrEqual(sender.initialSequenceNumber, 0x7FFF)
        XCTAssertEqual(sender.playoutDelayExtensionID, 5, "Chromium offers the playout delay as ID 5")
        XCTAssertTrue(lines.contains("a=extmap:5 http://www.webrtc.org/experiments/rtp-hdrext/playout-delay"))
    }

    /// aiortc offers no `ccm fir`: the chain's feedback says so; an offer without VP8 is refused by check.
    func testNegotiatedFeedbackAndRefusals() throws {
        let aiortc = try answer(try SDPFixture.text("aiortc-offer.sdp"), seed: 5)
        XCTAssertFalse(aiortc.sender.feedback.fullIntraRequest)
        XCTAssertNil(aiortc.sender.playoutDelayExtensionID, "aiortc offers no playout delay")
        XCTAssertTrue(aiortc.sender.feedback.nack)
        XCTAssertNotNil(aiortc.sender.rtx)
        let audio = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=rtpmap:111 opus/48000/2\r\n"
        XCTAssertThrowsError(try PeerAnswer.check(offer: audio, fingerprint: try configuration().certificate.fingerprint)) { error in
            XCTAssertEqual(error as? PeerConnectionError, .sdp(.offerHasNoVP8Video))
        }
    }

    func testTrickleFragments() throws {
        let fragment = "a=ice-ufrag:abcd\r\na=mid:0\r\na=candidate:1 1 udp 2130706431 192.0.2.1 50000 typ host\r\n"
            + "a=candidate:2 1 udp 1694498815 198.51.100.2 50001 typ srflx raddr 192.0.2.1 rport 50000\na=end-of-candidates\r\n"
        let parsed = try TrickleFragment(parsing: fragment, ufrag: "abcd")
        XCTAssertEqual(parsed.candidates, [
            "candidate:1 1 udp 2130706431 192.0.2.1 50000 typ host",
            "candidate:2 1 udp 1694498815 198.51.100.2 50001 typ srflx raddr 192.0.2.1 rport 50000",
        ])
        XCTAssertTrue(parsed.complete)
        XCTAssertEqual(try TrickleFragment(parsing: "a=end-of-candidates", ufrag: "x"), TrickleFragment(candidates: [], complete: true))
        XCTAssertEqual(try TrickleFragment(parsing: "", ufrag: "x"), TrickleFragment(candidates: [], complete: false))
    }

    /// An ICE restart (another ufrag: unanswerable, 422) and a malformed candidate (400) are refused with
    /// the line they are on.
    func testTrickleRefusals() {
        XCTAssertThrowsError(try TrickleFragment(parsing: "a=mid:0\r\na=ice-ufrag:other\r\n", ufrag: "abcd")) { error in
            XCTAssertEqual(error as? SDPError, .iceRestartNotSupported(line: 2))
            XCTAssertFalse((error as! SDPError).isMalformed)
        }
        XCTAssertThrowsError(try TrickleFragment(parsing: "a=end-of-candidates\r\na=candidate:1 1 udp\r\n", ufrag: "abcd")) { error in
            guard case .badAttribute(2, "candidate", _)? = error as? SDPError else { return XCTFail("\(error)") }
            XCTAssertTrue((error as! SDPError).isMalformed)
        }
    }
}
