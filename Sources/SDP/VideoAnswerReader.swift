/// Reads a remote answer to our own ``VideoOfferBuilder`` offer (one sendonly VP8 [+ RTX] section), the
/// offerer's half of RFC 3264 §7 and RFC 8829 §5.10, and says what was negotiated.
///
/// Accepted:
/// - the first m-line (our only one) with a port ≠ 0, the same profile, and `a=rtcp-mux` (RFC 8843: we
///   offered only a multiplexed transport);
/// - VP8/90000 among its formats (the answer's payload type is used: RFC 3264 §6.1 lets it differ), RTX
///   when it maps `rtx/90000` with `apt=<VP8>`;
/// - `a=recvonly` (we send) or `a=inactive` (nothing is sent); `sendonly`/`sendrecv` cannot answer a
///   sendonly offer (RFC 3264 §6.1);
/// - `a=setup:active` (the answerer is the DTLS client: we are the server — Janus does this) or `passive`
///   (we are the client); `actpass` and `holdconn` are not answers (RFC 5763 §5); absent counts as `active`
///   (RFC 4145 §4);
/// - of `nack`, `nack pli`, `ccm fir`, `goog-remb`, those the answer lists for its VP8 payload type, and
///   transport-wide CC when it keeps both `transport-cc` and the transport-wide sequence number's extmap
///   (its ID, which our packets then carry).
public enum VideoAnswerReader {
    /// - Parameters:
    ///   - answer: the parsed answer.
    ///   - offeredProfile: our m-line's profile (`UDP/TLS/RTP/SAVPF`).
    /// - Throws: ``SDPError/answerRefused(_:)`` for an answer we cannot use (each reason in words),
    ///   ``SDPError/offerWithoutICECredentials`` / ``SDPError/offerWithoutFingerprint`` when the answer lacks
    ///   them. All are the remote side's errors.
    public static func read(
        _ answer: SessionDescription, offeredProfile: String = "UDP/TLS/RTP/SAVPF"
    ) throws(SDPError) -> NegotiatedVideo {
        guard let section = answer.media.first else { throw .answerRefused("the answer has no m-line") }
        guard section.kind == "video" else { throw .answerRefused("the answer's first m-line is \(section.kind), not video") }
        guard section.port != 0 else { throw .answerRefused("the answer rejected the video m-line (port 0)") }
        guard section.proto == offeredProfile else {
            throw .answerRefused("the answer's profile \(section.proto) is not the offered \(offeredProfile)")
        }
        guard section.hasRTCPMux else { throw .answerRefused("the answer lacks a=rtcp-mux") }
        let vp8 = section.rtpMaps.first { map in
            map.encodingName.lowercased() == "vp8" && map.clockRate == 90_000 && section.formats.contains(String(map.payloadType))
        }
        guard let vp8 else { throw .answerRefused("the answer has no VP8/90000 format") }
        let direction: MediaDirection
        switch section.direction {
        case .recvonly: direction = .sendonly
        case .inactive: direction = .inactive
        case .sendonly, .sendrecv: throw .answerRefused("a=\(section.direction.rawValue) cannot answer a sendonly offer")
        }
        let remote = try RemoteTransport(offer: answer, chosen: 0)
        let role: NegotiatedVideo.DTLSRole
        switch remote.setup {
        case .active: role = .server
        case .passive: role = .client
        case .actpass, .holdconn: throw .answerRefused("a=setup:\(remote.setup.rawValue) is not an answer's role")
        }
        let rtx = section.rtpMaps.first { map in
            map.encodingName.lowercased() == "rtx" && map.clockRate == 90_000 && section.formats.contains(String(map.payloadType))
                && section.formatParameters(String(map.payloadType))?.parameter("apt") == String(vp8.payloadType)
        }
        let listed = section.feedback(payloadType: vp8.payloadType)
        func has(_ type: String, _ parameter: String?) -> Bool {
            listed.contains { $0.matches(payloadType: vp8.payloadType, type: type, parameter: parameter) }
        }
        // Transport-wide CC only when the answer keeps both the extmap and `transport-cc` (as Janus does).
        let twccID = VideoAnswerBuilder.transportWideCCExtensionID(section, feedback: listed, vp8: vp8.payloadType)
        let feedback = NegotiatedVideo.Feedback(
            nack: has("nack", nil), pictureLossIndication: has("nack", "pli"), fullIntraRequest: has("ccm", "fir"),
            estimatedBitrate: has("goog-remb", nil), transportWideCC: twccID != nil)
        return NegotiatedVideo(
            mid: section.mid, mediaIndex: 0, direction: direction, vp8PayloadType: vp8.payloadType, rtxPayloadType: rtx?.payloadType,
            feedback: feedback, reducedSizeRTCP: section.hasReducedSizeRTCP, dtlsRole: role, remote: remote,
            transportWideCCExtensionID: twccID)
    }
}
