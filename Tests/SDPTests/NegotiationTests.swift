import SDP
import XCTest

/// What an answer settles beyond the fixtures' cases: the peer's transport read through BUNDLE and the
/// session level, which RTX and feedback count, which m-line is chosen, and how the others are rejected.
final class NegotiationTests: XCTestCase {
    static let fingerprintA = "a=fingerprint:sha-256 " + (0..<32).map { _ in "AA" }.joined(separator: ":")
    static let fingerprintB = "a=fingerprint:sha-384 " + (0..<48).map { _ in "BB" }.joined(separator: ":")

    /// An offer of these sections (each `m=` line and its attributes), after a session part with `session`
    /// attributes.
    func offer(session: [String] = [], _ sections: [[String]]) throws -> SessionDescription {
        let lines = ["v=0", "o=- 9 1 IN IP4 0.0.0.0", "s=-", "t=0 0"] + session + sections.flatMap { $0 }
        return try SessionDescription(parsing: lines.joined(separator: "\r\n") + "\r\n")
    }

    func video(
        mid: String? = "v", formats: String = "96 97", transport: [String] = ["a=ice-ufrag:vvvv", "a=ice-pwd:vvvvvvvvvvvvvvvvvvvvvv", fingerprintA],
        extra: [String] = ["a=rtpmap:96 VP8/90000", "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96"]
    ) -> [String] {
        ["m=video 9 UDP/TLS/RTP/SAVPF \(formats)", "c=IN IP4 0.0.0.0"] + (mid.map { ["a=mid:\($0)"] } ?? []) + transport
            + ["a=recvonly", "a=rtcp-mux"] + extra
    }

    func answer(_ offer: SessionDescription) throws -> (SessionDescription, NegotiatedVideo) {
        try VideoAnswerBuilder.answer(offer, local: localParameters())
    }

    /// A BUNDLE-tagged section's transport serves the chosen one (RFC 8843 §7.2.1): credentials, fingerprints,
    /// setup and candidates; candidates from both, in order, without repeats; `a=end-of-candidates` in either.
    func testTransportComesThroughTheBundleTag() throws {
        let audio = ["m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=mid:a", "a=ice-ufrag:aaaa", "a=ice-pwd:aaaaaaaaaaaaaaaaaaaaaa",
                     Self.fingerprintB, "a=setup:passive", "a=rtcp-mux", "a=rtpmap:111 opus/48000/2",
                     "a=candidate:1 1 udp 100 192.0.2.1 1000 typ host", "a=candidate:2 1 udp 90 192.0.2.2 1001 typ host",
                     "a=end-of-candidates"]
        let bundled = video(transport: [], extra: ["a=rtpmap:96 VP8/90000", "a=candidate:2 1 udp 90 192.0.2.2 1001 typ host",
                                                   "a=candidate:3 1 udp 80 192.0.2.3 1002 typ host"])
        let (answer, negotiated) = try answer(offer(session: ["a=group:BUNDLE a v"], [audio, bundled]))
        let remote = negotiated.remote
        XCTAssertEqual(negotiated.mediaIndex, 1)
        XCTAssertEqual(remote.iceUfrag, "aaaa")
        XCTAssertEqual(remote.fingerprints.map(\.algorithm), ["sha-384"])
        XCTAssertEqual(remote.setup, .passive)
        XCTAssertEqual(negotiated.dtlsRole, .client, "the peer's passive makes us active")
        XCTAssertEqual(remote.candidates.map(\.address), ["192.0.2.2", "192.0.2.3", "192.0.2.1"], "the chosen section's first")
        XCTAssertTrue(remote.candidatesComplete)
        XCTAssertEqual(answer.bundleGroup?.mids, ["v"], "only the accepted section stays bundled")
        XCTAssertEqual(answer.media[0].sdpLines, [
            "m=audio 0 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=mid:a", "a=inactive", "a=rtpmap:111 opus/48000/2",
        ])
    }

    /// Media-level attributes win over the session's; the session's serve when a section has none; ice-lite.
    func testMediaLevelBeforeSessionLevel() throws {
        let session = ["a=ice-lite", "a=ice-ufrag:ssss", "a=ice-pwd:ssssssssssssssssssssss", Self.fingerprintB, "a=setup:active"]
        let own = try answer(offer(session: session, [video()])).1.remote
        XCTAssertEqual(own.iceUfrag, "vvvv")
        XCTAssertEqual(own.fingerprints.map(\.algorithm), ["sha-256"])
        XCTAssertEqual(own.setup, .active)
        XCTAssertTrue(own.iceLite)
        let inherited = try answer(offer(session: session, [video(transport: [])])).1.remote
        XCTAssertEqual(inherited.iceUfrag, "ssss")
        XCTAssertEqual(inherited.icePwd, "ssssssssssssssssssssss")
        XCTAssertEqual(inherited.fingerprints.map(\.algorithm), ["sha-384"])
        XCTAssertFalse(try answer(offer([video()])).1.remote.iceLite)
        XCTAssertEqual(try answer(offer([video()])).1.remote.setup, .active, "absent a=setup counts as active (RFC 4145 §4)")
    }

    /// RTX counts only when it is listed on the m-line, at 90 kHz, with `apt` naming the chosen VP8.
    func testWhichRTXCounts() throws {
        let cases: [(String, [String], UInt8?)] = [
            ("96 97", ["a=rtpmap:96 VP8/90000", "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96"], 97),
            ("96 97", ["a=rtpmap:96 VP8/90000", "a=rtpmap:97 RTX/90000", "a=fmtp:97 apt=96;rtx-time=3000"], 97),
            ("96", ["a=rtpmap:96 VP8/90000", "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96"], nil),
            ("96 97", ["a=rtpmap:96 VP8/90000", "a=rtpmap:97 rtx/48000", "a=fmtp:97 apt=96"], nil),
            ("96 97 98", ["a=rtpmap:96 VP8/90000", "a=rtpmap:98 H264/90000", "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=98"], nil),
            ("96 97", ["a=rtpmap:96 VP8/90000", "a=rtpmap:97 rtx/90000"], nil),
            ("96 97 99", ["a=rtpmap:96 VP8/90000", "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=98", "a=rtpmap:99 rtx/90000", "a=fmtp:99 apt=96"], 99),
        ]
        for (formats, lines, expected) in cases {
            let (answer, negotiated) = try answer(offer([video(formats: formats, extra: lines)]))
            XCTAssertEqual(negotiated.rtxPayloadType, expected, lines.joined(separator: " "))
            XCTAssertEqual(answer.media[0].formats, ["96"] + (expected.map { [String($0)] } ?? []))
            XCTAssertEqual(answer.media[0].ssrcGroups.isEmpty, expected == nil)
        }
    }

    /// Each feedback the offer lists for VP8 (or `*`) is answered, in our fixed order; others are not.
    func testFeedbackSubsetsInOurOrder() throws {
        let cases: [([String], [String])] = [
            ([], []),
            (["a=rtcp-fb:96 goog-remb", "a=rtcp-fb:96 nack"], ["96 nack", "96 goog-remb"]),
            (["a=rtcp-fb:96 nack pli"], ["96 nack pli"]),
            (["a=rtcp-fb:* ccm fir", "a=rtcp-fb:96 transport-cc", "a=rtcp-fb:97 nack"], ["96 ccm fir"]),
            (["a=rtcp-fb:96 NACK PLI", "a=rtcp-fb:96 Nack"], ["96 nack", "96 nack pli"]),
        ]
        for (lines, expected) in cases {
            let (answer, negotiated) = try answer(offer([video(formats: "96", extra: ["a=rtpmap:96 VP8/90000"] + lines)]))
            XCTAssertEqual(answer.media[0].feedback(payloadType: 96).map(\.sdpValue), expected, lines.joined(separator: " "))
            XCTAssertEqual(negotiated.feedback.nack, expected.contains("96 nack"))
            XCTAssertEqual(negotiated.feedback.estimatedBitrate, expected.contains("96 goog-remb"))
        }
    }

    /// The first video section that can be answered is chosen; one without VP8, or rejected by the offerer,
    /// is passed over and rejected in the answer; no mid means no a=mid and no BUNDLE; `RTP/SAVPF` is fine.
    func testWhichSectionIsChosen() throws {
        let h264 = ["m=video 9 UDP/TLS/RTP/SAVPF 102", "c=IN IP4 0.0.0.0", "a=mid:h", "a=rtcp-mux", "a=rtpmap:102 H264/90000"]
        let zero = ["m=video 0 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=mid:z", "a=rtpmap:96 VP8/90000"]
        let (chosen, negotiated) = try answer(offer([h264, zero, video(mid: nil, formats: "100", extra: ["a=rtpmap:100 VP8/90000"])]))
        XCTAssertEqual(negotiated.mediaIndex, 2)
        XCTAssertNil(negotiated.mid)
        XCTAssertEqual(chosen.media.map(\.port), [0, 0, 50000])
        XCTAssertNil(chosen.media[2].mid)
        XCTAssertNil(chosen.bundleGroup)
        XCTAssertEqual(chosen.media[0].rtpMaps, [RTPMap(payloadType: 102, encodingName: "H264", clockRate: 90_000)])
        let savpf = try offer([video().map { $0.replacingOccurrences(of: "UDP/TLS/RTP/SAVPF", with: "RTP/SAVPF") }])
        XCTAssertEqual(try answer(savpf).0.media[0].proto, "RTP/SAVPF")
        // A rejected RTP section whose first format has no rtpmap keeps only its m-line, mid and direction.
        let unmapped = ["m=audio 9 UDP/TLS/RTP/SAVPF 0", "c=IN IP4 0.0.0.0", "a=mid:p"]
        XCTAssertEqual(try answer(offer([unmapped, video()])).0.media[0].sdpLines,
                       ["m=audio 0 UDP/TLS/RTP/SAVPF 0", "c=IN IP4 0.0.0.0", "a=mid:p", "a=inactive"])
    }

    /// Our answer keeps the offer's `a=rtcp-rsize` choice and says `a=msid` only when we have one.
    func testReducedSizeAndMsid() throws {
        let plain = try answer(offer([video()]))
        XCTAssertFalse(plain.1.reducedSizeRTCP)
        XCTAssertFalse(plain.0.media[0].hasReducedSizeRTCP)
        let reduced = try answer(offer([video(extra: ["a=rtpmap:96 VP8/90000", "a=rtcp-rsize"])]))
        XCTAssertTrue(reduced.1.reducedSizeRTCP)
        XCTAssertTrue(reduced.0.media[0].hasReducedSizeRTCP)
        var local = try localParameters()
        local.mediaStreamID = nil
        let noMsid = try VideoAnswerBuilder.answer(offer([video()]), local: local).answer.serialized()
        XCTAssertFalse(noMsid.contains("a=msid"))
        XCTAssertTrue(plain.0.serialized().contains("a=msid:screencast screen\r\n"))
    }

    /// Transport-wide congestion control needs both halves in the offer — `transport-cc` for VP8 (or `*`)
    /// and the extension with a one-byte ID the offerer receives — and then both are answered; else neither.
    func testTransportWideCCNeedsTheExtensionAndTheFeedback() throws {
        let uri = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
        let cases: [([String], UInt8?)] = [
            (["a=extmap:5 \(uri)", "a=rtcp-fb:96 transport-cc"], 5),
            (["a=extmap:14/recvonly \(uri)", "a=rtcp-fb:* transport-cc"], 14),
            (["a=extmap:3/sendrecv \(uri)", "a=rtcp-fb:96 transport-cc"], 3),
            (["a=extmap:5 \(uri)"], nil),
            (["a=rtcp-fb:96 transport-cc"], nil),
            (["a=extmap:5 \(uri)", "a=rtcp-fb:97 transport-cc"], nil),
            (["a=extmap:15 \(uri)", "a=rtcp-fb:96 transport-cc"], nil),
            (["a=extmap:5/sendonly \(uri)", "a=rtcp-fb:96 transport-cc"], nil),
            (["a=extmap:5/inactive \(uri)", "a=rtcp-fb:96 transport-cc"], nil),
            (["a=extmap:5 \(uri)x", "a=rtcp-fb:96 transport-cc"], nil),
            (["a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time", "a=rtcp-fb:96 goog-remb"], nil),
        ]
        for (lines, expected) in cases {
            let (answer, negotiated) = try answer(offer([video(formats: "96", extra: ["a=rtpmap:96 VP8/90000"] + lines)]))
            let label = lines.joined(separator: " ")
            XCTAssertEqual(negotiated.transportWideCCExtensionID, expected, label)
            XCTAssertEqual(negotiated.feedback.transportWideCC, expected != nil, label)
            XCTAssertEqual(answer.media[0].extensionMaps, expected.map { [ExtensionMap(id: $0, uri: uri)] } ?? [], label)
            XCTAssertEqual(answer.media[0].feedback(payloadType: 96).contains { $0.type == "transport-cc" }, expected != nil, label)
        }
    }

    /// Our own offer can ask for TWCC; an answer to it negotiates the same ID, and an ID outside 1…14 is refused.
    func testOfferWithTransportWideCC() throws {
        let offer = try VideoOfferBuilder.offer(local: localParameters(), transportWideCCExtensionID: 3)
        let text = offer.serialized()
        XCTAssertTrue(text.contains("a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01\r\n"))
        XCTAssertTrue(text.contains("a=rtcp-fb:96 goog-remb\r\na=rtcp-fb:96 transport-cc\r\n"))
        var receiving = offer
        receiving.media[0].attributes = receiving.media[0].attributes.map { $0 == .direction(.sendonly) ? .direction(.recvonly) : $0 }
        XCTAssertEqual(try answer(receiving).1.transportWideCCExtensionID, 3)
        for bad: UInt8 in [0, 15, 255] {
            assertThrowsSDPError(
                try VideoOfferBuilder.offer(local: localParameters(), transportWideCCExtensionID: bad),
                .invalidConfiguration("the transport-wide-cc extension ID must be within 1…14"))
        }
    }
}
