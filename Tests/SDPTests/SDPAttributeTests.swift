import SDP
import XCTest

/// Every attribute WebRTC negotiates (RFC 8866 §6, RFC 4585, RFC 5576, RFC 5888, RFC 8122, RFC 8285,
/// RFC 8839, RFC 8842), one line at a time: parsed to its typed value, printed back to the same text, and
/// refused with the exact error when malformed.
final class SDPAttributeTests: XCTestCase {
    /// A session whose fifth line is `line`.
    static func session(_ line: String) -> String { "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n\(line)\r\n" }

    /// The attribute `line` (`a=…`) parses to.
    func attribute(_ line: String) throws -> SDPAttribute {
        try XCTUnwrap(SessionDescription(parsing: Self.session(line)).attributes.last)
    }

    /// Well-formed lines: the typed value, its name, and the text printed back.
    func testEachAttributeParsesAndPrintsBack() throws {
        let cases: [(String, SDPAttribute, String)] = [
            ("a=rtpmap:96 VP8/90000", .rtpmap(RTPMap(payloadType: 96, encodingName: "VP8", clockRate: 90_000)), "rtpmap"),
            ("a=rtpmap:111 opus/48000/2", .rtpmap(RTPMap(payloadType: 111, encodingName: "opus", clockRate: 48_000, channels: 2)), "rtpmap"),
            ("a=rtpmap:0 PCMU/8000", .rtpmap(RTPMap(payloadType: 0, encodingName: "PCMU", clockRate: 8000)), "rtpmap"),
            ("a=fmtp:97 apt=96", .fmtp(FormatParameters(format: "97", text: "apt=96")), "fmtp"),
            ("a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f",
             .fmtp(FormatParameters(format: "102", text: "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f")), "fmtp"),
            ("a=rtcp-fb:96 nack", .rtcpFeedback(RTCPFeedbackAttribute(payloadType: 96, type: "nack")), "rtcp-fb"),
            ("a=rtcp-fb:96 nack pli", .rtcpFeedback(RTCPFeedbackAttribute(payloadType: 96, type: "nack", parameter: "pli")), "rtcp-fb"),
            ("a=rtcp-fb:* ccm fir", .rtcpFeedback(RTCPFeedbackAttribute(payloadType: nil, type: "ccm", parameter: "fir")), "rtcp-fb"),
            ("a=rtcp-fb:100 ccm tmmbr smaxpr=120", .rtcpFeedback(.init(payloadType: 100, type: "ccm", parameter: "tmmbr smaxpr=120")), "rtcp-fb"),
            ("a=mid:video-1", .mid("video-1"), "mid"),
            ("a=group:BUNDLE 0 1 2", .group(SDPGroup(semantics: "BUNDLE", mids: ["0", "1", "2"])), "group"),
            ("a=group:LS", .group(SDPGroup(semantics: "LS", mids: [])), "group"),
            ("a=ice-ufrag:Qx9b", .iceUfrag("Qx9b"), "ice-ufrag"),
            ("a=ice-pwd:vJ3kR8mPz2LqT5nW7yH1dF0c+/", .icePwd("vJ3kR8mPz2LqT5nW7yH1dF0c+/"), "ice-pwd"),
            ("a=ice-options:trickle renomination", .iceOptions(["trickle", "renomination"]), "ice-options"),
            ("a=ice-lite", .iceLite, "ice-lite"),
            ("a=fingerprint:sha-1 AB:cd:01:01:01:01:01:01:01:01:01:01:01:01:01:01:01:01:01:01", .fingerprint(Fingerprint(algorithm: "sha-1", value: "AB:cd:01:01:01:01:01:01:01:01:01:01:01:01:01:01:01:01:01:01")), "fingerprint"),
            ("a=setup:actpass", .setup(.actpass), "setup"),
            ("a=setup:holdconn", .setup(.holdconn), "setup"),
            ("a=candidate:1 1 udp 2130706431 192.0.2.1 5000 typ host",
             .candidate(ICECandidate(foundation: "1", priority: 2_130_706_431, address: "192.0.2.1", port: 5000, kind: .host)), "candidate"),
            ("a=end-of-candidates", .endOfCandidates, "end-of-candidates"),
            ("a=rtcp-mux", .rtcpMux, "rtcp-mux"),
            ("a=rtcp-rsize", .rtcpReducedSize, "rtcp-rsize"),
            ("a=ssrc:1234 cname:abc", .ssrc(SSRCAttribute(ssrc: 1234, name: "cname", value: "abc")), "ssrc"),
            ("a=ssrc:4294967295 msid:stream track", .ssrc(SSRCAttribute(ssrc: .max, name: "msid", value: "stream track")), "ssrc"),
            ("a=ssrc:7 label", .ssrc(SSRCAttribute(ssrc: 7, name: "label", value: nil)), "ssrc"),
            ("a=ssrc-group:FID 1234 5678", .ssrcGroup(SSRCGroup(semantics: "FID", ssrcs: [1234, 5678])), "ssrc-group"),
            ("a=extmap:3 urn:ietf:params:rtp-hdrext:sdes:mid", .extmap(ExtensionMap(id: 3, uri: "urn:ietf:params:rtp-hdrext:sdes:mid")), "extmap"),
            ("a=extmap:14/recvonly urn:x:y attr1 attr2",
             .extmap(ExtensionMap(id: 14, direction: .recvonly, uri: "urn:x:y", attributes: "attr1 attr2")), "extmap"),
            ("a=sendonly", .direction(.sendonly), "sendonly"),
            ("a=inactive", .direction(.inactive), "inactive"),
            ("a=extmap-allow-mixed", .other(name: "extmap-allow-mixed", value: nil), "extmap-allow-mixed"),
            ("a=msid-semantic: WMS", .other(name: "msid-semantic", value: " WMS"), "msid-semantic"),
            ("a=max-message-size:262144", .other(name: "max-message-size", value: "262144"), "max-message-size"),
            ("a=ice-lite:yes", .other(name: "ice-lite", value: "yes"), "ice-lite"),
            ("a=sendonly:now", .other(name: "sendonly", value: "now"), "sendonly"),
            ("a=rtcp-mux:", .other(name: "rtcp-mux", value: ""), "rtcp-mux"),
        ]
        for (line, expected, name) in cases {
            let parsed = try attribute(line)
            XCTAssertEqual(parsed, expected, line)
            XCTAssertEqual(parsed.name, name, line)
            XCTAssertEqual("a=" + parsed.sdpText, line, "prints back: \(line)")
        }
    }

    /// Malformed values: the attribute's name, line 5, and why.
    func testMalformedValuesAreRefusedWithTheReason() {
        let cases: [(String, String, String)] = [
            ("a=rtpmap:", "rtpmap", "no value"),
            ("a=rtpmap:128 VP8/90000", "rtpmap", "expected '<payload type 0-127> <encoding>'"),
            ("a=rtpmap:x VP8/90000", "rtpmap", "expected '<payload type 0-127> <encoding>'"),
            ("a=rtpmap:96  VP8/90000", "rtpmap", "expected '<payload type 0-127> <encoding>'"),
            ("a=rtpmap:96 VP8/0", "rtpmap", "expected '<name>/<clock rate>[/<channels>]'"),
            ("a=rtpmap:96 /90000", "rtpmap", "expected '<name>/<clock rate>[/<channels>]'"),
            ("a=rtpmap:96 VP8/90000/2/1", "rtpmap", "expected '<name>/<clock rate>[/<channels>]'"),
            ("a=rtpmap:111 opus/48000/x", "rtpmap", "bad channel count"),
            ("a=fmtp:97", "fmtp", "expected '<format> <parameters>'"),
            ("a=fmtp: apt=96", "fmtp", "expected '<format> <parameters>'"),
            ("a=rtcp-fb:96", "rtcp-fb", "expected '<payload type> <type> [<parameter>]'"),
            ("a=rtcp-fb:96 ", "rtcp-fb", "expected '<payload type> <type> [<parameter>]'"),
            ("a=rtcp-fb:200 nack", "rtcp-fb", "bad payload type 200"),
            ("a=mid:a b", "mid", "not a token"),
            ("a=mid:", "mid", "no value"),
            ("a=group:", "group", "no value"),
            ("a=ice-options:  ", "ice-options", "no options"),
            ("a=ice-pwd:pass word", "ice-pwd", "characters outside ALPHA / DIGIT / + /"),
            ("a=ice-ufrag:ab-c", "ice-ufrag", "characters outside ALPHA / DIGIT / + /"),
            ("a=fingerprint:sha-256", "fingerprint", "expected '<hash> <hex:hex:…>'"),
            ("a=fingerprint: AB:CD", "fingerprint", "expected '<hash> <hex:hex:…>'"),
            ("a=fingerprint:sha-256 ABC:D", "fingerprint", "value is not colon-separated hex pairs"),
            ("a=fingerprint:sha-256 AB::CD", "fingerprint", "value is not colon-separated hex pairs"),
            ("a=setup:ACTIVE", "setup", "not actpass/active/passive/holdconn"),
            ("a=ssrc:1234", "ssrc", "expected '<ssrc 0-4294967295> <attribute>'"),
            ("a=ssrc:4294967296 cname:x", "ssrc", "expected '<ssrc 0-4294967295> <attribute>'"),
            ("a=ssrc:1234 ", "ssrc", "no source attribute"),
            ("a=ssrc-group:FID", "ssrc-group", "expected '<semantics> <ssrc>…'"),
            ("a=ssrc-group:FID 12 x", "ssrc-group", "bad SSRC x"),
            ("a=extmap:3", "extmap", "expected '<id>[/<direction>] <uri>'"),
            ("a=extmap:0 urn:x", "extmap", "bad id 0"),
            ("a=extmap:256 urn:x", "extmap", "bad id 256"),
            ("a=extmap:1/both urn:x", "extmap", "bad direction both"),
            ("a=candidate:1 1 udp", "candidate",
             "expected '<foundation> <component> <transport> <priority> <address> <port> typ <type>'"),
        ]
        for (line, name, reason) in cases {
            assertThrowsSDPError(try SessionDescription(parsing: Self.session(line)), .badAttribute(line: 5, name: name, reason: reason))
        }
        // An attribute name that is not a token is a bad line, not a bad attribute.
        assertThrowsSDPError(try SessionDescription(parsing: Self.session("a=na me:x")),
                             .badLine(line: 5, text: "a=na me:x", reason: "attribute name is not a token"))
        assertThrowsSDPError(try SessionDescription(parsing: Self.session("a=:x")),
                             .badLine(line: 5, text: "a=:x", reason: "attribute name is not a token"))
    }

    /// `a=fmtp` parameters: `key=value` pairs split on `;`, keys compared case-insensitively, spaces around
    /// pairs trimmed, a bare key an empty value.
    func testFormatParameters() throws {
        let parameters = FormatParameters(format: "100", text: " Profile-Level-Id=42e01f ; packetization-mode=1;x-google-start-bitrate ")
        XCTAssertEqual(parameters.parameters.map(\.key), ["profile-level-id", "packetization-mode", "x-google-start-bitrate"])
        XCTAssertEqual(parameters.parameters.map(\.value), ["42e01f", "1", ""])
        XCTAssertEqual(parameters.parameter("PROFILE-LEVEL-ID"), "42e01f")
        XCTAssertEqual(parameters.parameter("x-google-start-bitrate"), "")
        XCTAssertNil(parameters.parameter("apt"))
        XCTAssertEqual(FormatParameters(format: "97", text: "apt=96").sdpValue, "97 apt=96")
        XCTAssertEqual(FormatParameters(format: "63", text: "111/111").parameters.first?.key, "111/111")
    }

    /// `a=rtcp-fb` matching: by payload type or through `*`, type and parameter case-insensitively.
    func testFeedbackMatching() {
        let pli = RTCPFeedbackAttribute(payloadType: 96, type: "NACK", parameter: "PLI")
        XCTAssertTrue(pli.matches(payloadType: 96, type: "nack", parameter: "pli"))
        XCTAssertFalse(pli.matches(payloadType: 97, type: "nack", parameter: "pli"))
        XCTAssertFalse(pli.matches(payloadType: 96, type: "nack", parameter: nil), "plain nack is another feedback")
        let any = RTCPFeedbackAttribute(payloadType: nil, type: "goog-remb")
        XCTAssertTrue(any.matches(payloadType: 0, type: "goog-remb", parameter: nil))
        XCTAssertTrue(any.matches(payloadType: 127, type: "goog-remb", parameter: nil))
        XCTAssertFalse(any.matches(payloadType: 96, type: "transport-cc", parameter: nil))
        XCTAssertEqual(any.sdpValue, "* goog-remb")
    }

    /// What an answerer that only sends answers to each direction (RFC 3264 §6.1).
    func testDirectionsAnsweredBySender() {
        XCTAssertEqual(MediaDirection.allCases.map(\.answerForSender), [.sendonly, .inactive, .sendonly, .inactive])
        XCTAssertEqual(MediaDirection.allCases.map(\.rawValue), ["sendrecv", "sendonly", "recvonly", "inactive"])
        XCTAssertEqual(DTLSSetup.allCases.map(\.rawValue), ["actpass", "active", "passive", "holdconn"])
    }

    /// Attributes keep their order through a whole description, at session and media level.
    func testAttributesKeepTheirOrder() throws {
        let lines = ["a=ice-lite", "a=group:BUNDLE 0", "a=x-custom:1", "a=ice-options:trickle"]
        let text = Self.session(lines.joined(separator: "\r\n")) + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\n"
            + "a=rtcp-fb:96 nack\r\na=rtpmap:96 VP8/90000\r\na=zz\r\na=mid:0\r\n"
        let parsed = try SessionDescription(parsing: text)
        XCTAssertEqual(parsed.attributes.map(\.name), ["ice-lite", "group", "x-custom", "ice-options"])
        XCTAssertEqual(parsed.media[0].attributes.map(\.name), ["rtcp-fb", "rtpmap", "zz", "mid"])
        XCTAssertEqual(parsed.serialized(), text)
    }
}
