internal import CNice
import SDP
import ScreencastSupport
import Synchronization

// ICE restart (RFC 8445 §9): new local credentials on the same sockets, checks start over.
extension ICEAgentCore {
    /// `nice_agent_restart_stream`: drops checks and remote candidates (libnice keeps the selected pair's
    /// remote candidate to send on meanwhile), makes new local credentials, restores RFC 7675 consent, and
    /// signals GATHERING (then CONNECTING once remote candidates come), so the owner sees the state move.
    /// Voids any FAILED grace timer and arms the restart's own time limit.
    func restart() throws(ICEError) -> (credentials: ICEAgent.Credentials, candidates: [ICECandidate]) {
        let handle = try agentHandle()
        let allowed: String? = shared.withLock { shared in
            if shared.closed { return "the agent is closed" }
            if shared.expired { return "the agent already gave up on the peer" }
            if !shared.gatheringDone && !shared.gatheringStarted { return "candidates were never gathered" }
            return nil
        }
        if let allowed { throw .restartFailed(reason: allowed) }
        guard nice_agent_restart_stream(handle.agent, streamID) != 0 else {
            throw .restartFailed(reason: "nice_agent_restart_stream refused")
        }
        // libnice made new credentials of its own alphabet; ours replace them (ICECredentials.swift says why).
        guard let fresh = ICEAgent.Credentials.replace(on: handle.agent, streamID: streamID) else {
            throw .restartFailed(reason: "nice_agent_set_local_credentials failed after the restart")
        }
        credentials.withLock { $0 = fresh }
        let actual = Self.state(UInt32(nice_agent_get_component_state(handle.agent, streamID, 1).rawValue))
        let number = shared.withLock { shared in
            shared.restarts += 1
            shared.failures += 1  // a pending FAILED grace timer no longer applies
            shared.remoteCandidates = 0
            return shared.restarts
        }
        loop.schedule(after: configuration.connectTimeLimit) { [weak self] in self?.restartTimeLimitReached(number) }
        // Local peer-reflexive candidates (learned from the old checks' mapped addresses) are no sockets of
        // ours to signal (RFC 8445 §5.1.3 lists host, server-reflexive and relayed ones only).
        let candidates = localCandidates(handle).filter { $0.kind != .peerReflexive }
        guard !candidates.isEmpty else { throw .restartFailed(reason: "no local candidates after the restart") }
        logger.info("ice restarted", ["restart": number, "state": actual.rawValue, "candidates": candidates.count])
        return (fresh, candidates)
    }

    var restarts: Int { shared.withLock { $0.restarts } }

    /// The restart numbered `number` has not reached READY in ``ICEAgent/Configuration/connectTimeLimit``
    /// (and no later restart replaced it): the peer is given up.
    func restartTimeLimitReached(_ number: Int) {
        let expire = shared.withLock { shared -> Bool in
            guard !shared.closed, !shared.expired, shared.restarts == number, shared.libniceState != .ready else { return false }
            shared.expired = true
            return true
        }
        guard expire else { return }
        logger.info("peer expired", ["peer": configuration.peerID ?? "-", "reason": "restart not ready in time"])
        post(.expired(.connectionLost))
    }

    /// After a restart a new pair can be selected while libnice's component stays READY (no state signal):
    /// report READY then if the owner was told otherwise.
    func selectedPairAfterRestart(_ agent: OpaquePointer?) {
        guard let agent, shared.withLock({ $0.restarts > 0 }) else { return }
        let actual = Self.state(UInt32(nice_agent_get_component_state(agent, streamID, 1).rawValue))
        if actual == .ready { componentStateChanged(UInt32(NICE_COMPONENT_STATE_READY.rawValue)) }
    }
}
