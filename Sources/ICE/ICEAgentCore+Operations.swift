internal import CNice
import Dispatch
import Glibc
import SDP
import ScreencastSupport
import Synchronization

// What ICEAgent's public methods do (any thread but the GLib one for `gather`).
extension ICEAgentCore {
    // MARK: Public operations

    func gather() throws(ICEError) -> [ICECandidate] {
        if loop.isCurrentThread {
            throw .agentFailure("gatherCandidates() called on the ICE thread, which it would block")
        }
        let handle = try agentHandle()
        let start = shared.withLock { shared in
            defer { shared.gatheringStarted = true }
            return !shared.gatheringStarted
        }
        if start {
            guard nice_agent_gather_candidates(handle.agent, streamID) != 0 else {
                throw .gatheringFailed(reason: configuration.localAddresses.isEmpty
                    ? "no usable local address (libnice skips loopback: give --ice-address)"
                    : "cannot open a socket on \(configuration.localAddresses.joined(separator: ", "))")
            }
        }
        let waiter = DispatchSemaphore(value: 0)
        let mustWait = shared.withLock { shared in
            if shared.gatheringDone || shared.closed { return false }
            shared.gatheringWaiters.append(waiter)
            return true
        }
        if mustWait {
            let limit = GLibMainLoop.milliseconds(configuration.gatheringTimeLimit)
            if waiter.wait(timeout: .now() + .milliseconds(Int(limit))) == .timedOut {
                shared.withLock { $0.gatheringWaiters.removeAll { $0 === waiter } }
                logger.warning("gathering time limit reached", ["ms": limit])
            }
        }
        if shared.withLock({ $0.closed }) { throw .closed }
        let candidates = localCandidates(handle)
        guard !candidates.isEmpty else { throw .gatheringFailed(reason: "no local candidates") }
        // An active TCP candidate opens no socket until it connects, so libnice makes one even on an address
        // that is not this machine's: with nothing else there is nothing a peer can reach.
        guard candidates.contains(where: { $0.tcpType != "active" }) else {
            throw .gatheringFailed(reason: configuration.localAddresses.isEmpty
                ? "no local candidates" : "cannot open a socket on \(configuration.localAddresses.joined(separator: ", "))")
        }
        logger.debug("gathered", ["candidates": candidates.count])
        return candidates
    }

    func setRemoteCredentials(_ credentials: ICEAgent.Credentials) throws(ICEError) {
        func valid(_ text: String, _ lengths: ClosedRange<Int>) -> Bool {
            lengths.contains(text.utf8.count) && ICECandidate.isICEChars(text)
        }
        guard valid(credentials.ufrag, 4...256) else {
            throw .badRemoteCredentials(reason: "ice-ufrag must be 4–256 ice-chars")
        }
        guard valid(credentials.password, 22...256) else {
            throw .badRemoteCredentials(reason: "ice-pwd must be 22–256 ice-chars")
        }
        let handle = try agentHandle()
        guard nice_agent_set_remote_credentials(handle.agent, streamID, credentials.ufrag, credentials.password) != 0
        else { throw .badRemoteCredentials(reason: "libnice refused them") }
        let first = shared.withLock { shared in
            defer { shared.remoteCredentialsSet = true }
            return !shared.remoteCredentialsSet
        }
        if first {
            loop.schedule(after: configuration.connectTimeLimit) { [weak self] in self?.connectTimeLimitReached() }
        }
    }

    func addRemoteCandidates(_ texts: [String]) throws(ICEError) -> Int {
        var parsed: [(text: String, candidate: ICECandidate)] = []
        for text in texts {
            let candidate: ICECandidate
            guard !text.trimmingSpaces.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw .badRemoteCandidate(text, reason: "control character")
            }
            do {
                candidate = try ICECandidate(parsing: text.trimmingSpaces)
            } catch {
                throw .badRemoteCandidate(text, reason: error.description)
            }
            parsed.append((text, candidate))
        }
        return try addRemoteCandidates(parsed)
    }

    /// Gives the usable ones of `candidates` to libnice (`text`: the candidate as given, for errors).
    /// Refusals are logged once per call, with their count and the first one (an offer may carry hundreds:
    /// a line each flooded the log, 6,110 lines for five offers in a bad-input review).
    /// - Parameter skippingUnparseable: skip (and count) a candidate libnice cannot parse instead of throwing
    ///   (an offer's candidates are each optional; a trickle fragment is all or none).
    func addRemoteCandidates(
        _ candidates: [(text: String, candidate: ICECandidate)], skippingUnparseable: Bool = false
    ) throws(ICEError) -> Int {
        let policy = configuration.effectiveRemoteCandidatePolicy
        var refused = 0
        var skipped = 0
        var firstSkipped: (reason: String, candidate: ICECandidate)?
        var firstRefused: (reason: String, candidate: ICECandidate)?
        let allowed = candidates.filter { text, candidate in
            if let reason = Self.unusableReason(candidate, iceTCP: configuration.iceTCP) {
                skipped += 1
                if firstSkipped == nil { firstSkipped = (reason, candidate) }
                return false
            }
            if let reason = policy.refusal(of: candidate.address) {
                refused += 1
                if firstRefused == nil { firstRefused = (reason, candidate) }
                return false
            }
            return true
        }
        if let firstSkipped {
            logger.debug("remote candidates skipped", [
                "count": skipped, "reason": firstSkipped.reason, "candidate": firstSkipped.candidate.sdpValue,
            ])
        }
        if let firstRefused {
            logger.info("remote candidates refused", [
                "count": refused, "reason": firstRefused.reason, "candidate": firstRefused.candidate.sdpValue,
            ])
        }
        // The limit: the first ones within it are taken, UDP ones before TCP ones (a TCP pair only serves a
        // peer whose network blocks UDP: it must not crowd a UDP candidate out), else in the order given.
        let room = shared.withLock { shared in
            let room = max(0, configuration.remoteCandidateLimit - shared.remoteCandidates)
            shared.remoteCandidates += min(room, allowed.count)
            return room
        }
        let usable = Self.withinLimit(allowed, room: room)
        if allowed.count > usable.count {
            logger.info("remote candidates over the limit refused", ["count": allowed.count - usable.count, "limit": configuration.remoteCandidateLimit])
            refused += allowed.count - usable.count
        }
        if refused > 0 { stats.withLock { $0.remoteCandidatesRefused += refused } }
        guard !usable.isEmpty else { return 0 }
        let handle = try agentHandle()
        var list: UnsafeMutablePointer<GSList>?
        defer { Self.freeCandidateList(list) }
        var unparseable = 0
        for (text, candidate) in usable {
            guard let parsed = nice_agent_parse_remote_candidate_sdp(
                handle.agent, streamID, "a=candidate:" + candidate.sdpValue)
            else {
                guard skippingUnparseable else { throw .badRemoteCandidate(text, reason: "libnice cannot parse it") }
                unparseable += 1
                continue
            }
            list = g_slist_append(list, parsed)
        }
        if unparseable > 0 { logger.info("remote candidates libnice cannot parse skipped", ["count": unparseable]) }
        guard list != nil else { return 0 }
        let added = nice_agent_set_remote_candidates(handle.agent, streamID, 1, list)
        guard added >= 0 else { throw .badRemoteCandidate(usable[0].text, reason: "libnice refused the candidates") }
        logger.debug("remote candidates added", ["count": added])
        return Int(added)
    }

    /// The first `room` of `candidates`, UDP ones before TCP ones, each kind in the order given.
    static func withinLimit(_ candidates: [(text: String, candidate: ICECandidate)], room: Int)
        -> [(text: String, candidate: ICECandidate)]
    {
        Array((candidates.filter { !$0.candidate.isTCP } + candidates.filter { $0.candidate.isTCP }).prefix(room))
    }

    func remoteCandidatesComplete() {
        guard let handle = try? agentHandle() else { return }
        nice_agent_peer_candidate_gathering_done(handle.agent, streamID)
    }

    func send(_ datagram: [UInt8]) -> ICEAgent.SendOutcome {
        guard let handle = handle.withLock({ $0 }) else {
            stats.withLock { $0.datagramsDropped += 1 }
            return .dropped
        }
        let outcome: ICEAgent.SendOutcome = sender.withLock { queue in
            if queue.closed { return .dropped }
            if queue.ready { return transmit(datagram, on: handle) ? .sent : .dropped }
            guard queue.pending.count < configuration.sendQueueLimit else { return .dropped }
            queue.pending.append(datagram)
            return .queued
        }
        stats.withLock { stats in
            switch outcome {
            case .sent: break  // counted by transmit
            case .queued: stats.datagramsQueued += 1
            case .dropped: stats.datagramsDropped += 1
            }
        }
        return outcome
    }

    /// `nice_agent_send_messages_nonblocking` (`cnice_send`), counted. A refusal is logged with libnice's
    /// reason (at most one line per 5 s after a burst of 3, the rest counted in the next). Called with
    /// `sender` held.
    func transmit(_ datagram: [UInt8], on handle: NiceAgentHandle) -> Bool {
        // The reason's buffer on the stack: nothing allocated per datagram.
        let failure: String? = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 160) { reason in
            reason[0] = 0
            let result = datagram.withUnsafeBytes { bytes in
                cnice_send(handle.agent, streamID, 1, bytes.baseAddress, gsize(bytes.count), reason.baseAddress, gsize(reason.count))
            }
            guard result != Int32(datagram.count) else { return nil }
            let text = String(cString: reason.baseAddress!)
            return result == 0 ? "would block: \(text)" : text
        }
        if let failure {
            if let suppressed = sendFailureLog.withLock({ $0.admit() }) {
                logger.warning("datagram not sent", [
                    "bytes": datagram.count, "reason": failure, "state": shared.withLock { $0.libniceState.rawValue },
                    "suppressed": suppressed,
                ])
            }
            return false
        }
        stats.withLock { stats in
            stats.datagramsSent += 1
            stats.bytesSent += datagram.count
        }
        return true
    }
}
