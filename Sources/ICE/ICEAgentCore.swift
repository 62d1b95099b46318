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
///
/// Three files: this one (state, creation, closing), `+Operations` (what the public methods do) and
/// `+Callbacks` (libnice's signals, the GLib thread's work, candidate conversions).
final class ICEAgentCore: Sendable {
    let configuration: ICEAgent.Configuration
    let logger: Logger
    /// Paces the warning for datagrams libnice refused (``transmit(_:on:)``).
    let sendFailureLog = Mutex(LogRateLimiter())
    /// Our `ice-ufrag` / `ice-pwd`: libnice's, renewed by each ICE restart.
    let credentials: Mutex<ICEAgent.Credentials>
    let loop: GLibMainLoop
    let streamID: UInt32
    let onEvent: @Sendable (ICEAgent.Event) -> Void
    let onDatagram: @Sendable ([UInt8]) -> Void
    /// Nil once closed: the agent is freed when the last user of the handle lets go.
    let handle: Mutex<NiceAgentHandle?>
    let shared = Mutex(Shared())
    let sender = Mutex(SendQueue())
    let events = Mutex(EventQueue())
    let stats = Mutex(ICEAgent.Statistics())

    struct Shared {
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
        /// Remote candidates given to libnice so far (``ICEAgent/Configuration/remoteCandidateLimit``; an
        /// ICE restart starts the count over).
        var remoteCandidates = 0
        /// ICE restarts made (``ICEAgent/restart()``).
        var restarts = 0
    }

    struct SendQueue {
        var ready = false
        var closed = false
        var pending: [[UInt8]] = []
    }

    struct EventQueue {
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
        credentials = Mutex(localCredentials)
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
        if configuration.remoteCandidateLimit < 1 { throw .invalidConfiguration("the remote candidate limit is below 1") }
        if configuration.checkPacingMilliseconds < 1 || configuration.checkLimit < 1 {
            throw .invalidConfiguration("check pacing and the check limit must be at least 1")
        }
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
        // ICE-TCP (RFC 6544) for peers whose network blocks UDP: passive and active TCP host candidates.
        cnice_set_bool(agent, "ice-tcp", configuration.iceTCP ? 1 : 0)
        cnice_set_bool(agent, "upnp", 0)  // never ask the LAN's router for mappings
        nice_agent_set_software(agent, "screencast")
        cnice_set_uint(agent, "stun-pacing-timer", configuration.checkPacingMilliseconds)
        cnice_set_uint(agent, "max-connectivity-checks", configuration.checkLimit)
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
        guard let credentials = ICEAgent.Credentials.replace(on: agent, streamID: streamID) else {
            throw .agentFailure("nice_agent_set_local_credentials or nice_agent_get_local_credentials failed")
        }

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
    func activate(_ agent: OpaquePointer) throws(ICEError) {
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
            core.selectedPairAfterRestart(agent)
        }, me)
        guard nice_agent_attach_recv(agent, streamID, 1, loop.context, { _, _, _, length, buffer, data in
            guard let buffer else { return }
            ICEAgentCore.from(data).received(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
        }, me) != 0 else { throw .agentFailure("nice_agent_attach_recv failed") }
        try loop.start(name: "ice-glib") { [self] in detachFromAgent() }
    }

    /// The stream's local `ice-ufrag` / `ice-pwd` as libnice made them (`nice_agent_get_local_credentials`).
    static func readCredentials(_ agent: OpaquePointer, _ streamID: UInt32) -> ICEAgent.Credentials? {
        var ufrag: UnsafeMutablePointer<gchar>?
        var password: UnsafeMutablePointer<gchar>?
        guard nice_agent_get_local_credentials(agent, streamID, &ufrag, &password) != 0, let ufrag, let password else {
            return nil
        }
        defer {
            g_free(ufrag)
            g_free(password)
        }
        return ICEAgent.Credentials(ufrag: String(cString: ufrag), password: String(cString: password))
    }

    var localCredentials: ICEAgent.Credentials { credentials.withLock { $0 } }

    static func from(_ data: UnsafeMutableRawPointer?) -> ICEAgentCore {
        Unmanaged<ICEAgentCore>.fromOpaque(data!).takeUnretainedValue()
    }

    /// Runs on the GLib thread once the loop has stopped: nothing of libnice runs there any more, so the
    /// callbacks can be removed and the agent freed (closing its sockets).
    func detachFromAgent() {
        guard let handle = handle.withLock({ (slot: inout NiceAgentHandle?) in
            defer { slot = nil }
            return slot
        }) else { return }
        nice_agent_attach_recv(handle.agent, streamID, 1, loop.context, nil, nil)
        cnice_disconnect_all(handle.agent, Unmanaged.passUnretained(self).toOpaque())
    }

    func agentHandle() throws(ICEError) -> NiceAgentHandle {
        guard let handle = handle.withLock({ $0 }) else { throw .closed }
        return handle
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
    func releaseRelays(_ handle: NiceAgentHandle) {
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

}

private final class SemaphoreBox {
    let semaphore: DispatchSemaphore
    init(_ semaphore: DispatchSemaphore) { self.semaphore = semaphore }
}

extension String {
    /// Without leading and trailing spaces, tabs, CR and LF (trickle fragments end with CRLF).
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
