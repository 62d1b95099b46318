import Media

/// The call's viewers as a sans-I/O state machine (swift-nio's shape: mutating event methods that return
/// actions): one ``Viewer`` record per session id, the policies that weigh the viewers together
/// (``BitrateFollower``, ``DroppableCadencePolicy``, ``SecondEncodingPolicy``) and the counters `/stats` shows.
/// ``ViewerHub`` is its shell: it owns the peer connections, the lock this lives under, the feedback timer and
/// the encoders, passes the time (CLOCK_MONOTONIC µs) and applies the ``ViewerHubAction``s after the lock.
///
/// ```
///   events in                                    actions out
///   admit (a WHEP offer), answerFailed,          giveUpSlot (close an unconnected session: the call is full)
///   register, remove (DELETE), closeAll
///   connected, closed                            joined, left (log lines), setBitrate, secondEncoder, setCadence
///   keyframeNeeded (PLI/FIR/lobby),              keyframeRequested (log), requestKeyframe(of: encoding)
///   keyframeWanted (the page's POST)
///   estimate (REMB, GCC target), feedbackCheck   setBitrate, setCadence, secondEncoder, requestKeyframe,
///   (RTCP counts), consumerEstimate/Heard        viewerSilent, viewerHeardAgain, consumerHeardAgain
///   deliver (a frame of an encoding)             FrameDelivery: the peers to send it to, moves completed
/// ```
/// A viewer's record lives from ``register(id:peer:clientAddress:nowMicros:)`` to
/// ``closed(id:reason:failed:nowMicros:)``; events of an id without one (its peer ended before it was
/// registered, or after it was closed) change nothing but the counters.
struct ViewerHubStateMachine<Peer: Sendable>: Sendable {
    /// The outcome of an offer's admission.
    enum Admission: Sendable, Equatable {
        case admitted
        /// At `maxViewers`, or the call is ending.
        case full
        /// The call is full and the offer's address holds this many unconnected sessions, more than its share.
        case tooManyPending(Int)
    }

    /// A viewer that ended, for `/stats` (the last 16).
    struct Ended: Sendable, Equatable {
        var id: String
        var reason: String
        var failed: Bool
    }

    /// What `/stats` counts.
    struct Counters: Sendable, Equatable {
        var sessionsCreated = 0
        var sessionsRefused = 0
        /// Unconnected sessions that gave their slot up to a newcomer from another address.
        var sessionsGivenUp = 0
        /// Keyframe requests from viewers (PLI, FIR, lobby), passed or held.
        var keyframeRequests = 0
        /// Requests and restarts their viewer's spacing held back, all and of thinned viewers (outliers).
        var keyframeRequestsHeld = 0
        var outlierKeyframeRequestsHeld = 0
        var bitrateChanges = 0
        var cadenceChanges = 0
    }

    /// How many ended viewers ``recentlyEnded`` keeps.
    static var endedKept: Int { 16 }

    let configuration: SharingConfiguration
    /// The shell can start a second encoding (``SecondEncoderFactory``); without, nobody moves.
    let secondEncodingEnabled: Bool
    /// By session id: every viewer registered and not closed yet.
    var viewers: [String: Viewer<Peer>] = [:]
    /// Offers admitted and being answered (no id yet): each holds a slot.
    private(set) var pending = 0
    /// The call ended: offers are refused, the second encoding is not touched again.
    private(set) var finished = false
    /// Sessions whose peer closed before they were registered (their registration is then refused).
    private(set) var endedEarly: Set<String> = []
    private(set) var recentlyEnded: [Ended] = []
    var counters = Counters()
    var follower: BitrateFollower
    /// The droppable cadence asked of the encoder, from the follower's outliers.
    var cadence: DroppableCadencePolicy
    /// When the second encoding runs and which viewers it serves.
    var encodings: SecondEncodingPolicy
    /// The main encoding's last picture size.
    private(set) var lastFrameSize: (width: Int, height: Int)?

    init(configuration: SharingConfiguration, secondEncodingEnabled: Bool) {
        self.configuration = configuration
        self.secondEncodingEnabled = secondEncodingEnabled
        follower = BitrateFollower(minimumKbps: configuration.minimumBitrateKbps)
        cadence = DroppableCadencePolicy(offHoldMicros: configuration.droppableOffHoldMicros)
        encodings = SecondEncodingPolicy(settings: configuration.secondEncoding)
    }

    // MARK: Sessions

    /// Viewers that hold a slot and are sent frames (registered, not leaving), by id.
    var peers: [String: Peer] { viewers.compactMapValues { $0.isPeer ? $0.peer : nil } }
    /// How many viewers hold a slot.
    var peerCount: Int { viewers.values.reduce(0) { $0 + ($1.isPeer ? 1 : 0) } }
    /// Viewers that connected and have not closed (leaving ones too), by id.
    var watching: [(id: String, peer: Peer)] {
        viewers.values.filter { $0.phase == .watching }.map { ($0.id, $0.peer) }
    }

    /// The peer of session `id` while it holds a slot (nil: unknown or leaving).
    func peer(of id: String) -> Peer? { viewers[id].flatMap { $0.isPeer ? $0.peer : nil } }

    /// A WHEP offer from `clientAddress` (nil: unknown) at `nowMicros`: admitted while viewer slots are free
    /// (it then holds one until ``register(id:peer:clientAddress:nowMicros:)`` or ``answerFailed()``); when
    /// the call is full, the oldest unconnected session of an address over its share gives its slot up
    /// (``PendingSessions``).
    mutating func admit(clientAddress: String?) -> (Admission, [ViewerHubAction<Peer>]) {
        guard !finished else {
            counters.sessionsRefused += 1
            return (.full, [])
        }
        if peerCount + pending < configuration.maxViewers {
            pending += 1
            return (.admitted, [])
        }
        if let victim = PendingSessions.sessionToGiveUp(
            among: unconnected, fairShare: configuration.pendingFairShare, forNewcomerFrom: clientAddress),
            let peer = viewers[victim]?.peer {
            viewers[victim]?.isLeaving = true
            counters.sessionsGivenUp += 1
            pending += 1
            return (.admitted, [.giveUpSlot(peer, id: victim, newcomer: clientAddress)])
        }
        counters.sessionsRefused += 1
        if let clientAddress {
            let count = unconnected.values.reduce(0) { $0 + ($1.address == clientAddress ? 1 : 0) }
            if count > configuration.pendingFairShare { return (.tooManyPending(count), []) }
        }
        return (.full, [])
    }

    /// The unconnected sessions with a known address, as ``PendingSessions`` weighs them.
    private var unconnected: [String: PendingSessions.Entry] {
        viewers.compactMapValues { $0.isUnconnected ? PendingSessions.Entry(address: $0.address!, sinceMicros: $0.registeredMicros) : nil }
    }

    /// An admitted offer could not be answered: its slot is free again.
    mutating func answerFailed() {
        pending -= 1
        counters.sessionsRefused += 1
    }

    /// An admitted offer was answered with `peer`, session `id`. False when it must be closed at once: it
    /// ended before this, or the call did.
    mutating func register(id: String, peer: Peer, clientAddress: String?, nowMicros: UInt64) -> Bool {
        pending -= 1
        counters.sessionsCreated += 1
        if endedEarly.remove(id) != nil || finished { return false }
        viewers[id] = Viewer(
            id: id, peer: peer, address: clientAddress, registeredMicros: nowMicros, keyframeRetryMicros: configuration.keyframeRetryMicros)
        return true
    }

    /// A WHEP DELETE: the peer to close (nil: no such session). Its record stays until it has closed.
    mutating func remove(id: String) -> Peer? {
        guard let viewer = viewers[id], viewer.isPeer else { return nil }
        viewers[id]?.isLeaving = true
        return viewer.peer
    }

    /// The call ends: the peers to close; offers are refused from now on.
    mutating func closeAll() -> [Peer] {
        finished = true
        var closing: [Peer] = []
        for id in Array(viewers.keys) where viewers[id]!.isPeer {
            viewers[id]!.isLeaving = true
            closing.append(viewers[id]!.peer)
        }
        return closing
    }

    /// Session `id`'s ICE and DTLS connected: it is watching.
    mutating func connected(id: String) -> [ViewerHubAction<Peer>] {
        var joined: Peer?
        if let viewer = viewers[id], viewer.isPeer {
            viewers[id]?.phase = .watching
            joined = viewer.peer
        }
        return [.joined(joined, id: id, viewers: peerCount)]
    }

    /// Session `id`'s peer closed (failed, timed out, DELETE, BYE, the call ended): its record goes, with
    /// everything of it in the policies, and what that changes for the others is decided.
    mutating func closed(id: String, reason: String, failed: Bool, nowMicros now: UInt64) -> [ViewerHubAction<Peer>] {
        let viewer = viewers.removeValue(forKey: id)
        if viewer == nil, !finished { endedEarly.insert(id) }
        recentlyEnded.append(Ended(id: id, reason: reason, failed: failed))
        if recentlyEnded.count > Self.endedKept { recentlyEnded.removeFirst(recentlyEnded.count - Self.endedKept) }
        encodings.remove(peer: id)
        var actions: [ViewerHubAction<Peer>] = []
        if let viewer, viewer.phase == .watching {
            actions.append(.left(viewer.peer, id: id, reason: reason, failed: failed, viewers: peerCount))
        }
        let decision = follower.remove(peer: id, ceilingKbps: ceilingKbps)
        let work = updateEncodings(now)
        let cadence = updateCadence(now)
        append(decision, peer: id, to: &actions)
        append(work, peer: id, to: &actions)
        append(cadence, peer: id, to: &actions)
        return actions
    }

    /// Where anything of viewer `id` is still kept, by name (empty once it has closed): its record, the
    /// follower's estimate or its "served elsewhere" mark, the second-encoding policy. Ended viewers stay in
    /// ``recentlyEnded`` (what `/stats` shows of them) by design.
    func stateKept(of id: String) -> [String] {
        var places: [String] = []
        if viewers[id] != nil { places.append("record") }
        if follower.peerEstimates[id] != nil { places.append("follower.estimate") }
        if follower.servedElsewhere.contains(id) { places.append("follower.servedElsewhere") }
        if encodings.tracks(peer: id) { places.append("encodings") }
        if endedEarly.contains(id) { places.append("endedEarly") }
        return places
    }

    // MARK: Keyframes

    /// Viewer `id` asks for a keyframe (PLI, FIR, its lobby): to the encoding it is on or moving to; of the
    /// main one only as its spacing allows (``ViewerKeyframeGate``): one viewer that cannot decode must not
    /// set everybody's keyframe rate. An id without a record passes (its first request would).
    mutating func keyframeNeeded(id: String, reason: String, nowMicros now: UInt64) -> [ViewerHubAction<Peer>] {
        counters.keyframeRequests += 1
        let encoding = viewers[id]?.encoding.keyframeSource ?? .main
        var passed = true
        if encoding == .main, viewers[id] != nil {
            let isOutlier = follower.outliers.contains(id)
            passed = KeyframeSpacing.admit(&viewers[id]!.keyframes, isOutlier: isOutlier, nowMicros: now)
            if !passed {
                counters.keyframeRequestsHeld += 1
                if isOutlier { counters.outlierKeyframeRequestsHeld += 1 }
            }
        }
        var actions: [ViewerHubAction<Peer>] = [.keyframeRequested(peer: id, reason: reason, passed: passed, encoding: encoding)]
        if passed { actions.append(.requestKeyframe(encoding)) }
        return actions
    }

    /// Viewer `id`'s page can decode again (given the key): a keyframe now, at most once per
    /// ``ViewerKeyframeGate/restartSpacingMicros``. Nil for a session that holds no slot.
    mutating func keyframeWanted(id: String, nowMicros now: UInt64) -> (wanted: Bool, actions: [ViewerHubAction<Peer>])? {
        guard let viewer = viewers[id], viewer.isPeer else { return nil }
        let encoding = viewer.encoding.keyframeSource
        guard KeyframeSpacing.restart(&viewers[id]!.keyframes, nowMicros: now) else {
            counters.keyframeRequestsHeld += 1
            return (false, [])
        }
        return (true, [.requestKeyframe(encoding)])
    }

    // MARK: Frames

    /// One encoded frame of `encoding`: the peers its viewers' ``EncodingSwitch``es let it through to, each
    /// with the capture time to send it with, µs.
    mutating func deliver(
        from encoding: EncodingChoice, isKeyframe: Bool, captureMicros: UInt64, width: Int, height: Int
    ) -> FrameDelivery<Peer> {
        if encoding == .main { lastFrameSize = (width, height) }
        var delivery = FrameDelivery<Peer>()
        guard !viewers.isEmpty else { return delivery }
        delivery.targets.reserveCapacity(viewers.count)
        // By index: the records change in place, no copy of the table per frame.
        var index = viewers.values.startIndex
        while index != viewers.values.endIndex {
            if viewers.values[index].isPeer,
                case .send(let capture, let completes) = viewers.values[index].encoding.frame(
                    from: encoding, isKeyframe: isKeyframe, captureMicros: captureMicros) {
                delivery.targets.append((viewers.values[index].peer, capture))
                if completes { delivery.switched.append((viewers.values[index].id, encoding)) }
            }
            viewers.values.formIndex(after: &index)
        }
        return delivery
    }

    /// Viewer `id`'s send rate for `/stats`, kbps, from its byte counter and age, µs.
    mutating func sendRateKbps(id: String, bytes: Int, ageMicros: UInt64, nowMicros now: UInt64) -> Double {
        guard viewers[id] != nil else {
            var none: SendRate?
            return SendRate.kbps(&none, bytes: bytes, ageMicros: ageMicros, nowMicros: now)
        }
        return SendRate.kbps(&viewers[id]!.sendRate, bytes: bytes, ageMicros: ageMicros, nowMicros: now)
    }
}
