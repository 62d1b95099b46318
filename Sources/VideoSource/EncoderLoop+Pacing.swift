import Media
import ScreencastSupport

/// The droppable cadence and keyframe spacing of the encoder loop (see ``EncoderLoop``'s notes): the period
/// asked through the hub and the one in force; how far apart requested keyframes come.
extension EncoderLoop {
    /// The cadence asked for through the hub: N within ``droppablePeriods`` (nil or below 2: off).
    func applyCadence(_ change: Int?, _ state: inout LoopState) {
        let period = change.flatMap { $0 >= Self.droppablePeriods.lowerBound ? min($0, Self.droppablePeriods.upperBound) : nil }
        guard period != state.droppablePeriod else { return }
        logger.info("droppable cadence", ["period": period.map(String.init) ?? "off", "from": state.droppablePeriod.map(String.init) ?? "off"])
        state.droppablePeriod = period
        // Off: no more non-reference frames, so libvpx may carry probabilities from frame to frame again
        // (the first non-reference frame turned error-resilient mode on).
        guard period == nil, let encoder = state.encoder, encoder.isErrorResilient else { return }
        do throws(MediaError) {
            try encoder.setErrorResilient(false)
        } catch {
            logger.warning("error-resilient mode stays on", ["error": error])
        }
    }

    /// The periods the cadence takes (one reference frame in 2 … 6 new frames).
    static let droppablePeriods = 2...6

    /// The period in force: the one asked for, lowered so that reference frames alone come at
    /// `minFramesPerSecond` or more at the current frame-rate cap, never below 2 (nil: off).
    func effectiveDroppablePeriod(_ state: LoopState) -> Int? {
        guard let asked = state.droppablePeriod else { return nil }
        let fps = state.applied?.framesPerSecond ?? configuration.maxFramesPerSecond
        let floor = Self.rateLimits(for: configuration).minFramesPerSecond
        let keepsFloor = Int((fps / max(floor, 0.1) + 1e-9).rounded(.down))
        return max(Self.droppablePeriods.lowerBound, min(asked, keepsFloor))
    }

    /// Keyframes may take `keyframeShare` of the target: after a keyframe of `bytes`, the next requested one
    /// waits `bytes × 8 ÷ (share × target)`, between the configured spacing and `longestKeyframeSpacing`.
    func spaceKeyframes(after bytes: Int, _ state: inout LoopState) {
        let base = UInt64((configuration.keyframeMinSpacingSeconds * 1e6).rounded())
        let kbps = Double(state.encoder?.settings.bitrateKbps ?? 1000)
        let wanted = UInt64((Double(bytes) * 8 / (Self.keyframeShare * kbps) * 1000).rounded())
        state.scheduler.setKeyframeSpacing(micros: max(base, min(Self.longestKeyframeSpacingMicros, wanted)))
    }

    /// The share of the target requested keyframes may take (see `spaceKeyframes`).
    static let keyframeShare = 0.25
    /// Requested keyframes are never spaced more than this, µs (a new viewer waits at most 2 s).
    static let longestKeyframeSpacingMicros: UInt64 = 2_000_000

    /// A keyframe request while one was pending: it adds nothing (counted, logged rate-limited).
    func noteCoalesced(_ state: inout LoopState) {
        hub.stats.keyframeCoalesced()
        if let suppressed = state.coalesceLog.admit() {
            logger.info("keyframe request coalesced with the pending one", ["suppressed": suppressed])
        }
    }
}
