/// What an answer settled for our Opus stream (RFC 7587) beside the video, in the same BUNDLE.
public struct NegotiatedAudio: Sendable, Equatable {
    /// The audio section's mid and index in the offer (and the answer).
    public var mid: String
    public var mediaIndex: Int
    /// Our direction: `sendonly`, or `inactive` when the peer does not receive.
    public var direction: MediaDirection
    /// The offer's payload type for `opus/48000/2`.
    public var payloadType: UInt8
    /// The transport-wide sequence number goes on audio too (the video's extension ID, answered on this
    /// section and `a=rtcp-fb:<opus> transport-cc` offered): congestion control then counts every byte.
    public var transportWideCC: Bool

    public init(mid: String, mediaIndex: Int, direction: MediaDirection, payloadType: UInt8, transportWideCC: Bool) {
        self.mid = mid
        self.mediaIndex = mediaIndex
        self.direction = direction
        self.payloadType = payloadType
        self.transportWideCC = transportWideCC
    }
}

/// The audio section of our answer (RFC 3264 §6, RFC 7587 §7): the first audio m-line (port ≠ 0) that offers
/// `opus/48000/2` and is bundled with the accepted video (RFC 8843: we have one transport) is accepted:
/// - direction `sendonly`, or `inactive` when the offer does not receive;
/// - Opus with the offer's payload type and `a=fmtp:<pt> minptime=10;useinbandfec=1;stereo=1;sprop-stereo=1`
///   (RFC 7587 §6.1: we send stereo with in-band FEC), `usedtx=1` when we send DTX;
/// - the transport-wide sequence number with the video's extension ID when the offer lists the same ID for
///   it on this section and `transport-cc` for Opus (RFC 8843 §9.2: one ID per URI in a bundle);
/// - our audio SSRC and CNAME (`a=ssrc`), `a=msid` of the video's stream (one stream: lip sync), the
///   offer's `a=mid`, `a=rtcp-mux`, the same ICE and DTLS attributes and candidates as the video section.
/// Without ``LocalMediaParameters/audioSSRC`` (the call sends no sound) every audio section stays rejected.
public enum AudioAnswerSection {
    /// The `a=msid` track id of the sound.
    public static let trackID = "sound"

    /// The accepted audio section and what was negotiated, or nil when no audio section can be accepted.
    /// - Parameters:
    ///   - video: the accepted video section's index; `bundle`: the offer's BUNDLE mids.
    ///   - transportWideCCID: the video's negotiated transport-wide sequence number extension ID.
    ///   - dtx: whether our Opus stream uses DTX (`usedtx=1`).
    public static func answer(
        _ offer: SessionDescription, local: LocalMediaParameters, setup: DTLSSetup, video: Int, transportWideCCID: UInt8?,
        dtx: Bool = true
    ) -> (index: Int, section: MediaDescription, negotiated: NegotiatedAudio)? {
        guard let ssrc = local.audioSSRC, let bundle = offer.bundleGroup?.mids, let videoMid = offer.media[video].mid,
              bundle.contains(videoMid)
        else { return nil }
        for (index, offered) in offer.media.enumerated() where offered.kind == "audio" && offered.port != 0 && offered.isRTP {
            guard let mid = offered.mid, bundle.contains(mid), offered.proto == offer.media[video].proto, offered.hasRTCPMux else { continue }
            let opus = offered.rtpMaps.first { map in
                map.encodingName.lowercased() == "opus" && map.clockRate == 48_000 && map.channels == 2
                    && offered.formats.contains(String(map.payloadType))
            }
            guard let opus else { continue }
            let direction = offered.direction.answerForSender
            let twcc = transportWideCCID.flatMap { id -> UInt8? in
                let listed = offered.extensionMaps.contains { $0.id == id && $0.uri == VideoAnswerBuilder.transportWideCCURI }
                let feedback = offered.feedback(payloadType: opus.payloadType).contains {
                    $0.matches(payloadType: opus.payloadType, type: "transport-cc", parameter: nil)
                }
                return listed && feedback ? id : nil
            }
            let (port, connection) = local.defaultAddress
            var section = MediaDescription(kind: "audio", port: port, proto: offered.proto, formats: [String(opus.payloadType)], connection: connection)
            var attributes = local.transportAttributes(setup: setup)
            attributes.append(.mid(mid))
            attributes.append(.direction(direction))
            if let (stream, _) = local.mediaStreamID { attributes.append(.other(name: "msid", value: "\(stream) \(trackID)")) }
            attributes.append(.rtcpMux)
            if offered.hasReducedSizeRTCP { attributes.append(.rtcpReducedSize) }
            if let twcc { attributes.append(.extmap(ExtensionMap(id: twcc, uri: VideoAnswerBuilder.transportWideCCURI))) }
            attributes.append(.rtpmap(RTPMap(payloadType: opus.payloadType, encodingName: "opus", clockRate: 48_000, channels: 2)))
            if twcc != nil { attributes.append(.rtcpFeedback(.init(payloadType: opus.payloadType, type: "transport-cc"))) }
            let fmtp = "minptime=10;useinbandfec=1;stereo=1;sprop-stereo=1" + (dtx ? ";usedtx=1" : "")
            attributes.append(.fmtp(FormatParameters(format: String(opus.payloadType), text: fmtp)))
            if direction == .sendonly { attributes.append(.ssrc(.init(ssrc: ssrc, name: "cname", value: local.cname))) }
            attributes += local.candidateAttributes
            section.attributes = attributes
            let negotiated = NegotiatedAudio(
                mid: mid, mediaIndex: index, direction: direction, payloadType: opus.payloadType, transportWideCC: twcc != nil)
            return (index, section, negotiated)
        }
        return nil
    }
}
