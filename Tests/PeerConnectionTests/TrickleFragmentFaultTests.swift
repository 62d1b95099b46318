import PeerConnection
import SDP
import XCTest

/// PATCH bodies a break-it trial sent (`/tmp/breakit/t/t3.py`, exact bytes) that were taken or mis-described:
/// a fragment is ICE attributes only (RFC 8840 §9, RFC 8838 §13); other credentials are an ICE restart
/// (RFC 8839 §4.4.1.1.1), understood but unsupported; a mid must name one of the session's m-lines
/// (RFC 8840 §4.4); an error names its line once and never echoes a control byte.
final class TrickleFragmentFaultTests: XCTestCase {
    static let ufrag = "abcd", password = "abcdefghijklmnopqrstuvwx", mids = ["0"]

    func parse(_ text: String) throws(SDPError) -> TrickleFragment {
        try TrickleFragment(parsing: text, ufrag: Self.ufrag, password: Self.password, mids: Self.mids)
    }

    func refusal(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> SDPError? {
        do {
            let parsed = try parse(text)
            XCTFail("accepted: \(parsed)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testGarbageIsMalformed() {
        let error = refusal("garbage")
        XCTAssertEqual(error, .badLine(line: 1, text: "garbage", reason: "a trickle fragment holds only a= and m= lines (RFC 8840 §9)"))
        XCTAssertEqual(error?.isMalformed, true)
        XCTAssertEqual(error?.description, "SDP line 1 (garbage): a trickle fragment holds only a= and m= lines (RFC 8840 §9)")
        XCTAssertEqual(refusal("a=end-of-candidates\r\nv=0\r\n"),
                       .badLine(line: 2, text: "v=0", reason: "a trickle fragment holds only a= and m= lines (RFC 8840 §9)"))
        let other = refusal("a=candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host\r\na=rtpmap:96 VP8/90000\r\n")
        XCTAssertEqual(other, .badAttribute(
            line: 2, name: "rtpmap", reason: "not an attribute of a trickle fragment (RFC 8840 §9: ICE attributes only)"))
        XCTAssertEqual(other?.isMalformed, true)
    }

    /// The trial's "PATCH real wrong mid": a candidate for `a=mid:99`, which no m-line has (422).
    func testACandidateForAMidTheSessionLacksIsUnanswerable() {
        let error = refusal("m=video 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:99\r\na=candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host\r\n")
        XCTAssertEqual(error, .unknownMid(line: 2, mid: "99"))
        XCTAssertEqual(error?.isMalformed, false)
        XCTAssertEqual(error?.isPeerError, true)
        XCTAssertEqual(error?.description, "SDP fragment line 2: a=mid:99 names no m-line of this session")
        // The session's own mid, with the dummy m= line and BUNDLE group of RFC 8840 §9, is taken.
        XCTAssertEqual(
            try parse("a=ice-options:trickle\r\na=group:BUNDLE 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:0\r\n"
                + "a=candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host\r\na=end-of-candidates\r\n"),
            TrickleFragment(candidates: ["candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host"], complete: true))
    }

    /// The trial's "PATCH real restart" and "restart ufrag only": 422, not 400; credentials that are not
    /// ice-chars of the right length are malformed (400) whatever they are.
    func testAnICERestartIsUnanswerableNotMalformed() {
        let restart = refusal("a=ice-ufrag:wxyz\r\na=ice-pwd:zzzzzzzzzzzzzzzzzzzzzzzz\r\nm=video 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:0\r\n")
        XCTAssertEqual(restart, .iceRestartNotSupported(line: 1))
        XCTAssertEqual(restart?.isMalformed, false)
        XCTAssertEqual(restart?.description, "SDP fragment line 1: an ICE restart (new a=ice-ufrag/a=ice-pwd) is not supported")
        XCTAssertEqual(refusal("a=ice-ufrag:qqqq\r\n"), .iceRestartNotSupported(line: 1))
        XCTAssertEqual(refusal("a=ice-ufrag:abcd\r\na=ice-pwd:zzzzzzzzzzzzzzzzzzzzzzzz\r\n"), .iceRestartNotSupported(line: 2))
        XCTAssertEqual(refusal("a=ice-ufrag:w\r\na=ice-pwd:z\r\n"),
                       .badAttribute(line: 1, name: "ice-ufrag", reason: "must be 4–256 ice-chars (RFC 8839 §5.4)"))
        XCTAssertNoThrow(try parse("a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\na=end-of-candidates\r\n"))
    }

    /// The trial's "PATCH real nul": the message named "SDP line 1 … SDP line 0" and echoed the NUL.
    func testACandidateErrorNamesItsLineOnceAndEscapesControlBytes() {
        let error = refusal("a=candidate:1 1 udp 1 127.0.0.1 5\u{0}000 typ host\r\n")
        XCTAssertEqual(error, .badAttribute(line: 1, name: "candidate", reason: "bad port 5\u{0}000"))
        XCTAssertEqual(error?.isMalformed, true)
        XCTAssertEqual(error?.description, "SDP line 1: bad a=candidate: bad port 5\\u{0}000")
        XCTAssertEqual(refusal("a=end-of-candidates\r\na=candidate:zzz\r\n").map { "\($0)" }?.components(separatedBy: "SDP line").count, 2,
                       "one 'SDP line' prefix")
        guard case .badAttribute(2, "candidate", _)? = refusal("a=end-of-candidates\r\na=candidate:zzz\r\n") else {
            return XCTFail("not on line 2")
        }
    }
}
