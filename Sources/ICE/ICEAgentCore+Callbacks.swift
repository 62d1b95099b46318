internal import CNice
import Dispatch
import Glibc
import SDP
import ScreencastSupport
import Synchronization

// libnice's signals (any thread: record and post), what runs on the GLib thread, and the conversions
// between libnice's candidates and ours.
extension ICEAgentCore {
    // MARK: Callbacks (any thread: record and post)

    func componentStateChanged(_ raw: UInt32) {
        let state = Self.state(raw)
        let changed = shared.withLock { shared -> Bool in
            guard !shared.closed, shared.libniceState != state else { return false }
            shared.libniceState = state
            if state == .connected || state == .ready { shared.everConnected = true }
            return true
        }
        if changed { post(.stateChanged(state)) }
    }

    func gatheringFinished() {
        let waiters = shared.withLock { shared in
            shared.gatheringDone = true
            defer { shared.gatheringWaiters = [] }
            return shared.gatheringWaiters
        }
        waiters.forEach { $0.signal() }
        post(.gatheringDone)
    }

    func received(_ bytes: UnsafeRawBufferPointer) {
        guard !shared.withLock({ $0.closed }) else { return }
        stats.withLock { stats in
            stats.datagramsReceived += 1
            stats.bytesReceived += bytes.count
        }
        onDatagram(Array(bytes))
    }

    /// Queues an event for the GLib thread (one idle source per batch).
    func post(_ event: ICEAgent.Event) {
        let schedule = events.withLock { queue in
            queue.events.append(event)
            defer { queue.drainScheduled = true }
            return !queue.drainScheduled
        }
        if schedule { loop.schedule { [weak self] in self?.drainEvents() } }
    }

    // MARK: On the GLib thread

    func drainEvents() {
        while true {
            let batch = events.withLock { queue in
                defer { queue.events = [] }
                if queue.events.isEmpty { queue.drainScheduled = false }
                return queue.events
            }
            guard !batch.isEmpty else { return }
            for event in batch {
                guard !shared.withLock({ $0.closed }) else { return }
                apply(event)
                onEvent(event)
            }
        }
    }

    /// What an event means for the agent itself, before the owner sees it.
    func apply(_ event: ICEAgent.Event) {
        switch event {
        case .stateChanged(.ready):
            flushQueue()  // before `state` says ready
            publish(.ready)
            let pair = selectedPair()
            logger.debug("ready", [
                "pair": pair.map { "\($0.local.address):\($0.local.port)>\($0.remote.address):\($0.remote.port)" } ?? "-",
                "transport": pair?.transport ?? "-",
            ])
        case .stateChanged(.failed):
            let failure = publish(.failed)
            logger.debug("failed", ["grace_ms": GLibMainLoop.milliseconds(configuration.failedGracePeriod)])
            loop.schedule(after: configuration.failedGracePeriod) { [weak self] in self?.graceEnded(failure) }
        case .stateChanged(let state):
            publish(state)
            logger.debug("state", ["state": state.rawValue])
        case .remoteCandidateLearned(let candidate):
            logger.debug("peer-reflexive candidate", ["candidate": candidate.sdpValue])
        default:
            break
        }
    }

    /// Sets the state the owner sees (unless closed meanwhile); returns the count of FAILED entries.
    @discardableResult
    func publish(_ state: ICEAgent.State) -> Int {
        shared.withLock { shared in
            guard !shared.closed else { return shared.failures }
            shared.state = state
            if state == .failed { shared.failures += 1 }
            return shared.failures
        }
    }

    /// READY: what waited goes out, in order, before anything sent after it.
    func flushQueue() {
        guard let handle = try? agentHandle() else { return }
        let (sent, dropped) = sender.withLock { queue -> (Int, Int) in
            queue.ready = true
            defer { queue.pending = [] }
            var sent = 0
            for datagram in queue.pending where transmit(datagram, on: handle) { sent += 1 }
            return (sent, queue.pending.count - sent)
        }
        if dropped > 0 { stats.withLock { $0.datagramsDropped += dropped } }
        if sent + dropped > 0 { logger.debug("queue flushed", ["sent": sent, "dropped": dropped]) }
    }

    func graceEnded(_ failure: Int) {
        let expiry: ICEAgent.Expiry? = shared.withLock { shared in
            guard !shared.closed, !shared.expired, shared.state == .failed, shared.failures == failure else { return nil }
            shared.expired = true
            return shared.everConnected ? .connectionLost : .neverConnected
        }
        guard let expiry else { return }
        logger.info("peer expired", ["peer": configuration.peerID ?? "-", "reason": expiry.rawValue])
        post(.expired(expiry))
    }

    func connectTimeLimitReached() {
        let expire = shared.withLock { shared -> Bool in
            guard !shared.closed, !shared.expired, !shared.everConnected else { return false }
            shared.expired = true
            return true
        }
        guard expire else { return }
        logger.info("peer expired", ["peer": configuration.peerID ?? "-", "reason": ICEAgent.Expiry.neverConnected.rawValue])
        post(.expired(.neverConnected))
    }

    // MARK: Conversions

    static func state(_ raw: UInt32) -> ICEAgent.State {
        switch NiceComponentState(rawValue: raw) {
        case NICE_COMPONENT_STATE_GATHERING: .gathering
        case NICE_COMPONENT_STATE_CONNECTING: .connecting
        case NICE_COMPONENT_STATE_CONNECTED: .connected
        case NICE_COMPONENT_STATE_READY: .ready
        case NICE_COMPONENT_STATE_FAILED: .failed
        default: .disconnected
        }
    }

    /// Why a parsed remote candidate cannot be given to libnice here, or nil. TCP ones (RFC 6544 §4.5) need
    /// ICE-TCP on (``ICEAgent/Configuration/iceTCP``) and a `tcptype` of `active`, `passive` or `so`
    /// (libnice reads a TCP candidate without one as `so`, with a GLib critical).
    static func unusableReason(_ candidate: ICECandidate, iceTCP: Bool) -> String? {
        if candidate.component != 1 { return "component \(candidate.component) (rtcp-mux uses 1 only)" }
        if candidate.isTCP {
            guard iceTCP else { return "transport TCP (ICE-TCP is off)" }
            guard let type = candidate.tcpType else { return "TCP without tcptype" }
            guard ["active", "passive", "so"].contains(type) else { return "tcptype \(type)" }
        } else if candidate.transport.lowercased() != "udp" {
            return "transport \(candidate.transport)"
        }
        if candidate.hasHostName { return "host name (mDNS is not resolved; learned as peer-reflexive)" }
        if case .other(let type) = candidate.kind { return "type \(type)" }
        return nil
    }

    /// A libnice candidate as an ``ICECandidate`` (through libnice's own SDP form).
    func convert(_ candidate: UnsafeMutablePointer<NiceCandidate>?, agent: OpaquePointer?) -> ICECandidate? {
        guard let candidate, let agent, let text = nice_agent_generate_local_candidate_sdp(agent, candidate) else {
            return nil
        }
        defer { g_free(text) }
        let sdp = String(cString: text)
        do {
            return try ICECandidate(parsing: sdp)
        } catch {
            logger.warning("libnice candidate unreadable", ["sdp": sdp])
            return nil
        }
    }

    func localCandidates(_ handle: NiceAgentHandle) -> [ICECandidate] {
        let list = nice_agent_get_local_candidates(handle.agent, streamID, 1)
        defer { Self.freeCandidateList(list) }
        var candidates: [ICECandidate] = []
        var node = list
        while let entry = node {
            if let candidate = convert(entry.pointee.data?.assumingMemoryBound(to: NiceCandidate.self), agent: handle.agent) {
                candidates.append(candidate)
            }
            node = entry.pointee.next
        }
        return candidates.sorted { $0.priority > $1.priority }
    }

    static func freeCandidateList(_ list: UnsafeMutablePointer<GSList>?) {
        var node = list
        while let entry = node {
            nice_candidate_free(entry.pointee.data?.assumingMemoryBound(to: NiceCandidate.self))
            node = entry.pointee.next
        }
        g_slist_free(list)
    }
}
