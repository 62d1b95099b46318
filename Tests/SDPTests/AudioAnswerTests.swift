import SDP
import XCTest

/// The Opus section beside the video (``AudioAnswerSection``): accepted in the same BUNDLE when we send sound,
/// rejected as before when we do not or when it cannot share the video's transport.
final class AudioAnswerTests: XCTestCase {
    private func local(audio: Bool = true) throws -> LocalMediaParameters {
        var local = try localParameters()
        if audio { local.audioSSRC = 0x3333_3333 }
        return local
    }

    func testChromiumAudioIsAcceptedInTheVideosBundle() throws {
        let offer = try SessionDescription(parsing: fixture("chromium-whep-offer.sdp"))
        let (answer, video) = try VideoAnswerBuilder.answer(offer, local: local())
        let text = answer.serialized()
        let all = lines(text)
        XCTAssertTrue(all.contains("a=group:BUNDLE 0 1 2"), "video, sound and the data channels in one BUNDLE: \(text)")
        let start = try XCTUnwrap(all.firstIndex(of: "m=audio 50000 UDP/TLS/RTP/SAVPF 111"), text)
        let end = try XCTUnwrap(all[start...].firstIndex { $0.hasPrefix("m=application") })
        XCTAssertEqual(Array(all[start..<end]), ["m=audio 50000 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 127.0.0.1"] + AnswerBuilderTests.ourTransport + [
            "a=setup:passive",
            "a=mid:1",
            "a=sendonly",
            "a=msid:screencast sound",
            "a=rtcp-mux",
            "a=rtcp-rsize",
            "a=extmap:4 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
            "a=rtpmap:111 opus/48000/2",
            "a=rtcp-fb:111 transport-cc",
            "a=fmtp:111 minptime=10;useinbandfec=1;stereo=1;sprop-stereo=1;usedtx=1",
            "a=ssrc:858993459 cname:screencast-cname",
        ] + AnswerBuilderTests.ourCandidates)
        XCTAssertEqual(video.audio, NegotiatedAudio(mid: "1", mediaIndex: 1, direction: .sendonly, payloadType: 111, transportWideCC: true))
        XCTAssertEqual(try SessionDescription(parsing: text), answer, "the answer is itself valid SDP")
        // The video section is what it was without sound.
        let (videoOnly, _) = try VideoAnswerBuilder.answer(offer, local: local(audio: false))
        XCTAssertEqual(answer.media[0], videoOnly.media[0])
    }

    func testNoSoundOrNoBundleOrNoOpusLeavesAudioRejected() throws {
        let text = try fixture("chromium-whep-offer.sdp")
        func audioPort(_ offerText: String, audio: Bool = true) throws -> (UInt16?, NegotiatedAudio?, [String]) {
            let (answer, video) = try VideoAnswerBuilder.answer(SessionDescription(parsing: offerText), local: local(audio: audio))
            return (answer.media.first { $0.kind == "audio" }?.port, video.audio, answer.bundleGroup?.mids ?? [])
        }
        XCTAssertEqual(try audioPort(text, audio: false).0, 0, "we send no sound: rejected as before")
        XCTAssertEqual(try audioPort(text, audio: false).2, ["0", "2"], "the video and the data channels, no sound")
        let unbundled = text.replacingOccurrences(of: "a=group:BUNDLE 0 1 2", with: "a=group:BUNDLE 0 2")
        XCTAssertEqual(try audioPort(unbundled).0, 0, "audio outside the video's BUNDLE needs a transport we do not have")
        XCTAssertNil(try audioPort(unbundled).1)
        let noOpus = text.replacingOccurrences(of: "a=rtpmap:111 opus/48000/2", with: "a=rtpmap:111 opus/48000/1")
        XCTAssertEqual(try audioPort(noOpus).0, 0, "mono Opus is not RFC 7587's opus/48000/2")
        let audioStart = try XCTUnwrap(text.range(of: "m=audio"))
        let sendonly = String(text[..<audioStart.lowerBound])
            + text[audioStart.lowerBound...].replacingOccurrences(of: "a=recvonly", with: "a=sendonly")
        let (port, audio, _) = try audioPort(sendonly)
        XCTAssertEqual(port, 50000)
        XCTAssertEqual(audio?.direction, .inactive, "a viewer that only sends gets no sound")
        // Without transport-cc on the video there is no number to share: the audio section has no extmap.
        let noTWCC = text.replacingOccurrences(of: "a=rtcp-fb:96 transport-cc\r\n", with: "")
        XCTAssertEqual(try audioPort(noTWCC).1?.transportWideCC, false)
    }
}
