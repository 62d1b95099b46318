import Media
import VideoSource

extension ViewerHubStateMachine {
    /// The top of the bitrate range, kbps: `--bitrate`, else the default for the last picture size.
    var ceilingKbps: Int {
        if let configured = configuration.configuredBitrateKbps { return configured }
        guard let size = lastFrameSize else { return 8000 }
        return VP8EncoderSettings.defaultBitrateKbps(width: size.width, height: size.height, framesPerSecond: configuration.maxFramesPerSecond)
    }

    /// Viewer `id`'s estimate, bits per second: its REMB (`.remb`) or our GCC target for it
    /// (`.congestionControl`). Ignored for an id without a record (its estimate would outlive it).
    mutating func estimate(id: String, bitsPerSecond: UInt64, source: BitrateFollower.Source, nowMicros now: UInt64) -> [ViewerHubAction<Peer>] {
        guard viewers[id] != nil else { return [] }
        let decision = follower.update(peer: id, bitsPerSecond: bitsPerSecond, ceilingKbps: ceilingKbps, source: source, nowMicros: now)
        return actions(after: decision, peer: id, now: now)
    }

    /// The feedback timer (every ``ViewerHub/feedbackCheckIntervalMicros``) with each watching viewer's RTCP
    /// packet count now: a count that rose means it was heard; one silent for
    /// ``BitrateFollower/silenceLimitMicros`` stops holding the encoder's rate. Also where the cadence's
    /// off-hold, a move's hold, the second encoder's stop hold and a move's keyframe retry end with no event.
    mutating func feedbackCheck(rtcpCounts: [(id: String, count: Int)], nowMicros now: UInt64) -> [ViewerHubAction<Peer>] {
        let before = Set(follower.silentPeers)
        var decisions: [BitrateFollower.Decision] = []
        for (id, count) in rtcpCounts {
            guard let seen = viewers[id]?.rtcpSeen, count > seen else { continue }
            viewers[id]?.rtcpSeen = count
            if let decision = follower.heard(peer: id, nowMicros: now, ceilingKbps: ceilingKbps) { decisions.append(decision) }
        }
        if let decision = follower.checkSilence(nowMicros: now, ceilingKbps: ceilingKbps) { decisions.append(decision) }
        let after = Set(follower.silentPeers)
        let work = updateEncodings(now)
        var retries: Set<EncodingChoice> = []
        for id in Array(viewers.keys) {
            if let encoding = viewers[id]?.encoding.keyframeRetryDue(nowMicros: now) { retries.insert(encoding) }
        }
        let cadence = updateCadence(now)

        let silenced = after.subtracting(before).sorted()
        let resumed = before.subtracting(after).sorted()
        let named = silenced.first ?? resumed.first ?? "-"
        var actions: [ViewerHubAction<Peer>] = silenced.map { .viewerSilent($0) } + resumed.map { .viewerHeardAgain($0) }
        for decision in decisions { append(decision, peer: named, to: &actions) }
        append(work, peer: named, to: &actions)
        for encoding in [EncodingChoice.main, .low] where retries.contains(encoding) { actions.append(.requestKeyframe(encoding)) }
        append(cadence, peer: named, to: &actions)
        return actions
    }

    /// Another consumer of the shared encoder (the SFU leg, `id`): its REMB as a hard ceiling, or its GCC target
    /// (nil: it ended) as a viewer's estimate (``ViewerHub/consumerEstimate(_:bitsPerSecond:source:)``).
    mutating func consumerEstimate(
        _ id: String, bitsPerSecond: UInt64?, source: BitrateFollower.Source, nowMicros now: UInt64
    ) -> [ViewerHubAction<Peer>] {
        let decision: BitrateFollower.Decision?
        switch (source, bitsPerSecond) {
        case (.remb, _): decision = follower.setCeiling(id, bitsPerSecond: bitsPerSecond, ceilingKbps: ceilingKbps)
        case (.congestionControl, let bits?):
            decision = follower.update(peer: id, bitsPerSecond: bits, ceilingKbps: ceilingKbps, source: .congestionControl, nowMicros: now)
        case (.congestionControl, nil): decision = follower.remove(peer: id, ceilingKbps: ceilingKbps)
        }
        return actions(after: decision, peer: id, now: now)
    }

    /// Feedback came from the consumer `id`: its congestion target counts again if it was silent.
    mutating func consumerHeard(_ id: String, nowMicros now: UInt64) -> [ViewerHubAction<Peer>] {
        let wasSilent = follower.silentPeers.contains(id)
        let decision = follower.heard(peer: id, nowMicros: now, ceilingKbps: ceilingKbps)
        let cadence = wasSilent ? updateCadence(now) : nil
        var actions: [ViewerHubAction<Peer>] = wasSilent ? [.consumerHeardAgain(id)] : []
        append(decision, peer: id, to: &actions)
        append(cadence, peer: id, to: &actions)
        return actions
    }

    // MARK: Policies

    /// What the second-encoding policy decided, before it becomes actions.
    struct EncodingWork {
        var actions: [SecondEncodingPolicy.Action] = []
        /// Encodings a moving viewer needs a keyframe of.
        var keyframes: Set<EncodingChoice> = []
        /// The main encoder's rate, when the viewers it serves changed.
        var decision: BitrateFollower.Decision?
    }

    /// Asks the policy what the estimates want now, starts the moves it decides (each viewer's
    /// ``EncodingSwitch``) and tells the follower who the main encoder serves. Nothing without a second
    /// encoding or once the call ended.
    mutating func updateEncodings(_ now: UInt64) -> EncodingWork {
        guard secondEncodingEnabled, !finished else { return EncodingWork() }
        let size = lastFrameSize.map { PictureSize(width: $0.width, height: $0.height) }
        var work = EncodingWork()
        let movable = Set(viewers.values.filter { $0.phase == .watching }.map(\.id))
        work.actions = encodings.update(
            estimates: follower.peerEstimates, movable: movable, pictureSize: size, ceilingKbps: ceilingKbps, nowMicros: now)
        for case .move(let peer, let to, _, _, _) in work.actions where viewers[peer]?.encoding.moveTo(to, nowMicros: now) == true {
            work.keyframes.insert(to)
        }
        work.decision = follower.setServedElsewhere(encodings.lowViewers, ceilingKbps: ceilingKbps)
        return work
    }

    /// Asks the cadence policy what the follower's estimates want now (nothing with `--droppable-period`).
    mutating func updateCadence(_ now: UInt64) -> CadenceChange? {
        guard configuration.fixedDroppablePeriod == nil else { return nil }
        let from = cadence.period
        guard let change = cadence.update(follower, nowMicros: now) else { return nil }
        counters.cadenceChanges += 1
        return CadenceChange(
            from: from, to: change, outliers: follower.outliers, highestKbps: follower.highestEstimateKbps,
            outlierKbps: follower.lowestOutlierKbps, generation: counters.cadenceChanges)
    }

    mutating func append(_ decision: BitrateFollower.Decision?, peer: String, to actions: inout [ViewerHubAction<Peer>]) {
        guard let decision else { return }
        counters.bitrateChanges += 1
        actions.append(.setBitrate(decision, peer: peer))
    }

    mutating func append(_ work: EncodingWork, peer: String, to actions: inout [ViewerHubAction<Peer>]) {
        append(work.decision, peer: peer, to: &actions)
        actions += work.actions.map { .secondEncoder($0, peer: peer) }
        for encoding in [EncodingChoice.main, .low] where work.keyframes.contains(encoding) { actions.append(.requestKeyframe(encoding)) }
    }

    func append(_ change: CadenceChange?, peer: String, to actions: inout [ViewerHubAction<Peer>]) {
        if let change { actions.append(.setCadence(change, peer: peer)) }
    }

    /// The actions after a rate decision for `id`: the decision itself, then what the second encoding and the
    /// droppable cadence make of the new estimates (in that order, as the encoder must see them).
    private mutating func actions(after decision: BitrateFollower.Decision?, peer id: String, now: UInt64) -> [ViewerHubAction<Peer>] {
        let work = updateEncodings(now)
        let cadence = updateCadence(now)
        var actions: [ViewerHubAction<Peer>] = []
        append(decision, peer: id, to: &actions)
        append(work, peer: id, to: &actions)
        append(cadence, peer: id, to: &actions)
        return actions
    }
}
