import Dispatch
import Media
public import ScreencastSupport
public import Signaling
import Synchronization
public import DTLS
public import ICE
import PeerConnection
public import RTPSession
public import VideoSource

/// What the hub needs of the shared encoder (`VideoSource` has both).
public protocol SharedEncoderControl: Sendable {
    /// Asks for a keyframe (coalesced by the source).
    func requestKeyframe()
    /// Changes the target bitrate (nil: the configured or size-dependent default).
    func setBitrate(kbps: Int?)
    /// Turns the droppable cadence on with one reference frame in `period` new frames (2…6), or off (nil):
    /// the other frames are non-reference (libvpx `VP8_EFLAG_NO_UPD_LAST | _GF | _ARF | _ENTROPY`), which a slow
    /// viewer's sender may leave out without a keyframe.
    func setDroppableCadence(period: Int?)
}

extension VideoSource: SharedEncoderControl {}

/// How viewers are served.
public struct SharingConfiguration: Sendable {
    /// ICE settings for every viewer: `--ice-address`, `--stun`, `--turn`.
    public var ice: ICEAgent.Configuration
    /// Viewers at once; more are refused with 503.
    public var maxViewers: Int
    /// The lowest bitrate REMB may push the encoder to, kbps.
    public var minimumBitrateKbps: Int
    /// The top of the range: `--bitrate` when given; nil: the source's default for the picture size.
    public var configuredBitrateKbps: Int?
    /// The source's frame rate cap (for the size-dependent default).
    public var maxFramesPerSecond: Double
    public var pacer: PacerQueue.Configuration
    /// How long a viewer waits for the first keyframe before asking again.
    public var keyframeRetryMicros: UInt64
    /// How long no slow viewer must remain before the droppable cadence goes off, µs
    /// (``DroppableCadencePolicy/offHoldMicros``).
    public var droppableOffHoldMicros: UInt64
    /// A droppable cadence kept on from the start whatever the estimates (`--droppable-period`, 2…6; for
    /// measurements); nil: it follows the outliers.
    public var fixedDroppablePeriod: Int?
    /// Sessions one client address may hold before they connect (each holds a viewer slot until ICE connects
    /// or its time limit ends it); more are refused with 429, so one client cannot take every slot with offers
    /// it never connects (a break-it trial kept all 16 for 30 s with 16 POSTs).
    public var maxPendingPerAddress: Int = 4

    public init(
        ice: ICEAgent.Configuration = ICEAgent.Configuration(role: .controlled), maxViewers: Int = 16,
        minimumBitrateKbps: Int = 150, configuredBitrateKbps: Int? = nil, maxFramesPerSecond: Double = 30,
        pacer: PacerQueue.Configuration = .init(), keyframeRetryMicros: UInt64 = 1_000_000,
        droppableOffHoldMicros: UInt64 = DroppableCadencePolicy.defaultOffHoldMicros, fixedDroppablePeriod: Int? = nil
    ) {
        self.ice = ice
        self.maxViewers = maxViewers
        self.minimumBitrateKbps = minimumBitrateKbps
        self.configuredBitrateKbps = configuredBitrateKbps
        self.maxFramesPerSecond = maxFramesPerSecond
        self.pacer = pacer
        self.keyframeRetryMicros = keyframeRetryMicros
        self.droppableOffHoldMicros = droppableOffHoldMicros
        self.fixedDroppablePeriod = fixedDroppablePeriod
    }
}

/// The call's viewers: answers WHEP offers with a ``PeerConnection`` each, fans the shared encoder's
/// frames out to all of them, and turns their feedback into encoder requests.
///
/// ```
///   WHEP POST ──▶ createSession ──▶ PeerConnection.answering ──▶ peers[id]
///   VideoSource ── consume(frame) ──▶ every peer's send (each: lobby, RTP, pacer, SRTP, ICE)
///   peer events: keyframeNeeded ──▶ source.requestKeyframe()   (new viewer, PLI, FIR; coalesced there)
///                estimatedBitrate ──▶ BitrateFollower ──▶ source.setBitrate (lowest viewer, clamped)
///                                           └──▶ DroppableCadencePolicy ──▶ source.setDroppableCadence
///                                                (a GCC viewer far below the rest: its frames thinned cleanly)
///                closed ──▶ removed (failed, timed out, DELETE, BYE)
/// ```
public final class ViewerHub: WHEPSessionProvider, VideoSink, Sendable {
    private struct Ended: Sendable {
        var id: String
        var reason: String
        var failed: Bool
    }

    private struct State: Sendable {
        var peers: [String: PeerConnection] = [:]
        /// Viewers that connected and have not ended yet (a DELETE takes a peer out of `peers` first).
        var watching: [String: PeerConnection] = [:]
        /// Each viewer's current send rate, for `/stats`.
        var sendRates = SendRateMeter()
        var pending = 0
        /// Sessions not connected yet and the client address that made each (those with a known address).
        var unconnected: [String: String] = [:]
        var endedEarly: Set<String> = []
        var recentlyEnded: [Ended] = []
        var follower: BitrateFollower
        /// The droppable cadence asked of the encoder, from the follower's outliers.
        var cadence: DroppableCadencePolicy
        var cadenceChanges = 0
        /// Outliers' keyframe requests, spaced.
        var outlierKeyframes = OutlierKeyframeGate()
        var lastFrameSize: (width: Int, height: Int)?
        var finished = false
        var sessionsCreated = 0
        var sessionsRefused = 0
        var keyframeRequests = 0
        var bitrateChanges = 0
        /// Each watching viewer's RTCP count at the last feedback check (it rose: the viewer was heard).
        var rtcpSeen: [String: Int] = [:]
    }

    /// How often the viewers' feedback is checked for silence (``BitrateFollower/silenceLimitMicros``), µs.
    public static let feedbackCheckIntervalMicros: UInt64 = 500_000

    public let configuration: SharingConfiguration
    private let peerConfiguration: PeerConnection.Configuration
    private let encoder: any SharedEncoderControl
    private let logger: Logger
    private let state: Mutex<State>
    /// Checks the viewers' feedback every ``feedbackCheckIntervalMicros`` (cancelled when the call ends).
    private let feedbackTimer: Mutex<(any DispatchSourceTimer)?>

    /// - Throws: ``DTLSError`` when our DTLS certificate cannot be made.
    public init(configuration: SharingConfiguration, encoder: any SharedEncoderControl, logger: Logger) throws(DTLSError) {
        self.configuration = configuration
        self.encoder = encoder
        self.logger = logger
        peerConfiguration = PeerConnection.Configuration(
            ice: configuration.ice, certificate: try DTLSCertificate.shared(), pacer: configuration.pacer,
            keyframeRetryMicros: configuration.keyframeRetryMicros)
        state = Mutex(State(
            follower: BitrateFollower(minimumKbps: configuration.minimumBitrateKbps),
            cadence: DroppableCadencePolicy(offHoldMicros: configuration.droppableOffHoldMicros)))
        if let fixed = configuration.fixedDroppablePeriod { encoder.setDroppableCadence(period: fixed) }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "screencast.viewers.feedback"))
        let interval = DispatchTimeInterval.microseconds(Int(Self.feedbackCheckIntervalMicros))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        feedbackTimer = Mutex(timer)
        feedbackTimer.withLock { timer in
            timer?.setEventHandler { [weak self] in self?.checkFeedback() }
            timer?.resume()
        }
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

    /// ``createSession(offer:)`` for a client at `clientAddress`: at most ``SharingConfiguration/maxPendingPerAddress``
    /// of its sessions may be waiting for ICE at once.
    /// - Throws: also `SignalingError.tooManyPending` (429) past that limit.
    public func createSession(offer: String, clientAddress: String?) throws(SignalingError) -> WHEPSession {
        enum Admission { case admitted, full, tooManyPending }
        let admission = state.withLock { s -> Admission in
            guard !s.finished, s.peers.count + s.pending < configuration.maxViewers else {
                s.sessionsRefused += 1
                return .full
            }
            if let clientAddress, s.unconnected.values.filter({ $0 == clientAddress }).count >= configuration.maxPendingPerAddress {
                s.sessionsRefused += 1
                return .tooManyPending
            }
            s.pending += 1
            return .admitted
        }
        switch admission {
        case .admitted: break
        case .full: throw .unavailable("\(configuration.maxViewers) viewers already (or the call is ending)")
        case .tooManyPending:
            throw .tooManyPending("\(configuration.maxPendingPerAddress) sessions from \(clientAddress ?? "-") have not connected yet")
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
            if let clientAddress, !s.watching.keys.contains(id) { s.unconnected[id] = clientAddress }
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
        guard let peer = state.withLock({ $0.peers.removeValue(forKey: id) }) else { return false }
        peer.close(reason: "DELETE by the viewer")
        return true
    }

    // MARK: VideoSink

    /// One encoded VP8 frame from the shared encoder, handed to every registered peer (each packetizes it
    /// with its own SSRC and sequence numbers, RFC 7741); the frame's bytes are shared, not copied.
    public func consume(_ frame: EncodedFrame) {
        let peers = state.withLock { s -> [PeerConnection] in
            s.lastFrameSize = (frame.width, frame.height)
            return Array(s.peers.values)
        }
        guard !peers.isEmpty else { return }
        let outgoing = OutgoingVideoFrame(
            bytes: frame.bytes, isKeyframe: frame.isKeyframe, captureMicros: frame.captureTimestampMicros, isDroppable: frame.isDroppable)
        for peer in peers { peer.send(outgoing) }
    }

    /// The source ended: closes every peer (DTLS close_notify, ICE closed) and refuses new sessions.
    public func finish() { closeAll(reason: "the call ended") }

    /// Ends every viewer; new offers are refused from now on.
    public func closeAll(reason: String) {
        feedbackTimer.withLock { $0?.cancel() }
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
                s.unconnected[id] = nil
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
            let admitted = state.withLock { s in
                s.keyframeRequests += 1
                return s.outlierKeyframes.admit(peer: id, isOutlier: s.follower.outliers.contains(id), nowMicros: MonotonicClock.nowMicros())
            }
            logger.debug("keyframe requested", ["peer": id, "reason": reason, "passed": admitted])
            if admitted { encoder.requestKeyframe() }
        case .estimatedBitrate(let bitsPerSecond), .targetBitrate(let bitsPerSecond):
            // REMB (receive-side estimate) or our own GCC target for the peer (transport-wide CC, thinned to it).
            let source: BitrateFollower.Source = if case .targetBitrate = event { .congestionControl } else { .remb }
            let now = MonotonicClock.nowMicros()
            let (decision, cadence) = state.withLock { s in
                let decision = s.follower.update(
                    peer: id, bitsPerSecond: bitsPerSecond, ceilingKbps: ceiling(s), source: source, nowMicros: now)
                return (decision, updateCadence(&s, now))
            }
            apply(decision, peer: id)
            apply(cadence, peer: id)
        case .closed(let reason, let failed):
            let (decision, cadence, left, count) = state.withLock { s -> (BitrateFollower.Decision?, CadenceChange?, PeerConnection?, Int) in
                if s.peers.removeValue(forKey: id) == nil, !s.finished { s.endedEarly.insert(id) }
                let left = s.watching.removeValue(forKey: id)
                s.unconnected[id] = nil
                s.rtcpSeen[id] = nil
                s.outlierKeyframes.remove(peer: id)
                s.recentlyEnded.append(Ended(id: id, reason: reason, failed: failed))
                if s.recentlyEnded.count > 16 { s.recentlyEnded.removeFirst(s.recentlyEnded.count - 16) }
                let decision = s.follower.remove(peer: id, ceilingKbps: ceiling(s))
                return (decision, updateCadence(&s, MonotonicClock.nowMicros()), left, s.peers.count)
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
            apply(cadence, peer: id)
        }
    }

    /// Every ``feedbackCheckIntervalMicros``, off the peers' queues (snapshots are safe here): a viewer whose
    /// RTCP count rose was heard; one silent for ``BitrateFollower/silenceLimitMicros`` stops holding the
    /// encoder's bitrate (a browser closed without `pagehide`, a stopped process), long before consent fails.
    private func checkFeedback() {
        let watching = state.withLock { $0.watching }
        let counts = watching.map { ($0.key, $0.value.snapshot().rtcpPackets) }
        let now = MonotonicClock.nowMicros()
        let (decisions, silenced, resumed, cadence) = state.withLock { s -> ([BitrateFollower.Decision], [String], [String], CadenceChange?) in
            let before = Set(s.follower.silentPeers)
            var decisions: [BitrateFollower.Decision] = []
            for (id, count) in counts where count > s.rtcpSeen[id] ?? 0 {
                s.rtcpSeen[id] = count
                if let decision = s.follower.heard(peer: id, nowMicros: now, ceilingKbps: ceiling(s)) { decisions.append(decision) }
            }
            if let decision = s.follower.checkSilence(nowMicros: now, ceilingKbps: ceiling(s)) { decisions.append(decision) }
            let after = Set(s.follower.silentPeers)
            // Also where the cadence's off-hold ends with no event.
            return (decisions, after.subtracting(before).sorted(), before.subtracting(after).sorted(), updateCadence(&s, now))
        }
        for id in silenced {
            logger.info("viewer silent: its estimate no longer sets the bitrate", [
                "peer": id, "silence.ms": BitrateFollower.defaultSilenceLimitMicros / 1000,
            ])
        }
        for id in resumed { logger.info("viewer heard again: its estimate counts", ["peer": id]) }
        for decision in decisions { apply(decision, peer: silenced.first ?? resumed.first ?? "-") }
        apply(cadence, peer: silenced.first ?? resumed.first ?? "-")
    }

    /// The rate signals of another consumer of the shared encoder that is not a viewer of ours: the SFU leg.
    /// Its REMB (Janus: the room's fixed cap) is a hard ceiling of the encoder's rate
    /// (``BitrateFollower/setCeiling(_:bitsPerSecond:ceilingKbps:)``); its congestion target from TWCC
    /// feedback counts as a GCC viewer's (left out when far below the others: the leg's sender chain thins
    /// its frames) while the consumer is heard (``consumerHeard(_:)``): a leg whose SFU died or whose path
    /// is cut gets no feedback, its target falls on timers, and after ``BitrateFollower/silenceLimitMicros``
    /// of silence it no longer sets the encoder's rate for everyone else. Either signal may come first.
    /// - Parameters:
    ///   - id: the consumer's name in the follower (`"sfu"`).
    ///   - bitsPerSecond: bits per second; nil removes the signal (the leg ended: its target is stale).
    ///   - source: `.remb` for the SFU's REMB (the ceiling), `.congestionControl` for our target from its TWCC feedback.
    public func consumerEstimate(_ id: String, bitsPerSecond: UInt64?, source: BitrateFollower.Source) {
        let now = MonotonicClock.nowMicros()
        let (decision, cadence) = state.withLock { s -> (BitrateFollower.Decision?, CadenceChange?) in
            let decision: BitrateFollower.Decision?
            switch (source, bitsPerSecond) {
            case (.remb, _): decision = s.follower.setCeiling(id, bitsPerSecond: bitsPerSecond, ceilingKbps: ceiling(s))
            case (.congestionControl, let bits?):
                // Not one of our viewers: the consumer says when it hears feedback (consumerHeard), and removes
                // the estimate when it ends.
                decision = s.follower.update(
                    peer: id, bitsPerSecond: bits, ceilingKbps: ceiling(s), source: .congestionControl, nowMicros: now)
            case (.congestionControl, nil): decision = s.follower.remove(peer: id, ceilingKbps: ceiling(s))
            }
            return (decision, updateCadence(&s, now))
        }
        apply(decision, peer: id)
        apply(cadence, peer: id)
    }

    /// A change of the droppable cadence: what it was and what it is now (nil: off).
    private struct CadenceChange {
        var from: Int?
        var to: Int?
        var outliers: [String]
        var highestKbps: Int?
        var outlierKbps: Int?
    }

    /// Asks the cadence policy what the follower's estimates want now and tells the encoder, under the state
    /// lock, so changes made on different peers' queues reach it in the order they were decided (the call
    /// only takes the source hub's own lock and wakes its thread).
    private func updateCadence(_ s: inout State, _ now: UInt64) -> CadenceChange? {
        guard configuration.fixedDroppablePeriod == nil else { return nil }
        let from = s.cadence.period
        guard let change = s.cadence.update(s.follower, nowMicros: now) else { return nil }
        s.cadenceChanges += 1
        encoder.setDroppableCadence(period: change)
        return CadenceChange(from: from, to: change, outliers: s.follower.outliers, highestKbps: s.follower.highestEstimateKbps,
                             outlierKbps: s.follower.lowestOutlierKbps)
    }

    /// Logs a change already applied (``updateCadence(_:_:)``).
    private func apply(_ change: CadenceChange?, peer: String) {
        guard let change else { return }
        let (level, message): (LogLevel, String) = switch (change.from, change.to) {
        case (nil, _?): (.info, "slow viewer: droppable cadence on, its frames thinned without keyframes")
        case (_?, nil): (.info, "no slow viewer: droppable cadence off")
        default: (.debug, "droppable cadence")
        }
        logger.log(level, message, [
            "peer": peer, "period": change.to.map(String.init) ?? "off", "from": change.from.map(String.init) ?? "off",
            "outliers": change.outliers.joined(separator: ","), "highest.kbps": change.highestKbps ?? 0,
            "outlier.kbps": change.outlierKbps ?? 0,
        ])
    }

    /// Feedback (RTCP) came from the consumer `id` (the SFU leg): its congestion target counts again if it was
    /// silent (``BitrateFollower/heard(peer:nowMicros:ceilingKbps:)``).
    public func consumerHeard(_ id: String) {
        let (decision, resumed, cadence) = state.withLock { s -> (BitrateFollower.Decision?, Bool, CadenceChange?) in
            let wasSilent = s.follower.silentPeers.contains(id)
            let now = MonotonicClock.nowMicros()
            let decision = s.follower.heard(peer: id, nowMicros: now, ceilingKbps: ceiling(s))
            return (decision, wasSilent, wasSilent ? updateCadence(&s, now) : nil)
        }
        if resumed { logger.info("consumer heard again: its estimate counts", ["consumer": id]) }
        apply(decision, peer: id)
        apply(cadence, peer: id)
    }

    /// The top of the bitrate range: `--bitrate`, else the default for the last picture size.
    private func ceiling(_ s: State) -> Int {
        if let configured = configuration.configuredBitrateKbps { return configured }
        guard let size = s.lastFrameSize else { return 8000 }
        return VP8EncoderSettings.defaultBitrateKbps(width: size.width, height: size.height, framesPerSecond: configuration.maxFramesPerSecond)
    }

    private func apply(_ decision: BitrateFollower.Decision?, peer: String) {
        guard let decision else { return }
        state.withLock { $0.bitrateChanges += 1 }
        switch decision {
        case .set(let kbps):
            logger.info("bitrate follows the lowest viewer", ["peer": peer, "kbps": kbps])
            encoder.setBitrate(kbps: kbps)
        case .useDefault:
            logger.info("bitrate back to the default", ["peer": peer])
            encoder.setBitrate(kbps: nil)
        }
    }

    // MARK: Stats

    /// Viewers connected or connecting now.
    public var viewerCount: Int { state.withLock { $0.peers.count } }

    /// The `viewers` part of `/stats`: counts, the bitrate decision, each peer, and the last peers that ended.
    public var json: JSONValue {
        let (peers, s) = state.withLock { s in (Array(s.peers.values), s) }
        let snapshots = peers.map { $0.snapshot() }.sorted { $0.ageSeconds > $1.ageSeconds }
        let now = MonotonicClock.nowMicros()
        let rates = state.withLock { s in
            s.sendRates.keep(only: Set(snapshots.map(\.id)))
            return snapshots.map { snapshot in
                s.sendRates.kbps(id: snapshot.id, bytes: snapshot.bytesSent, ageMicros: UInt64(snapshot.ageSeconds * 1e6), nowMicros: now)
            }
        }
        let applied: JSONValue
        switch s.follower.applied {
        case .set(let kbps): applied = .number(kbps)
        case .useDefault: applied = .string("default")
        }
        let bitrate: [(String, JSONValue)] = [
            ("applied", applied),
            ("lowestEstimateKbps", s.follower.lowestEstimateKbps.map { .number($0) } ?? .null),
            ("silentPeers", .array(s.follower.silentPeers.map { .string($0) })),
            ("ceilingKbps", s.follower.lowestCeilingKbps.map { .number($0) } ?? .null),
            ("changes", .number(s.bitrateChanges)),
            // GCC viewers far below the rest (thinned) and the cadence that makes their thinning clean.
            ("outliers", .array(s.follower.outliers.map { .string($0) })),
            ("droppablePeriod", (configuration.fixedDroppablePeriod ?? s.cadence.period).map { .number($0) } ?? .null),
            ("cadenceChanges", .number(s.cadenceChanges)),
        ]
        return .object([
            ("count", .number(snapshots.count)),
            ("connected", .number(snapshots.filter { $0.state == .connected }.count)),
            ("created", .number(s.sessionsCreated)),
            ("refused", .number(s.sessionsRefused)),
            ("keyframeRequests", .number(s.keyframeRequests)),
            ("outlierKeyframeRequestsHeld", .number(s.outlierKeyframes.held)),
            ("bitrate", .object(bitrate)),
            ("peers", .array(zip(snapshots, rates).map { snapshot, kbps in
                guard case .object(var fields) = snapshot.json else { return snapshot.json }
                fields.append(("kbps", .double((kbps * 10).rounded() / 10)))
                return .object(fields)
            })),
            ("ended", .array(s.recentlyEnded.map { ended in
                .object([("id", .string(ended.id)), ("reason", .string(ended.reason)), ("failed", .bool(ended.failed))])
            })),
        ])
    }
}
