import PeerConnection
import ScreencastSupport
import Synchronization

extension ViewerHub {
    // MARK: Stats

    /// Viewers connected or connecting now.
    public var viewerCount: Int { state.withLock { $0.peerCount } }

    /// A connected viewer not heard this long is shown as silent to the sharer, µs (5 s: every receiver sends
    /// RTCP about once a second). Its consent (RFC 7675) still runs its 30 s; only the sharer's view changes: a
    /// browser quit abruptly counted as watching for 35 s (issue 34).
    public static let silentAfterMicros: UInt64 = 5_000_000

    /// The `viewers` part of `/stats`: counts, the bitrate decision, each peer, and the last peers that ended.
    public var json: JSONValue {
        let s = state.withLock { $0 }
        let snapshots = s.peers.values.map { $0.snapshot() }.sorted { $0.ageSeconds > $1.ageSeconds }
        let now = MonotonicClock.nowMicros()
        let rates = state.withLock { s in
            snapshots.map { snapshot in
                s.sendRateKbps(id: snapshot.id, bytes: snapshot.bytesSent, ageMicros: UInt64(snapshot.ageSeconds * 1e6), nowMicros: now)
            }
        }
        let applied: JSONValue
        switch s.follower.applied {
        case .set(let kbps): applied = .number(kbps)
        case .useDefault: applied = .string("default")
        }
        let bitrate: [(String, JSONValue)] = [
            ("applied", applied),
            ("lowestEstimateKbps", s.follower.lowestEstimateKbps.map { .number($0) } ?? .null),
            ("silentPeers", .array(s.follower.silentPeers.map { .string($0) })),
            ("ceilingKbps", s.follower.lowestCeilingKbps.map { .number($0) } ?? .null),
            ("changes", .number(s.counters.bitrateChanges)),
            // GCC viewers far below the rest (thinned) and the cadence that makes their thinning clean.
            ("outliers", .array(s.follower.outliers.map { .string($0) })),
            ("droppablePeriod", (configuration.fixedDroppablePeriod ?? s.cadence.period).map { .number($0) } ?? .null),
            ("cadenceChanges", .number(s.counters.cadenceChanges)),
        ]
        return .object([
            ("count", .number(snapshots.count)),
            ("connected", .number(snapshots.filter { $0.state == .connected }.count)),
            // Of those connected, the ones not heard for silentAfterMicros (gone, most likely; consent ends them later).
            ("silent", .number(snapshots.filter { $0.state == .connected && Self.isSilent($0) }.count)),
            ("created", .number(s.counters.sessionsCreated)),
            ("refused", .number(s.counters.sessionsRefused)),
            // Unconnected sessions that gave their slot up to a newcomer from another address (PendingSessions).
            ("givenUp", .number(s.counters.sessionsGivenUp)),
            ("keyframeRequests", .number(s.counters.keyframeRequests)),
            // Requests each viewer's keyframe spacing held back (ViewerKeyframeGate's rules), all and of thinned viewers.
            ("keyframeRequestsHeld", .number(s.counters.keyframeRequestsHeld)),
            ("outlierKeyframeRequestsHeld", .number(s.counters.outlierKeyframeRequestsHeld)),
            ("bitrate", .object(bitrate)),
            ("secondEncoding", secondEncodingJSON(s)),
            ("peers", .array(zip(snapshots, rates).map { snapshot, kbps in
                guard case .object(var fields) = snapshot.json else { return snapshot.json }
                fields.append(("kbps", .double((kbps * 10).rounded() / 10)))
                // Which encoding the viewer gets: main, low, or main->low while it waits for the keyframe.
                fields.append(("silent", .bool(snapshot.state == .connected && Self.isSilent(snapshot))))
                fields.append(("encoding", .string(s.viewers[snapshot.id]?.encoding.description ?? EncodingChoice.main.rawValue)))
                // The least time between two of its keyframe requests passed on now, ms (16000: it keeps asking
                // whatever it is sent, e.g. an end-to-end encrypted call watched without the key).
                fields.append(("keyframeSpacingMs", s.viewers[snapshot.id]?.keyframes.map { .number(Int($0.spacingMicros / 1_000)) } ?? .null))
                return .object(fields)
            })),
            ("ended", .array(s.recentlyEnded.map { ended in
                .object([("id", .string(ended.id)), ("reason", .string(ended.reason)), ("failed", .bool(ended.failed))])
            })),
        ])
    }

    /// Not heard for ``silentAfterMicros`` or more (its consent counts the silence).
    static func isSilent(_ snapshot: PeerConnection.Snapshot) -> Bool {
        (snapshot.consent?.silentMicros ?? 0) >= silentAfterMicros
    }
}
