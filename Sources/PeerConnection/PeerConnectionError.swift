public import DataChannel
public import DTLS
public import ICE
public import SDP
public import SRTP

/// Why a peer connection could not be made or fed: the one error type of the `PeerConnection` module,
/// carrying the error of the layer that failed. ``isPeerError`` separates the remote peer's mistakes (an
/// HTTP layer answers 4xx) from ours (5xx).
public enum PeerConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The offer or a trickle fragment did not parse or cannot be answered (RFC 8866, RFC 8829).
    case sdp(SDPError)
    /// The ICE agent failed: gathering, libnice, or the peer's candidates or credentials (RFC 8445).
    case ice(ICEError)
    /// The DTLS endpoint or our certificate failed (RFC 6347, RFC 5764).
    case dtls(DTLSError)
    /// An SRTP context could not be made (RFC 3711).
    case srtp(SRTPError)
    /// Our own settings do not work (what was wrong).
    case invalidConfiguration(String)
    /// A data channel operation failed (``DataChannel/DataChannelError``).
    case dataChannel(DataChannelError)

    /// True when the remote peer is at fault.
    public var isPeerError: Bool {
        switch self {
        case .sdp(let error): error.isPeerError
        case .ice(let error): error.isPeerError
        case .dtls(let error): error.isPeerError
        case .srtp(let error): error.isPeerError
        case .invalidConfiguration: false
        case .dataChannel(let error): error.isPeerError
        }
    }

    public var description: String {
        switch self {
        case .sdp(let error): error.description
        case .ice(let error): error.description
        case .dtls(let error): error.description
        case .srtp(let error): error.description
        case .invalidConfiguration(let reason): "invalid peer configuration: \(reason)"
        case .dataChannel(let error): "data channel: \(error)"
        }
    }
}
