import RTP
import Dispatch
import DTLS
public import DataChannel
import Glibc
import ICE
public import RTP
public import RTPSession
public import ScreencastSupport
public import SDP
import Synchronization

/// The system's wall clock (CLOCK_REALTIME), for the NTP timestamps of Sender Reports.
public struct SystemWallClock: WallClock {
    public init() {}
    public func unixMicroseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
    }
}

/// One viewer's WebRTC connection, answering its offer: ICE (libnice) → DTLS (OpenSSL) → SRTP (libsrtp)
/// carrying our VP8 stream, with RTCP feedback coming back. The thin I/O shell around
/// ``PeerConnectionStateMachine``: it owns the ICE agent, a serial queue and a timer, and moves events in
/// and the machine's output out.
///
/// ```
///   HTTP thread: answering(offer:) ── PeerAnswer.check, gather, PeerAnswer, remote credentials/candidates ──▶ answer SDP
///
///   ICE thread ── datagram ──┐                         ┌──▶ datagrams ──▶ ICEAgent.send
///   ICE thread ── event ─────┤                         │
///   encoder ── send(frame) ──┼──▶ serial queue ──▶ machine ──▶ events ──▶ onEvent
///   timer ───────────────────┘   (all state here)      └──▶ deadline ──▶ timer (at most 1 s away)
/// ```
///
/// - State lives on one serial dispatch queue; the ICE agent's GLib thread and the encoder thread only
///   post to it. Events go to `onEvent` on that queue: do not call back into ``snapshot()`` from there.
/// - A peer that fails (ICE expired, DTLS failure or fingerprint mismatch, handshake timeout, close_notify,
///   RTCP BYE) closes itself and reports ``Event/closed(reason:failed:)`` once.
/// - Nothing unauthenticated from the network ends a peer: what it cannot use is counted by kind in
///   ``DroppedDatagrams`` and dropped (``PeerConnectionStateMachine`` says which).
public final class PeerConnection: @unchecked Sendable {
    // @unchecked Sendable: the `let`s are immutable or thread-safe (ICEAgent); every `var` is touched
    // only on `queue`.

    /// The WHEP session id (URL-safe random).
    public let id: String
    /// The SDP answer: ours when answering (candidates included, `a=end-of-candidates`), the SFU's when
    /// offering.
    public let answer: String
    /// What the offer and our answer agreed: payload types, feedback, RTX, DTLS role.
    public let negotiated: NegotiatedVideo
    /// Our side: SSRCs, ICE credentials, fingerprint, CNAME.
    public let local: LocalMediaParameters

    let agent: ICEAgent
    let queue: DispatchQueue
    private let wallClock: any WallClock
    private let onEvent: @Sendable (Event) -> Void

    // Queue-confined state.
    private var machine: PeerConnectionStateMachine
    private var timer: (any DispatchSourceTimer)?
    private var sent = SendCounters()
    /// Whether the ended machine's ICE agent went to ``agentCloser`` already.
    private var agentHandedToCloser = false

    /// What the ICE agent made of the datagrams it was given.
    struct SendCounters {
        var datagrams = 0
        var bytes = 0
        var dropped = 0
    }

    // MARK: Answering

    /// Answers a viewer's offer: parses it, gathers our candidates (blocks for the few ms that takes),
    /// builds the answer, and starts ICE and DTLS. Media starts once DTLS completes.
    ///
    /// - Throws: ``PeerConnectionError`` peer errors for an offer that is malformed or unanswerable (no VP8,
    ///   no rtcp-mux, no fingerprint, bad ICE credentials), or our own (gathering, libnice, OpenSSL).
    public static func answering(
        offer text: String, id: String, configuration: Configuration, logger: Logger,
        onEvent: @escaping @Sendable (Event) -> Void
    ) throws(PeerConnectionError) -> PeerConnection {
        // Refuse what cannot be answered before any socket is opened.
        let offer = try PeerAnswer.check(offer: text, fingerprint: configuration.certificate.fingerprint)
        var iceConfiguration = configuration.ice
        iceConfiguration.role = .controlled
        iceConfiguration.peerID = id
        let relay = PeerConnectionRelay()
        let agent = try ice { () throws(ICEError) in
            try ICEAgent(
                configuration: iceConfiguration, logger: logger.named("ice"),
                onEvent: { event in relay.iceEvent(event) }, onDatagram: { datagram in relay.datagram(datagram) })
        }
        do throws(PeerConnectionError) {
            let candidates = try ice { () throws(ICEError) in try agent.gatherCandidates() }
            var random = SecureRandomNumberGenerator()  // not the empty SystemRandomNumberGenerator: see its doc
            let plan = try PeerAnswer(
                offer: offer, ice: agent.localCredentials, candidates: candidates, configuration: configuration, using: &random)
            let machine = try PeerConnectionStateMachine(
                id: id, negotiated: plan.negotiated, certificate: configuration.certificate, sender: plan.sender, audio: plan.audio,
                dtlsHandshakeTimeoutMicros: configuration.dtlsHandshakeTimeoutMicros,
                consentLimitMicros: configuration.consentLimitMicros, consentGraceMicros: configuration.consentGraceMicros, logger: logger,
                nowMicros: MonotonicClock.nowMicros(), dataChannelWake: { relay.dataChannelWake() })
            let peer = PeerConnection(
                answer: plan.answer, negotiated: plan.negotiated, local: plan.local, machine: machine, agent: agent,
                wallClock: configuration.wallClock, onEvent: onEvent, id: id)
            relay.set(peer)

            let remote = plan.negotiated.remote
            try ice { () throws(ICEError) in try agent.setRemoteCredentials(.init(ufrag: remote.iceUfrag, password: remote.icePwd)) }
            // One batch: refusals are logged once with their count, not a line per candidate.
            let usable = (try? agent.addOfferedCandidates(remote.candidates)) ?? 0
            if remote.candidatesComplete, usable > 0 { agent.remoteCandidatesComplete() }
            peer.start()
            logger.info("peer answered", [
                "peer": id, "candidates.local": candidates.count, "candidates.remote": remote.candidates.count,
                "candidates.usable": usable, "dtls": plan.negotiated.dtlsRole == .server ? "server" : "client",
                "rtx": plan.negotiated.rtxPayloadType != nil, "direction": plan.negotiated.direction.rawValue,
                "ssrc": plan.local.videoSSRC, "audio": plan.audio.map { "opus ssrc \($0.ssrc)" } ?? "none",
            ])
            return peer
        } catch {
            agent.close()
            throw error
        }
    }

    /// The shell around a made machine (answering, or offering: ``PeerConnection/Offerer``).
    init(
        answer: String, negotiated: NegotiatedVideo, local: LocalMediaParameters, machine: consuming PeerConnectionStateMachine,
        agent: ICEAgent, wallClock: any WallClock, onEvent: @escaping @Sendable (Event) -> Void, id: String
    ) {
        self.id = id
        self.answer = answer
        self.negotiated = negotiated
        self.local = local
        self.machine = machine
        self.agent = agent
        self.wallClock = wallClock
        self.onEvent = onEvent
        queue = DispatchQueue(label: "screencast.peer.\(id.prefix(8))", target: Self.queueTarget)
    }

    /// Where every peer's serial queue runs: a global queue, whose worker threads are shared and about as
    /// many as the cores. A serial queue made without a target runs on libdispatch's "overcommit" pool
    /// instead, which starts a thread whenever a queue has work and no thread is idle: a frame fanned out to
    /// 16 peers (each sending under libnice's agent lock) kept 60–150 threads alive, each with a stack and
    /// a glibc malloc arena of its own to leave freed packets in. Measured with 16 light viewers at 1080p30:
    /// 76 → 24 threads, call RSS 155 → 142 MiB, CPU unchanged.
    private static let queueTarget = DispatchQueue.global(qos: .userInitiated)

    /// Where ended peers close their ICE agents, off the peer queues: ``ICE/ICEAgent/close()`` joins
    /// libnice's thread and, with TURN, waits up to 500 ms for the allocations' release, which must not
    /// hold one of ``queueTarget``'s few workers that every other peer's sending shares (a viewer leaving
    /// through TURN stopped the other viewers' streams for 0.5 s). Concurrent: closes do not wait on each other.
    private static let agentCloser = DispatchQueue(label: "screencast.peer.ice-close", attributes: .concurrent)
    private static let agentsClosing = DispatchGroup()

    /// Waits until every peer that ended or was asked to ``close(reason:)`` has closed its ICE agent (TURN
    /// allocations released), at most until `deadline`; whether they all had. For a process about to exit.
    public static func waitForClosingAgents(until deadline: DispatchTime) -> Bool {
        agentsClosing.wait(timeout: deadline) == .success
    }

    deinit {
        timer?.cancel()
        if !agentHandedToCloser { agent.close() }
    }

    // MARK: Owner's interface (any thread)

    /// Sends an encoded frame (dropped before the peer is connected and until its first keyframe).
    public func send(_ frame: OutgoingVideoFrame) {
        queue.async { self.carryOut { $0.send(frame, nowMicros: MonotonicClock.nowMicros()) } }
    }

    /// Sends a message on the viewer's open data channel `streamID` (RFC 8831); dropped, and counted in
    /// ``DataChannel/DataChannelSession/Statistics/sendFailures``, when it cannot be sent (no such channel,
    /// too large for the peer, SCTP's send buffer full). Returns at once.
    public func sendDataChannel(_ message: DataChannelEstablishment.Message, on streamID: UInt16) {
        queue.async {
            self.carryOut { machine in
                (try? machine.sendDataChannel(message, on: streamID, nowMicros: MonotonicClock.nowMicros())) ?? .init()
            }
        }
    }

    /// Sends an Opus packet (dropped unless connected with an accepted audio section; DTX packets are not sent).
    public func sendAudio(_ frame: OutgoingAudioFrame) {
        queue.async { self.carryOut { $0.sendAudio(frame, nowMicros: MonotonicClock.nowMicros()) } }
    }

    /// Whether the answer accepted the viewer's audio (the call's sound goes to it).
    public var receivesAudio: Bool { negotiated.audio?.direction == .sendonly }

    /// Applies a trickle-ICE fragment (RFC 8840, `application/trickle-ice-sdpfrag`): its `a=candidate`
    /// lines and `a=end-of-candidates` (``TrickleFragment``). Nothing is applied when it throws.
    /// - Throws: ``PeerConnectionError/sdp(_:)``: a malformed fragment (a bad candidate, a line that is no
    ///   ICE attribute: 400), or ``SDPError/iceRestartNotSupported(line:)`` (other credentials) or
    ///   ``SDPError/unknownMid(line:mid:)`` (a mid the session lacks): understood but unanswerable, 422.
    public func applyTrickle(fragment: String) throws(PeerConnectionError) {
        let parsed: TrickleFragment
        // The session's m-lines: our answer keeps every mid of the offer (rejected ones too, RFC 8843 §7.3.3).
        let mids = answer.split(whereSeparator: \.isNewline).compactMap { $0.hasPrefix("a=mid:") ? String($0.dropFirst(6)) : nil }
        do {
            parsed = try TrickleFragment(
                parsing: fragment, ufrag: negotiated.remote.iceUfrag, password: negotiated.remote.icePwd, mids: mids)
        } catch { throw .sdp(error) }
        if !parsed.candidates.isEmpty { _ = try ice { () throws(ICEError) in try agent.addRemoteCandidates(parsed.candidates) } }
        if parsed.complete { agent.remoteCandidatesComplete() }
    }

    /// Ends the connection (close_notify to the peer, ICE closed). ``Event/closed(reason:failed:)`` follows
    /// unless it had already ended. Idempotent; returns at once.
    public func close(reason: String = "closed") {
        // Counted from now, so that ``waitForClosingAgents(until:)`` also waits for a close still queued.
        Self.agentsClosing.enter()
        queue.async {
            self.carryOut { $0.close(reason: reason, nowMicros: MonotonicClock.nowMicros()) }
            Self.agentsClosing.leave()
        }
    }

    /// A consistent view of the peer now (waits for the peer's queue; never call it from `onEvent`).
    public func snapshot() -> Snapshot {
        queue.sync {
            Snapshot(
                machine, datagramsSent: sent.datagrams, bytesSent: sent.bytes, sendsDropped: sent.dropped,
                nowMicros: MonotonicClock.nowMicros())
        }
    }

    // MARK: Queue-confined handling

    func start() {
        queue.async {
            let timer = DispatchSource.makeTimerSource(queue: self.queue)
            timer.setEventHandler { [weak self] in self?.onTimer() }
            self.timer = timer
            timer.schedule(deadline: .now() + .seconds(1))
            timer.resume()
            self.carryOut { $0.start(nowMicros: MonotonicClock.nowMicros()) }
        }
    }

    private func onTimer() {
        let ntp = wallClock.ntpNow()
        carryOut { $0.handleTimer(nowMicros: MonotonicClock.nowMicros(), wallClock: ntp) }
    }

    fileprivate func received(_ datagram: [UInt8]) {
        queue.async {
            let ntp = self.wallClock.ntpNow()
            self.carryOut { $0.receive(datagram, nowMicros: MonotonicClock.nowMicros(), wallClock: ntp) }
        }
    }

    /// usrsctp's timer thread left packets or messages for this peer (``DataChannel/SCTPAssociation``).
    fileprivate func dataChannelWake() {
        queue.async { self.carryOut { $0.pollDataChannels(nowMicros: MonotonicClock.nowMicros()) } }
    }

    fileprivate func iceEvent(_ event: ICEAgent.Event) {
        queue.async { self.carryOut { $0.handle(event, nowMicros: MonotonicClock.nowMicros()) } }
    }

    /// Feeds one event to the machine and does what it says: datagrams to ICE, events to the owner, the
    /// timer to the next deadline (at most a second away); an ended machine closes ICE.
    func carryOut(_ event: (inout PeerConnectionStateMachine) -> PeerConnectionStateMachine.Output) {
        let output = event(&machine)
        for datagram in output.datagrams {
            switch agent.send(datagram) {
            case .sent, .queued:
                sent.datagrams += 1
                sent.bytes += datagram.count
            case .dropped:
                sent.dropped += 1
            }
        }
        let ended = machine.state == .closed || machine.state == .failed
        if ended {
            timer?.cancel()
            if !agentHandedToCloser {
                agentHandedToCloser = true
                let agent = agent
                Self.agentCloser.async(group: Self.agentsClosing) { agent.close() }
            }
        } else if let timer {
            let now = MonotonicClock.nowMicros()
            let deadline = min(output.deadlineMicros ?? .max, now + 1_000_000)
            let delay = deadline > now ? deadline - now : 0
            timer.schedule(deadline: .now() + .microseconds(Int(delay)), leeway: .microseconds(200))
        }
        for event in output.events { onEvent(event) }
    }
}

/// Runs one ICE step, its error carried as ``PeerConnectionError/ice(_:)``.
func ice<T>(_ body: () throws(ICEError) -> T) throws(PeerConnectionError) -> T {
    do { return try body() } catch { throw .ice(error) }
}

/// Carries the ICE agent's callbacks to the peer connection, which does not exist yet when the agent is
/// made, without the agent keeping the peer alive.
final class PeerConnectionRelay: Sendable {
    private struct Target: Sendable { weak var peer: PeerConnection? }
    private let target = Mutex(Target())

    func set(_ peer: PeerConnection) { target.withLock { $0.peer = peer } }
    func datagram(_ datagram: [UInt8]) { target.withLock { $0.peer }?.received(datagram) }
    func iceEvent(_ event: ICEAgent.Event) { target.withLock { $0.peer }?.iceEvent(event) }
    func dataChannelWake() { target.withLock { $0.peer }?.dataChannelWake() }
}
