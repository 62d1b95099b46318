import DTLS
import ICE
import PeerConnection
import ScreencastSupport
import SDP
import XCTest

/// ``PeerConnection/answering(offer:id:configuration:logger:onEvent:)`` refuses what cannot be answered with
/// the failing layer's error, before any socket is opened, and answers a real browser's offer.
final class AnsweringTests: XCTestCase {
    private func configuration() throws -> PeerConnection.Configuration {
        PeerConnection.Configuration(
            ice: ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"]), certificate: try DTLSCertificate.shared())
    }

    private func answer(_ offer: String) throws -> PeerConnection {
        try PeerConnection.answering(
            offer: offer, id: "test", configuration: configuration(), logger: Logger(component: "test", threshold: .error),
            onEvent: { _ in })
    }

    func testOffersThatCannotBeAnsweredCarryTheSDPError() throws {
        XCTAssertThrowsError(try answer("v=0\r\nnonsense\r\n")) { error in
            guard case .sdp(let sdp)? = error as? PeerConnectionError else { return XCTFail("\(error)") }
            XCTAssertTrue(sdp.isMalformed, "\(sdp)")
            XCTAssertTrue((error as! PeerConnectionError).isPeerError)
        }
        let audioOnly = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\n"
            + "a=rtpmap:111 opus/48000/2\r\n"
        XCTAssertThrowsError(try answer(audioOnly)) { error in
            XCTAssertEqual(error as? PeerConnectionError, .sdp(.offerHasNoVP8Video))
        }
    }

    func testErrorsSayWhoIsAtFault() {
        XCTAssertTrue(PeerConnectionError.sdp(.offerWithoutFingerprint).isPeerError)
        XCTAssertFalse(PeerConnectionError.sdp(.invalidConfiguration("x")).isPeerError)
        XCTAssertTrue(PeerConnectionError.ice(.badRemoteCredentials(reason: "x")).isPeerError)
        XCTAssertFalse(PeerConnectionError.ice(.closed).isPeerError)
        XCTAssertTrue(PeerConnectionError.dtls(.timedOut).isPeerError)
        XCTAssertFalse(PeerConnectionError.dtls(.setup("x")).isPeerError)
        XCTAssertTrue(PeerConnectionError.srtp(.replayed).isPeerError)
        XCTAssertFalse(PeerConnectionError.invalidConfiguration("x").isPeerError)
        XCTAssertEqual(PeerConnectionError.ice(.closed).description, "the ICE agent is closed")
    }
}
