import SDP
import TestSupport
import XCTest

/// ``SessionDescription`` and ``MediaDescription`` built by hand and printed (RFC 8866 §5 line order,
/// CRLF), their attribute views, and the parser's section rules and limits.
final class SessionDescriptionTests: XCTestCase {
    /// A description with every kind of line, printed in the order RFC 8866 §5 gives, then parsed back.
    func testEveryLineTypeInItsPlace() throws {
        var description = SessionDescription(
            origin: .init(username: "alice", sessionID: "42", sessionVersion: "7", addressType: "IP6", address: "::1"), sessionName: "share",
            attributes: [.group(SDPGroup(semantics: "BUNDLE", mids: ["v"])), .iceLite])
        description.informationLines = [.init(type: "i", value: "a screen"), .init(type: "u", value: "https://example.org/")]
        description.connection = .init(addressType: "IP6", address: "::1")
        description.bandwidths = ["AS:2000"]
        description.timing = ["0 0", "1 2"]
        description.timingLines = [.init(type: "r", value: "7d 1h 0 25h")]
        var video = MediaDescription(kind: "video", port: 5004, proto: "UDP/TLS/RTP/SAVPF", formats: ["96", "97"])
        video.portCount = 2
        video.otherLines = [.init(type: "k", value: "prompt"), .init(type: "i", value: "the screen")]
        video.connection = .init(address: "192.0.2.1")
        video.bandwidths = ["TIAS:1500000"]
        video.attributes = [.mid("v"), .direction(.sendonly), .rtpmap(RTPMap(payloadType: 96, encodingName: "VP8", clockRate: 90_000))]
        description.media = [video, MediaDescription(kind: "application", port: 0, proto: "UDP/DTLS/SCTP", formats: ["webrtc-datachannel"])]
        let text = description.serialized()
        XCTAssertEqual(text.components(separatedBy: "\r\n"), [
            "v=0", "o=alice 42 7 IN IP6 ::1", "s=share", "i=a screen", "u=https://example.org/", "c=IN IP6 ::1", "b=AS:2000",
            "t=0 0", "t=1 2", "r=7d 1h 0 25h", "a=group:BUNDLE v", "a=ice-lite",
            "m=video 5004/2 UDP/TLS/RTP/SAVPF 96 97", "i=the screen", "c=IN IP4 192.0.2.1", "b=TIAS:1500000", "k=prompt",
            "a=mid:v", "a=sendonly", "a=rtpmap:96 VP8/90000",
            "m=application 0 UDP/DTLS/SCTP webrtc-datachannel", "",
        ])
        var reparsed = try SessionDescription(parsing: text)
        XCTAssertEqual(reparsed.media[0].otherLines.map(\.type), ["i", "k"], "printed order: i= before c=, k= after b=")
        reparsed.media[0].otherLines = video.otherLines
        XCTAssertEqual(reparsed, description)
        XCTAssertEqual(reparsed.bundleGroup?.mids, ["v"])
        XCTAssertEqual(reparsed.media(mid: "v")?.port, 5004)
        XCTAssertNil(reparsed.media(mid: "x"))
    }

    /// The attribute views of a media section: defaults, `*` feedback, first-wins single attributes.
    func testMediaAttributeViews() throws {
        let section = try XCTUnwrap(SessionDescription(parsing: """
            v=0\r
            o=- 1 1 IN IP4 0.0.0.0\r
            s=-\r
            t=0 0\r
            c=IN IP4 0.0.0.0\r
            m=video 9 RTP/AVPF 96 97 98\r
            a=rtpmap:96 VP8/90000\r
            a=rtpmap:97 rtx/90000\r
            a=fmtp:97 apt=96\r
            a=rtcp-fb:* nack\r
            a=rtcp-fb:96 ccm fir\r
            a=rtcp-fb:98 goog-remb\r
            a=ice-ufrag:first\r
            a=ice-ufrag:second\r
            a=ssrc-group:FID 1 2\r
            a=ssrc:1 cname:c\r
            a=ssrc:2 cname:c\r
            a=extmap:1 urn:a\r
            a=extmap:2/sendonly urn:b\r
            a=end-of-candidates\r

            """).media.first)
        XCTAssertEqual(section.direction, .sendrecv, "no direction attribute: sendrecv (RFC 8866 §6.7)")
        XCTAssertNil(section.mid)
        XCTAssertTrue(section.isRTP)
        XCTAssertEqual(section.rtpMaps.map(\.payloadType), [96, 97])
        XCTAssertNil(section.rtpMap(payloadType: 98), "a format without rtpmap")
        XCTAssertEqual(section.formatParameters("97")?.parameter("apt"), "96")
        XCTAssertNil(section.formatParameters("96"))
        XCTAssertEqual(section.feedback(payloadType: 96).map(\.sdpValue), ["* nack", "96 ccm fir"])
        XCTAssertEqual(section.feedback(payloadType: 98).map(\.sdpValue), ["* nack", "98 goog-remb"])
        XCTAssertEqual(section.iceUfrag, "first")
        XCTAssertNil(section.icePwd)
        XCTAssertEqual(section.fingerprints, [])
        XCTAssertNil(section.setup)
        XCTAssertFalse(section.hasRTCPMux)
        XCTAssertFalse(section.hasReducedSizeRTCP)
        XCTAssertTrue(section.hasEndOfCandidates)
        XCTAssertEqual(section.candidates, [])
        XCTAssertEqual(section.ssrcGroups, [SSRCGroup(semantics: "FID", ssrcs: [1, 2])])
        XCTAssertEqual(section.ssrcAttributes.map(\.ssrc), [1, 2])
        XCTAssertEqual(section.extensionMaps.map(\.direction), [nil, .sendonly])
        XCTAssertEqual(section.connection, nil, "the session's c= serves it")
        XCTAssertFalse(MediaDescription(kind: "application", port: 9, proto: "UDP/DTLS/SCTP", formats: ["x"]).isRTP)
        XCTAssertTrue(MediaDescription(kind: "audio", port: 9, proto: "RTP/AVP", formats: ["0"]).isRTP)
    }

    /// The parser's section rules: a session-level `c=` serves every section; a media section's own `c=`
    /// is allowed once; port counts; formats of non-RTP profiles are not payload types.
    func testSectionRules() throws {
        let session = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"
        let withSessionConnection = session.replacingOccurrences(of: "t=0 0", with: "c=IN IP4 192.0.2.1\r\nt=0 0")
            + "m=video 5000 RTP/AVP 96\r\nm=audio 5002 RTP/AVP 0\r\n"
        XCTAssertEqual(try SessionDescription(parsing: withSessionConnection).media.count, 2)
        assertThrowsSDPError(try SessionDescription(parsing: session + "m=video 5000 RTP/AVP 96\r\nc=IN IP4 0.0.0.0\r\nc=IN IP4 0.0.0.0\r\n"),
                             .unexpectedLine(line: 7, text: "c=IN IP4 0.0.0.0"))
        assertThrowsSDPError(try SessionDescription(parsing: session.replacingOccurrences(of: "t=0 0", with: "c=IN IP4 1.1.1.1\r\nc=IN IP4 1.1.1.1\r\nt=0 0")),
                             .unexpectedLine(line: 5, text: "c=IN IP4 1.1.1.1"))
        let counted = try SessionDescription(parsing: session + "m=video 5000/2 RTP/AVP 96\r\nc=IN IP4 0.0.0.0\r\n")
        XCTAssertEqual(counted.media[0].portCount, 2)
        assertThrowsSDPError(try SessionDescription(parsing: session + "m=video 5000/ RTP/AVP 96\r\n"),
                             .badLine(line: 5, text: "m=video 5000/ RTP/AVP 96", reason: "bad port 5000/"))
        assertThrowsSDPError(try SessionDescription(parsing: session + "m=video 5000/70000 RTP/AVP 96\r\n"),
                             .badLine(line: 5, text: "m=video 5000/70000 RTP/AVP 96", reason: "bad port count 5000/70000"))
        assertThrowsSDPError(try SessionDescription(parsing: session + "m=vid eo 5000 RTP/AVP 96\r\n"),
                             .badLine(line: 5, text: "m=vid eo 5000 RTP/AVP 96", reason: "bad port eo"))
        assertThrowsSDPError(try SessionDescription(parsing: session + "m=video 5000 RTP;AVP 96\r\n"),
                             .badLine(line: 5, text: "m=video 5000 RTP;AVP 96", reason: "bad profile"))
        XCTAssertEqual(try SessionDescription(parsing: session + "m=application 0 UDP/DTLS/SCTP webrtc-datachannel\r\n").media[0].formats,
                       ["webrtc-datachannel"])
        // Lines that belong to the session only are refused in a media section, in order.
        for type in ["v=0", "s=x", "t=0 0", "u=x", "e=x", "p=x", "r=x", "z=x"] {
            assertThrowsSDPError(try SessionDescription(parsing: session + "m=video 0 RTP/AVP 96\r\n\(type)\r\n"),
                                 .unexpectedLine(line: 6, text: type))
        }
        // m= before o=, s= or t= names what is missing.
        assertThrowsSDPError(try SessionDescription(parsing: "v=0\r\nm=video 0 RTP/AVP 96\r\n"), .missingLine("o=", section: "session"))
        assertThrowsSDPError(try SessionDescription(parsing: "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\nm=video 0 RTP/AVP 96\r\n"),
                             .missingLine("s=", section: "session"))
        assertThrowsSDPError(try SessionDescription(parsing: "o=- 1 1 IN IP4 0.0.0.0\r\n"), .missingLine("v=", section: "session"))
        assertThrowsSDPError(try SessionDescription(parsing: "q=1\r\n"), .badLine(line: 1, text: "q=1", reason: "unknown line type"))
        assertThrowsSDPError(try SessionDescription(parsing: session.replacingOccurrences(of: "t=0 0", with: "t=0")),
                             .badLine(line: 4, text: "t=0", reason: "expected t=<start> <stop>"))
    }

    /// Blank lines are skipped but counted, so errors name the line a person sees; LF and CRLF mix.
    func testBlankLinesAndMixedLineEnds() throws {
        let text = "v=0\n\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\n\nt=0 0\r\nm=video 0 RTP/AVP 96\nbad\r\n"
        assertThrowsSDPError(try SessionDescription(parsing: text), .badLine(line: 8, text: "bad", reason: "not <type>=<value>"))
        let good = try SessionDescription(parsing: String(text.dropLast("bad\r\n".count)))
        XCTAssertEqual(good.serialized(), "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=video 0 RTP/AVP 96\r\n")
    }

    /// The size limit counts UTF-8 bytes, for text and byte input alike: exactly the limit passes.
    func testSizeLimitIsExact() throws {
        let text = try SDPFixture.text("aiortc-offer.sdp")
        let size = text.utf8.count
        XCTAssertNoThrow(try SDPParser(maxBytes: size).parse(text))
        XCTAssertNoThrow(try SDPParser(maxBytes: size).parse(Array(text.utf8)))
        assertThrowsSDPError(try SDPParser(maxBytes: size - 1).parse(text), .tooLarge(bytes: size, limit: size - 1))
        assertThrowsSDPError(try SDPParser(maxBytes: size - 1).parse(Array(text.utf8)), .tooLarge(bytes: size, limit: size - 1))
        XCTAssertEqual(SDPParser().maxBytes, 128 * 1024)
        // Multi-byte characters count as their bytes.
        let session = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=é\r\nt=0 0\r\n"
        XCTAssertEqual(try SDPParser(maxBytes: session.utf8.count).parse(session).sessionName, "é")
        assertThrowsSDPError(try SDPParser(maxBytes: session.count).parse(session), .tooLarge(bytes: session.utf8.count, limit: session.count))
    }
}

/// The parser at the byte level: what counts as text, where a description may end, what a first line must be.
final class SDPBytesTests: XCTestCase {
    static let session = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"

    func testTextRules() throws {
        // UTF-8 that does not decode, wherever it is, is not text; valid multi-byte text is.
        var bytes = Array((Self.session + "a=x-note:caf").utf8)
        bytes += [0xC3]  // a lead byte without its continuation
        bytes += Array("\r\n".utf8)
        assertThrowsSDPError(try SDPParser().parse(bytes), .notText)
        XCTAssertEqual(try SDPParser().parse(Array((Self.session + "a=x-note:café\r\n").utf8)).attributes,
                       [.other(name: "x-note", value: "café")])
        // NUL anywhere is not text, even in an attribute value.
        assertThrowsSDPError(try SDPParser().parse(Self.session + "a=x:\u{0}\r\n"), .notText)
        // A byte-order mark is not a line type.
        assertThrowsSDPError(try SDPParser().parse("\u{FEFF}" + Self.session),
                             .badLine(line: 1, text: "\u{FEFF}v=0", reason: "not <type>=<value>"))
        // Upper-case line types are not SDP's.
        assertThrowsSDPError(try SDPParser().parse("V=0\r\n"), .badLine(line: 1, text: "V=0", reason: "not <type>=<value>"))
    }

    func testWhereADescriptionMayEnd() throws {
        // The last line needs no line end; a lone CR line is blank; trailing blank lines are nothing.
        let unterminated = String(Self.session.dropLast())  // "\r\n" is one Character
        XCTAssertEqual(try SessionDescription(parsing: unterminated).timing, ["0 0"])
        XCTAssertEqual(try SessionDescription(parsing: Self.session + "\r\n\r\n\n").serialized(), Self.session)
        XCTAssertEqual(try SessionDescription(parsing: "v=0\r\n\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0").serialized(), Self.session)
        // A line of one character is not a line.
        assertThrowsSDPError(try SessionDescription(parsing: Self.session + "a\r\n"), .badLine(line: 5, text: "a", reason: "not <type>=<value>"))
        // Before v=, a known line type says v= is missing; an unknown one is a bad line.
        assertThrowsSDPError(try SessionDescription(parsing: "s=-\r\nv=0\r\n"), .missingLine("v=", section: "session"))
        assertThrowsSDPError(try SessionDescription(parsing: "y=1\r\n"), .badLine(line: 1, text: "y=1", reason: "unknown line type"))
        // Session-level repeats are refused where they appear.
        assertThrowsSDPError(try SessionDescription(parsing: Self.session.replacingOccurrences(of: "s=-", with: "s=-\r\ns=again")),
                             .unexpectedLine(line: 4, text: "s=again"))
        assertThrowsSDPError(try SessionDescription(parsing: Self.session + "o=- 2 2 IN IP4 0.0.0.0\r\n"),
                             .unexpectedLine(line: 5, text: "o=- 2 2 IN IP4 0.0.0.0"))
    }
}
