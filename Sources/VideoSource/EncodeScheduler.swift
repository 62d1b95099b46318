/// Decides, from the time and what is waiting, when the encoder thread encodes what (sans-I/O: no
/// clock, no threads; the encoder loop feeds it times and does what it returns).
///
/// - New frames: encoded at once, but at most one per `minFrameIntervalMicros` (`--max-fps`, or the rate
///   policy's cap) on average: each encode has a slot one interval after the previous one's (or its own time
///   when later), and a frame may come up to ``earlyShare`` of an interval before its slot. A source ticking
///   at the cap's own rate with a little jitter is then never held back (with a hard minimum gap, a frame a
///   millisecond early waited a whole interval, and the next frame replaced it as stale); meanwhile a newer
///   frame may replace the waiting one (latest wins).
/// - Keyframes: the first encode; a requested keyframe no sooner than `keyframeSpacingMicros` after the
///   previous keyframe (requests in between are coalesced into that one); the first encode at least
///   `keyframeIntervalMicros` after the previous keyframe, when set (new frames, refinements and repeats;
///   a static screen with repeats off gets none). The loop adds its own forced keyframes (source switches).
/// - Budget: refinements and repeats wait for the byte budget (`idleAllowedAt`).
/// - Dropped: a new frame libvpx dropped (its rate control) is owed when no refinement will re-encode it:
///   the last picture is encoded again one frame interval later, under the byte budget, so the screen's
///   last change is never lost for want of a next frame.
/// - Not referenced: a new frame encoded as a non-reference frame (the droppable cadence) is owed the same
///   way: a receiver that was thinned to reference frames must get the screen's last change, so when no
///   refinement will re-encode it (as a reference frame), the last picture is repeated one frame interval later.
/// - Idle: with no new frame, the last picture is re-encoded under the refinement policy's falling
///   quantizer ceilings, then repeated every `repeatMicros`; a keyframe request while idle re-encodes
///   the last picture as a keyframe at the best quality reached so far.
struct EncodeScheduler: Sendable {
    struct Policy: Sendable, Equatable {
        var minFrameIntervalMicros: UInt64
        var keyframeSpacingMicros: UInt64
        var keyframeIntervalMicros: UInt64?
        var refinement: IdleRefinementPolicy
    }

    /// Why something is encoded.
    enum Reason: Sendable, Equatable {
        /// A new picture from the source.
        case newFrame
        /// The last picture again, refinement step `n` (from 0), under a lower quantizer ceiling.
        case refinement(Int)
        /// The last picture again, once refined, to keep the stream alive.
        case repeatFrame
        /// The last picture again, as a requested keyframe.
        case keyframeRequest
    }

    enum Action: Sendable, Equatable {
        /// Encode the waiting new frame.
        case encodeNew(keyframe: Bool)
        /// Encode the last picture again.
        case reencode(keyframe: Bool, quantizerCeiling: Int?, reason: Reason)
        /// Nothing to do until `until` (µs), or until something happens (nil).
        case wait(until: UInt64?)
    }

    /// How early before its slot a new frame may be encoded, as a share of the frame interval.
    static let earlyShare = 0.25

    private(set) var policy: Policy
    private(set) var lastEncodeAt: UInt64?
    /// The slot of the last encode, µs: its time, or the later slot it was entitled to when it came early.
    private(set) var lastSlotAt: UInt64?
    private(set) var lastNewFrameAt: UInt64?
    private(set) var lastKeyframeAt: UInt64?
    /// Refinement encodes done since the last new frame.
    private(set) var refinementStep = 0
    private(set) var keyframeRequested = false
    /// The last new frame was dropped by libvpx and nothing has been encoded since.
    private(set) var newFrameDropped = false
    /// The last new frame was a non-reference frame and nothing has been encoded since.
    private(set) var newFrameUnreferenced = false

    init(policy: Policy) { self.policy = policy }

    /// A consumer asked for a keyframe (coalesced with any pending request).
    /// - Returns: false when one was already pending (this request adds nothing).
    @discardableResult
    mutating func requestKeyframe() -> Bool {
        defer { keyframeRequested = true }
        return !keyframeRequested
    }

    /// libvpx dropped the new frame just recorded by ``didEncode(at:keyframe:reason:)``.
    mutating func newFrameWasDropped() { newFrameDropped = true }

    /// The new frame just recorded by ``didEncode(at:keyframe:reason:)`` was a non-reference frame.
    mutating func newFrameWasNotReferenced() { newFrameUnreferenced = true }

    /// A new spacing between keyframes, µs (the loop widens it when keyframes are large for the target).
    mutating func setKeyframeSpacing(micros: UInt64) { policy.keyframeSpacingMicros = micros }

    /// A new cap on new frames (the rate policy's frame rate), µs between encodes.
    mutating func setMinFrameInterval(micros: UInt64) { policy.minFrameIntervalMicros = micros }

    /// The ceiling of the best refinement done so far (nil before the first).
    var currentCeiling: Int? {
        let ceilings = policy.refinement.quantizerCeilings
        guard refinementStep > 0, !ceilings.isEmpty else { return nil }
        return ceilings[min(refinementStep, ceilings.count) - 1]
    }

    /// Whether an encode at `now` should be a keyframe (first, requested and spaced, or periodic).
    func keyframeDue(at now: UInt64) -> Bool {
        guard let last = lastKeyframeAt else { return true }
        let since = now &- last
        if keyframeRequested, now >= last, since >= policy.keyframeSpacingMicros { return true }
        if let interval = policy.keyframeIntervalMicros, now >= last, since >= interval { return true }
        return false
    }

    /// What to do at `now`, given whether a new frame waits and whether a last picture exists.
    /// Refinements and repeats (not requested keyframes) wait until `idleAllowedAt` (the byte budget).
    func next(now: UInt64, hasNewFrame: Bool, hasPicture: Bool, idleAllowedAt: UInt64 = 0) -> Action {
        if hasNewFrame {
            if let slot = lastSlotAt {
                let interval = policy.minFrameIntervalMicros
                let earliest = slot + interval - UInt64(Double(interval) * Self.earlyShare)
                if now < earliest { return .wait(until: earliest) }
            }
            return .encodeNew(keyframe: keyframeDue(at: now))
        }
        guard hasPicture, let lastEncode = lastEncodeAt else { return .wait(until: nil) }
        var wake: UInt64?
        func earliest(_ time: UInt64) { wake = min(wake ?? time, time) }

        if keyframeRequested {
            let due = max((lastKeyframeAt ?? 0) + policy.keyframeSpacingMicros, lastEncode + policy.minFrameIntervalMicros)
            if now >= due {
                return .reencode(keyframe: true, quantizerCeiling: currentCeiling, reason: .keyframeRequest)
            }
            earliest(due)
        }

        let refinement = policy.refinement
        let ceilings = refinement.quantizerCeilings
        let base = lastNewFrameAt ?? lastEncode
        if refinementStep < ceilings.count {
            let due = max(idleAllowedAt, base + refinement.firstDelayMicros + UInt64(refinementStep) * refinement.stepMicros)
            if now >= due {
                return .reencode(keyframe: keyframeDue(at: now), quantizerCeiling: ceilings[refinementStep],
                                 reason: .refinement(refinementStep))
            }
            earliest(due)
        } else if newFrameDropped || newFrameUnreferenced, ceilings.isEmpty {
            let due = max(idleAllowedAt, lastEncode + policy.minFrameIntervalMicros)
            if now >= due {
                return .reencode(keyframe: keyframeDue(at: now), quantizerCeiling: currentCeiling, reason: .repeatFrame)
            }
            earliest(due)
        } else if let interval = refinement.repeatMicros {
            let due = max(idleAllowedAt, lastEncode + interval)
            if now >= due {
                return .reencode(keyframe: keyframeDue(at: now), quantizerCeiling: currentCeiling, reason: .repeatFrame)
            }
            earliest(due)
        }
        return .wait(until: wake)
    }

    /// Records an encode at `now` (also when libvpx dropped the frame or failed, so the schedule moves on).
    mutating func didEncode(at now: UInt64, keyframe: Bool, reason: Reason) {
        lastEncodeAt = now
        lastSlotAt = lastSlotAt.map { max(now, $0 + policy.minFrameIntervalMicros) } ?? now
        newFrameDropped = false
        newFrameUnreferenced = false
        if keyframe {
            lastKeyframeAt = now
            keyframeRequested = false
        }
        switch reason {
        case .newFrame:
            lastNewFrameAt = now
            refinementStep = 0
        case .refinement:
            refinementStep += 1
        case .repeatFrame, .keyframeRequest:
            break
        }
    }
}
