/// What ``ViewerHubStateMachine`` asks its shell to do, in order, after the state lock is released: the
/// encoders' requests, the peers to close, and the log lines (each case is one fixed message; the shell
/// writes it with its fields). `Peer` is the shell's handle of a viewer.
enum ViewerHubAction<Peer: Sendable>: Sendable {
    /// Ask `encoding` for a keyframe.
    case requestKeyframe(EncodingChoice)
    /// A viewer asked for a keyframe (PLI, FIR, its lobby; `reason` as the peer said it), of `encoding`;
    /// `passed`: it goes on (a `requestKeyframe` follows), else its spacing held it back. Logged at debug.
    case keyframeRequested(peer: String, reason: String, passed: Bool, encoding: EncodingChoice)
    /// Set the main encoder's target (already counted in ``ViewerHubStateMachine/Counters/bitrateChanges``);
    /// `peer` names the viewer or consumer whose event decided it (for the log).
    case setBitrate(BitrateFollower.Decision, peer: String)
    /// Set the main encoder's droppable cadence, unless a later change was applied already
    /// (``CadenceChange/generation``).
    case setCadence(CadenceChange, peer: String)
    /// What the second-encoding policy decided: start, stop, retune the second encoder, or move a viewer (log).
    case secondEncoder(SecondEncodingPolicy.Action, peer: String)
    /// Close `peer` (session `id`): the call was full and its address held more than its share of
    /// unconnected sessions, so it gave its slot up to a newcomer from `newcomer` (nil: address unknown).
    case giveUpSlot(Peer, id: String, newcomer: String?)
    /// Log "viewer joined" with the address `peer` watches from (nil: already gone); `viewers` connected or
    /// connecting now.
    case joined(Peer?, id: String, viewers: Int)
    /// Log "viewer left" (or "viewer lost" when `failed`) for a viewer that had connected.
    case left(Peer, id: String, reason: String, failed: Bool, viewers: Int)
    /// Log: the viewer's feedback stopped for ``BitrateFollower/silenceLimitMicros``; its estimate no longer counts.
    case viewerSilent(String)
    /// Log: a silent viewer was heard again; its estimate counts.
    case viewerHeardAgain(String)
    /// Log: a silent consumer (the SFU leg) was heard again.
    case consumerHeardAgain(String)
}

extension ViewerHubAction: Equatable where Peer: Equatable {}

/// A change of the droppable cadence: what it was and what it is now (nil: off), with what decided it.
struct CadenceChange: Sendable, Equatable {
    var from: Int?
    var to: Int?
    var outliers: [String]
    /// The highest estimate and the lowest outlier's, kbps.
    var highestKbps: Int?
    var outlierKbps: Int?
    /// Counts the changes decided (1, 2, …): a shell applying changes decided on different queues skips one
    /// older than the last it applied, so the encoder ends where the decisions did.
    var generation: Int
}

/// Where one encoded frame goes (``ViewerHubStateMachine/deliver(from:isKeyframe:captureMicros:width:height:)``).
struct FrameDelivery<Peer: Sendable>: Sendable {
    /// Each peer to send it to, with the capture time it is sent with, µs.
    var targets: [(peer: Peer, captureMicros: UInt64)] = []
    /// Viewers whose move to another encoding this keyframe completed (logged).
    var switched: [(id: String, encoding: EncodingChoice)] = []
}
