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
///   peer events: keyframeNeeded ──▶ KeyframeSpacing ──▶ source.requestKeyframe()   (new viewer, PLI, FIR;
///                                   (each viewer's)            coalesced there)
///                estimatedBitrate ──▶ BitrateFollower ──▶ source.setBitrate (lowest viewer, clamped)
///                                           └──▶ DroppableCadencePolicy ──▶ source.setDroppableCadence
///                                                (a GCC viewer far below the rest: its frames thinned cleanly)
///                closed ──▶ removed (failed, timed out, DELETE, BYE)
/// ```
///
/// Every decision is made by ``ViewerHubStateMachine`` (one ``Viewer`` record per session) under the hub's
/// lock; this shell owns the peer connections, the lock, the feedback timer and the encoders, and applies the
/// machine's ``ViewerHubAction``s after the lock is released (``apply(_:)``).
public final class ViewerHub: WHEPSessionProvider, VideoSink, Sendable {
    typealias StateMachine = ViewerHubStateMachine<PeerConnection>
    typealias Action = ViewerHubAction<PeerConnection>

    /// How often the viewers' feedback is checked for silence (``BitrateFollower/silenceLimitMicros``), µs.
    public static let feedbackCheckIntervalMicros: UInt64 = 500_000

    public let configuration: SharingConfiguration
    private let peerConfiguration: PeerConnection.Configuration
    let encoder: any SharedEncoderControl
    let logger: Logger
    let state: Mutex<StateMachine>
    /// The generation of the last droppable cadence applied to the encoder (``CadenceChange/generation``):
    /// changes decided on different queues reach it in the order they were decided.
    let cadenceApplied = Mutex(0)
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
        peers.sendsAudio = configuration.sendsAudio
        peerConfiguration = peers
        state = Mutex(StateMachine(configuration: configuration, secondEncodingEnabled: secondEncoder != nil))
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
        let (admission, actions) = state.withLock { $0.admit(clientAddress: clientAddress) }
        apply(actions)
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
            state.withLock { $0.answerFailed() }
            throw SignalingError(error)
        }
        let kept = state.withLock {
            $0.register(id: id, peer: peer, clientAddress: clientAddress, nowMicros: MonotonicClock.nowMicros())
        }
        if !kept { peer.close(reason: "ended before it was registered") }
        return WHEPSession(id: id, answer: peer.answer)
    }

    /// A WHEP PATCH (trickle ICE, RFC 8840; RFC 9725 §4.3's shape): adds the fragment's remote candidates to
    /// the session's peer. Returns no answer fragment (our candidates are all in the answer).
    /// - Throws: `SignalingError.unknownSession`, or `.refused` for a fragment that does not parse.
    public func updateSession(id: String, fragment: String) throws(SignalingError) -> String? {
        guard let peer = state.withLock({ $0.peer(of: id) }) else { throw .unknownSession(id) }
        do {
            try peer.applyTrickle(fragment: fragment)
        } catch {
            throw SignalingError(error)
        }
        return nil
    }

    /// A WHEP DELETE (RFC 9725 §4.4's shape): closes the session's peer. False when no such session exists.
    public func deleteSession(id: String) -> Bool {
        guard let peer = state.withLock({ $0.remove(id: id) }) else { return false }
        peer.close(reason: "DELETE by the viewer")
        return true
    }

    /// A viewer that can decode again (its page was given the end-to-end key) asks for a keyframe now
    /// (``KeyframeSpacing/restart(_:nowMicros:)``: at most once per 10 s). Nil for an unknown session.
    public func keyframeWanted(id: String) -> Bool? {
        guard let (wanted, actions) = state.withLock({ $0.keyframeWanted(id: id, nowMicros: MonotonicClock.nowMicros()) }) else {
            return nil
        }
        apply(actions)
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
        let peers = state.withLock { $0.closeAll() }
        for peer in peers { peer.close(reason: reason) }
    }

    /// One encoded frame of `encoding`, handed to the viewers whose ``EncodingSwitch`` lets it through (each
    /// packetizes it with its own SSRC, sequence numbers and picture IDs, RFC 7741); the bytes are shared.
    func deliver(_ frame: EncodedFrame, from encoding: EncodingChoice) {
        let delivery = state.withLock {
            $0.deliver(
                from: encoding, isKeyframe: frame.isKeyframe, captureMicros: frame.captureTimestampMicros, width: frame.width, height: frame.height)
        }
        for (peer, capture) in delivery.targets {
            peer.send(OutgoingVideoFrame(bytes: frame.bytes, isKeyframe: frame.isKeyframe, captureMicros: capture, isDroppable: frame.isDroppable))
        }
        for (id, encoding) in delivery.switched {
            logger.info("viewer switched encoding at its keyframe", ["peer": id, "encoding": encoding.rawValue, "size": "\(frame.width)x\(frame.height)"])
        }
    }

    // MARK: Peer events (on the peer's queue)

    private func peerEvent(id: String, _ event: PeerConnection.Event) {
        let now = MonotonicClock.nowMicros()
        let actions: [Action]
        switch event {
        case .connected: actions = state.withLock { $0.connected(id: id) }
        case .iceConnectionFailed: return  // a viewer restarts ICE by a new offer (a new session); its peer expires meanwhile
        case .dataChannel: return  // logged by the peer; counted in its snapshot (no feature uses the channels yet)
        case .keyframeNeeded(let reason): actions = state.withLock { $0.keyframeNeeded(id: id, reason: reason, nowMicros: now) }
        case .estimatedBitrate(let bitsPerSecond), .targetBitrate(let bitsPerSecond):
            // REMB (receive-side estimate) or our own GCC target for the peer (transport-wide CC, thinned to it).
            let source: BitrateFollower.Source = if case .targetBitrate = event { .congestionControl } else { .remb }
            actions = state.withLock { $0.estimate(id: id, bitsPerSecond: bitsPerSecond, source: source, nowMicros: now) }
        case .closed(let reason, let failed): actions = state.withLock { $0.closed(id: id, reason: reason, failed: failed, nowMicros: now) }
        }
        apply(actions)
    }
}
