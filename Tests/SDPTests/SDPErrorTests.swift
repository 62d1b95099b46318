import SDP
import XCTest

/// ``SDPError``: whose fault each case is (an HTTP layer's 400, 413, 422 or 500) and what it says.
final class SDPErrorTests: XCTestCase {
    static let all: [SDPError] = [
        .tooLarge(bytes: 200_000, limit: 131_072), .notText, .badLine(line: 3, text: "x", reason: "why"),
        .missingLine("t=", section: "session"), .unexpectedLine(line: 9, text: "v=0"), .badAttribute(line: 7, name: "rtpmap", reason: "why"),
        .offerHasNoVP8Video, .offerWithoutRTCPMux(mid: "0"), .offerWithoutRTCPMux(mid: nil), .unsupportedProfile("RTP/AVP"),
        .offerWithoutICECredentials, .offerWithoutFingerprint, .unsupportedSetup("holdconn"), .invalidConfiguration("short ice-pwd"),
    ]

    func testWhoseFaultEachIs() {
        XCTAssertEqual(Self.all.map(\.isMalformed), [false, true, true, true, true, true, false, false, false, false, false, false, false, false])
        XCTAssertEqual(Self.all.map(\.isPeerError), [true, true, true, true, true, true, true, true, true, true, true, true, true, false])
    }

    func testWhatEachSays() {
        XCTAssertEqual(Self.all.map(\.description), [
            "SDP of 200000 bytes exceeds the limit of 131072",
            "SDP is not UTF-8 text",
            "SDP line 3 (x): why",
            "SDP session lacks its t= line",
            "SDP line 9 (v=0) is not allowed there",
            "SDP line 7: bad a=rtpmap: why",
            "the offer has no video m-line with VP8",
            "the video m-line (mid 0) lacks a=rtcp-mux",
            "the video m-line (mid none) lacks a=rtcp-mux",
            "unsupported media profile RTP/AVP",
            "the offer lacks a=ice-ufrag/a=ice-pwd",
            "the offer lacks a=fingerprint",
            "unsupported a=setup:holdconn",
            "invalid local configuration: short ice-pwd",
        ])
    }

    /// The trickle fragment faults are the peer's but not malformed (422); messages escape control bytes.
    func testFragmentFaultsAndEscapedMessages() {
        for error in [SDPError.iceRestartNotSupported(line: 1), .unknownMid(line: 2, mid: "9")] {
            XCTAssertFalse(error.isMalformed, "\(error)")
            XCTAssertTrue(error.isPeerError, "\(error)")
        }
        XCTAssertEqual(SDPError.badAttribute(line: 1, name: "candidate", reason: "bad port 5\u{0}0\u{1B}\u{7F}").description,
                       "SDP line 1: bad a=candidate: bad port 5\\u{0}0\\u{1b}\\u{7f}")
        XCTAssertEqual(SDPError.badLine(line: 2, text: "a\tb", reason: "x").description, "SDP line 2 (a\\tb): x")
        XCTAssertEqual(SDPError.badAttribute(line: 0, name: "candidate", reason: "r").at(line: 4), .badAttribute(line: 4, name: "candidate", reason: "r"))
        XCTAssertEqual(SDPError.notText.at(line: 4), .notText)
    }
}
