/// What the pacer holds, measured in time at the congestion target: what thinning and deferred keyframe
/// requests decide on (``RTPSenderChain/send(_:nowMicros:)``, ``RTPSenderChain/handleTimer(nowMicros:ntp:)``).
extension RTPSenderChain {
    /// With congestion control: how long the pacer's packets besides keyframe packets take at the target rate,
    /// µs, beyond the time the queued keyframe packets take to leave at their own pace (a keyframe leaving is
    /// no reason to thin: paced at the estimate it takes up to `VP8RateControl.keyframeSeconds` of it, and the
    /// interframes made meanwhile wait behind it); nil without congestion control.
    var queuedDeltaMicros: Double? {
        guard let target = congestion?.controller.targetBitsPerSecond, target > 0 else { return nil }
        let waiting = pacer.queuedBytes - pacer.queuedKeyframeBytes
        // Each keyframe packet at the pace it was queued with: `slow` ones at the keyframe rate, the rest (a
        // keyframe while the target is GCC's max, ``targetIsPathLimited``) at the pacing rate.
        let pacing = Double(pacer.configuration.rateBitsPerSecond)
        let keyframeRate = Double(pacer.configuration.keyframeRateBitsPerSecond ?? pacer.configuration.rateBitsPerSecond)
        let slowBytes = Double(pacer.queuedSlowKeyframeBytes)
        let fastBytes = Double(pacer.queuedKeyframeBytes - pacer.queuedSlowKeyframeBytes)
        let keyframeMicros = (slowBytes / max(1, keyframeRate) + fastBytes / max(1, pacing)) * 8 * 1_000_000
        return max(0, Double(waiting) * 8 / Double(target) * 1_000_000 - keyframeMicros)
    }

    /// With congestion control: how long everything in the pacer (keyframe packets too) takes at the target
    /// rate, µs; nil without congestion control.
    var queuedMicros: Double? {
        guard let target = congestion?.controller.targetBitsPerSecond, target > 0 else { return nil }
        return Double(pacer.queuedBytes) * 8 / Double(target) * 1_000_000
    }

    /// Whether a droppable frame arrived within ``cadenceMemoryMicros`` of `now` (the shared encoder's
    /// cadence is on: this viewer is thinned beside faster ones).
    func cadenceIsOn(nowMicros now: UInt64) -> Bool {
        lastDroppableMicros.map { now >= $0 && now - $0 <= Self.cadenceMemoryMicros } ?? false
    }

    /// With congestion control: whether the pacer holds more than ``Configuration/thinningQueueMicros`` of
    /// the target rate besides keyframe packets.
    var isOverThinningBudget: Bool { (queuedDeltaMicros ?? 0) > Double(configuration.thinningQueueMicros) }

    /// Once a target is set (``setTargetBitrate(_:nowMicros:)``): whether a frame of `bytes` takes longer than
    /// ``Configuration/largeFrameMicros`` at it (it is then paced at the estimate, as a keyframe is).
    func isLargeFrame(bytes: Int) -> Bool {
        guard let limit = configuration.largeFrameMicros, let target = targetBitsPerSecond, target > 0 else { return false }
        return Double(bytes) * 8 * 1_000_000 > Double(target) * Double(limit)
    }

    /// Whether the congestion target is the path's, not our own ceiling: below ``ceilingShare`` of GCC's
    /// configured max. Only then are keyframes and large frames paced at the estimate (a path that carries
    /// the max was never seen to queue; there they leave at the pacing factor like every frame — on loopback
    /// at 3 Mbit/s a 65 kB refresh of a 1080p screen waited 170 ms in the pacer at the estimate, the p99 of
    /// glass to glass). True without congestion control (REMB only: nothing says what the path carries).
    var targetIsPathLimited: Bool {
        guard let congestion else { return true }
        let max = Double(congestion.controller.configuration.maxBitsPerSecond)
        return Double(congestion.controller.targetBitsPerSecond) < Self.ceilingShare * max
    }

    /// The share of GCC's max at or above which the target is our ceiling, not the path's (0.9: a probe at
    /// the max sets 0.85–1 × it).
    static let ceilingShare = 0.9
}
