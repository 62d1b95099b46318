public import PeerConnection
import ScreencastSupport
import Synchronization

extension ViewerHub {
    /// The viewers' numbers as typed values, for `/metrics` (the same sources as ``json``).
    public struct Metrics: Sendable {
        /// One viewer there now: its peer's counters, its send rate (bits per second over the hub's window)
        /// and whether it is silent (connected, not heard for ``ViewerHub/silentAfterMicros``).
        public struct Peer: Sendable {
            public var snapshot: PeerConnection.Snapshot
            public var sendBitsPerSecond: Double
            public var silent: Bool
        }

        /// Viewers there now (connected or connecting), oldest first.
        public var peers: [Peer]
        /// WHEP sessions created, refused (full, ending, a bad offer) and given up to a newcomer, since the start.
        public var sessionsCreated: Int
        public var sessionsRefused: Int
        public var sessionsGivenUp: Int
        /// Keyframe requests from viewers (PLI, FIR, lobby), passed or held, since the start.
        public var keyframeRequests: Int
        /// Changes of the shared encoder's bitrate the viewers' estimates made, since the start.
        public var bitrateChanges: Int
        /// The encoder bitrate the viewers' estimates set, bits per second (nil: the configured default).
        public var appliedBitsPerSecond: Int?
        /// The lowest estimate among the viewers, bits per second (nil before any).
        public var lowestEstimateBitsPerSecond: Int?
    }

    /// The viewers' numbers now: one lock for the hub's state, then each peer's snapshot (its own lock).
    public var metrics: Metrics {
        let s = state.withLock { $0 }
        let snapshots = s.peers.values.map { $0.snapshot() }.sorted { $0.ageSeconds > $1.ageSeconds }
        let now = MonotonicClock.nowMicros()
        let rates = state.withLock { s in
            snapshots.map { snapshot in
                s.sendRateKbps(id: snapshot.id, bytes: snapshot.bytesSent, ageMicros: UInt64(snapshot.ageSeconds * 1e6), nowMicros: now)
            }
        }
        let applied: Int? = switch s.follower.applied {
        case .set(let kbps): kbps * 1000
        case .useDefault: nil
        }
        return Metrics(
            peers: zip(snapshots, rates).map { snapshot, kbps in
                Metrics.Peer(snapshot: snapshot, sendBitsPerSecond: kbps * 1000, silent: snapshot.state == .connected && Self.isSilent(snapshot))
            },
            sessionsCreated: s.counters.sessionsCreated, sessionsRefused: s.counters.sessionsRefused,
            sessionsGivenUp: s.counters.sessionsGivenUp, keyframeRequests: s.counters.keyframeRequests,
            bitrateChanges: s.counters.bitrateChanges, appliedBitsPerSecond: applied,
            lowestEstimateBitsPerSecond: s.follower.lowestEstimateKbps.map { $0 * 1000 })
    }
}

extension ViewerHub {
    /// Ends viewer `id`'s session at the sharer's request (`screencast-call kick`): its peer is closed ("kicked by
    /// the sharer") and its slot freed; the viewer's page can join again with a new offer.
    /// - Returns: false when no viewer has that id.
    public func kick(id: String) -> Bool {
        guard let peer = state.withLock({ $0.remove(id: id) }) else { return false }
        logger.info("viewer kicked by the sharer", ["peer": id])
        peer.close(reason: "kicked by the sharer")
        return true
    }
}
