internal import CNice
import SDP
import Dispatch
import Glibc
import ScreencastSupport
import Synchronization

/// Owner of one `NiceAgent *` (a GObject): one reference, dropped with `g_object_unref` in `deinit`, which
/// closes the agent's sockets.
///
/// `@unchecked Sendable`: the pointer never changes, and libnice's API is thread-safe (every call takes
/// the agent's own lock).
final class NiceAgentHandle: @unchecked Sendable {
    let agent: OpaquePointer

    init(_ agent: OpaquePointer) { self.agent = agent }

    deinit { cnice_unref(agent) }
}

/// What ``ICEAgent`` drives: the libnice agent, the GLib thread that runs it, and the state the callbacks
/// and the public methods share.
///
/// Threads and locks: libnice emits signals on whichever thread releases its lock last (the GLib thread
/// for timers and sockets, the caller's thread inside `nice_agent_gather_candidates` and friends). The
/// `@convention(c)` thunks therefore only record state and post events; the events are handed to the
/// owner from an idle source on the GLib thread, never inside another call's stack. Locks (`shared`,
/// `sender`, `events`, `stats`) are never held while calling the owner; `sender` is held across
/// `nice_agent_send` to keep datagrams in order, and nothing a signal handler runs takes it.
final class ICEAgentCore: Sendable {
    let configuration: ICEAgent.Configuration
    let logger: Logger
    let localCredentials: ICEAgent.Credentials
    private let loop: GLibMainLoop
    private let streamID: UInt32
    private let onEvent: @Sendable (ICEAgent.Event) -> Void
    private let onDatagram: @Sendable ([UInt8]) -> Void
    /// Nil once closed: the agent is freed when the last user of the handle lets go.
    private let handle: Mutex<NiceAgentHandle?>
    private let shared = Mutex(Shared())
    private let sender = Mutex(SendQueue())
    private let events = Mutex(EventQueue())
    private let stats = Mutex(ICEAgent.Statistics())

    private struct Shared {
        /// What the owner has been told (updated on the GLib thread just before the event is delivered, so
        /// `state == .ready` implies the queue has been flushed and `send` sends).
        var state: ICEAgent.State = .new
        /// libnice's latest component state, as its signal reported it (any thread).
        var libniceState: ICEAgent.State = .new
        var closed = false
        var gatheringStarted = false
        var gatheringDone = false
        var gatheringWaiters: [DispatchSemaphore] = []
        var remoteCredentialsSet = false
        var everConnected = false
        var expired = false
        /// Counts FAILED entries, so a grace timer knows whether its FAILED is still the current one.
        var failures = 0
    }

    private struct SendQueue {
        var ready = false
        var closed = false
        var pending: [[UInt8]] = []
    }

    private struct EventQueue {
        var events: [ICEAgent.Event] = []
        var drainScheduled = false
    }

    private init(
        configuration: ICEAgent.Configuration, logger: Logger, loop: GLibMainLoop, handle: NiceAgentHandle,
        streamID: UInt32, localCredentials: ICEAgent.Credentials,
        onEvent: @escaping @Sendable (ICEAgent.Event) -> Void, onDatagram: @escaping @Sendable ([UInt8]) -> Void
    ) {
        self.configuration = configuration
        self.logger = logger
        self.loop = loop
        self.handle = Mutex(handle)
        self.streamID = streamID
        self.localCredentials = localCredentials
        self.onEvent = onEvent
        self.onDatagram = onDatagram
    }

    // MARK: Creation

    /// Creates the libnice agent (full ICE, RFC 5245 compatibility = RFC 8445 behaviour, trickle, RFC 7675
    /// consent freshness), its stream, the callbacks, and starts the thread.
    static func make(
        configuration: ICEAgent.Configuration, logger: Logger,
        onEvent: @escaping @Sendable (ICEAgent.Event) -> Void, onDatagram: @escaping @Sendable ([UInt8]) -> Void
    ) throws(ICEError) -> ICEAgentCore {
        // Resolve and check everything that can be wrong before creating anything.
        let stunAddress = try configuration.stunServer?.resolvedAddress()
        let turnAddresses = try configuration.turnServers.map { server throws(ICEError) in
            try server.address.resolvedAddress()
        }
        var localAddresses: [NiceAddress] = []
        for text in configuration.localAddresses {
            var address = NiceAddress()
            nice_address_init(&address)
            guard nice_address_set_from_string(&address, text) != 0 else {
                throw .invalidConfiguration("--ice-address \(text) is not an IP address")
            }
            localAddresses.append(address)
        }
        if let range = configuration.portRange, range.lowerBound == 0 {
            throw .invalidConfiguration("the ICE port range starts at 0")
        }
        if configuration.sendQueueLimit < 0 { throw .invalidConfiguration("negative send queue limit") }
        if configuration.relayOnly, configuration.turnServers.isEmpty {
            throw .invalidConfiguration("relay-only ICE needs a TURN server")
        }

        let loop = GLibMainLoop()
        var options = NICE_AGENT_OPTION_ICE_TRICKLE.rawValue
        if configuration.consentFreshness { options |= NICE_AGENT_OPTION_CONSENT_FRESHNESS.rawValue }
        guard let agent = nice_agent_new_full(loop.context, NICE_COMPATIBILITY_RFC5245, NiceAgentOption(rawValue: options))
        else { throw .agentFailure("nice_agent_new_full failed") }
        let handle = NiceAgentHandle(agent)

        cnice_set_bool(agent, "controlling-mode", configuration.role == .controlling ? 1 : 0)
        cnice_set_bool(agent, "ice-tcp", 0)  // UDP only: what browsers use with BUNDLE; fewer sockets
        cnice_set_bool(agent, "upnp", 0)  // never ask the LAN's router for mappings
        nice_agent_set_software(agent, "screencast")
        if configuration.relayOnly { cnice_set_bool(agent, "force-relay", 1) }
        if let stunAddress, let server = configuration.stunServer {
            cnice_set_string(agent, "stun-server", stunAddress)
            cnice_set_uint(agent, "stun-server-port", UInt32(server.port))
        }
        for var address in localAddresses {
            // libnice's own discovery skips loopback; an address added here is used as given.
            guard nice_agent_add_local_address(agent, &address) != 0 else {
                throw .agentFailure("nice_agent_add_local_address refused an address")
            }
        }
        let streamID = nice_agent_add_stream(agent, 1)
        guard streamID != 0 else { throw .agentFailure("nice_agent_add_stream failed") }
        if let range = configuration.portRange {
            nice_agent_set_port_range(agent, streamID, 1, UInt32(range.lowerBound), UInt32(range.upperBound))
        }
        for (server, address) in zip(configuration.turnServers, turnAddresses) {
            let type: NiceRelayType = switch server.transport {
            case .udp: NICE_RELAY_TYPE_TURN_UDP
            case .tcp: NICE_RELAY_TYPE_TURN_TCP
            case .tls: NICE_RELAY_TYPE_TURN_TLS
            }
            guard nice_agent_set_relay_info(
                agent, streamID, 1, address, UInt32(server.address.port), server.username, server.credential, type
            ) != 0 else { throw .invalidConfiguration("libnice refused TURN server \(server)") }
        }
        var ufrag: UnsafeMutablePointer<gchar>?
        var password: UnsafeMutablePointer<gchar>?
        guard nice_agent_get_local_credentials(agent, streamID, &ufrag, &password) != 0, let ufrag, let password else {
            throw .agentFailure("nice_agent_get_local_credentials failed")
        }
        let credentials = ICEAgent.Credentials(ufrag: String(cString: ufrag), password: String(cString: password))
        g_free(ufrag)
        g_free(password)

        let core = ICEAgentCore(
            configuration: configuration, logger: logger, loop: loop, handle: handle, streamID: streamID,
            localCredentials: credentials, onEvent: onEvent, onDatagram: onDatagram)
        do {
            try core.activate(agent)
        } catch {
            core.detachFromAgent()  // no callback may outlive `core`, whichever of the two goes first
            core.close()
            throw error
        }
        return core
    }

    /// Connects the signals and the receive callback (user data: this core, unretained; they are
    /// disconnected on the GLib thread before the core can go away) and starts the thread.
    private func activate(_ agent: OpaquePointer) throws(ICEError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        cnice_connect_state_changed(agent, { _, _, _, state, data in
            ICEAgentCore.from(data).componentStateChanged(state)
        }, me)
        cnice_connect_gathering_done(agent, { _, _, data in
            ICEAgentCore.from(data).gatheringFinished()
        }, me)
        cnice_connect_new_candidate(agent, { agent, candidate, data in
            let core = ICEAgentCore.from(data)
            if let candidate = core.convert(candidate, agent: agent) { core.post(.localCandidate(candidate)) }
        }, me)
        cnice_connect_new_remote_candidate(agent, { agent, candidate, data in
            let core = ICEAgentCore.from(data)
            if let candidate = core.convert(candidate, agent: agent) { core.post(.remoteCandidateLearned(candidate)) }
        }, me)
        cnice_connect_selected_pair(agent, { agent, _, _, local, remote, data in
            let core = ICEAgentCore.from(data)
            if let local = core.convert(local, agent: agent), let remote = core.convert(remote, agent: agent) {
                core.post(.selectedPairChanged(ICEAgent.CandidatePair(local: local, remote: remote)))
            }
        }, me)
        guard nice_agent_attach_recv(agent, streamID, 1, loop.context, { _, _, _, length, buffer, data in
            guard let buffer else { return }
            ICEAgentCore.from(data).received(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
        }, me) != 0 else { throw .agentFailure("nice_agent_attach_recv failed") }
        try loop.start(name: "ice-glib") { [self] in detachFromAgent() }
    }

    private static func from(_ data: UnsafeMutableRawPointer?) -> ICEAgentCore {
        Unmanaged<ICEAgentCore>.fromOpaque(data!).takeUnretainedValue()
    }

    /// Runs on the GLib thread once the loop has stopped: nothing of libnice runs there any more, so the
    /// callbacks can be removed and the agent freed (closing its sockets).
    private func detachFromAgent() {
        guard let handle = handle.withLock({ (slot: inout NiceAgentHandle?) in
            defer { slot = nil }
            return slot
        }) else { return }
        nice_agent_attach_recv(handle.agent, streamID, 1, loop.context, nil, nil)
        cnice_disconnect_all(handle.agent, Unmanaged.passUnretained(self).toOpaque())
    }

    private func agentHandle() throws(ICEError) -> NiceAgentHandle {
        guard let handle = handle.withLock({ $0 }) else { throw .closed }
        return handle
    }

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
    func addRemoteCandidates(_ candidates: [(text: String, candidate: ICECandidate)]) throws(ICEError) -> Int {
        let usable = candidates.filter { text, candidate in
            guard let reason = Self.unusableReason(candidate) else { return true }
            logger.debug("remote candidate skipped", ["reason": reason, "candidate": candidate.sdpValue])
            return false
        }
        guard !usable.isEmpty else { return 0 }
        let handle = try agentHandle()
        var list: UnsafeMutablePointer<GSList>?
        defer { Self.freeCandidateList(list) }
        for (text, candidate) in usable {
            guard let parsed = nice_agent_parse_remote_candidate_sdp(
                handle.agent, streamID, "a=candidate:" + candidate.sdpValue)
            else { throw .badRemoteCandidate(text, reason: "libnice cannot parse it") }
            list = g_slist_append(list, parsed)
        }
        let added = nice_agent_set_remote_candidates(handle.agent, streamID, 1, list)
        guard added >= 0 else { throw .badRemoteCandidate(usable[0].text, reason: "libnice refused the candidates") }
        logger.debug("remote candidates added", ["count": added])
        return Int(added)
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

    /// `nice_agent_send`, counted. Called with `sender` held.
    private func transmit(_ datagram: [UInt8], on handle: NiceAgentHandle) -> Bool {
        let result = datagram.withUnsafeBytes { bytes in
            nice_agent_send(handle.agent, streamID, 1, UInt32(bytes.count), bytes.baseAddress?.assumingMemoryBound(to: gchar.self))
        }
        guard result == Int32(datagram.count) else { return false }
        stats.withLock { stats in
            stats.datagramsSent += 1
            stats.bytesSent += datagram.count
        }
        return true
    }

    var state: ICEAgent.State { shared.withLock { $0.state } }

    var statistics: ICEAgent.Statistics { stats.withLock { $0 } }

    func selectedPair() -> ICEAgent.CandidatePair? {
        guard let handle = try? agentHandle() else { return nil }
        var local: UnsafeMutablePointer<NiceCandidate>?
        var remote: UnsafeMutablePointer<NiceCandidate>?
        guard nice_agent_get_selected_pair(handle.agent, streamID, 1, &local, &remote) != 0,
              let localCandidate = convert(local, agent: handle.agent),
              let remoteCandidate = convert(remote, agent: handle.agent)
        else { return nil }
        return ICEAgent.CandidatePair(local: localCandidate, remote: remoteCandidate)
    }

    func close() {
        let waiters: [DispatchSemaphore]? = shared.withLock { shared in
            guard !shared.closed else { return nil }
            shared.closed = true
            shared.state = .closed
            defer { shared.gatheringWaiters = [] }
            return shared.gatheringWaiters
        }
        guard let waiters else { return }
        waiters.forEach { $0.signal() }
        sender.withLock { queue in
            queue.closed = true
            queue.pending = []
        }
        if !configuration.turnServers.isEmpty, !loop.isCurrentThread, let handle = try? agentHandle() {
            releaseRelays(handle)
        }
        if loop.stop() {
            // Joined: `detachFromAgent` has run, unless the thread never started.
            handle.withLock { $0 = nil }
        }
        logger.debug("closed")
    }

    /// Lets libnice release TURN allocations (`nice_agent_close_async`, which completes on the GLib
    /// thread), waiting at most 500 ms.
    private func releaseRelays(_ handle: NiceAgentHandle) {
        let done = DispatchSemaphore(value: 0)
        loop.schedule {
            let box = Unmanaged.passRetained(SemaphoreBox(done))
            nice_agent_close_async(handle.agent, { _, _, data in
                Unmanaged<SemaphoreBox>.fromOpaque(data!).takeRetainedValue().semaphore.signal()
            }, box.toOpaque())
        }
        if done.wait(timeout: .now() + .milliseconds(500)) == .timedOut {
            logger.warning("TURN release time limit reached")  // the box leaks if libnice never calls back
        }
    }

    // MARK: Callbacks (any thread: record and post)

    private func componentStateChanged(_ raw: UInt32) {
        let state = Self.state(raw)
        let changed = shared.withLock { shared -> Bool in
            guard !shared.closed, shared.libniceState != state else { return false }
            shared.libniceState = state
            if state == .connected || state == .ready { shared.everConnected = true }
            return true
        }
        if changed { post(.stateChanged(state)) }
    }

    private func gatheringFinished() {
        let waiters = shared.withLock { shared in
            shared.gatheringDone = true
            defer { shared.gatheringWaiters = [] }
            return shared.gatheringWaiters
        }
        waiters.forEach { $0.signal() }
        post(.gatheringDone)
    }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        guard !shared.withLock({ $0.closed }) else { return }
        stats.withLock { stats in
            stats.datagramsReceived += 1
            stats.bytesReceived += bytes.count
        }
        onDatagram(Array(bytes))
    }

    /// Queues an event for the GLib thread (one idle source per batch).
    private func post(_ event: ICEAgent.Event) {
        let schedule = events.withLock { queue in
            queue.events.append(event)
            defer { queue.drainScheduled = true }
            return !queue.drainScheduled
        }
        if schedule { loop.schedule { [weak self] in self?.drainEvents() } }
    }

    // MARK: On the GLib thread

    private func drainEvents() {
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
    private func apply(_ event: ICEAgent.Event) {
        switch event {
        case .stateChanged(.ready):
            flushQueue()  // before `state` says ready
            publish(.ready)
            logger.debug("ready", ["pair": selectedPair().map { "\($0.local.address):\($0.local.port)>\($0.remote.address):\($0.remote.port)" } ?? "-"])
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
    private func publish(_ state: ICEAgent.State) -> Int {
        shared.withLock { shared in
            guard !shared.closed else { return shared.failures }
            shared.state = state
            if state == .failed { shared.failures += 1 }
            return shared.failures
        }
    }

    /// READY: what waited goes out, in order, before anything sent after it.
    private func flushQueue() {
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

    private func graceEnded(_ failure: Int) {
        let expiry: ICEAgent.Expiry? = shared.withLock { shared in
            guard !shared.closed, !shared.expired, shared.state == .failed, shared.failures == failure else { return nil }
            shared.expired = true
            return shared.everConnected ? .connectionLost : .neverConnected
        }
        guard let expiry else { return }
        logger.info("peer expired", ["reason": expiry.rawValue])
        post(.expired(expiry))
    }

    private func connectTimeLimitReached() {
        let expire = shared.withLock { shared -> Bool in
            guard !shared.closed, !shared.expired, !shared.everConnected else { return false }
            shared.expired = true
            return true
        }
        guard expire else { return }
        logger.info("peer expired", ["reason": ICEAgent.Expiry.neverConnected.rawValue])
        post(.expired(.neverConnected))
    }

    // MARK: Conversions

    private static func state(_ raw: UInt32) -> ICEAgent.State {
        switch NiceComponentState(rawValue: raw) {
        case NICE_COMPONENT_STATE_GATHERING: .gathering
        case NICE_COMPONENT_STATE_CONNECTING: .connecting
        case NICE_COMPONENT_STATE_CONNECTED: .connected
        case NICE_COMPONENT_STATE_READY: .ready
        case NICE_COMPONENT_STATE_FAILED: .failed
        default: .disconnected
        }
    }

    /// Why a parsed remote candidate cannot be given to libnice here, or nil.
    private static func unusableReason(_ candidate: ICECandidate) -> String? {
        if candidate.component != 1 { return "component \(candidate.component) (rtcp-mux uses 1 only)" }
        if candidate.transport.lowercased() != "udp" { return "transport \(candidate.transport)" }
        if candidate.hasHostName { return "host name (mDNS is not resolved; learned as peer-reflexive)" }
        if case .other(let type) = candidate.kind { return "type \(type)" }
        return nil
    }

    /// A libnice candidate as an ``ICECandidate`` (through libnice's own SDP form).
    private func convert(_ candidate: UnsafeMutablePointer<NiceCandidate>?, agent: OpaquePointer?) -> ICECandidate? {
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

    private func localCandidates(_ handle: NiceAgentHandle) -> [ICECandidate] {
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

    private static func freeCandidateList(_ list: UnsafeMutablePointer<GSList>?) {
        var node = list
        while let entry = node {
            nice_candidate_free(entry.pointee.data?.assumingMemoryBound(to: NiceCandidate.self))
            node = entry.pointee.next
        }
        g_slist_free(list)
    }
}

private final class SemaphoreBox {
    let semaphore: DispatchSemaphore
    init(_ semaphore: DispatchSemaphore) { self.semaphore = semaphore }
}

extension String {
    /// Without leading and trailing spaces, tabs, CR and LF (trickle fragments end with CRLF).
    fileprivate var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
