import SDP
import XCTest

/// ``LocalMediaParameters``: what our side may put in a description (refused as our own error when
/// invalid), and how it shows in an offer: the default address, ICE options, sources.
final class LocalMediaParametersTests: XCTestCase {
    /// Each invalid field, refused by the offer builder (and the answer builder) before any text is made.
    func testInvalidParametersAreOurError() throws {
        let cases: [(String, (inout LocalMediaParameters) -> Void, String)] = [
            ("short ufrag", { $0.iceUfrag = "abc" }, "ice-ufrag must be 4–256 characters of ALPHA / DIGIT / + /"),
            ("long ufrag", { $0.iceUfrag = String(repeating: "a", count: 257) }, "ice-ufrag must be 4–256 characters of ALPHA / DIGIT / + /"),
            ("ufrag chars", { $0.iceUfrag = "ab-cd" }, "ice-ufrag must be 4–256 characters of ALPHA / DIGIT / + /"),
            ("short pwd", { $0.icePwd = String(repeating: "p", count: 21) }, "ice-pwd must be 22–256 characters of ALPHA / DIGIT / + /"),
            ("pwd chars", { $0.icePwd = String(repeating: "p", count: 21) + "=" }, "ice-pwd must be 22–256 characters of ALPHA / DIGIT / + /"),
            ("fingerprint value", { $0.fingerprint = Fingerprint(algorithm: "sha-256", value: "nothex") }, "fingerprint is not '<hash> <hex:hex:…>'"),
            ("fingerprint name", { $0.fingerprint = Fingerprint(algorithm: "sha 256", value: "AA") }, "fingerprint is not '<hash> <hex:hex:…>'"),
            ("empty cname", { $0.cname = "" }, "cname must be non-empty without spaces"),
            ("cname space", { $0.cname = "a b" }, "cname must be non-empty without spaces"),
            ("same SSRCs", { $0.rtxSSRC = $0.videoSSRC }, "video and RTX SSRCs must differ"),
            ("msid space", { $0.mediaStreamID = ("a b", "t") }, "msid stream and track ids must be non-empty tokens"),
            ("msid empty", { $0.mediaStreamID = ("s", "") }, "msid stream and track ids must be non-empty tokens"),
            ("ice-options", { $0.iceOptions = ["trickle", "a;b"] }, "ice-options must be tokens"),
        ]
        let offer = try SessionDescription(parsing: fixture("aiortc-offer.sdp"))
        for (name, edit, reason) in cases {
            var local = try localParameters()
            edit(&local)
            assertThrowsSDPError(try VideoOfferBuilder.offer(local: local), .invalidConfiguration(reason))
            assertThrowsSDPError(try VideoAnswerBuilder.answer(offer, local: local).answer, .invalidConfiguration(reason))
            XCTAssertNotEqual(local, try localParameters(), name)
        }
        var longest = try localParameters()
        longest.iceUfrag = String(repeating: "u", count: 256)
        longest.icePwd = String(repeating: "+", count: 256)
        longest.iceOptions = ["trickle"]
        XCTAssertNoThrow(try VideoOfferBuilder.offer(local: longest), "the limits themselves are allowed")
    }

    /// The m-line's port and `c=` come from the first component-1 candidate with an IP address (RFC 8829
    /// §5.3.1); with none, the discard port 9 and 0.0.0.0.
    func testDefaultAddress() throws {
        let cases: [([String], UInt16, SessionDescription.Connection)] = [
            (["1 1 udp 100 192.0.2.1 4000 typ host"], 4000, .init(address: "192.0.2.1")),
            (["1 2 udp 100 192.0.2.1 4001 typ host", "2 1 udp 90 198.51.100.1 4002 typ srflx raddr 0.0.0.0 rport 0"], 4002,
             .init(address: "198.51.100.1")),
            (["1 1 udp 100 a.local 4003 typ host", "2 1 udp 90 2001:db8::1 4004 typ host"], 4004, .init(addressType: "IP6", address: "2001:db8::1")),
            (["1 1 udp 100 a.local 4005 typ host"], 9, .unspecified),
            ([], 9, .unspecified),
        ]
        for (candidates, port, connection) in cases {
            let offer = try VideoOfferBuilder.offer(local: localParameters(candidates: candidates))
            XCTAssertEqual(offer.media[0].port, port, candidates.joined(separator: ", "))
            XCTAssertEqual(offer.media[0].connection, connection, candidates.joined(separator: ", "))
            XCTAssertEqual(offer.media[0].candidates.count, candidates.count)
        }
    }

    /// ICE options and `a=end-of-candidates` as the parameters say; sources with and without RTX.
    func testOptionsCandidatesAndSources() throws {
        var local = try localParameters(candidates: ["1 1 udp 100 192.0.2.1 4000 typ host"])
        local.iceOptions = ["trickle", "ice2"]
        local.candidatesComplete = false
        let offer = try VideoOfferBuilder.offer(local: local, vp8PayloadType: 120, rtxPayloadType: 121, mid: "screen")
        let lines = offer.media[0].sdpLines
        XCTAssertTrue(lines.contains("a=ice-options:trickle ice2"))
        XCTAssertFalse(lines.contains("a=end-of-candidates"))
        XCTAssertEqual(lines.filter { $0.hasPrefix("a=ssrc") }, [
            "a=ssrc-group:FID 286331153 572662306", "a=ssrc:286331153 cname:screencast-cname", "a=ssrc:572662306 cname:screencast-cname",
        ])
        XCTAssertEqual(offer.bundleGroup, SDPGroup(semantics: "BUNDLE", mids: ["screen"]))
        XCTAssertEqual(offer.media[0].formatParameters("121")?.text, "apt=120")
        XCTAssertEqual(offer.origin, .init(sessionID: "4242424242", sessionVersion: "2"))
        let plain = try VideoOfferBuilder.offer(local: local, rtxPayloadType: nil).media[0].sdpLines.filter { $0.hasPrefix("a=ssrc") }
        XCTAssertEqual(plain, ["a=ssrc:286331153 cname:screencast-cname"])
        assertThrowsSDPError(try VideoOfferBuilder.offer(local: local, mid: "a b"), .invalidConfiguration("mid must be a token"))
        assertThrowsSDPError(try VideoOfferBuilder.offer(local: local, mid: ""), .invalidConfiguration("mid must be a token"))
        for (vp8, rtx) in [(95, 97), (128, 97), (96, 96), (96, 95), (96, 128)] as [(UInt8, UInt8)] {
            assertThrowsSDPError(try VideoOfferBuilder.offer(local: local, vp8PayloadType: vp8, rtxPayloadType: rtx),
                                 .invalidConfiguration("payload types must be distinct and within 96…127"))
        }
    }
}
