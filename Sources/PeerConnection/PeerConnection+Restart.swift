import Dispatch
import ICE
import ScreencastSupport
import SDP

// ICE restart of a running connection (RFC 8445 §9; RFC 8839 §4.4.1.1.1; WHIP: RFC 9725 §4.3.3). DTLS and
// SRTP are kept (RFC 8842 §4: an ICE restart does not touch the DTLS association), so no handshake runs
// again; the first frame on the new path is a keyframe (``ICERestartGate``).
extension PeerConnection {
    /// Restarts ICE: new local `ice-ufrag` / `ice-pwd` (``ICEAgent/restart()``), the same local candidates,
    /// frames held until the new path is up. Returns the fragment to send the peer (WHIP: the PATCH body).
    /// Blocks for the libnice call (well under a millisecond); call it from any thread but the peer's queue
    /// or the ICE thread is fine (not from `onEvent`, which runs on the peer's queue: it would wait on it).
    ///
    /// - Throws: ``PeerConnectionError/ice(_:)`` with ``ICEError/restartFailed(reason:)`` (the agent expired
    ///   or libnice refused) or ``ICEError/closed`` (the peer ended).
    public func restartICE() throws(PeerConnectionError) -> ICERestartFragment {
        let restart = try ice { () throws(ICEError) in try agent.restart() }
        queue.async { self.carryOut { $0.iceRestarted(nowMicros: MonotonicClock.nowMicros()) } }
        return ICERestartFragment(
            ufrag: restart.credentials.ufrag, password: restart.credentials.password,
            candidates: restart.candidates.map(\.description), complete: true, mid: negotiated.mid)
    }

    /// Applies the peer's answer to ``restartICE()``: its new credentials and its candidates; a fragment
    /// without candidates keeps the ones of the first answer (the server's addresses did not change),
    /// with their `a=end-of-candidates`. Checks start at once.
    ///
    /// - Throws: ``PeerConnectionError/ice(_:)``: ``ICEError/badRemoteCredentials(reason:)``,
    ///   ``ICEError/badRemoteCandidate(_:reason:)`` (nothing added then), ``ICEError/closed``.
    public func applyRestartAnswer(_ fragment: ICERestartFragment) throws(PeerConnectionError) {
        try ice { () throws(ICEError) in
            try agent.setRemoteCredentials(.init(ufrag: fragment.ufrag, password: fragment.password))
        }
        let usable: Int
        let complete: Bool
        if fragment.candidates.isEmpty {
            usable = try ice { () throws(ICEError) in try agent.addRemoteCandidates(negotiated.remote.candidates) }
            complete = negotiated.remote.candidatesComplete
        } else {
            usable = try ice { () throws(ICEError) in try agent.addRemoteCandidates(fragment.candidates) }
            complete = fragment.complete
        }
        if complete, usable > 0 { agent.remoteCandidatesComplete() }
    }

    /// ICE restarts made on this connection.
    public var iceRestarts: Int { agent.restarts }
}
