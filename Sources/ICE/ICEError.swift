/// Why an ICE agent (RFC 8445, through libnice) could not be made, fed or driven: the one error type of the
/// `ICE` module. ``isPeerError`` separates what the remote peer sent (its candidates, its credentials) from
/// our own failures.
public enum ICEError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A remote candidate (from the SDP or trickled) is malformed or libnice refused it: the candidate as
    /// given, and why.
    case badRemoteCandidate(String, reason: String)
    /// The remote `ice-ufrag` / `ice-pwd` are malformed (RFC 8839 §5.4) or libnice refused them.
    case badRemoteCredentials(reason: String)
    /// Local candidates could not be gathered (no usable local address, a port range that is taken, …).
    case gatheringFailed(reason: String)
    /// The agent's settings are invalid: a local address that is not an IP, a bad STUN/TURN server, … (ours).
    case invalidConfiguration(String)
    /// The ICE agent could not be created or driven (libnice or thread failure).
    case agentFailure(String)
    /// An ICE restart (RFC 8445 §9, `nice_agent_restart_stream`) could not be made: libnice refused it, or
    /// the agent had already given up on the peer.
    case restartFailed(reason: String)
    /// The ICE agent was closed before or during the call.
    case closed

    /// True when the remote peer is at fault (its candidates or credentials).
    public var isPeerError: Bool {
        switch self {
        case .badRemoteCandidate, .badRemoteCredentials: true
        case .gatheringFailed, .invalidConfiguration, .agentFailure, .restartFailed, .closed: false
        }
    }

    public var description: String {
        switch self {
        case .badRemoteCandidate(let candidate, let reason): "bad remote ICE candidate (\(candidate)): \(reason)"
        case .badRemoteCredentials(let reason): "bad remote ICE credentials: \(reason)"
        case .gatheringFailed(let reason): "ICE candidate gathering failed: \(reason)"
        case .invalidConfiguration(let reason): "invalid ICE configuration: \(reason)"
        case .agentFailure(let reason): "ICE agent failure: \(reason)"
        case .restartFailed(let reason): "ICE restart failed: \(reason)"
        case .closed: "the ICE agent is closed"
        }
    }
}
