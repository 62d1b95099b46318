/// Answers a remote offer for our one outgoing VP8 stream, JSEP-style (RFC 8829 §5.3.1, in spirit;
/// RFC 3264 §6).
///
/// The first video m-line (port ≠ 0) that offers VP8/90000 is accepted:
/// - direction `sendonly`, or `inactive` when the offer does not receive (`sendonly`/`inactive`);
/// - VP8 with the offer's payload type, and RTX (`rtx/90000`, `apt=<VP8>`) when the offer has it;
/// - of `nack`, `nack pli`, `ccm fir`, `goog-remb`, those the offer lists for VP8 (or for `*`);
/// - transport-wide congestion control when the offer has both `transport-cc` for VP8 and the
///   `a=extmap` of draft-holmer-rmcat-transport-wide-cc-extensions-01 with a one-byte ID (1…14): the
///   extmap with the offer's ID and `a=rtcp-fb:<vp8> transport-cc` (Chromium then sends TWCC feedback and
///   no REMB); otherwise neither (aiortc: REMB only);
/// - the playout-delay extension (`http://www.webrtc.org/experiments/rtp-hdrext/playout-delay`) with the
///   offer's one-byte ID when offered (Chromium does): we then write MIN = MAX = 0 on every media packet so
///   the receiver shows frames at once;
/// - our SSRCs and CNAME (`a=ssrc-group:FID` with RTX), `a=msid`, the offer's `a=mid`;
/// - `a=rtcp-mux` (required in the offer), `a=rtcp-rsize` when offered;
/// - our ICE credentials, fingerprint and `a=setup` (`passive` for `actpass`/`active`, `active` for `passive`),
///   our candidates and `a=end-of-candidates`;
/// - `a=group:BUNDLE <mid>` when the offer bundles it (RFC 8843 §7.3).
/// - the first Opus audio section bundled with it, when we send sound (``AudioAnswerSection``);
/// - the data channels' `m=application` when bundled with the video (``DataChannelAnswer``).
/// Every other m-line (other audio, a second video, an unbundled data channel) is rejected: port 0,
/// `c=IN IP4 0.0.0.0`, its mid kept, left out of BUNDLE (RFC 8843 §7.3.3).
public enum VideoAnswerBuilder {
    /// Builds the answer and reports what was negotiated.
    /// - Throws: ``SDPError/offerHasNoVP8Video`` (no usable video), ``SDPError/offerWithoutRTCPMux(mid:)``,
    ///   ``SDPError/unsupportedProfile(_:)``, ``SDPError/offerWithoutICECredentials``,
    ///   ``SDPError/offerWithoutFingerprint``, ``SDPError/unsupportedFingerprintHash(_:)``,
    ///   ``SDPError/unsupportedSetup(_:)`` — all peer errors (4xx) —
    ///   or ``SDPError/invalidConfiguration(_:)`` for bad local parameters.
    public static func answer(
        _ offer: SessionDescription, local: LocalMediaParameters
    ) throws(SDPError) -> (answer: SessionDescription, video: NegotiatedVideo) {
        try local.validate()
        guard let (index, vp8) = firstVP8Video(in: offer) else { throw .offerHasNoVP8Video }
        let offered = offer.media[index]
        guard offered.proto == "UDP/TLS/RTP/SAVPF" || offered.proto == "RTP/SAVPF" else {
            throw .unsupportedProfile(offered.proto)
        }
        guard offered.hasRTCPMux else { throw .offerWithoutRTCPMux(mid: offered.mid) }
        let remote = try RemoteTransport(offer: offer, chosen: index)
        let setup: DTLSSetup
        switch remote.setup {
        case .actpass, .active: setup = .passive
        case .passive: setup = .active
        case .holdconn: throw .unsupportedSetup("holdconn")
        }

        // Codecs and feedback.
        // Never the VP8 payload type itself: a payload type is answered once (the parser already refuses
        // `96 VP8/90000` beside `96 rtx/90000`, RFC 8866 §6.6).
        let rtx = offered.rtpMaps.first { map in
            map.payloadType != vp8.payloadType && map.encodingName.lowercased() == "rtx" && map.clockRate == 90_000 && offered.formats.contains(String(map.payloadType))
                && offered.formatParameters(String(map.payloadType))?.parameter("apt") == String(vp8.payloadType)
        }
        let offeredFeedback = offered.feedback(payloadType: vp8.payloadType)
        var feedback = NegotiatedVideo.Feedback(
            nack: offeredFeedback.contains { $0.matches(payloadType: vp8.payloadType, type: "nack", parameter: nil) },
            pictureLossIndication: offeredFeedback.contains { $0.matches(payloadType: vp8.payloadType, type: "nack", parameter: "pli") },
            fullIntraRequest: offeredFeedback.contains { $0.matches(payloadType: vp8.payloadType, type: "ccm", parameter: "fir") },
            estimatedBitrate: offeredFeedback.contains { $0.matches(payloadType: vp8.payloadType, type: "goog-remb", parameter: nil) },
            transportWideCC: false)
        let twccID = transportWideCCExtensionID(offered, feedback: offeredFeedback, vp8: vp8.payloadType)
        feedback.transportWideCC = twccID != nil
        let playoutDelayID = receivableExtensionID(offered, uri: playoutDelayURI)
        let direction = offered.direction.answerForSender
        let bundled = offer.bundleGroup.flatMap { group in offered.mid.flatMap { group.mids.contains($0) ? $0 : nil } }

        // The accepted section.
        let (port, connection) = local.defaultAddress
        var section = MediaDescription(
            kind: "video", port: port, proto: offered.proto,
            formats: [String(vp8.payloadType)] + (rtx.map { [String($0.payloadType)] } ?? []), connection: connection)
        var attributes = local.transportAttributes(setup: setup)
        if let mid = offered.mid { attributes.append(.mid(mid)) }
        attributes.append(.direction(direction))
        if let (stream, track) = local.mediaStreamID { attributes.append(.other(name: "msid", value: "\(stream) \(track)")) }
        attributes.append(.rtcpMux)
        if offered.hasReducedSizeRTCP { attributes.append(.rtcpReducedSize) }
        var extensions: [ExtensionMap] = []
        if let twccID { extensions.append(ExtensionMap(id: twccID, uri: transportWideCCURI)) }
        if let playoutDelayID { extensions.append(ExtensionMap(id: playoutDelayID, uri: playoutDelayURI)) }
        attributes += extensions.sorted { $0.id < $1.id }.map(SDPAttribute.extmap)  // in ID order, as offers list them
        attributes.append(.rtpmap(RTPMap(payloadType: vp8.payloadType, encodingName: "VP8", clockRate: 90_000)))
        attributes += feedback.attributes(payloadType: vp8.payloadType)
        if let rtx {
            attributes.append(.rtpmap(RTPMap(payloadType: rtx.payloadType, encodingName: "rtx", clockRate: 90_000)))
            attributes.append(.fmtp(FormatParameters(format: String(rtx.payloadType), text: "apt=\(vp8.payloadType)")))
        }
        if direction == .sendonly { attributes += local.sourceAttributes(withRTX: rtx != nil) }
        attributes += local.candidateAttributes
        section.attributes = attributes

        // The sound, in a section of its own beside the video's (AudioAnswerSection), bundled with it.
        let audio = AudioAnswerSection.answer(offer, local: local, setup: setup, video: index, transportWideCCID: twccID)
        // The data channels' section, when the offer bundles one with the video (DataChannelAnswer).
        let application = offer.bundleGroup.flatMap { group in
            bundled.flatMap { DataChannelAnswer.accept(offer, bundle: group, videoMid: $0, local: local, setup: setup) }
        }
        var answer = SessionDescription(origin: .init(sessionID: String(local.sessionID), sessionVersion: String(local.sessionVersion)))
        if let bundled {
            // The accepted sections, in the offer's group order when it has one, else in m-line order.
            var accepted: [(position: Int, mid: String)] = [(index, bundled)]
            if let audio { accepted.append((audio.index, audio.negotiated.mid)) }
            if let application { accepted.append((application.negotiated.mediaIndex, application.negotiated.mid)) }
            let mids = accepted.sorted { $0.position < $1.position }.map(\.mid)
            let ordered = offer.bundleGroup.map { group in group.mids.filter { mids.contains($0) } } ?? mids
            answer.attributes.append(.group(SDPGroup(semantics: "BUNDLE", mids: ordered.count == mids.count ? ordered : mids)))
        }
        answer.media = offer.media.indices.map { position in
            if position == index { return section }
            if let audio, position == audio.index { return audio.section }
            if let application, position == application.negotiated.mediaIndex { return application.section }
            return rejected(offer.media[position])
        }

        let video = NegotiatedVideo(
            mid: offered.mid, mediaIndex: index, direction: direction, vp8PayloadType: vp8.payloadType,
            rtxPayloadType: rtx?.payloadType, feedback: feedback, reducedSizeRTCP: offered.hasReducedSizeRTCP,
            dtlsRole: setup == .active ? .client : .server, remote: remote, transportWideCCExtensionID: twccID,
            playoutDelayExtensionID: playoutDelayID, dataChannel: application?.negotiated, audio: audio?.negotiated)
        return (answer, video)
    }

    /// The URI of the transport-wide sequence number extension (draft-holmer-rmcat-transport-wide-cc-extensions-01 §2).
    public static let transportWideCCURI = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

    /// The offer's ID for the transport-wide sequence number when it also asks for `transport-cc` on VP8 and
    /// the ID fits the one-byte form we write (1…14, RFC 8285 §4.2) and the direction lets us send it.
    static func transportWideCCExtensionID(
        _ offered: MediaDescription, feedback: [RTCPFeedbackAttribute], vp8: UInt8
    ) -> UInt8? {
        guard feedback.contains(where: { $0.matches(payloadType: vp8, type: "transport-cc", parameter: nil) }) else { return nil }
        return receivableExtensionID(offered, uri: transportWideCCURI)
    }

    /// The URI of the playout-delay extension (libwebrtc's `rtp-hdrext/playout-delay`, ``RTP/PlayoutDelay``).
    public static let playoutDelayURI = "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay"

    /// The offer's ID for the extension `uri` when it fits the one-byte form we write (1…14, RFC 8285 §4.2)
    /// and its direction lets the offerer receive it (RFC 8285 §8: not `sendonly` or `inactive`).
    static func receivableExtensionID(_ offered: MediaDescription, uri: String) -> UInt8? {
        let map = offered.extensionMaps.first { map in
            map.uri == uri && (1...14).contains(map.id) && (map.direction ?? .sendrecv) != .sendonly
                && map.direction != .inactive
        }
        return map?.id
    }

    /// The index and VP8 map of the first video section with a non-zero port that offers VP8/90000.
    static func firstVP8Video(in offer: SessionDescription) -> (Int, RTPMap)? {
        for (index, section) in offer.media.enumerated() where section.kind == "video" && section.port != 0 && section.isRTP {
            let vp8 = section.rtpMaps.first { map in
                map.encodingName.lowercased() == "vp8" && map.clockRate == 90_000 && section.formats.contains(String(map.payloadType))
            }
            if let vp8 { return (index, vp8) }
        }
        return nil
    }

    /// A rejected section (RFC 3264 §6, RFC 8843 §7.3.3): port 0, the offer's profile and first format,
    /// `c=IN IP4 0.0.0.0`, the mid kept; RTP sections also say `a=inactive` and map that one format (so
    /// parsers that expect an `a=rtpmap` for a dynamic payload type find one).
    static func rejected(_ offered: MediaDescription) -> MediaDescription {
        var section = MediaDescription(kind: offered.kind, port: 0, proto: offered.proto,
                                       formats: Array(offered.formats.prefix(1)), connection: .unspecified)
        if let mid = offered.mid { section.attributes.append(.mid(mid)) }
        if offered.isRTP {
            section.attributes.append(.direction(.inactive))
            if let format = offered.formats.first.flatMap(UInt8.init), let map = offered.rtpMap(payloadType: format) {
                section.attributes.append(.rtpmap(map))
            }
        }
        return section
    }
}
