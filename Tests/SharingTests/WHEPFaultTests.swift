import ScreencastSupport
import Sharing
import Signaling
import PeerConnection
import SDP
import XCTest

/// A break-it trial's offers and PATCHes (`/tmp/breakit/t/t2.py`, `t3.py`, `t4.py`, exact bytes) through
/// ``ViewerHub``, the WHEP provider: each refused with its status (400 malformed, 422 understood but
/// unanswerable, RFC 9110 §15.5) and the reason the route sends, before any session or slot is kept.
final class WHEPFaultTests: XCTestCase {
    static let twcc = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    static let playoutDelay = "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay"

    /// base.py's `offer()`.
    static func offer(extra: String = "", fingerprint: String = Array(repeating: "AB", count: 32).joined(separator: ":")) -> String {
        "v=0\r\no=- 123 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0\r\n"
            + "m=video 9 UDP/TLS/RTP/SAVPF 96 97\r\nc=IN IP4 0.0.0.0\r\na=rtcp:9 IN IP4 0.0.0.0\r\n"
            + "a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\na=fingerprint:sha-256 \(fingerprint)\r\n"
            + "a=setup:actpass\r\na=mid:0\r\na=recvonly\r\na=rtcp-mux\r\na=rtpmap:96 VP8/90000\r\na=rtcp-fb:96 nack\r\n"
            + "a=rtcp-fb:96 nack pli\r\na=rtpmap:97 rtx/90000\r\na=fmtp:97 apt=96\r\n" + extra
    }

    func hub() throws -> ViewerHub {
        try ViewerHub(
            configuration: SharingConfiguration(ice: .init(role: .controlled, localAddresses: ["127.0.0.1"]), maxViewers: 1),
            encoder: ViewerHubRefusalTests.Encoder(), logger: Logger(component: "test", threshold: .error))
    }

    /// The status and reason text a WHEP route answers an error with.
    func refusal<T>(_ body: () throws(SignalingError) -> T, file: StaticString = #filePath, line: UInt = #line) -> (Int, String)? {
        do {
            _ = try body()
            XCTFail("accepted", file: file, line: line)
            return nil
        } catch {
            return (error.httpStatus, error.description)
        }
    }

    func testContradictoryOffersAre400AndTakeNoSlot() throws {
        let hub = try hub()
        defer { hub.closeAll(reason: "test over") }
        let cases: [(String, String)] = [
            (Self.offer(extra: "a=extmap:3 \(Self.twcc)\r\na=extmap:3 \(Self.playoutDelay)\r\na=rtcp-fb:96 transport-cc\r\n"),
             "SDP line 22: bad a=extmap: id 3 is already mapped to \(Self.twcc) (RFC 8285 §6: one extension per id)"),
            (Self.offer().replacingOccurrences(of: "SAVPF 96 97", with: "SAVPF 96")
                .replacingOccurrences(of: "a=rtpmap:97 rtx/90000", with: "a=rtpmap:96 rtx/90000").replacingOccurrences(of: "fmtp:97", with: "fmtp:96"),
             "SDP line 19: bad a=rtpmap: payload type 96 is already mapped to VP8/90000 (RFC 8866 §6.6: one encoding per payload type)"),
            (Self.offer(fingerprint: "AB"), "SDP line 11: bad a=fingerprint: a sha-256 digest is 32 bytes, this one 1 (RFC 8122 §5)"),
            (Self.offer(fingerprint: Array(repeating: "AB", count: 33).joined(separator: ":")),
             "SDP line 11: bad a=fingerprint: a sha-256 digest is 32 bytes, this one 33 (RFC 8122 §5)"),
            (Self.offer(fingerprint: Array(repeating: "AB", count: 10_000).joined(separator: ":")),
             "SDP line 11: bad a=fingerprint: a sha-256 digest is 32 bytes, this one 10000 (RFC 8122 §5)"),
        ]
        for (offer, reason) in cases {
            let refused = refusal { () throws(SignalingError) in try hub.createSession(offer: offer) }
            XCTAssertEqual(refused?.0, 400, reason)
            XCTAssertEqual(refused?.1, reason)
            XCTAssertEqual(hub.viewerCount, 0, "no session kept")
        }
        // The one slot (maxViewers 1) is still free: the base offer is answered.
        XCTAssertNoThrow(try hub.createSession(offer: Self.offer()))
    }

    func testBadFragmentsAreRefusedWithTheirStatus() throws {
        let hub = try hub()
        defer { hub.closeAll(reason: "test over") }
        let id = try hub.createSession(offer: Self.offer()).id
        let cases: [(String, Int, String)] = [
            ("garbage", 400, "SDP line 1 (garbage): a trickle fragment holds only a= and m= lines (RFC 8840 §9)"),
            ("m=video 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:99\r\na=candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host\r\n",
             422, "SDP fragment line 2: a=mid:99 names no m-line of this session"),
            ("a=ice-ufrag:wxyz\r\na=ice-pwd:zzzzzzzzzzzzzzzzzzzzzzzz\r\nm=video 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:0\r\n",
             422, "SDP fragment line 1: an ICE restart (new a=ice-ufrag/a=ice-pwd) is not supported"),
            ("a=ice-ufrag:qqqq\r\n", 422, "SDP fragment line 1: an ICE restart (new a=ice-ufrag/a=ice-pwd) is not supported"),
            ("a=ice-ufrag:w\r\na=ice-pwd:z\r\n", 400, "SDP line 1: bad a=ice-ufrag: must be 4–256 ice-chars (RFC 8839 §5.4)"),
            ("a=candidate:1 1 udp 1 127.0.0.1 5\u{0}000 typ host\r\n", 400, "SDP line 1: bad a=candidate: bad port 5\\u{0}000"),
        ]
        for (fragment, status, reason) in cases {
            let refused = refusal { () throws(SignalingError) in try hub.updateSession(id: id, fragment: fragment) }
            XCTAssertEqual(refused?.0, status, fragment)
            XCTAssertEqual(refused?.1, reason, fragment)
        }
        // What the trial's good PATCHes sent still gets 204 (nil).
        XCTAssertNil(try hub.updateSession(id: id, fragment: "a=candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host\r\n"))
        XCTAssertNil(try hub.updateSession(id: id, fragment: "m=video 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:0\r\na=end-of-candidates\r\n"))
    }

    /// Through the WHEP routes (in memory): the status line and body the trial saw, now 400 and 422.
    func testTheWHEPRoutesAnswerTheStatusAndReason() throws {
        let hub = try hub()
        defer { hub.closeAll(reason: "test over") }
        let router = HTTPRouter(routes: WHEPEndpoint.routes(provider: hub, token: nil, logger: Logger(component: "test", threshold: .error)))
        func request(_ method: String, _ path: String, _ type: String, _ body: String) -> HTTPResponse {
            router.respond(to: HTTPRequest(method: method, path: path, headers: ["Content-Type": type], body: Array(body.utf8)))
        }
        let duplicate = request("POST", "/whep", "application/sdp",
                                Self.offer(extra: "a=extmap:3 \(Self.playoutDelay)\r\na=extmap:3 \(Self.twcc)\r\na=rtcp-fb:96 transport-cc\r\n"))
        XCTAssertEqual(duplicate.status, 400)
        XCTAssertEqual(duplicate.bodyText, "SDP line 22: bad a=extmap: id 3 is already mapped to \(Self.playoutDelay) (RFC 8285 §6: one extension per id)\n")
        let created = request("POST", "/whep", "application/sdp", Self.offer())
        XCTAssertEqual(created.status, 201)
        let location = try XCTUnwrap(created.headers["Location"])
        let fragment = "application/trickle-ice-sdpfrag"
        let garbage = request("PATCH", location, fragment, "garbage")
        XCTAssertEqual(garbage.status, 400)
        XCTAssertEqual(garbage.bodyText, "SDP line 1 (garbage): a trickle fragment holds only a= and m= lines (RFC 8840 §9)\n")
        let restart = request("PATCH", location, fragment, "a=ice-ufrag:wxyz\r\na=ice-pwd:zzzzzzzzzzzzzzzzzzzzzzzz\r\nm=video 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:0\r\n")
        XCTAssertEqual(restart.status, 422)
        let nul = request("PATCH", location, fragment, "a=candidate:1 1 udp 1 127.0.0.1 5\u{0}000 typ host\r\n")
        XCTAssertEqual(nul.status, 400)
        XCTAssertEqual(nul.bodyText, "SDP line 1: bad a=candidate: bad port 5\\u{0}000\n")
        XCTAssertFalse(nul.body.contains(0), "no raw NUL echoed")
        XCTAssertEqual(request("PATCH", location, fragment, "a=end-of-candidates\r\n").status, 204)
    }

    /// DescriptionFault's docs and the mapping agree: an ICE restart and an unknown mid are 422.
    func testTheFragmentFaultsMapTo422() {
        XCTAssertEqual(SignalingError(SDPError.iceRestartNotSupported(line: 1)).httpStatus, 422)
        XCTAssertEqual(SignalingError(SDPError.unknownMid(line: 2, mid: "99")).httpStatus, 422)
        XCTAssertEqual(SignalingError(SDPError.badAttribute(line: 11, name: "fingerprint", reason: "x")).httpStatus, 400)
        XCTAssertEqual(DescriptionFault.unanswerable.httpStatus, 422)
    }
}
