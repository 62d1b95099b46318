import RTP
import SDP
import XCTest

/// The SDP parser and printer against the fixtures (see Fixtures/README.md) and malformed input.
final class SDPParserTests: XCTestCase {
    func testChromiumOfferFieldByField() throws {
        let text = try fixture("chromium-whep-offer.sdp")
        let offer = try SessionDescription(parsing: text)
        XCTAssertEqual(offer.origin, .init(username: "-", sessionID: "7614219274584779017", sessionVersion: "2"))
        XCTAssertEqual(offer.sessionName, "-")
        XCTAssertEqual(offer.timing, ["0 0"])
        XCTAssertNil(offer.connection)
        XCTAssertEqual(offer.bundleGroup, SDPGroup(semantics: "BUNDLE", mids: ["0", "1", "2"]))
        XCTAssertEqual(offer.attributes[1], .other(name: "extmap-allow-mixed", value: nil))
        XCTAssertEqual(offer.attributes[2], .other(name: "msid-semantic", value: " WMS"))
        XCTAssertEqual(offer.media.map(\.kind), ["video", "audio", "application"])
        XCTAssertEqual(offer.media.map(\.mid), ["0", "1", "2"])
        XCTAssertEqual(offer.media.map(\.port), [53807, 9, 9])

        let video = offer.media[0]
        XCTAssertEqual(video.proto, "UDP/TLS/RTP/SAVPF")
        XCTAssertEqual(video.formats.count, 25)
        XCTAssertEqual(video.connection, .unspecified)
        XCTAssertEqual(video.direction, .recvonly)
        XCTAssertTrue(video.hasRTCPMux)
        XCTAssertTrue(video.hasReducedSizeRTCP)
        XCTAssertEqual(video.iceUfrag, "Qx9b")
        XCTAssertEqual(video.icePwd, "vJ3kR8mPz2LqT5nW7yH1dF0c")
        XCTAssertEqual(video.setup, .actpass)
        XCTAssertEqual(video.fingerprints.first?.algorithm, "sha-256")
        XCTAssertEqual(video.fingerprints.first?.digest?.count, 32)
        XCTAssertEqual(video.rtpMap(payloadType: 96), RTPMap(payloadType: 96, encodingName: "VP8", clockRate: 90_000))
        XCTAssertEqual(video.rtpMap(payloadType: 45)?.encodingName, "AV1")
        XCTAssertEqual(video.formatParameters("97")?.parameter("apt"), "96")
        XCTAssertEqual(video.formatParameters("102")?.parameter("profile-level-id"), "42001f")
        XCTAssertEqual(video.feedback(payloadType: 96).map(\.sdpValue),
                       ["96 goog-remb", "96 transport-cc", "96 ccm fir", "96 nack", "96 nack pli"])
        XCTAssertEqual(video.extensionMaps.count, 11)
        XCTAssertEqual(video.extensionMaps[3], ExtensionMap(id: 4, uri: "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"))
        let candidates = video.candidates
        XCTAssertEqual(candidates.count, 2)
        XCTAssertEqual(candidates[0].address, "8d1c6c2e-4b4f-4f39-9a55-0c1bbf2e7a61.local")
        XCTAssertTrue(candidates[0].hasHostName)
        XCTAssertEqual(candidates[0].kind, .host)
        XCTAssertEqual(candidates[0].port, 53807)
        XCTAssertEqual(candidates[0].priority, 2_122_260_223)
        XCTAssertEqual(candidates[1].transport, "tcp")
        XCTAssertEqual(candidates[1].extensions.first?.name, "tcptype")
        XCTAssertFalse(video.hasEndOfCandidates)

        let audio = offer.media[1]
        XCTAssertEqual(audio.rtpMap(payloadType: 111), RTPMap(payloadType: 111, encodingName: "opus", clockRate: 48_000, channels: 2))
        XCTAssertEqual(audio.formatParameters("63")?.text, "111/111")
        let data = offer.media[2]
        XCTAssertEqual(data.formats, ["webrtc-datachannel"])
        XCTAssertFalse(data.isRTP)
        XCTAssertEqual(data.attributes.last, .other(name: "max-message-size", value: "262144"))

        XCTAssertEqual(offer.serialized(), text, "parse → print is byte-exact")
    }

    func testAiortcOfferFieldByField() throws {
        let text = try fixture("aiortc-offer.sdp")
        let offer = try SessionDescription(parsing: text)
        XCTAssertEqual(offer.origin.address, "0.0.0.0")
        XCTAssertEqual(offer.attributes, [.group(.init(semantics: "BUNDLE", mids: ["0"])), .other(name: "msid-semantic", value: "WMS *")])
        let video = try XCTUnwrap(offer.media.first)
        XCTAssertEqual(video.port, 45678)
        XCTAssertEqual(video.connection, .init(address: "192.168.1.20"))
        XCTAssertEqual(video.formats, ["97", "98", "99", "100", "101", "102"])
        XCTAssertEqual(video.ssrcGroups, [SSRCGroup(semantics: "FID", ssrcs: [2_846_155_937, 1_090_458_129])])
        XCTAssertEqual(video.ssrcAttributes.first, SSRCAttribute(ssrc: 2_846_155_937, name: "cname", value: "5b7e2c4a-1f3d-4e9b-8a6c-0d2f4e6a8c1b"))
        XCTAssertEqual(video.feedback(payloadType: 97).map(\.sdpValue), ["97 nack", "97 nack pli", "97 goog-remb"])
        XCTAssertEqual(video.fingerprints.map(\.algorithm), ["sha-256", "sha-384", "sha-512"])
        XCTAssertEqual(video.fingerprints.map { $0.digest?.count }, [32, 48, 64])
        XCTAssertEqual(video.candidates.map(\.address), ["192.168.1.20", "fd00:1234:5678::20"])
        XCTAssertEqual(video.candidates.map(\.hasHostName), [false, false])
        XCTAssertTrue(video.hasEndOfCandidates)
        XCTAssertEqual(offer.serialized(), text)
    }

    func testSecondChromiumOfferRoundTripsAndLFOnlyInputParsesTheSame() throws {
        for name in ["chromium-sendrecv-two-video-offer.sdp", "chromium-whep-offer.sdp", "aiortc-offer.sdp"] {
            let text = try fixture(name)
            let parsed = try SessionDescription(parsing: text)
            XCTAssertEqual(parsed.serialized(), text, name)
            let lfOnly = text.replacingOccurrences(of: "\r\n", with: "\n")
            XCTAssertEqual(try SessionDescription(parsing: lfOnly), parsed, name)
            XCTAssertEqual(try SDPParser().parse(Array(text.utf8)), parsed, name)
        }
    }

    func testEveryTruncationParsesOrThrowsATypedError() throws {
        let text = try fixture("aiortc-offer.sdp")
        let bytes = Array(text.utf8)
        var parsed = 0
        for length in 0..<bytes.count {
            do {
                _ = try SDPParser().parse(Array(bytes[0..<length]))
                parsed += 1
            } catch {
                // Typed: SDPError. Cuts before the first m-line's c= (and in the middle of a field) fail.
                XCTAssertTrue(error.isPeerError)
            }
        }
        XCTAssertGreaterThan(parsed, 0)
        // Cut before t=: the session lacks it.
        let beforeTiming = String(text[..<text.range(of: "t=0 0")!.lowerBound])
        assertThrowsSDPError(try SessionDescription(parsing: beforeTiming), .missingLine("t=", section: "session"))
    }

    func testGarbageAndMutationsNeverCrash() throws {
        var generator = SplitMix64(seed: 0x5D9)
        let lines = lines(try fixture("chromium-sendrecv-two-video-offer.sdp"))
        for _ in 0..<1000 {
            var mutated = lines
            let index = Int.random(in: 0..<mutated.count, using: &generator)
            var bytes = Array(mutated[index].utf8)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0x20...0x7E, using: &generator) }
            case 1: if !bytes.isEmpty { bytes.removeLast(Int.random(in: 0...bytes.count, using: &generator)) }
            case 2: mutated.remove(at: index); bytes = []
            default: if !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            }
            if !bytes.isEmpty, index < mutated.count { mutated[index] = String(decoding: bytes, as: UTF8.self) }
            let text = mutated.joined(separator: "\r\n") + "\r\n"
            if let description = try? SessionDescription(parsing: text) {
                // Whatever parses prints to something that parses to the same description.
                XCTAssertEqual(try SessionDescription(parsing: description.serialized()), description)
            }
        }
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? SDPParser().parse(bytes)
        }
    }

    func testMalformedDescriptionsGiveTypedErrors() throws {
        let good = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\na=rtpmap:96 VP8/90000\r\n"
        XCTAssertNoThrow(try SessionDescription(parsing: good))
        func replacing(_ old: String, _ new: String) -> String { good.replacingOccurrences(of: old, with: new) }
        let cases: [(String, String, SDPError)] = [
            ("no v=", replacing("v=0\r\n", ""), .missingLine("v=", section: "session")),
            ("v=1", replacing("v=0", "v=1"), .badLine(line: 1, text: "v=1", reason: "version is not 0")),
            ("no o=", replacing("o=- 1 2 IN IP4 127.0.0.1\r\n", ""), .missingLine("o=", section: "session")),
            ("bad o=", replacing("o=- 1 2 IN IP4 127.0.0.1", "o=- x 2 IN IP4 127.0.0.1"),
             .badLine(line: 2, text: "o=- x 2 IN IP4 127.0.0.1", reason: "expected o=<user> <id> <version> IN <IP4|IP6> <address>")),
            ("no s=", replacing("s=-\r\n", ""), .missingLine("s=", section: "session")),
            ("no t=", replacing("t=0 0\r\n", ""), .missingLine("t=", section: "session")),
            ("bad m= line", replacing("m=video 9 UDP/TLS/RTP/SAVPF 96", "m=video 9 UDP/TLS/RTP/SAVPF"),
             .badLine(line: 5, text: "m=video 9 UDP/TLS/RTP/SAVPF", reason: "expected m=<media> <port> <proto> <format> …")),
            ("bad port", replacing("m=video 9 ", "m=video 70000 "),
             .badLine(line: 5, text: "m=video 70000 UDP/TLS/RTP/SAVPF 96", reason: "bad port 70000")),
            ("negative port", replacing("m=video 9 ", "m=video -1 "),
             .badLine(line: 5, text: "m=video -1 UDP/TLS/RTP/SAVPF 96", reason: "bad port -1")),
            ("bad payload type", replacing("SAVPF 96", "SAVPF 200"),
             .badLine(line: 5, text: "m=video 9 UDP/TLS/RTP/SAVPF 200", reason: "bad payload type 200")),
            ("missing c=", replacing("c=IN IP4 0.0.0.0\r\n", ""), .missingLine("c=", section: "m-line 0")),
            ("bad c=", replacing("c=IN IP4 0.0.0.0", "c=IN IPX 0.0.0.0"),
             .badLine(line: 6, text: "c=IN IPX 0.0.0.0", reason: "expected c=IN <IP4|IP6> <address>")),
            ("not a line", replacing("s=-", "hello"), .badLine(line: 3, text: "hello", reason: "not <type>=<value>")),
            ("unknown type", replacing("s=-", "s=-\r\nx=1"), .badLine(line: 4, text: "x=1", reason: "unknown line type")),
            ("o= in media", good + "o=- 1 2 IN IP4 127.0.0.1\r\n", .unexpectedLine(line: 8, text: "o=- 1 2 IN IP4 127.0.0.1")),
            ("second v=", replacing("s=-", "s=-\r\nv=0"), .unexpectedLine(line: 4, text: "v=0")),
            ("bad rtpmap", replacing("VP8/90000", "VP8"),
             .badAttribute(line: 7, name: "rtpmap", reason: "expected '<name>/<clock rate>[/<channels>]'")),
            ("bad candidate", good + "a=candidate:1 1 udp x 1.2.3.4 5 typ host\r\n",
             .badAttribute(line: 8, name: "candidate", reason: "bad priority x")),
            ("bad fingerprint", good + "a=fingerprint:sha-256 XY:ZZ\r\n",
             .badAttribute(line: 8, name: "fingerprint", reason: "value is not colon-separated hex pairs")),
            ("bad setup", good + "a=setup:maybe\r\n",
             .badAttribute(line: 8, name: "setup", reason: "not actpass/active/passive/holdconn")),
            ("bad ice-ufrag", good + "a=ice-ufrag:a b\r\n",
             .badAttribute(line: 8, name: "ice-ufrag", reason: "characters outside ALPHA / DIGIT / + /")),
            ("bad ssrc", good + "a=ssrc:abc cname:x\r\n",
             .badAttribute(line: 8, name: "ssrc", reason: "expected '<ssrc 0-4294967295> <attribute>'")),
            ("bare CR", replacing("s=-", "s=-\rx"), .badLine(line: 3, text: "s=-\rx", reason: "bare CR")),
            ("empty", "", .missingLine("v=", section: "session")),
            ("garbage", "\u{1}\u{2}garbage", .badLine(line: 1, text: "\u{1}\u{2}garbage", reason: "not <type>=<value>")),
        ]
        for (name, text, expected) in cases {
            do {
                _ = try SessionDescription(parsing: text)
                XCTFail("\(name): parsed")
            } catch {
                XCTAssertEqual(error, expected, name)
                XCTAssertTrue(error.isPeerError, name)
            }
        }
        // Not UTF-8, NUL, too large.
        assertThrowsSDPError(try SDPParser().parse([0x76, 0x3D, 0xFF, 0xFE]), .notText)
        assertThrowsSDPError(try SDPParser().parse("v=0\0"), .notText)
        assertThrowsSDPError(try SDPParser(maxBytes: 10).parse(good), .tooLarge(bytes: good.utf8.count, limit: 10))
        // A rejected section (port 0) needs no c=.
        XCTAssertNoThrow(try SessionDescription(parsing: good + "m=audio 0 UDP/TLS/RTP/SAVPF 0\r\n"))
    }

    func testICECandidateForms() throws {
        let srflx = try ICECandidate(parsing: "candidate:842163049 1 udp 1677729535 203.0.113.5 52200 typ srflx raddr 0.0.0.0 rport 0 generation 0 network-cost 999")
        XCTAssertEqual(srflx.kind, .serverReflexive)
        XCTAssertEqual(srflx.relatedAddress, "0.0.0.0")
        XCTAssertEqual(srflx.relatedPort, 0)
        XCTAssertEqual(srflx.extensions.map(\.name), ["generation", "network-cost"])
        XCTAssertEqual(srflx.description, "candidate:842163049 1 udp 1677729535 203.0.113.5 52200 typ srflx raddr 0.0.0.0 rport 0 generation 0 network-cost 999")
        let relay = try ICECandidate(parsing: "a=candidate:3 1 UDP 16777215 198.51.100.9 3478 typ relay raddr 203.0.113.7 rport 50000")
        XCTAssertEqual(relay.kind, .relay)
        XCTAssertEqual(relay.transport, "UDP")
        let prflx = try ICECandidate(parsing: "7 1 udp 1845501695 10.0.0.2 40000 typ prflx")
        XCTAssertEqual(prflx.kind, .peerReflexive)
        XCTAssertEqual(try ICECandidate(parsing: "1 1 udp 1 ::1 9 typ host").hasHostName, false)
        XCTAssertEqual(try ICECandidate(parsing: "1 1 udp 1 abc.local 9 typ host").hasHostName, true)
        for bad in ["", "1 1 udp 1 1.2.3.4 5", "1 1 udp 1 1.2.3.4 5 type host", "1 0 udp 1 1.2.3.4 5 typ host",
                    "1 1 udp 1 1.2.3.4 65536 typ host", "1 1 udp 1 1.2.3.4 5 typ host generation",
                    "f@o 1 udp 1 1.2.3.4 5 typ host", "1 1 udp 1 1.2.3.4 5 typ host raddr 1.2.3.4 rport x"] {
            XCTAssertThrowsError(try ICECandidate(parsing: bad), bad)
        }
    }
}
