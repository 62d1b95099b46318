public import RTPSession
public import SDP

extension RTPSenderChain.Configuration {
    /// The configuration for what an answer negotiated, with our SSRCs and CNAME from its local
    /// parameters and the random starting points drawn from `generator`.
    public init(
        negotiated: NegotiatedVideo, local: LocalMediaParameters, using generator: inout some RandomNumberGenerator
    ) {
        self.init(
            ssrc: local.videoSSRC, payloadType: negotiated.vp8PayloadType,
            rtx: negotiated.rtxPayloadType.map { RTXStream(ssrc: local.rtxSSRC, payloadType: $0) }, cname: local.cname,
            timestampOffset: UInt32.random(in: 0...UInt32.max, using: &generator),
            initialSequenceNumber: UInt16.random(in: 0...0x7FFF, using: &generator),
            initialPictureID: UInt16.random(in: 0...0x7FFF, using: &generator),
            initialRTXSequenceNumber: UInt16.random(in: 0...0x7FFF, using: &generator), feedback: Feedback(negotiated.feedback),
            transportWideCC: negotiated.transportWideCCExtensionID.map { id in
                TransportWideCongestionControl.Configuration(
                    extensionID: id, initialSequenceNumber: UInt16.random(in: 0...UInt16.max, using: &generator))
            })
        playoutDelayExtensionID = negotiated.playoutDelayExtensionID
    }
}

extension RTPSenderChain.Configuration.Feedback {
    /// The feedback an answer agreed on (its `a=rtcp-fb` lines).
    public init(_ negotiated: NegotiatedVideo.Feedback) {
        self.init(
            nack: negotiated.nack, pictureLossIndication: negotiated.pictureLossIndication,
            fullIntraRequest: negotiated.fullIntraRequest, estimatedBitrate: negotiated.estimatedBitrate)
    }
}
