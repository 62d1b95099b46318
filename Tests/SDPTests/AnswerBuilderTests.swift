import SDP
import XCTest

/// Answers to the fixture offers (Fixtures/README.md), line by line, and the offers we must refuse.
final class AnswerBuilderTests: XCTestCase {
    /// Our transport and stream lines, the same in every accepted answer.
    static let ourTransport = [
        "a=ice-ufrag:sc01",
        "a=ice-pwd:0123456789abcdefghijkl",
        "a=fingerprint:sha-256 00:01:02:03:04:05:06:07:08:09:0A:0B:0C:0D:0E:0F:10:11:12:13:14:15:16:17:18:19:1A:1B:1C:1D:1E:1F",
    ]
    static let ourCandidates = [
        "a=candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host",
        "a=candidate:2 1 udp 1694498815 203.0.113.7 50000 typ srflx raddr 127.0.0.1 rport 50000",
        "a=candidate:3 1 udp 16777215 198.51.100.9 3478 typ relay raddr 203.0.113.7 rport 50000",
        "a=end-of-candidates",
    ]
    static let session = ["v=0", "o=- 4242424242 2 IN IP4 127.0.0.1", "s=-", "t=0 0"]

    /// Our session and VP8 + RTX video section (SSRCs 0x11111111 and 0x22222222) up to the candidates, with
    /// this DTLS role (RFC 5763 §5: `passive` in an answer to `actpass`, `actpass` in our offer), and
    /// transport-wide congestion control with this extension ID, and the playout delay with that one.
    static func ourVideoSection(setup: String, transportWideCC id: Int? = nil, playoutDelay: Int? = nil, bundle: String = "0") -> [String] {
        session + ["a=group:BUNDLE \(bundle)", "m=video 50000 UDP/TLS/RTP/SAVPF 96 97", "c=IN IP4 127.0.0.1"] + ourTransport + [
            "a=setup:\(setup)",
            "a=mid:0",
            "a=sendonly",
            "a=msid:screencast screen",
            "a=rtcp-mux",
            "a=rtcp-rsize",
        ] + (id.map { ["a=extmap:\($0) http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"] } ?? [])
        + (playoutDelay.map { ["a=extmap:\($0) http://www.webrtc.org/experiments/rtp-hdrext/playout-delay"] } ?? []) + [
            "a=rtpmap:96 VP8/90000",
            "a=rtcp-fb:96 nack",
            "a=rtcp-fb:96 nack pli",
            "a=rtcp-fb:96 ccm fir",
            "a=rtcp-fb:96 goog-remb",
        ] + (id == nil ? [] : ["a=rtcp-fb:96 transport-cc"]) + [
            "a=rtpmap:97 rtx/90000",
            "a=fmtp:97 apt=96",
            "a=ssrc-group:FID 286331153 572662306",
            "a=ssrc:286331153 cname:screencast-cname",
            "a=ssrc:572662306 cname:screencast-cname",
        ]
    }

    func testAnswerToChromiumWHEPOffer() throws {
        let offer = try SessionDescription(parsing: fixture("chromium-whep-offer.sdp"))
        let (answer, video) = try VideoAnswerBuilder.answer(offer, local: localParameters())
        // The data channel's section is accepted in the BUNDLE (DataChannelAnswerTests says more).
        let expected = Self.ourVideoSection(setup: "passive", transportWideCC: 4, playoutDelay: 5, bundle: "0 2") + Self.ourCandidates + [
            "m=audio 0 UDP/TLS/RTP/SAVPF 111",
            "c=IN IP4 0.0.0.0",
            "a=mid:1",
            "a=inactive",
            "a=rtpmap:111 opus/48000/2",
            "m=application 50000 UDP/DTLS/SCTP webrtc-datachannel",
            "c=IN IP4 127.0.0.1",
        ] + Self.ourTransport + ["a=setup:passive", "a=mid:2", "a=sctp-port:5000", "a=max-message-size:262144"]
        let text = answer.serialized()
        XCTAssertEqual(lines(text), expected)
        XCTAssertTrue(text.hasSuffix("\r\n"))
        // Of Chromium's eleven header extensions the transport-wide sequence number (ID 4) and the playout
        // delay (ID 5) are answered.
        XCTAssertEqual(answer.media[0].extensionMaps.map(\.id), [4, 5])
        XCTAssertEqual(video.playoutDelayExtensionID, 5)
        // The answer is itself valid SDP.
        XCTAssertEqual(try SessionDescription(parsing: text), answer)

        XCTAssertEqual(video.mid, "0")
        XCTAssertEqual(video.mediaIndex, 0)
        XCTAssertEqual(video.direction, .sendonly)
        XCTAssertEqual(video.vp8PayloadType, 96)
        XCTAssertEqual(video.rtxPayloadType, 97)
        var all = NegotiatedVideo.Feedback.all
        all.transportWideCC = true
        XCTAssertEqual(video.feedback, all)
        XCTAssertEqual(video.transportWideCCExtensionID, 4)
        XCTAssertTrue(video.reducedSizeRTCP)
        XCTAssertEqual(video.dtlsRole, .server)
        XCTAssertEqual(video.remote.iceUfrag, "Qx9b")
        XCTAssertEqual(video.remote.icePwd, "vJ3kR8mPz2LqT5nW7yH1dF0c")
        XCTAssertEqual(video.remote.setup, .actpass)
        XCTAssertEqual(video.remote.fingerprints.map(\.algorithm), ["sha-256"])
        XCTAssertEqual(video.remote.candidates.map(\.address), Array(repeating: "8d1c6c2e-4b4f-4f39-9a55-0c1bbf2e7a61.local", count: 2))
        XCTAssertFalse(video.remote.candidatesComplete)
    }

    func testAnswerToAiortcOffer() throws {
        let offer = try SessionDescription(parsing: fixture("aiortc-offer.sdp"))
        let (answer, video) = try VideoAnswerBuilder.answer(offer, local: localParameters())
        let expected = Self.session + [
            "a=group:BUNDLE 0",
            "m=video 50000 UDP/TLS/RTP/SAVPF 97 98",
            "c=IN IP4 127.0.0.1",
        ] + Self.ourTransport + [
            "a=setup:passive",
            "a=mid:0",
            "a=sendonly",
            "a=msid:screencast screen",
            "a=rtcp-mux",
            "a=rtpmap:97 VP8/90000",
            "a=rtcp-fb:97 nack",
            "a=rtcp-fb:97 nack pli",
            "a=rtcp-fb:97 goog-remb",
            "a=rtpmap:98 rtx/90000",
            "a=fmtp:98 apt=97",
            "a=ssrc-group:FID 286331153 572662306",
            "a=ssrc:286331153 cname:screencast-cname",
            "a=ssrc:572662306 cname:screencast-cname",
        ] + Self.ourCandidates
        XCTAssertEqual(lines(answer.serialized()), expected)
        XCTAssertEqual(video.vp8PayloadType, 97)
        XCTAssertEqual(video.rtxPayloadType, 98)
        XCTAssertEqual(video.feedback, .init(nack: true, pictureLossIndication: true, fullIntraRequest: false, estimatedBitrate: true))
        // aiortc offers abs-send-time and goog-remb but no transport-cc: REMB only, no header extension.
        XCTAssertNil(video.transportWideCCExtensionID)
        XCTAssertNil(video.playoutDelayExtensionID)
        XCTAssertTrue(answer.media[0].extensionMaps.isEmpty)
        XCTAssertFalse(video.reducedSizeRTCP)
        XCTAssertEqual(video.remote.fingerprints.map(\.algorithm), ["sha-256", "sha-384", "sha-512"])
        XCTAssertEqual(video.remote.candidates.map(\.address), ["192.168.1.20", "fd00:1234:5678::20"])
        XCTAssertTrue(video.remote.candidatesComplete)
        XCTAssertEqual(video.remote.iceUfrag, "hT3q")
    }

    func testSecondVideoIsRejectedAndSendrecvIsAnsweredSendonly() throws {
        let offer = try SessionDescription(parsing: fixture("chromium-sendrecv-two-video-offer.sdp"))
        let (answer, video) = try VideoAnswerBuilder.answer(offer, local: localParameters())
        XCTAssertEqual(video.direction, .sendonly)
        XCTAssertEqual(video.mid, "0")
        XCTAssertEqual(answer.bundleGroup?.mids, ["0"])
        XCTAssertEqual(answer.media.count, 2)
        XCTAssertEqual(answer.media[0].direction, .sendonly)
        XCTAssertEqual(answer.media[1].sdpLines, ["m=video 0 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=mid:1", "a=inactive",
                                                "a=rtpmap:96 VP8/90000"])
        XCTAssertEqual(video.remote.candidates.count, 1)
    }

    func testDirectionAndSetupRoles() throws {
        let base = try fixture("aiortc-offer.sdp")
        // An offer that only sends (or is inactive) gets an inactive answer without our sources.
        for direction in ["sendonly", "inactive"] {
            let offer = try SessionDescription(parsing: base.replacingOccurrences(of: "a=recvonly", with: "a=\(direction)"))
            let (answer, video) = try VideoAnswerBuilder.answer(offer, local: localParameters())
            XCTAssertEqual(video.direction, .inactive)
            XCTAssertFalse(answer.serialized().contains("a=ssrc"))
            XCTAssertTrue(answer.serialized().contains("a=inactive"))
        }
        // No direction attribute means sendrecv.
        let sendrecv = try SessionDescription(parsing: base.replacingOccurrences(of: "a=recvonly\r\n", with: ""))
        XCTAssertEqual(try VideoAnswerBuilder.answer(sendrecv, local: localParameters()).video.direction, .sendonly)
        // setup: active → passive (server); passive → active (client); absent → passive; holdconn → refused.
        let roles: [(String, DTLSSetup, NegotiatedVideo.DTLSRole)] = [
            ("a=setup:active\r\n", .passive, .server), ("a=setup:passive\r\n", .active, .client), ("", .passive, .server),
        ]
        for (line, ours, role) in roles {
            let offer = try SessionDescription(parsing: base.replacingOccurrences(of: "a=setup:actpass\r\n", with: line))
            let (answer, video) = try VideoAnswerBuilder.answer(offer, local: localParameters())
            XCTAssertEqual(answer.media[0].setup, ours, line)
            XCTAssertEqual(video.dtlsRole, role, line)
        }
        let holdconn = try SessionDescription(parsing: base.replacingOccurrences(of: "a=setup:actpass", with: "a=setup:holdconn"))
        assertThrowsSDPError(try VideoAnswerBuilder.answer(holdconn, local: localParameters()), .unsupportedSetup("holdconn"))
    }

    func testWildcardFeedbackAndNoRTX() throws {
        let text = """
            v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n\
            a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuv\r\n\
            a=fingerprint:sha-256 AA:BB:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00\r\n\
            m=video 9 UDP/TLS/RTP/SAVPF 100 101\r\nc=IN IP4 0.0.0.0\r\na=mid:v\r\na=recvonly\r\na=rtcp-mux\r\n\
            a=rtpmap:100 vp8/90000\r\na=rtpmap:101 H264/90000\r\na=rtcp-fb:* nack\r\na=rtcp-fb:* ccm fir\r\n
            """
        let (answer, video) = try VideoAnswerBuilder.answer(SessionDescription(parsing: text), local: localParameters())
        XCTAssertEqual(video.vp8PayloadType, 100)
        XCTAssertNil(video.rtxPayloadType)
        XCTAssertEqual(video.feedback, .init(nack: true, pictureLossIndication: false, fullIntraRequest: true, estimatedBitrate: false))
        XCTAssertNil(answer.bundleGroup, "no BUNDLE in the offer, none in the answer")
        XCTAssertEqual(answer.media[0].formats, ["100"])
        XCTAssertEqual(answer.media[0].ssrcGroups, [])
        XCTAssertEqual(answer.media[0].ssrcAttributes, [SSRCAttribute(ssrc: 0x1111_1111, name: "cname", value: "screencast-cname")])
        XCTAssertEqual(video.remote.iceUfrag, "abcd", "session-level ICE credentials are used")
        XCTAssertEqual(video.remote.fingerprints, [Fingerprint(algorithm: "sha-256", value: "AA:BB:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00")])
    }

    /// The playout delay is answered with the offer's ID alone (no feedback needed), in the one-byte range,
    /// only when the offerer receives it; lines in ID order whatever the offer's order.
    func testPlayoutDelayNegotiation() throws {
        func offer(_ extmaps: String) throws -> SessionDescription {
            try SessionDescription(parsing: """
                v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n\
                a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuv\r\na=fingerprint:sha-256 AA:BB:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00\r\n\
                m=video 9 UDP/TLS/RTP/SAVPF 100\r\nc=IN IP4 0.0.0.0\r\na=mid:v\r\na=recvonly\r\na=rtcp-mux\r\n\
                \(extmaps)a=rtpmap:100 VP8/90000\r\na=rtcp-fb:100 transport-cc\r\n
                """)
        }
        let uri = "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay"
        let twcc = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
        let both = try VideoAnswerBuilder.answer(offer("a=extmap:12 \(uri)\r\na=extmap:3 \(twcc)\r\n"), local: localParameters())
        XCTAssertEqual(both.video.playoutDelayExtensionID, 12)
        XCTAssertEqual(both.video.transportWideCCExtensionID, 3)
        let text = both.answer.serialized()
        let extmaps = lines(text).filter { $0.hasPrefix("a=extmap") }
        XCTAssertEqual(extmaps, ["a=extmap:3 \(twcc)", "a=extmap:12 \(uri)"])
        XCTAssertTrue(text.contains("a=extmap:3 \(twcc)\r\na=extmap:12 \(uri)\r\na=rtpmap:100 VP8/90000\r\n"))
        for (extmap, id) in [
            ("a=extmap:1 \(uri)\r\n", UInt8?.some(1)), ("a=extmap:14/recvonly \(uri)\r\n", 14),
            ("a=extmap:15 \(uri)\r\n", nil),  // two-byte form only: we write the one-byte form
            ("a=extmap:5/sendonly \(uri)\r\n", nil), ("a=extmap:5/inactive \(uri)\r\n", nil),
            ("a=extmap:5 \(uri)/x\r\n", nil), ("", nil),
        ] {
            let answer = try VideoAnswerBuilder.answer(offer(extmap), local: localParameters())
            XCTAssertEqual(answer.video.playoutDelayExtensionID, id, extmap)
            XCTAssertEqual(answer.answer.media[0].extensionMaps.filter { $0.uri == uri }.map(\.id), id.map { [$0] } ?? [], extmap)
        }
    }

    func testOffersWeMustRefuse() throws {
        let base = try fixture("aiortc-offer.sdp")
        let local = try localParameters()
        func offer(_ edit: (String) -> String) throws -> SessionDescription { try SessionDescription(parsing: edit(base)) }

        // No VP8: only H.264 (the VP8 payload type dropped from the m-line and its rtpmap).
        let h264Only = try offer {
            $0.replacingOccurrences(of: "SAVPF 97 98 99", with: "SAVPF 99").replacingOccurrences(of: "a=rtpmap:97 VP8/90000\r\n", with: "")
        }
        assertThrowsSDPError(try VideoAnswerBuilder.answer(h264Only, local: local), .offerHasNoVP8Video)
        // VP8 mapped but not listed on the m-line.
        let unlisted = try offer { $0.replacingOccurrences(of: "SAVPF 97 98 99", with: "SAVPF 99") }
        assertThrowsSDPError(try VideoAnswerBuilder.answer(unlisted, local: local), .offerHasNoVP8Video)
        // The only video m-line already rejected by the offerer (port 0).
        let portZero = try offer { $0.replacingOccurrences(of: "m=video 45678", with: "m=video 0") }
        assertThrowsSDPError(try VideoAnswerBuilder.answer(portZero, local: local), .offerHasNoVP8Video)
        // Audio only.
        let audioOnly = try offer { $0.replacingOccurrences(of: "m=video", with: "m=audio") }
        assertThrowsSDPError(try VideoAnswerBuilder.answer(audioOnly, local: local), .offerHasNoVP8Video)
        // No rtcp-mux.
        let noMux = try offer { $0.replacingOccurrences(of: "a=rtcp-mux\r\n", with: "") }
        assertThrowsSDPError(try VideoAnswerBuilder.answer(noMux, local: local), .offerWithoutRTCPMux(mid: "0"))
        // Plain RTP/AVP.
        let avp = try offer { $0.replacingOccurrences(of: "UDP/TLS/RTP/SAVPF", with: "RTP/AVP") }
        assertThrowsSDPError(try VideoAnswerBuilder.answer(avp, local: local), .unsupportedProfile("RTP/AVP"))
        // No ICE credentials, no fingerprint.
        let noICE = try offer { $0.replacingOccurrences(of: "a=ice-pwd:Ux8sK1vN4mQ7rZ2wB5yC9d\r\n", with: "") }
        assertThrowsSDPError(try VideoAnswerBuilder.answer(noICE, local: local), .offerWithoutICECredentials)
        let noFingerprint = try offer { text in
            text.components(separatedBy: "\r\n").filter { !$0.hasPrefix("a=fingerprint") }.joined(separator: "\r\n")
        }
        assertThrowsSDPError(try VideoAnswerBuilder.answer(noFingerprint, local: local), .offerWithoutFingerprint)
        XCTAssertTrue(SDPError.offerHasNoVP8Video.isPeerError)
    }

    func testInvalidLocalParametersAreOurError() throws {
        let offer = try SessionDescription(parsing: fixture("aiortc-offer.sdp"))
        var local = try localParameters()
        local.icePwd = "short"
        do {
            _ = try VideoAnswerBuilder.answer(offer, local: local)
            XCTFail("accepted a short ice-pwd")
        } catch {
            guard case .invalidConfiguration = error else { return XCTFail("\(error)") }
            XCTAssertFalse(error.isPeerError)
        }
        local = try localParameters()
        local.rtxSSRC = local.videoSSRC
        XCTAssertThrowsError(try VideoAnswerBuilder.answer(offer, local: local))
    }

    func testNoCandidatesGiveDiscardPortAndNoEndOfCandidates() throws {
        let offer = try SessionDescription(parsing: fixture("aiortc-offer.sdp"))
        var local = try localParameters(candidates: ["1 1 udp 2130706431 host.local 50000 typ host"])
        local.candidatesComplete = false
        let (answer, _) = try VideoAnswerBuilder.answer(offer, local: local)
        XCTAssertEqual(answer.media[0].port, 9, "an mDNS-only candidate cannot be the default address")
        XCTAssertEqual(answer.media[0].connection, .unspecified)
        XCTAssertFalse(answer.media[0].hasEndOfCandidates)
        local = try localParameters(candidates: ["1 1 udp 2130706431 ::1 50001 typ host"])
        XCTAssertEqual(try VideoAnswerBuilder.answer(offer, local: local).answer.media[0].connection,
                       .init(addressType: "IP6", address: "::1"))
    }

    func testOfferBuilder() throws {
        let offer = try VideoOfferBuilder.offer(local: localParameters())
        let expected = Self.ourVideoSection(setup: "actpass") + Self.ourCandidates
        XCTAssertEqual(lines(offer.serialized()), expected)
        XCTAssertEqual(try SessionDescription(parsing: offer.serialized()), offer)
        // Our own offer, answered by our own builder as a receiver would see it: we only send, so the
        // answer (from a sender's point of view) is inactive — but it is accepted, with everything negotiated.
        let (_, video) = try VideoAnswerBuilder.answer(offer, local: localParameters())
        XCTAssertEqual(video.direction, .inactive)
        XCTAssertEqual(video.feedback, .all)
        XCTAssertEqual(video.rtxPayloadType, 97)
        // Without RTX; bad payload types refused.
        let plain = try VideoOfferBuilder.offer(local: localParameters(), vp8PayloadType: 100, rtxPayloadType: nil)
        XCTAssertEqual(plain.media[0].formats, ["100"])
        XCTAssertEqual(plain.media[0].ssrcGroups, [])
        XCTAssertThrowsError(try VideoOfferBuilder.offer(local: localParameters(), vp8PayloadType: 96, rtxPayloadType: 96))
        XCTAssertThrowsError(try VideoOfferBuilder.offer(local: localParameters(), vp8PayloadType: 8))
    }
}
