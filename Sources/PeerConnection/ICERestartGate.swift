/// What an ICE restart means for the media of a connection that keeps its DTLS association and SRTP keys
/// (RFC 8842 §4 / JSEP, RFC 9429 §5.2.1: an ICE restart does not renegotiate DTLS): no frame while the new
/// path is being checked, then a keyframe before anything else, since what the receiver had in flight was
/// lost with the old path. Sans-I/O; one per connection, driven by ``PeerConnectionStateMachine``.
///
/// ```
///   idle ── restarted() ──▶ restarting ── pathUp() (ICE READY or a pair selected) ──▶ awaitingKeyframe
///     ▲                      (every frame dropped)     → true: ask the encoder for a keyframe        │
///     └──────────────────────────────── admits(keyframe: true) ──────────────────────────────────────┘
///                                        (delta frames dropped until then)
/// ```
public struct ICERestartGate: Sendable, Equatable {
    public enum Phase: String, Sendable, Equatable { case idle, restarting, awaitingKeyframe }

    public private(set) var phase = Phase.idle
    /// ICE restarts begun on the connection.
    public private(set) var restarts = 0
    /// Frames dropped because of restarts (while restarting, and delta frames before the keyframe).
    public private(set) var framesDropped = 0

    public init() {}

    /// An ICE restart began (new local credentials made): frames wait for the new path.
    public mutating func restarted() {
        phase = .restarting
        restarts += 1
    }

    /// The new path works: true when a keyframe must be asked for now (once per restart).
    public mutating func pathUp() -> Bool {
        guard phase == .restarting else { return false }
        phase = .awaitingKeyframe
        return true
    }

    /// Whether a frame may be sent; a keyframe ends the wait.
    public mutating func admits(keyframe: Bool) -> Bool {
        switch phase {
        case .idle: return true
        case .awaitingKeyframe where keyframe:
            phase = .idle
            return true
        case .restarting, .awaitingKeyframe:
            framesDropped += 1
            return false
        }
    }
}
