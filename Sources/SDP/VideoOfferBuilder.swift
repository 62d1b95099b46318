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
    ///   - transportWideCCExtensionID: offers transport-wide congestion control with this one-byte extension ID
    ///     (1…14): `a=extmap:<id>` of draft-holmer-rmcat-transport-wide-cc-extensions-01 and
    ///     `a=rtcp-fb:<vp8> transport-cc`; nil (the default) offers neither.
    public static func offer(
        local: LocalMediaParameters, vp8PayloadType: UInt8 = 96, rtxPayloadType: UInt8? = 97, mid: String = "0",
        transportWideCCExtensionID: UInt8? = nil
    ) throws(SDPError) -> SessionDescription {
        try local.validate()
        guard (96...127).contains(vp8PayloadType), rtxPayloadType.map({ (96...127).contains($0) && $0 != vp8PayloadType }) ?? true else {
            throw .invalidConfiguration("payload types must be distinct and within 96…127")
        }
        guard !mid.isEmpty, mid.utf8.allSatisfy(\.isTokenByte) else { throw .invalidConfiguration("mid must be a token") }
        guard transportWideCCExtensionID.map({ (1...14).contains($0) }) ?? true else {
            throw .invalidConfiguration("the transport-wide-cc extension ID must be within 1…14")
        }
        let (port, connection) = local.defaultAddress
        var section = MediaDescription(
            kind: "video", port: port, proto: "UDP/TLS/RTP/SAVPF",
            formats: [String(vp8PayloadType)] + (rtxPayloadType.map { [String($0)] } ?? []), connection: connection)
        var attributes = local.transportAttributes(setup: .actpass)
        attributes += [.mid(mid), .direction(.sendonly)]
        if let (stream, track) = local.mediaStreamID { attributes.append(.other(name: "msid", value: "\(stream) \(track)")) }
        attributes += [.rtcpMux, .rtcpReducedSize]
        if let id = transportWideCCExtensionID {
            attributes.append(.extmap(ExtensionMap(id: id, uri: VideoAnswerBuilder.transportWideCCURI)))
        }
        attributes.append(.rtpmap(RTPMap(payloadType: vp8PayloadType, encodingName: "VP8", clockRate: 90_000)))
        var feedback = NegotiatedVideo.Feedback.all
        feedback.transportWideCC = transportWideCCExtensionID != nil
        attributes += feedback.attributes(payloadType: vp8PayloadType)
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
