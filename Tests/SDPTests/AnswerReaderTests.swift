import SDP
import TestSupport
import XCTest

/// ``VideoAnswerReader``: what an SFU's answer to our sendonly offer settles, and each answer it refuses.
final class AnswerReaderTests: XCTestCase {
    /// An SFU-like answer to our offer: ``VideoAnswerBuilder``'s, turned recvonly with `a=setup:<setup>`,
    /// then `edit`ed line by line.
    func answer(setup: String = "active", edit: (String) -> String? = { $0 }) throws -> SessionDescription {
        let offer = try VideoOfferBuilder.offer(local: SDPFixture.localParameters())
        var remote = try SDPFixture.localParameters(candidates: ["9 1 udp 2130706431 127.0.0.2 40000 typ host"])
        remote.iceUfrag = "sfu1"
        var answer = try VideoAnswerBuilder.answer(offer, local: remote).answer.serialized()
        answer = answer.replacingOccurrences(of: "a=inactive", with: "a=recvonly")
            .replacingOccurrences(of: "a=setup:passive", with: "a=setup:\(setup)")
        let lines = answer.split(separator: "\r\n").map(String.init).compactMap(edit)
        return try SDPParser().parse(lines.joined(separator: "\r\n") + "\r\n")
    }

    func testActiveMakesUsTheDTLSServerAndPassiveTheClient() throws {
        let active = try VideoAnswerReader.read(answer(setup: "active"))
        XCTAssertEqual(active.dtlsRole, .server)
        XCTAssertEqual(active.direction, .sendonly)
        XCTAssertEqual(active.vp8PayloadType, 96)
        XCTAssertEqual(active.rtxPayloadType, 97)
        XCTAssertEqual(active.feedback, .all)
        XCTAssertEqual(active.remote.iceUfrag, "sfu1")
        XCTAssertEqual(active.remote.candidates.map(\.address), ["127.0.0.2"])
        XCTAssertTrue(active.remote.candidatesComplete)
        XCTAssertEqual(try VideoAnswerReader.read(answer(setup: "passive")).dtlsRole, .client)
        // No a=setup counts as active (RFC 4145 §4).
        XCTAssertEqual(try VideoAnswerReader.read(answer { $0.hasPrefix("a=setup") ? nil : $0 }).dtlsRole, .server)
    }

    /// Feedback and RTX only as far as the answer keeps them; inactive sends nothing.
    func testFeedbackRTXAndDirectionFollowTheAnswer() throws {
        let trimmed = try VideoAnswerReader.read(answer { line in
            line.hasPrefix("a=rtcp-fb:96 ccm") || line.hasPrefix("a=rtcp-fb:96 goog-remb") || line.hasPrefix("a=fmtp:97") ? nil : line
        })
        XCTAssertEqual(trimmed.feedback, .init(nack: true, pictureLossIndication: true, fullIntraRequest: false, estimatedBitrate: false))
        XCTAssertNil(trimmed.rtxPayloadType, "rtx without apt is not RTX for VP8")
        let inactive = try VideoAnswerReader.read(answer { $0 == "a=recvonly" ? "a=inactive" : $0 })
        XCTAssertEqual(inactive.direction, .inactive)
    }

    /// Transport-wide CC: read when the answer keeps both the extmap (its ID is used) and `transport-cc`
    /// (Janus does); either alone is no TWCC.
    func testTransportWideCCOnlyWithExtmapAndFeedback() throws {
        let uri = VideoAnswerBuilder.transportWideCCURI
        func answered(_ extra: [String]) throws -> NegotiatedVideo {
            try VideoAnswerReader.read(answer { $0 == "a=rtcp-mux" ? ([$0] + extra).joined(separator: "\r\n") : $0 })
        }
        let both = try answered(["a=extmap:5 \(uri)", "a=rtcp-fb:96 transport-cc"])
        XCTAssertEqual(both.transportWideCCExtensionID, 5)
        XCTAssertTrue(both.feedback.transportWideCC)
        XCTAssertNil(try answered(["a=extmap:5 \(uri)"]).transportWideCCExtensionID, "no transport-cc")
        XCTAssertNil(try answered(["a=rtcp-fb:96 transport-cc"]).transportWideCCExtensionID, "no extmap")
        XCTAssertFalse(try answered(["a=rtcp-fb:96 transport-cc"]).feedback.transportWideCC)
        XCTAssertNil(try VideoAnswerReader.read(answer()).transportWideCCExtensionID, "not offered, not answered")
    }

    func testRefusedAnswersSayWhy() throws {
        let cases: [(String, (String) -> String?)] = [
            ("the answer rejected the video m-line (port 0)", { $0.hasPrefix("m=video") ? "m=video 0 UDP/TLS/RTP/SAVPF 96 97" : $0 }),
            ("the answer has no VP8/90000 format", { $0.hasPrefix("a=rtpmap:96") ? "a=rtpmap:96 H264/90000" : $0 }),
            ("a=sendonly cannot answer a sendonly offer", { $0 == "a=recvonly" ? "a=sendonly" : $0 }),
            ("a=sendrecv cannot answer a sendonly offer", { $0 == "a=recvonly" ? nil : $0 }),
            ("a=setup:actpass is not an answer's role", { $0.hasPrefix("a=setup") ? "a=setup:actpass" : $0 }),
            ("the answer lacks a=rtcp-mux", { $0 == "a=rtcp-mux" ? nil : $0 }),
            ("the answer's profile RTP/AVP is not the offered UDP/TLS/RTP/SAVPF", {
                $0.hasPrefix("m=video") ? $0.replacingOccurrences(of: "UDP/TLS/RTP/SAVPF", with: "RTP/AVP") : $0
            }),
        ]
        for (reason, edit) in cases {
            XCTAssertThrowsError(try VideoAnswerReader.read(answer(edit: edit)), reason) { error in
                XCTAssertEqual(error as? SDPError, .answerRefused(reason))
                XCTAssertEqual((error as? SDPError)?.isPeerError, true)
            }
        }
        XCTAssertThrowsError(try VideoAnswerReader.read(answer { $0.hasPrefix("a=fingerprint") ? nil : $0 })) { error in
            XCTAssertEqual(error as? SDPError, .offerWithoutFingerprint)
        }
        XCTAssertThrowsError(try VideoAnswerReader.read(answer { $0.hasPrefix("m=") || $0.hasPrefix("a=") || $0.hasPrefix("c=") ? nil : $0 })) { error in
            XCTAssertEqual(error as? SDPError, .answerRefused("the answer has no m-line"))
        }
    }
}
