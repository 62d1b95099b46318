import Dispatch
import Media
import ScreencastSupport
import Synchronization
import VideoSource

extension ViewerHub {

    /// Every ``feedbackCheckIntervalMicros``, off the peers' queues (snapshots are safe here): a viewer whose
    /// RTCP count rose was heard; one silent for ``BitrateFollower/silenceLimitMicros`` stops holding the
    /// encoder's bitrate (a browser closed without `pagehide`, a stopped process), long before consent fails.
    func checkFeedback() {
        let watching = state.withLock { $0.watching }
        let counts = watching.map { ($0.key, $0.value.snapshot().rtcpPackets) }
        let now = MonotonicClock.nowMicros()
        let (decisions, silenced, resumed, encodings, retries, cadence) = state.withLock {
            s -> ([BitrateFollower.Decision], [String], [String], EncodingWork, Set<EncodingChoice>, CadenceChange?) in
            let before = Set(s.follower.silentPeers)
            var decisions: [BitrateFollower.Decision] = []
            for (id, count) in counts where count > s.rtcpSeen[id] ?? 0 {
                s.rtcpSeen[id] = count
                if let decision = s.follower.heard(peer: id, nowMicros: now, ceilingKbps: ceiling(s)) { decisions.append(decision) }
            }
            if let decision = s.follower.checkSilence(nowMicros: now, ceilingKbps: ceiling(s)) { decisions.append(decision) }
            let after = Set(s.follower.silentPeers)
            // Also where the cadence's off-hold, a move's hold or the second encoder's stop hold ends with no event.
            let encodings = updateEncodings(&s, now)
            return (decisions, after.subtracting(before).sorted(), before.subtracting(after).sorted(), encodings,
                    retryMoveKeyframes(&s, now), updateCadence(&s, now))
        }
        for id in silenced {
            logger.info("viewer silent: its estimate no longer sets the bitrate", [
                "peer": id, "silence.ms": BitrateFollower.defaultSilenceLimitMicros / 1000,
            ])
        }
        for id in resumed { logger.info("viewer heard again: its estimate counts", ["peer": id]) }
        for decision in decisions { apply(decision, peer: silenced.first ?? resumed.first ?? "-") }
        applyEncodings(encodings, peer: silenced.first ?? resumed.first ?? "-")
        for encoding in retries { requestKeyframe(of: encoding) }
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
        let (decision, encodings, cadence) = state.withLock { s -> (BitrateFollower.Decision?, EncodingWork, CadenceChange?) in
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
            return (decision, updateEncodings(&s, now), updateCadence(&s, now))
        }
        apply(decision, peer: id)
        applyEncodings(encodings, peer: id)
        apply(cadence, peer: id)
    }

    /// A change of the droppable cadence: what it was and what it is now (nil: off).
    struct CadenceChange {
        var from: Int?
        var to: Int?
        var outliers: [String]
        var highestKbps: Int?
        var outlierKbps: Int?
    }

    /// Asks the cadence policy what the follower's estimates want now and tells the encoder, under the state
    /// lock, so changes made on different peers' queues reach it in the order they were decided (the call
    /// only takes the source hub's own lock and wakes its thread).
    func updateCadence(_ s: inout State, _ now: UInt64) -> CadenceChange? {
        guard configuration.fixedDroppablePeriod == nil else { return nil }
        let from = s.cadence.period
        guard let change = s.cadence.update(s.follower, nowMicros: now) else { return nil }
        s.cadenceChanges += 1
        encoder.setDroppableCadence(period: change)
        return CadenceChange(from: from, to: change, outliers: s.follower.outliers, highestKbps: s.follower.highestEstimateKbps,
                             outlierKbps: s.follower.lowestOutlierKbps)
    }

    /// Logs a change already applied (``updateCadence(_:_:)``).
    func apply(_ change: CadenceChange?, peer: String) {
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
    func ceiling(_ s: State) -> Int {
        if let configured = configuration.configuredBitrateKbps { return configured }
        guard let size = s.lastFrameSize else { return 8000 }
        return VP8EncoderSettings.defaultBitrateKbps(width: size.width, height: size.height, framesPerSecond: configuration.maxFramesPerSecond)
    }

    func apply(_ decision: BitrateFollower.Decision?, peer: String) {
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
}
