// Fuzz target: SDP offer parsing (RFC 8866) and VP8 answer building (RFC 8829 §5.3.1, RFC 3264 §6), as a
// WHEP POST runs them before any socket is opened.
//
// Input: the offer's bytes, as an HTTP body.
// Properties: parsing ends in a description or a typed WebRTCError; a parsed description serialises to SDP
// that parses again and serialises to the same text (our writer's output is always readable, and stable);
// answering with valid local parameters ends in an answer or a *peer* error (a 4xx, never our 500); an
// answer keeps one m-line per offered m-line with their mids, re-parses, carries our credentials and
// fingerprint, and settles on something the DTLS and RTP layers accept: a remote fingerprint of a hash
// function we check, remote ICE credentials, a VP8 payload type the offer listed; an accepted audio section
// (we send sound: an audio SSRC) is an Opus payload type the offer listed, bundled with the video.
@testable import SDP

private let local = makeLocal()

private func makeLocal() -> LocalMediaParameters {
    var local = LocalMediaParameters(
        iceUfrag: "fuzz", icePwd: "fuzzfuzzfuzzfuzzfuzzfuzz",
        fingerprint: Fingerprint(algorithm: "sha-256", digest: (0..<32).map { UInt8($0) }),
        candidates: [ICECandidate(foundation: "1", priority: 2_122_260_223, address: "127.0.0.1", port: 40_000, kind: .host)],
        videoSSRC: 0x1234_5678, rtxSSRC: 0x9ABC_DEF0, cname: "fuzzcname", sessionID: 4_242_424_242)
    local.audioSSRC = 0x0A0D_10AA
    return local
}

func fuzzOne(_ bytes: [UInt8]) {
    let parser = SDPParser()
    let offer: SessionDescription
    do {
        offer = try parser.parse(bytes)
    } catch {
        check(error.isPeerError, "parse failed with our own error: \(error)")
        return
    }

    // Our serialisation of what we read is SDP we read back to the same text.
    let text = offer.serialized()
    do {
        let again = try parser.parse(text)
        check(again.serialized() == text, "serialise → parse → serialise changed the text:\n\(text)\n---\n\(again.serialized())")
    } catch {
        violated("our serialisation of a parsed offer does not parse: \(error)\n\(text)")
    }

    let answer: SessionDescription
    let video: NegotiatedVideo
    do {
        (answer, video) = try VideoAnswerBuilder.answer(offer, local: local)
    } catch {
        check(error.isPeerError, "answering with valid local parameters failed with our own error (a 500): \(error)")
        return
    }

    check(answer.media.count == offer.media.count, "answer has \(answer.media.count) m-lines for \(offer.media.count) offered")
    for (offered, answered) in zip(offer.media, answer.media) {
        check(offered.mid == answered.mid, "mid \(String(describing: offered.mid)) answered as \(String(describing: answered.mid))")
        check(offered.kind == answered.kind, "m=\(offered.kind) answered as m=\(answered.kind)")
    }
    let accepted = answer.media[video.mediaIndex]
    check(accepted.port != 0 && accepted.kind == "video", "the accepted section is m=\(accepted.kind) port \(accepted.port)")
    check(offer.media[video.mediaIndex].formats.contains(String(video.vp8PayloadType)), "VP8 \(video.vp8PayloadType) was not offered")
    check(accepted.formats.first == String(video.vp8PayloadType), "answer's first format is not VP8 \(video.vp8PayloadType)")
    if let rtx = video.rtxPayloadType {
        check(rtx != video.vp8PayloadType, "RTX and VP8 share payload type \(rtx)")
    }
    check(accepted.iceUfrag == local.iceUfrag && accepted.icePwd == local.icePwd, "answer lacks our ICE credentials")
    check(accepted.fingerprints == [local.fingerprint], "answer's fingerprints are \(accepted.fingerprints)")
    // Besides the video, only the data channels' section (RFC 8841) may be accepted: bundled with the video.
    if let channel = video.dataChannel {
        let section = answer.media[channel.mediaIndex]
        check(section.kind == "application" && section.formats == ["webrtc-datachannel"] && section.mid == channel.mid,
              "the accepted data channel section is \(section.sdpLines.first ?? "-") mid \(String(describing: section.mid))")
        check(answer.bundleGroup?.mids.contains(channel.mid) == true && video.mid.map { answer.bundleGroup?.mids.contains($0) } == true,
              "the data channel \(channel.mid) is not bundled with the video: \(String(describing: answer.bundleGroup))")
    }
    for (index, section) in answer.media.enumerated() where index != video.mediaIndex && index != video.dataChannel?.mediaIndex && index != video.audio?.mediaIndex {
        check(section.port == 0, "m-line \(index) not accepted but has port \(section.port)")
    }
    if let audio = video.audio {
        let section = answer.media[audio.mediaIndex]
        check(audio.mediaIndex != video.mediaIndex, "audio and video answered on one m-line")
        check(section.kind == "audio" && section.port != 0, "the audio section is m=\(section.kind) port \(section.port)")
        check(section.formats == [String(audio.payloadType)], "audio formats \(section.formats) for Opus \(audio.payloadType)")
        check(offer.media[audio.mediaIndex].formats.contains(String(audio.payloadType)), "Opus \(audio.payloadType) was not offered")
        check(answer.bundleGroup?.mids.contains(audio.mid) == true && answer.bundleGroup?.mids.contains(video.mid ?? "") == true,
              "audio \(audio.mid) and video not in one BUNDLE: \(String(describing: answer.bundleGroup))")
    }

    // What the DTLS and ICE layers are given must be usable, or the peer's fault shows up later as ours.
    let remote = video.remote
    check(!Fingerprint.strongest(of: remote.fingerprints).isEmpty,
          "answered an offer whose fingerprints \(remote.fingerprints.map(\.sdpValue)) DTLS cannot check (its configuration then fails as ours)")
    check(!remote.iceUfrag.isEmpty && !remote.icePwd.isEmpty, "empty remote ICE credentials")

    let answerText = answer.serialized()
    do {
        let reparsed = try parser.parse(answerText)
        check(reparsed.serialized() == answerText, "our answer does not survive parse → serialise:\n\(answerText)")
    } catch {
        violated("our answer does not parse: \(error)\n\(answerText)")
    }
}
