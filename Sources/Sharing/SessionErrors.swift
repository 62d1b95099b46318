public import PeerConnection
public import SDP
public import Signaling

extension SignalingError {
    /// The WHEP outcome of a peer connection's failure to answer an offer or take a trickle fragment: a
    /// description at fault becomes ``SignalingError/refused(_:reason:)`` (too large 413, malformed 400,
    /// anything else the peer sent that cannot be answered 422); a failure of ours
    /// ``SignalingError/internalFailure(_:)`` (500).
    public init(_ error: PeerConnectionError) {
        guard error.isPeerError else {
            self = .internalFailure(error.description)
            return
        }
        let fault: DescriptionFault
        switch error {
        case .sdp(.tooLarge), .sdp(.tooManyCandidates): fault = .tooLarge
        case .sdp(let sdp) where sdp.isMalformed: fault = .malformed
        default: fault = .unanswerable  // well-formed but unanswerable: no VP8, no rtcp-mux, no fingerprint, …
        }
        self = .refused(fault, reason: error.description)
    }

    /// ``init(_:)-(PeerConnectionError)`` for an error of the SDP layer alone (a provider that parses offers
    /// itself).
    public init(_ error: SDPError) { self.init(PeerConnectionError.sdp(error)) }
}
