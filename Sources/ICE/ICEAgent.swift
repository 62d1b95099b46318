internal import CNice
public import SDP
import ScreencastSupport

/// One peer's ICE connection (RFC 8445, full ICE) through libnice: one stream with one component, since
/// BUNDLE and rtcp-mux put RTP, RTCP, DTLS and STUN on one 5-tuple (demultiplexed per RFC 7983 above us).
///
/// ```
///   ICEAgent(configuration:)       gatherCandidates()         setRemoteCredentials(_:)
///   ──────────────────────▶ new ───────────────────▶ gathering ─────────────────────▶ connecting
///                                    local candidates ──▶ SDP     addRemoteCandidate(_:) (or none:
///                                                                 peer-reflexive, learned from checks)
///   connecting ──▶ connected ──▶ ready ◀──▶ failed ──(failedGracePeriod)──▶ Event.expired
///                  (a pair works)  (nominated:    (checks or RFC 7675
///                                   sends flow)    consent lost; may recover)
/// ```
/// - A WHEP answer is `controlled`; an offer we make (WHIP, Janus) is `controlling`.
/// - Datagrams given to ``send(_:)`` before READY are queued and go out, in order, when READY comes (libnice
///   refuses sends for a millisecond or two between a pair's success and READY).
/// - Received datagrams (everything but STUN) go to `onDatagram`, events to `onEvent`, both on the agent's
///   own GLib thread, in order, one at a time. They must not block: that thread also runs the checks.
/// - A FAILED that lasts ``Configuration/failedGracePeriod`` becomes ``Event/expired(_:)``, the owner's cue to
///   tear the peer down. Consent freshness (RFC 7675) is the peer connection's (`ConsentFreshness`) unless
///   ``Configuration/consentFreshness`` turns libnice's on (then a silent peer expires in about 15 s).
/// - ``close()`` (or the last reference going away) stops the thread and frees the sockets; it is
///   idempotent, and may be called from a callback.
///
/// Thread-safe: every method may be called from any thread.
public final class ICEAgent: Sendable {
    /// libnice's component states (RFC 8445 §6.1.3 checklist states as libnice reports them), and `closed`.
    public enum State: String, Sendable, Equatable {
        case new, gathering, connecting, connected, ready, failed, disconnected, closed
    }

    /// Why the agent gave up on the peer (``Event/expired(_:)``).
    public enum Expiry: String, Sendable, Equatable {
        /// No working pair within ``Configuration/connectTimeLimit``, or FAILED before ever connecting.
        case neverConnected
        /// It was connected, then failed (checks or consent lost, RFC 7675 §5.1) and did not recover.
        case connectionLost
    }

    /// A local `ice-ufrag` / `ice-pwd` pair (RFC 8839 §5.4), or the peer's.
    public struct Credentials: Sendable, Equatable {
        /// 4–256 ice-chars.
        public var ufrag: String
        /// 22–256 ice-chars.
        public var password: String

        /// The pair as given (lengths and characters are not checked here).
        public init(ufrag: String, password: String) {
            self.ufrag = ufrag
            self.password = password
        }
    }

    /// The pair media flows on (RFC 8445 §8.1.1: the nominated pair).
    public struct CandidatePair: Sendable, Equatable {
        /// Ours: the address and port our datagrams leave from.
        public var local: ICECandidate
        /// The peer's: where our datagrams go (may be peer-reflexive, learned from its checks).
        public var remote: ICECandidate

        /// The pair of `local` and `remote` (not checked to share a component or address family).
        public init(local: ICECandidate, remote: ICECandidate) {
            self.local = local
            self.remote = remote
        }

        /// `udp`, or `tcp` for an ICE-TCP pair (RFC 6544), from our side's candidate.
        public var transport: String { local.isTCP ? "tcp" : "udp" }
    }

    /// What the agent tells its owner, on the agent's own thread, in the order it happened.
    public enum Event: Sendable, Equatable {
        /// libnice's component state changed (`component-state-changed`, mapped to ``State``).
        case stateChanged(State)
        /// A local candidate, as soon as it is known (also the ones ``gatherCandidates()`` returns; later
        /// ones are for trickle ICE).
        case localCandidate(ICECandidate)
        /// Gathering ended (`candidate-gathering-done`): every local candidate was reported.
        case gatheringDone
        /// A remote candidate the agent learned from the peer's checks (peer-reflexive, RFC 8445 §7.3.1.3).
        case remoteCandidateLearned(ICECandidate)
        /// A (new) pair was selected (`new-selected-pair-full`, and after a restart a pair found anew).
        case selectedPairChanged(CandidatePair)
        /// The agent gave up on the peer: close it.
        case expired(Expiry)
    }

    /// What ``send(_:)`` did with one datagram.
    public enum SendOutcome: String, Sendable, Equatable {
        /// Handed to the socket.
        case sent
        /// Kept until the agent is READY.
        case queued
        /// Not sent: the queue is full, the agent is closed, or libnice refused it.
        case dropped
    }

    /// Counters since the agent was created (datagrams and their payload bytes, UDP headers not counted).
    public struct Statistics: Sendable, Equatable {
        /// Datagrams handed to libnice (`nice_agent_send`) and their bytes; STUN checks not counted.
        public var datagramsSent = 0
        public var bytesSent = 0
        /// Datagrams the owner received (what libnice did not take as its own STUN) and their bytes.
        public var datagramsReceived = 0
        public var bytesReceived = 0
        /// Datagrams that waited in the queue for READY.
        public var datagramsQueued = 0
        /// Datagrams not sent: the READY queue was full (``Configuration/sendQueueLimit``), libnice refused
        /// them, or the agent was closed.
        public var datagramsDropped = 0
        /// Remote candidates refused by ``Configuration/remoteCandidatePolicy`` or over
        /// ``Configuration/remoteCandidateLimit``.
        public var remoteCandidatesRefused = 0

        public init() {}
    }

    private let core: ICEAgentCore

    /// Creates the agent, its stream, and the thread that runs it (sockets are opened by
    /// ``gatherCandidates()``).
    ///
    /// - Parameters:
    ///   - onEvent: state changes, candidates, the selected pair, expiry; called on the agent's thread.
    ///   - onDatagram: each received datagram libnice does not take as its own STUN (other data, and STUN it
    ///     does not act on: no valid credentials, no matching transaction); called on the agent's thread.
    /// - Throws: ``ICEError/invalidConfiguration(_:)`` for a bad address or server,
    ///   ``ICEError/agentFailure(_:)`` when libnice or the thread cannot be set up.
    public init(
        configuration: Configuration, logger: Logger = Logger(component: "ice"),
        onEvent: @escaping @Sendable (Event) -> Void = { _ in },
        onDatagram: @escaping @Sendable ([UInt8]) -> Void
    ) throws(ICEError) {
        core = try ICEAgentCore.make(
            configuration: configuration, logger: logger, onEvent: onEvent, onDatagram: onDatagram)
    }

    deinit { core.close() }

    /// Gathers local candidates (host; server-reflexive and relayed when servers are configured) and
    /// returns them, highest priority first, once gathering is done or
    /// ``Configuration/gatheringTimeLimit`` has passed. Blocks the calling thread meanwhile (a few ms for
    /// host candidates). Calling it again returns the candidates known by then.
    ///
    /// - Throws: ``ICEError/gatheringFailed(reason:)`` when no local candidate could be made.
    public func gatherCandidates() throws(ICEError) -> [ICECandidate] { try core.gather() }

    /// Our `a=ice-ufrag` / `a=ice-pwd` (8 and 24 characters of ALPHA / DIGIT): made with the agent, new after
    /// each ``restart()``.
    public var localCredentials: Credentials { core.localCredentials }

    /// Restarts ICE on the stream (RFC 8445 §9; RFC 8839 §4.4.1.1.1: new `ice-ufrag` / `ice-pwd`), through
    /// `nice_agent_restart_stream`: checks and remote candidates are dropped, local candidates (same
    /// sockets) are kept, and the new credentials and the candidates (host, server-reflexive, relayed: not
    /// the peer-reflexive ones the old checks taught us) are returned for the peer. Datagrams
    /// still go out on the old pair meanwhile (libnice allows sending on a restarted READY component).
    /// Give the peer's new credentials (``setRemoteCredentials(_:)``) and candidates next: checks start
    /// again and a pair is selected anew. A restart voids a pending FAILED grace period; one that does not
    /// reach READY within ``Configuration/connectTimeLimit`` expires the peer (``Expiry/connectionLost``).
    /// Either side may restart: the answerer calls it too when the peer's ufrag changed.
    ///
    /// With libnice's consent freshness on (``Configuration/consentFreshness``, off by default), restart a
    /// component that is FAILED, or one whose path still works: libnice 0.1.21 keeps the old selected pair's
    /// consent timer across a restart, and when that timer lapses before the new pair is selected libnice
    /// aborts the process on a FAILED → CONNECTED transition it asserts against. With it off no such timer
    /// is armed (keepalives are binding indications), and any component may be restarted.
    ///
    /// - Throws: ``ICEError/restartFailed(reason:)`` when the agent had expired or libnice refused,
    ///   ``ICEError/closed``.
    public func restart() throws(ICEError) -> (credentials: Credentials, candidates: [ICECandidate]) {
        try core.restart()
    }

    /// ICE restarts made since the agent was created.
    public var restarts: Int { core.restarts }

    /// Sets the peer's `a=ice-ufrag` / `a=ice-pwd`: checks can start (and the peer's checks are answered).
    public func setRemoteCredentials(_ credentials: Credentials) throws(ICEError) {
        try core.setRemoteCredentials(credentials)
    }

    /// Adds one remote candidate, `candidate:…` (with or without `a=`) as in SDP or a trickle fragment.
    /// Candidates libnice cannot use here are skipped and `false` returned: component 2 (we use rtcp-mux),
    /// TCP ones when ICE-TCP is off or without a known `tcptype` (RFC 6544: `active`, `passive`, `so`), and
    /// host names (mDNS `.local`: the peer is then learned as peer-reflexive from its checks).
    ///
    /// - Throws: ``ICEError/badRemoteCandidate(_:reason:)`` for a malformed candidate.
    @discardableResult
    public func addRemoteCandidate(_ candidate: String) throws(ICEError) -> Bool {
        try core.addRemoteCandidates([candidate]) == 1
    }

    /// Adds remote candidates (all or none: one malformed candidate throws before any is added) and
    /// returns how many were usable (see ``addRemoteCandidate(_:)``).
    @discardableResult
    public func addRemoteCandidates(_ candidates: [String]) throws(ICEError) -> Int {
        try core.addRemoteCandidates(candidates)
    }

    /// Adds parsed remote candidates (from ``SessionDescription`` or ``RemoteTransport``); skips the
    /// unusable ones as ``addRemoteCandidate(_:)`` does and returns how many were added.
    @discardableResult
    public func addRemoteCandidates(_ candidates: [ICECandidate]) throws(ICEError) -> Int {
        try core.addRemoteCandidates(candidates.map { ($0.description, $0) })
    }

    /// Adds an offer's parsed candidates in one batch: the unusable and refused ones are skipped, and so is one
    /// libnice cannot parse (each is optional); refusals are logged once for the batch. Returns how many were
    /// added.
    @discardableResult
    public func addOfferedCandidates(_ candidates: [ICECandidate]) throws(ICEError) -> Int {
        try core.addRemoteCandidates(candidates.map { ($0.description, $0) }, skippingUnparseable: true)
    }

    /// Applies the peer's transport from its description: credentials, candidates, and
    /// `a=end-of-candidates`. Returns how many candidates were usable (0 is normal for a browser that hides
    /// its addresses: it is learned as peer-reflexive from its checks).
    @discardableResult
    public func setRemoteTransport(_ transport: RemoteTransport) throws(ICEError) -> Int {
        try setRemoteCredentials(Credentials(ufrag: transport.iceUfrag, password: transport.icePwd))
        let added = try addRemoteCandidates(transport.candidates)
        if transport.candidatesComplete { remoteCandidatesComplete() }
        return added
    }

    /// The peer has sent all its candidates (`a=end-of-candidates`, RFC 8838 §13): pairs that fail now
    /// make the agent FAILED instead of waiting for more.
    public func remoteCandidatesComplete() { core.remoteCandidatesComplete() }

    /// Sends one datagram on the selected pair, or queues it until the agent is READY.
    @discardableResult
    public func send(_ datagram: [UInt8]) -> SendOutcome { core.send(datagram) }

    /// The latest state delivered as ``Event/stateChanged(_:)`` (`closed` once closed). When it reads
    /// `ready`, queued datagrams have gone out and ``send(_:)`` sends at once.
    public var state: State { core.state }

    /// The nominated pair, once there is one.
    public var selectedPair: CandidatePair? { core.selectedPair() }

    public var statistics: Statistics { core.statistics }

    /// A `gboolean` property of the libnice agent (`ice-tcp`, `ice-udp`), for tests.
    func libniceBool(_ name: String) -> Bool? {
        guard let handle = try? core.agentHandle() else { return nil }
        return cnice_get_bool(handle.agent, name) != 0
    }

    /// A `guint` property of the libnice agent (`stun-pacing-timer`, `max-connectivity-checks`), for tests.
    func libniceUInt(_ name: String) -> UInt32? {
        guard let handle = try? core.agentHandle() else { return nil }
        return cnice_get_uint(handle.agent, name)
    }

    /// Stops the agent: no more events or datagrams, sockets closed, the thread joined (when called from a
    /// callback on the agent's thread, the thread ends right after that callback returns). With a TURN
    /// server, first releases the allocation (waiting at most 500 ms). Idempotent.
    public func close() { core.close() }
}
