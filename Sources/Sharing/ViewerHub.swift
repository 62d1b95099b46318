import Dispatch
import Media
public import ScreencastSupport
public import Signaling
import Synchronization
public import DTLS
import ICE
import PeerConnection
import RTPSession
public import VideoSource


/// The call's viewers: answers WHEP offers with a ``PeerConnection`` each, fans the shared encoder's
/// frames out to all of them, and turns their feedback into encoder requests.
///
/// ```
///   WHEP POST ──▶ createSession ──▶ PeerConnection.answering ──▶ peers[id]
///   VideoSource ── consume(frame) ──▶ every peer's send (each: lobby, RTP, pacer, SRTP, ICE)
///   peer events: keyframeNeeded ──▶ ViewerKeyframeGate ──▶ source.requestKeyframe()   (new viewer, PLI, FIR;
///                                   (spaced per viewer)        coalesced there)
///                estimatedBitrate ──▶ BitrateFollower ──▶ source.setBitrate (lowest viewer, clamped)
///                                           └──▶ DroppableCadencePolicy ──▶ source.setDroppableCadence
///                                                (a GCC viewer far below the rest: its frames thinned cleanly)
///                closed ──▶ removed (failed, timed out, DELETE, BYE)
/// ```
public final class ViewerHub: WHEPSessionProvider, VideoSink, Sendable {
    struct Ended: Sendable {
        var id: String
        var reason: String
        var failed: Bool
    }

    struct State: Sendable {
        var peers: [String: PeerConnection] = [:]
        /// Viewers that connected and have not ended yet (a DELETE takes a peer out of `peers` first).
        var watching: [String: PeerConnection] = [:]
        /// Each viewer's current send rate, for `/stats`.
        var sendRates = SendRateMeter()
        var pending = 0
        /// Sessions not connected yet and the client address that made each (those with a known address).
        var unconnected: PendingSessions
        var endedEarly: Set<String> = []
        /// Sessions the hub took out of `peers` itself before closing them (a DELETE, a slot given up): their
        /// `closed` event is expected, not an end before registration.
        var removedByHub: Set<String> = []
        /// Unconnected sessions that gave their slot up to a newcomer from another address.
        var sessionsGivenUp = 0
        var recentlyEnded: [Ended] = []
        var follower: BitrateFollower
        /// The droppable cadence asked of the encoder, from the follower's outliers.
        var cadence: DroppableCadencePolicy
        var cadenceChanges = 0
        /// Each viewer's keyframe requests, spaced (more after keyframes that did not help; outliers' at least 4 s).
        var keyframeGate = ViewerKeyframeGate()
        var lastFrameSize: (width: Int, height: Int)?
        var finished = false
        var sessionsCreated = 0
        var sessionsRefused = 0
        var keyframeRequests = 0
        var bitrateChanges = 0
        /// Each watching viewer's RTCP count at the last feedback check (it rose: the viewer was heard).
        var rtcpSeen: [String: Int] = [:]
        /// When the second encoding runs and which viewers it serves.
        var encodings: SecondEncodingPolicy
        /// Each viewer's gate between the two encodings (absent: on the main one, not moving).
        var switches: [String: EncodingSwitch] = [:]
    }

    /// How often the viewers' feedback is checked for silence (``BitrateFollower/silenceLimitMicros``), µs.
    public static let feedbackCheckIntervalMicros: UInt64 = 500_000

    public let configuration: SharingConfiguration
    private let peerConfiguration: PeerConnection.Configuration
    let encoder: any SharedEncoderControl
    let logger: Logger
    let state: Mutex<State>
    /// Checks the viewers' feedback every ``feedbackCheckIntervalMicros`` (cancelled when the call ends).
    let feedbackTimer: Mutex<(any DispatchSourceTimer)?>
    /// Starts the second encoding (nil: none; viewers far below the others are thinned on the main one).
    let secondEncoderFactory: SecondEncoderFactory?
    let second = SecondEncoderSlot()
    let secondInlet = SecondEncodingInlet()

    /// - Parameters:
    ///   - encoder: the shared main encoder.
    ///   - secondEncoder: starts a second, lower-rate encoding for viewers far below the others (issue 12;
    ///     ``SecondEncodingPolicy``); nil: none.
    /// - Throws: ``DTLSError`` when our DTLS certificate cannot be made.
    public init(
        configuration: SharingConfiguration, encoder: any SharedEncoderControl, secondEncoder: SecondEncoderFactory? = nil, logger: Logger
    ) throws(DTLSError) {
        self.configuration = configuration
        self.encoder = encoder
        self.logger = logger
        secondEncoderFactory = secondEncoder
        var peers = PeerConnection.Configuration(
            ice: configuration.ice, certificate: try DTLSCertificate.shared(), pacer: configuration.pacer,
            keyframeRetryMicros: configuration.keyframeRetryMicros)
        peers.consentLimitMicros = configuration.consentLimitMicros
        peerConfiguration = peers
        state = Mutex(State(
            unconnected: PendingSessions(fairShare: configuration.maxPendingPerAddress),
            follower: BitrateFollower(minimumKbps: configuration.minimumBitrateKbps),
            cadence: DroppableCadencePolicy(offHoldMicros: configuration.droppableOffHoldMicros),
            encodings: SecondEncodingPolicy(settings: configuration.secondEncoding)))
        if let fixed = configuration.fixedDroppablePeriod { encoder.setDroppableCadence(period: fixed) }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "screencast.viewers.feedback"))
        let interval = DispatchTimeInterval.microseconds(Int(Self.feedbackCheckIntervalMicros))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        feedbackTimer = Mutex(timer)
        feedbackTimer.withLock { timer in
            timer?.setEventHandler { [weak self] in self?.checkFeedback() }
            timer?.resume()
        }
        secondInlet.attach(self)
    }

    deinit { feedbackTimer.withLock { $0?.cancel() } }

    // MARK: WHEPSessionProvider

    /// A WHEP POST (draft-ietf-wish-whep, in the shape of WHIP's RFC 9725 §4.2): answers the viewer's SDP offer with a new `PeerConnection` (recvonly
    /// VP8 video; ICE, DTLS-SRTP) and registers it. Returns the session id and the SDP answer.
    /// - Throws: `SignalingError.unavailable` at `maxViewers` (pending answers count) or once the call is
    ///   ending; `.refused` or `.internalFailure` when the offer cannot be answered (``SignalingError/init(_:)``).
    public func createSession(offer: String) throws(SignalingError) -> WHEPSession {
        try createSession(offer: offer, clientAddress: nil)
    }

    /// ``createSession(offer:)`` for a client at `clientAddress`. While viewer slots are free any address takes
    /// them; when the call is full, the oldest unconnected session of an address holding more than
    /// ``SharingConfiguration/maxPendingPerAddress`` unconnected ones gives its slot up to a newcomer from
    /// another address (``PendingSessions``): a whole office behind one NAT can join at once, and one client
    /// cannot keep others out with offers it never connects.
    /// - Throws: also `SignalingError.tooManyPending` (429) when the call is full and `clientAddress` itself holds
    ///   more than that many unconnected sessions.
    public func createSession(offer: String, clientAddress: String?) throws(SignalingError) -> WHEPSession {
        enum Admission { case admitted, full, tooManyPending(Int) }
        let (admission, givenUp) = state.withLock { s -> (Admission, PeerConnection?) in
            guard !s.finished else {
                s.sessionsRefused += 1
                return (.full, nil)
            }
            if s.peers.count + s.pending < configuration.maxViewers {
                s.pending += 1
                return (.admitted, nil)
            }
            if let victim = s.unconnected.sessionToGiveUp(forNewcomerFrom: clientAddress), let peer = s.peers.removeValue(forKey: victim) {
                s.unconnected.remove(victim)
                s.removedByHub.insert(victim)
                s.sessionsGivenUp += 1
                s.pending += 1
                return (.admitted, peer)
            }
            s.sessionsRefused += 1
            if let clientAddress, s.unconnected.count(from: clientAddress) > configuration.maxPendingPerAddress {
                return (.tooManyPending(s.unconnected.count(from: clientAddress)), nil)
            }
            return (.full, nil)
        }
        if let givenUp {
            logger.info("viewer slot given up by an unconnected session", [
                "peer": givenUp.id, "for": clientAddress ?? "-", "reason": "its address holds more than \(configuration.maxPendingPerAddress) unconnected sessions",
            ])
            givenUp.close(reason: "gave its slot up: the call was full and its address held more than \(configuration.maxPendingPerAddress) unconnected sessions")
        }
        switch admission {
        case .admitted: break
        case .full: throw .unavailable("\(configuration.maxViewers) viewers already (or the call is ending)")
        case .tooManyPending(let count):
            throw .tooManyPending("the call is full and \(count) sessions from \(clientAddress ?? "-") have not connected yet")
        }
        let id = WHEPSessionID.random()
        let peer: PeerConnection
        do {
            peer = try PeerConnection.answering(
                offer: offer, id: id, configuration: peerConfiguration, logger: logger.named("peer"),
                onEvent: { [weak self] event in self?.peerEvent(id: id, event) })
        } catch {
            state.withLock {
                $0.pending -= 1
                $0.sessionsRefused += 1
            }
            throw SignalingError(error)
        }
        let kept = state.withLock { s -> Bool in
            s.pending -= 1
            s.sessionsCreated += 1
            if s.endedEarly.remove(id) != nil || s.finished { return false }
            s.peers[id] = peer
            if let clientAddress, !s.watching.keys.contains(id) { s.unconnected.add(id, address: clientAddress, nowMicros: MonotonicClock.nowMicros()) }
            return true
        }
        if !kept { peer.close(reason: "ended before it was registered") }
        return WHEPSession(id: id, answer: peer.answer)
    }

    /// A WHEP PATCH (trickle ICE, RFC 8840; RFC 9725 §4.3's shape): adds the fragment's remote candidates to
    /// the session's peer. Returns no answer fragment (our candidates are all in the answer).
    /// - Throws: `SignalingError.unknownSession`, or `.refused` for a fragment that does not parse.
    public func updateSession(id: String, fragment: String) throws(SignalingError) -> String? {
        guard let peer = state.withLock({ $0.peers[id] }) else { throw .unknownSession(id) }
        do {
            try peer.applyTrickle(fragment: fragment)
        } catch {
            throw SignalingError(error)
        }
        return nil
    }

    /// A WHEP DELETE (RFC 9725 §4.4's shape): closes the session's peer. False when no such session exists.
    public func deleteSession(id: String) -> Bool {
        let peer = state.withLock { s -> PeerConnection? in
            guard let peer = s.peers.removeValue(forKey: id) else { return nil }
            s.removedByHub.insert(id)
            return peer
        }
        guard let peer else { return false }
        peer.close(reason: "DELETE by the viewer")
        return true
    }

    /// A viewer that can decode again (its page was given the end-to-end key) asks for a keyframe now
    /// (``ViewerKeyframeGate/restart(peer:nowMicros:)``: at most once per 10 s). Nil for an unknown session.
    public func keyframeWanted(id: String) -> Bool? {
        let decision = state.withLock { s -> (Bool, EncodingChoice)? in
            guard s.peers[id] != nil else { return nil }
            let encoding = s.switches[id]?.keyframeSource ?? .main
            return (s.keyframeGate.restart(peer: id, nowMicros: MonotonicClock.nowMicros()), encoding)
        }
        guard let (wanted, encoding) = decision else { return nil }
        if wanted { requestKeyframe(of: encoding) }
        return wanted
    }

    // MARK: VideoSink

    /// One encoded VP8 frame from the shared encoder, handed to every registered peer on the main encoding
    /// (each packetizes it with its own SSRC and sequence numbers, RFC 7741); the frame's bytes are shared, not copied.
    public func consume(_ frame: EncodedFrame) { deliver(frame, from: .main) }

    /// The source ended: closes every peer (DTLS close_notify, ICE closed) and refuses new sessions.
    public func finish() { closeAll(reason: "the call ended") }

    /// Ends every viewer; new offers are refused from now on.
    public func closeAll(reason: String) {
        feedbackTimer.withLock { $0?.cancel() }
        second.stopNow()
        let peers = state.withLock { s -> [PeerConnection] in
            s.finished = true
            defer { s.peers = [:] }
            return Array(s.peers.values)
        }
        for peer in peers { peer.close(reason: reason) }
    }

    // MARK: Peer events (on the peer's queue)

    private func peerEvent(id: String, _ event: PeerConnection.Event) {
        switch event {
        case .connected:
            // Who is watching, for the sharer: one line per viewer joining, with the address it watches from.
            // Events come on the peer's own queue, where its snapshot cannot be taken: log from elsewhere.
            let (peer, count) = state.withLock { s in
                let peer = s.peers[id]
                s.watching[id] = peer
                s.unconnected.remove(id)
                return (peer, s.peers.count)
            }
            let logger = logger
            DispatchQueue.global().async {
                let remote = peer?.snapshot().selectedPair?.remote
                logger.info("viewer joined", ["peer": id, "address": remote.map { "\($0.address)" } ?? "-", "viewers": count])
            }
        case .iceConnectionFailed:
            break  // a viewer restarts ICE by a new offer (a new session); its peer expires meanwhile
        case .keyframeNeeded(let reason):
            // To the encoding the viewer is on (or moving to); each viewer's requests of the main one are
            // spaced (ViewerKeyframeGate): one viewer that cannot decode must not set everybody's keyframe rate.
            let (admitted, encoding) = state.withLock { s -> (Bool, EncodingChoice) in
                s.keyframeRequests += 1
                let encoding = s.switches[id]?.keyframeSource ?? .main
                guard encoding == .main else { return (true, encoding) }
                return (s.keyframeGate.admit(peer: id, isOutlier: s.follower.outliers.contains(id), nowMicros: MonotonicClock.nowMicros()), encoding)
            }
            logger.debug("keyframe requested", ["peer": id, "reason": reason, "passed": admitted, "encoding": encoding.rawValue])
            if admitted { requestKeyframe(of: encoding) }
        case .estimatedBitrate(let bitsPerSecond), .targetBitrate(let bitsPerSecond):
            // REMB (receive-side estimate) or our own GCC target for the peer (transport-wide CC, thinned to it).
            let source: BitrateFollower.Source = if case .targetBitrate = event { .congestionControl } else { .remb }
            let now = MonotonicClock.nowMicros()
            let (decision, encodings, cadence) = state.withLock { s in
                let decision = s.follower.update(
                    peer: id, bitsPerSecond: bitsPerSecond, ceilingKbps: ceiling(s), source: source, nowMicros: now)
                let encodings = updateEncodings(&s, now)
                return (decision, encodings, updateCadence(&s, now))
            }
            apply(decision, peer: id)
            applyEncodings(encodings, peer: id)
            apply(cadence, peer: id)
        case .closed(let reason, let failed):
            let (decision, encodings, cadence, left, count) = state.withLock {
                s -> (BitrateFollower.Decision?, EncodingWork, CadenceChange?, PeerConnection?, Int) in
                if s.peers.removeValue(forKey: id) == nil, !s.finished, s.removedByHub.remove(id) == nil { s.endedEarly.insert(id) }
                let left = s.watching.removeValue(forKey: id)
                s.switches[id] = nil
                s.unconnected.remove(id)
                s.rtcpSeen[id] = nil
                s.keyframeGate.remove(peer: id)
                s.recentlyEnded.append(Ended(id: id, reason: reason, failed: failed))
                if s.recentlyEnded.count > 16 { s.recentlyEnded.removeFirst(s.recentlyEnded.count - 16) }
                let decision = s.follower.remove(peer: id, ceilingKbps: ceiling(s))
                let now = MonotonicClock.nowMicros()
                let encodings = updateEncodings(&s, now)
                return (decision, encodings, updateCadence(&s, now), left, s.peers.count)
            }
            if let left {
                let logger = logger
                DispatchQueue.global().async {
                    let snapshot = left.snapshot()
                    logger.log(failed ? .warning : .info, failed ? "viewer lost" : "viewer left", [
                        "peer": id, "address": snapshot.selectedPair.map { "\($0.remote.address)" } ?? "-", "reason": reason,
                        "watched.s": String(format: "%.0f", snapshot.ageSeconds), "viewers": count,
                    ])
                }
            }
            apply(decision, peer: id)
            applyEncodings(encodings, peer: id)
            apply(cadence, peer: id)
        }
    }
}
