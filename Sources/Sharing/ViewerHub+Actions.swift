import Dispatch
import Media
import PeerConnection
import ScreencastSupport
import Synchronization
import VideoSource

extension ViewerHub {
    // MARK: Timer and other consumers

    /// Every ``feedbackCheckIntervalMicros``, off the peers' queues (snapshots are safe here): the watching
    /// viewers' RTCP counts go to the state machine (``ViewerHubStateMachine/feedbackCheck(rtcpCounts:nowMicros:)``).
    func checkFeedback() {
        let watching = state.withLock { $0.watching }
        let counts = watching.map { (id: $0.id, count: $0.peer.snapshot().rtcpPackets) }
        let now = MonotonicClock.nowMicros()
        apply(state.withLock { $0.feedbackCheck(rtcpCounts: counts, nowMicros: now) })
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
        apply(state.withLock { $0.consumerEstimate(id, bitsPerSecond: bitsPerSecond, source: source, nowMicros: now) })
    }

    /// Feedback (RTCP) came from the consumer `id` (the SFU leg): its congestion target counts again if it was
    /// silent (``BitrateFollower/heard(peer:nowMicros:ceilingKbps:)``).
    public func consumerHeard(_ id: String) {
        apply(state.withLock { $0.consumerHeard(id, nowMicros: MonotonicClock.nowMicros()) })
    }

    // MARK: Actions

    /// Applies what the state machine decided, in order, outside the state lock.
    func apply(_ actions: [Action]) {
        for action in actions {
            switch action {
            case .requestKeyframe(let encoding): requestKeyframe(of: encoding)
            case .keyframeRequested(let peer, let reason, let passed, let encoding):
                logger.debug("keyframe requested", ["peer": peer, "reason": reason, "passed": passed, "encoding": encoding.rawValue])
            case .setBitrate(let decision, let peer): apply(decision, peer: peer)
            case .setCadence(let change, let peer): apply(change, peer: peer)
            case .secondEncoder(let work, let peer): apply(work, peer: peer)
            case .giveUpSlot(let peer, let id, let newcomer):
                let share = configuration.pendingFairShare
                logger.info("viewer slot given up by an unconnected session", [
                    "peer": id, "for": newcomer ?? "-", "reason": "its address holds more than \(share) unconnected sessions",
                ])
                peer.close(reason: "gave its slot up: the call was full and its address held more than \(share) unconnected sessions")
            case .joined(let peer, let id, let count):
                // Who is watching, for the sharer: one line per viewer joining, with the address it watches from.
                // Events come on the peer's own queue, where its snapshot cannot be taken: log from elsewhere.
                let logger = logger
                DispatchQueue.global().async {
                    let remote = peer?.snapshot().selectedPair?.remote
                    logger.info("viewer joined", ["peer": id, "address": remote.map { "\($0.address)" } ?? "-", "viewers": count])
                }
            case .left(let peer, let id, let reason, let failed, let count):
                let logger = logger
                DispatchQueue.global().async {
                    let snapshot = peer.snapshot()
                    logger.log(failed ? .warning : .info, failed ? "viewer lost" : "viewer left", [
                        "peer": id, "address": snapshot.selectedPair.map { "\($0.remote.address)" } ?? "-", "reason": reason,
                        "watched.s": String(format: "%.0f", snapshot.ageSeconds), "viewers": count,
                    ])
                }
            case .viewerSilent(let id):
                logger.info("viewer silent: its estimate no longer sets the bitrate", [
                    "peer": id, "silence.ms": BitrateFollower.defaultSilenceLimitMicros / 1000,
                ])
            case .viewerHeardAgain(let id): logger.info("viewer heard again: its estimate counts", ["peer": id])
            case .consumerHeardAgain(let id): logger.info("consumer heard again: its estimate counts", ["consumer": id])
            }
        }
    }

    /// Sets the main encoder's rate.
    private func apply(_ decision: BitrateFollower.Decision, peer: String) {
        switch decision {
        case .set(let kbps):
            logger.info("bitrate follows the lowest viewer", ["peer": peer, "kbps": kbps])
            encoder.setBitrate(kbps: kbps)
        case .useDefault:
            logger.info("bitrate back to the default", ["peer": peer])
            encoder.setBitrate(kbps: nil)
        }
    }

    /// Sets the main encoder's droppable cadence unless a later change was applied already, and logs it.
    private func apply(_ change: CadenceChange, peer: String) {
        cadenceApplied.withLock { applied in
            guard change.generation > applied else { return }
            applied = change.generation
            encoder.setDroppableCadence(period: change.to)
        }
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

    /// Starts, stops or retunes the second encoder on its own queue, or logs a move.
    private func apply(_ action: SecondEncodingPolicy.Action, peer: String) {
        switch action {
        case .start(let kbps, let divisor):
            let (factory, inlet, logger) = (secondEncoderFactory, secondInlet, logger)
            second.queue.async { [second] in
                guard let factory else { return }
                let started = factory(kbps, divisor, inlet)
                second.control.withLock { $0 = started }
                if started != nil {
                    logger.info("second encoder started", ["kbps": kbps, "divisor": divisor, "peer": peer])
                } else {
                    logger.warning("second encoder could not start: slow viewers stay on the main encoding", ["kbps": kbps])
                }
            }
        case .stop:
            let logger = logger
            second.queue.async { [second] in
                let running = second.control.withLock { $0.take() }
                running?.stop()
                logger.info("second encoder stopped: no viewer far below the others", [:])
            }
        case .setBitrate(let kbps):
            logger.debug("second encoder bitrate", ["kbps": kbps])
            second.async { $0?.setBitrate(kbps: kbps) }
        case .setDivisor(let divisor):
            logger.info("second encoder size divisor", ["divisor": divisor])
            second.async { $0?.setDivisor(divisor) }
        case .move(let id, let to, let reason, let kbps, let highest):
            logger.info(to == .low ? "viewer moves to the low encoding" : "viewer moves back to the main encoding", [
                "peer": id, "reason": reason, "kbps": kbps, "highest.kbps": highest,
            ])
        }
    }

    /// A keyframe of `encoding`.
    func requestKeyframe(of encoding: EncodingChoice) {
        switch encoding {
        case .main: encoder.requestKeyframe()
        case .low: second.async { $0?.requestKeyframe() }
        }
    }
}
