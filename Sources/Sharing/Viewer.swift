/// One viewer of the call as ``ViewerHubStateMachine`` keeps it: everything that is this viewer's, in one
/// record, so that its end (``ViewerHubStateMachine/closed(id:reason:failed:nowMicros:)``) removes all of it
/// at once. `Peer` is the shell's handle (``PeerConnection`` in ``ViewerHub``; anything in tests): the state
/// machine stores it and hands it back in actions, and never calls it.
///
/// ```
///   registered ── connected ──▶ watching ─────────────┐
///        │                         │                  ├── closed: the record is gone
///        └─ DELETE, slot given up, the call ended ─▶ leaving (isLeaving; sent nothing more)
/// ```
/// What it shares with other viewers stays in the policies that weigh them together: its estimate in
/// ``BitrateFollower`` (beside the SFU leg's, which is no viewer) and its assignment in
/// ``SecondEncodingPolicy``; both forget it when the record goes.
struct Viewer<Peer: Sendable>: Sendable {
    enum Phase: Sendable, Equatable {
        /// Registered; ICE and DTLS not connected yet. It holds a viewer slot and, with a known address,
        /// counts against that address's fair share (``PendingSessions``).
        case connecting
        /// Connected: its RTCP is checked for silence and it may move between the encodings.
        case watching
    }

    let id: String
    let peer: Peer
    /// The client address that made the session (nil: unknown).
    let address: String?
    /// When it was registered, CLOCK_MONOTONIC µs.
    let registeredMicros: UInt64
    var phase: Phase = .connecting
    /// The hub took it out (DELETE, its slot given up, the call ended): it is sent nothing more and holds no
    /// slot; the record stays until its peer's `closed` event, which is expected.
    var isLeaving = false
    /// Its RTCP packet count at the last feedback check (a rise: it was heard).
    var rtcpSeen = 0
    /// Its keyframe requests' spacing (nil until it first asks).
    var keyframes: KeyframeSpacing?
    /// Its gate between the two encodings (on the main one, not moving, at first).
    var encoding: EncodingSwitch
    /// Its send rate for `/stats` (nil until first read).
    var sendRate: SendRate?

    init(id: String, peer: Peer, address: String?, registeredMicros: UInt64, keyframeRetryMicros: UInt64) {
        self.id = id
        self.peer = peer
        self.address = address
        self.registeredMicros = registeredMicros
        encoding = EncodingSwitch(retryMicros: keyframeRetryMicros)
    }

    /// It holds a viewer slot and is sent frames.
    var isPeer: Bool { !isLeaving }
    /// Registered, not connected, not leaving, with a known address: a session that may give its slot up.
    var isUnconnected: Bool { phase == .connecting && !isLeaving && address != nil }
}
