/// Builds our own offer for one outgoing VP8 stream, for pushing to an SFU (WHIP, Janus) later: the
/// counterpart of ``VideoAnswerBuilder`` (RFC 8829 §5.2.1 in spirit).
///
/// ```
/// m=video <port> UDP/TLS/RTP/SAVPF <vp8> <rtx>
/// a=ice-ufrag, a=ice-pwd, a=fingerprint, a=setup:actpass, a=mid:0, a=sendonly, a=msid
/// a=rtcp-mux, a=rtcp-rsize
/// a=rtpmap:<vp8> VP8/90000 + rtcp-fb nack, nack pli, ccm fir, goog-remb
/// a=rtpmap:<rtx> rtx/90000, a=fmtp:<rtx> apt=<vp8>
/// a=ssrc-group:FID, a=ssrc … cname, candidates, end-of-candidates
/// ```
public enum VideoOfferBuilder {
    /// - Parameters:
    ///   - local: our transport and stream parameters.
    ///   - vp8PayloadType: dynamic payload type for VP8 (96…127, default 96).
    ///   - rtxPayloadType: dynamic payload type for RTX (default 97); nil offers no RTX.
    ///   - mid: the media section's mid (default "0").
    public static func offer(
        local: LocalMediaParameters, vp8PayloadType: UInt8 = 96, rtxPayloadType: UInt8? = 97, mid: String = "0"
    ) throws(SDPError) -> SessionDescription {
        try local.validate()
        guard (96...127).contains(vp8PayloadType), rtxPayloadType.map({ (96...127).contains($0) && $0 != vp8PayloadType }) ?? true else {
            throw .invalidConfiguration("payload types must be distinct and within 96…127")
        }
        guard !mid.isEmpty, mid.allSatisfy(\.isTokenChar) else { throw .invalidConfiguration("mid must be a token") }
        let (port, connection) = local.defaultAddress
        var section = MediaDescription(
            kind: "video", port: port, proto: "UDP/TLS/RTP/SAVPF",
            formats: [String(vp8PayloadType)] + (rtxPayloadType.map { [String($0)] } ?? []), connection: connection)
        var attributes = local.transportAttributes(setup: .actpass)
        attributes += [.mid(mid), .direction(.sendonly)]
        if let (stream, track) = local.mediaStreamID { attributes.append(.other(name: "msid", value: "\(stream) \(track)")) }
        attributes += [.rtcpMux, .rtcpReducedSize]
        attributes.append(.rtpmap(RTPMap(payloadType: vp8PayloadType, encodingName: "VP8", clockRate: 90_000)))
        attributes += NegotiatedVideo.Feedback.all.attributes(payloadType: vp8PayloadType)
        if let rtxPayloadType {
            attributes.append(.rtpmap(RTPMap(payloadType: rtxPayloadType, encodingName: "rtx", clockRate: 90_000)))
            attributes.append(.fmtp(FormatParameters(format: String(rtxPayloadType), text: "apt=\(vp8PayloadType)")))
        }
        attributes += local.sourceAttributes(withRTX: rtxPayloadType != nil)
        attributes += local.candidateAttributes
        section.attributes = attributes

        var offer = SessionDescription(origin: .init(sessionID: String(local.sessionID), sessionVersion: String(local.sessionVersion)))
        offer.attributes = [.group(SDPGroup(semantics: "BUNDLE", mids: [mid]))]
        offer.media = [section]
        return offer
    }
}
