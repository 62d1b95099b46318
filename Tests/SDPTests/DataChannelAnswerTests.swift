import SDP
import XCTest

/// The answer's application section (RFC 8841): accepted when the offer bundles it with the video, its
/// `a=sctp-port` and `a=max-message-size` read; an offer without one is answered exactly as before.
final class DataChannelAnswerTests: XCTestCase {
    func offer(application: [String], bundle: String = "0 1") -> String {
        ([
            "v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE \(bundle)",
            "m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=ice-ufrag:abcd", "a=ice-pwd:0123456789012345678901",
            "a=fingerprint:sha-256 " + (0..<32).map { _ in "AB" }.joined(separator: ":"), "a=setup:actpass", "a=mid:0",
            "a=recvonly", "a=rtcp-mux", "a=rtpmap:96 VP8/90000",
        ] + application).joined(separator: "\r\n") + "\r\n"
    }

    func answer(_ text: String) throws -> (SessionDescription, NegotiatedVideo) {
        try VideoAnswerBuilder.answer(SessionDescription(parsing: text), local: localParameters())
    }

    func testBundledApplicationSectionIsAccepted() throws {
        let (answer, video) = try answer(offer(application: [
            "m=application 9 UDP/DTLS/SCTP webrtc-datachannel", "c=IN IP4 0.0.0.0", "a=mid:1", "a=sctp-port:5000",
            "a=max-message-size:65536",
        ]))
        XCTAssertEqual(video.dataChannel, NegotiatedDataChannel(mid: "1", mediaIndex: 1, remotePort: 5000, remoteMaxMessageSize: 65536))
        XCTAssertEqual(answer.bundleGroup?.mids, ["0", "1"])
        let section = answer.media[1]
        XCTAssertEqual(section.sdpLines.first, "m=application 50000 UDP/DTLS/SCTP webrtc-datachannel")
        XCTAssertEqual(section.mid, "1")
        XCTAssertEqual(section.setup, .passive)
        XCTAssertTrue(lines(answer.serialized()).contains("a=sctp-port:5000"))
        XCTAssertTrue(lines(answer.serialized()).contains("a=max-message-size:\(DataChannelAnswer.maxMessageSize)"))
        XCTAssertEqual(try SessionDescription(parsing: answer.serialized()), answer)
    }

    func testMaxMessageSizeDefaultsAndZero() throws {
        let absent = try answer(offer(application: ["m=application 9 UDP/DTLS/SCTP webrtc-datachannel", "c=IN IP4 0.0.0.0", "a=mid:1"])).1
        XCTAssertEqual(absent.dataChannel?.remoteMaxMessageSize, 65536)  // RFC 8841 §6.1
        let any = try answer(offer(application: ["m=application 9 UDP/DTLS/SCTP webrtc-datachannel", "c=IN IP4 0.0.0.0", "a=mid:1", "a=max-message-size:0"])).1
        XCTAssertEqual(any.dataChannel?.remoteMaxMessageSize, .max)
    }

    func testUnbundledOrOldFormIsRejected() throws {
        let unbundled = try answer(offer(application: ["m=application 9 UDP/DTLS/SCTP webrtc-datachannel", "c=IN IP4 0.0.0.0", "a=mid:1"], bundle: "0"))
        XCTAssertNil(unbundled.1.dataChannel)
        XCTAssertEqual(unbundled.0.media[1].port, 0)
        XCTAssertEqual(unbundled.0.bundleGroup?.mids, ["0"])
        let old = try answer(offer(application: ["m=application 9 DTLS/SCTP 5000", "c=IN IP4 0.0.0.0", "a=mid:1", "a=sctpmap:5000 webrtc-datachannel 1024"]))
        XCTAssertNil(old.1.dataChannel)
        XCTAssertEqual(old.0.media[1].port, 0)
        let closed = try answer(offer(application: ["m=application 0 UDP/DTLS/SCTP webrtc-datachannel", "c=IN IP4 0.0.0.0", "a=mid:1"]))
        XCTAssertNil(closed.1.dataChannel)
    }

    /// A viewer that offers no data channel gets the answer it got before this section existed.
    func testNoApplicationSectionAnswerUnchanged() throws {
        let (answer, video) = try answer(offer(application: [], bundle: "0"))
        XCTAssertNil(video.dataChannel)
        XCTAssertEqual(answer.media.count, 1)
        XCTAssertEqual(answer.bundleGroup?.mids, ["0"])
        XCTAssertFalse(answer.serialized().contains("sctp"))
    }
}
