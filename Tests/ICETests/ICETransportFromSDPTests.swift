import Foundation
import ICE
import SDP
import TestSupport
import XCTest

/// The bridge from SDP to ICE: an offer built from one real agent's credentials and candidates is answered
/// by our builder, and the other agent connects to the offerer from nothing but what the answer negotiated
/// (``ICEAgent/setRemoteTransport(_:)``).
final class ICETransportFromSDPTests: XCTestCase {
    func testAnAgentConnectsFromTheNegotiatedTransport() throws {
        let offererLog = ICEEventLog(), answererLog = ICEEventLog()
        let offerer = try ICEAgent(configuration: .init(role: .controlling, localAddresses: ["127.0.0.1"]),
                                   onEvent: offererLog.record, onDatagram: offererLog.receive)
        let answerer = try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"]),
                                    onEvent: answererLog.record, onDatagram: answererLog.receive)
        defer {
            offerer.close()
            answerer.close()
        }
        let offererCandidates = try offerer.gatherCandidates()
        let local = LocalMediaParameters(
            iceUfrag: offerer.localCredentials.ufrag, icePwd: offerer.localCredentials.password,
            fingerprint: Fingerprint(algorithm: "sha-256", digest: Array(0..<32)), candidates: offererCandidates,
            videoSSRC: 1, rtxSSRC: 2, cname: "offerer", sessionID: 1)
        // The offer travels as text, as it would over HTTP.
        let offerText = try VideoOfferBuilder.offer(local: local).serialized()
        var asRecvonly = try SessionDescription(parsing: offerText)
        asRecvonly.media[0].attributes = asRecvonly.media[0].attributes.map { $0 == .direction(.sendonly) ? .direction(.recvonly) : $0 }
        let (_, negotiated) = try VideoAnswerBuilder.answer(asRecvonly, local: SDPFixture.localParameters())
        XCTAssertEqual(negotiated.remote.candidates, offererCandidates)
        XCTAssertTrue(negotiated.remote.candidatesComplete)

        _ = try answerer.gatherCandidates()
        XCTAssertEqual(try answerer.setRemoteTransport(negotiated.remote), offererCandidates.count)
        try offerer.setRemoteCredentials(answerer.localCredentials)
        XCTAssertTrue(answererLog.wait(seconds: 5) { _ in offerer.state == .ready && answerer.state == .ready },
                      "offerer \(offerer.state), answerer \(answerer.state)")
        XCTAssertEqual(answerer.selectedPair?.remote.port, offerer.selectedPair?.local.port)
        XCTAssertEqual(answerer.send(Array("hello".utf8)), .sent)
        XCTAssertTrue(offererLog.wait(seconds: 3) { $0.datagrams == [Array("hello".utf8)] })
    }

    /// A transport whose credentials libnice cannot take is refused as the peer's error, nothing applied.
    func testBadNegotiatedCredentialsAreThePeersError() throws {
        let agent = try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"]), onDatagram: { _ in })
        defer { agent.close() }
        _ = try agent.gatherCandidates()
        var remote = try VideoAnswerBuilder.answer(SessionDescription(parsing: SDPFixture.text("aiortc-offer.sdp")),
                                                   local: SDPFixture.localParameters()).video.remote
        remote.icePwd = "short"
        XCTAssertThrowsError(try agent.setRemoteTransport(remote)) { error in
            guard case .badRemoteCredentials? = error as? ICEError else { return XCTFail("\(error)") }
            XCTAssertTrue((error as! ICEError).isPeerError)
        }
    }
}
