import Glibc
import Media
import ScreencastSupport
import Synchronization

/// The encoder thread: takes the latest frame from the hub, encodes it with the one `VP8Encoder`, hands
/// the result to every sink; between frames, runs the idle refinement and keyframe requests that
/// `EncodeScheduler` decides. Ends when the hub stops, after encoding the frame still waiting.
///
/// The `VP8Encoder` is created on this thread when the first picture arrives (its size is not known
/// before) and lives only here.
///
/// A new picture above `maximumEncodeSize` is first downscaled to fit it (libyuv `I420Scale`, box filter,
/// into a pooled buffer; `PictureSize.downscaled(toFit:)`), so the encoder, the idle refinement and the
/// "unchanged" check all work on the picture that is encoded. Logged once per change of the input size
/// (rate-limited).
///
/// The droppable cadence (``VideoSource/setDroppableCadence(period:)``, off by default): with period N, of
/// every N new frames only one is a reference frame; the N − 1 after it are non-reference frames
/// (``VP8Encoder/encode(_:forceKeyframe:quantizerCeiling:allowDrop:updatesReferences:)`` with
/// `updatesReferences: false`), which a viewer's sender may leave out. Keyframes, refinements, repeats and
/// requested keyframes are always reference frames, and each restarts the count: a non-reference refinement
/// would refine nothing for the frames after it (each refinement builds on the previous one), and a repeat
/// is what brings a thinned viewer the screen's last change. N is lowered so a viewer sent reference
/// frames only still gets `minFramesPerSecond` at the rate policy's frame-rate cap (never below 2).
final class EncoderLoop: Sendable {
    /// The least step between two encoded frames' capture times, µs: more than one tick of the 90 kHz RTP
    /// clock (11.1 µs), so no two frames share an RTP timestamp (receivers group packets into frames by it).
    static let minimumTimestampStepMicros: UInt64 = 12

    let hub: SourceHub
    private let sinks: SinkRegistry
    let configuration: VideoSourceConfiguration
    private let clock: any VideoClock
    let logger: Logger
    /// The encoder's bitrate, readable from other threads (stats).
    let currentBitrate = Atomic<Int>(0)
    /// Where each new picture this loop encodes is also offered (a ``SecondEncoding``'s hub, while one runs).
    let tap = FrameTap()
    /// Set for a second encoding's loop: the divisor its foreign pictures are scaled down by
    /// (``localizeForeign(_:_:)``); nil for the main encoder.
    let derived: DerivedScale?

    init(
        hub: SourceHub, sinks: SinkRegistry, configuration: VideoSourceConfiguration, clock: any VideoClock, logger: Logger,
        derived: DerivedScale? = nil
    ) {
        self.derived = derived
        self.hub = hub
        self.sinks = sinks
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
    }

    static func policy(for configuration: VideoSourceConfiguration) -> EncodeScheduler.Policy {
        EncodeScheduler.Policy(
            minFrameIntervalMicros: UInt64((1_000_000 / configuration.maxFramesPerSecond).rounded()),
            keyframeSpacingMicros: UInt64((configuration.keyframeMinSpacingSeconds * 1e6).rounded()),
            keyframeIntervalMicros: configuration.keyframeIntervalSeconds.map { UInt64(($0 * 1e6).rounded()) },
            refinement: configuration.refinement)
    }

    /// The thread body: `step` until the hub stops, waiting on the hub in between.
    func run() {
        var state = makeState()
        while true {
            switch step(&state) {
            case .again: continue
            case .wait(let micros): hub.wait(micros: micros)
            case .finished:
                logger.debug("encoder thread ends", ["frames": state.encoder?.framesSubmitted ?? 0])
                return
            }
        }
    }

    /// What `step` leaves the caller to do.
    enum Step: Equatable {
        /// Something was done (or skipped): step again at once.
        case again
        /// Nothing to do for `micros` (nil: until something is submitted or requested).
        case wait(micros: UInt64?)
        /// The hub stopped and nothing waits.
        case finished
    }

    /// A fresh loop state (no encoder yet).
    func makeState() -> LoopState {
        LoopState(scheduler: EncodeScheduler(policy: Self.policy(for: configuration)),
                  explicitBitrate: configuration.bitrateKbps,
                  ratePolicy: ScreenRatePolicy(limits: Self.rateLimits(for: configuration)),
                  budget: ByteBudget(rateKbps: configuration.bitrateKbps ?? 1000))
    }

    static func rateLimits(for configuration: VideoSourceConfiguration) -> ScreenRatePolicy.Limits {
        var limits = ScreenRatePolicy.Limits(
            maxFramesPerSecond: configuration.maxFramesPerSecond,
            minFramesPerSecond: min(configuration.minFramesPerSecond, configuration.maxFramesPerSecond),
            minQuantizer: configuration.minQuantizer, maxQuantizer: configuration.maxQuantizer)
        if !configuration.scaleDownWhenStarved { limits.scaleSteps = [1] }
        return limits
    }

    /// One turn of the loop at the clock's now: picks up requests, then encodes at most one frame.
    /// Runs on the encoder thread (or, for `EncoderReplay`, on the caller's thread with a manual clock).
    func step(_ state: inout LoopState) -> Step {
        if let derived { localizeForeign(derived, &state) }
        let requests = hub.takeRequests()
        let now = clock.nowMicros()
        if requests.keyframeRequested, !state.scheduler.requestKeyframe() { noteCoalesced(&state) }
        if let change = requests.bitrateChange { applyBitrate(change, now: now, &state) }
        if let change = requests.cadenceChange { applyCadence(change, &state) }
        followRatePolicy(now: now, &state)
        let action: EncodeScheduler.Action
        if requests.stopping {
            guard requests.hasPending else { return .finished }
            action = .encodeNew(keyframe: state.scheduler.keyframeDue(at: now))
        } else {
            let idleAllowedAt = state.budget.hasBytes(now: now) ? 0 : state.budget.time(holding: 1, after: now)
            action = state.scheduler.next(now: now, hasNewFrame: requests.hasPending, hasPicture: state.last != nil,
                                          idleAllowedAt: idleAllowedAt)
        }
        switch action {
        case .encodeNew(let keyframe):
            guard let pending = hub.takePending() else { return .again }
            encodeNew(pending, keyframe: keyframe, now: now, &state)
        case .reencode(let keyframe, let ceiling, let reason):
            guard var frame = state.last else { return .again }
            frame.captureTimestampMicros = now
            // A requested keyframe at a low target gets rate control's quantizer, not the refined one (a
            // refined 1280×720 screen as a keyframe is seconds of a low target); repeats refine it again.
            let degraded = state.applied.map { $0.maxQuantizer == 63 } ?? false
            let wanted = reason == .keyframeRequest && degraded ? nil : ceiling
            encode(frame, keyframe: keyframe, ceiling: wanted, reason: reason, now: now, &state)
        case .wait(let until):
            return .wait(micros: until.map { $0 > now ? $0 - now : 0 })
        }
        return .again
    }

    /// Everything the loop keeps between frames (only on this thread).
    struct LoopState {
        var scheduler: EncodeScheduler
        var explicitBitrate: Int?
        var encoder: VP8Encoder?
        /// The last new picture encoded (what refinement re-encodes).
        var last: VideoFrame?
        var lastGeneration = -1
        var lastTimestamp: UInt64 = 0
        /// When the last frame (of any reason) went to the sinks, loop-clock µs; nil before the first.
        var lastDeliveredMicros: UInt64?
        /// A switch or failed keyframe left a keyframe owed.
        var keyframeOwed = false
        var encodeErrors = 0
        /// Foreign pictures a second encoding could not scale are logged rate-limited.
        var scaleLog = LogRateLimiter()
        /// The last new picture's size and what it was downscaled to (nil: not scaled), for the log.
        var lastFit: (from: PictureSize, to: PictureSize?)?
        /// The last new picture's size within `maximumEncodeSize`, before the rate policy's scale: what the
        /// policy weighs the target against.
        var sourceSize: PictureSize?
        var fitLog = LogRateLimiter()
        /// Resolution changes are logged rate-limited too (sizes may alternate on every frame).
        var resolutionLog = LogRateLimiter()
        /// Frame rate and quantizer range as the target falls and rises, and the decision applied.
        var ratePolicy: ScreenRatePolicy
        var applied: ScreenRatePolicy.Decision?
        /// Every encoded byte is spent here; idle re-encodes wait while it is empty.
        var budget: ByteBudget
        /// Coalesced keyframe requests are logged rate-limited.
        var coalesceLog = LogRateLimiter()
        /// The droppable cadence asked for: one reference frame in this many new frames (nil: off).
        var droppablePeriod: Int?
        /// Non-reference frames delivered since the last reference frame.
        var framesSinceReference = 0
        /// Told of every frame delivered, with why it was encoded (`EncoderReplay`; nil in the call).
        var observer: ((EncodedFrame, EncodeScheduler.Reason) -> Void)?
    }

    private func encodeNew(_ pending: PendingFrame, keyframe: Bool, now: UInt64, _ state: inout LoopState) {
        var pending = pending
        guard fitForEncoding(&pending.frame, &state) else { return }
        let newGeneration = pending.generation != state.lastGeneration
        if !newGeneration, let last = state.last, Self.samePixels(last.picture, pending.frame.picture) {
            hub.stats.dropped(.unchanged)
            hub.pool.recycle(pending.frame.picture)
            return
        }
        if newGeneration, state.lastGeneration >= 0 {
            logger.info("source switched; next frame is a keyframe", ["source": pending.kind])
        }
        if newGeneration { state.keyframeOwed = true }
        state.lastGeneration = pending.generation
        // Offered before the previous picture is recycled: the tap lets go of it first.
        tap.offer(pending.frame, kind: pending.kind)
        if let old = state.last { hub.pool.recycle(old.picture) }
        state.last = nil
        state.last = pending.frame
        encode(pending.frame, keyframe: keyframe || state.keyframeOwed, ceiling: nil, reason: .newFrame, now: now, &state)
    }

    private func encode(
        _ input: VideoFrame, keyframe: Bool, ceiling: Int?, reason: EncodeScheduler.Reason, now: UInt64,
        _ state: inout LoopState
    ) {
        var frame = input
        frame.captureTimestampMicros = max(frame.captureTimestampMicros, state.lastTimestamp + Self.minimumTimestampStepMicros)
        state.lastTimestamp = frame.captureTimestampMicros
        let started = MonotonicClock.nowMicros()
        do throws(MediaError) {
            let encoder = try encoder(for: frame, &state)
            // Idle re-encodes are budgeted here (ByteBudget): libvpx must not drop them as wasted steps; new
            // frames it may drop, but not into a freeze (EncoderLoop+Drops).
            // The cadence makes new frames non-reference frames between reference ones (see the type's notes).
            let period = effectiveDroppablePeriod(state)
            let referenceDue = period.map { state.framesSinceReference >= $0 - 1 } ?? true
            let updatesReferences = keyframe || reason != .newFrame || referenceDue
            let allowDrop = reason == .newFrame && !Self.mustNotDrop(lastDeliveredMicros: state.lastDeliveredMicros, now: now, budget: state.budget)
            let output = try encoder.encode(frame, forceKeyframe: keyframe, quantizerCeiling: ceiling,
                                            allowDrop: allowDrop, updatesReferences: updatesReferences)
            let millis = Double(MonotonicClock.nowMicros() - started) / 1000
            let isKeyframe = output?.isKeyframe ?? false
            state.scheduler.didEncode(at: now, keyframe: isKeyframe, reason: reason)
            if isKeyframe {
                state.keyframeOwed = false
                spaceKeyframes(after: output?.bytes.count ?? 0, &state)
            }
            if let output {
                if output.isDroppable {
                    state.framesSinceReference += 1
                    if reason == .newFrame { state.scheduler.newFrameWasNotReferenced() }
                } else {
                    state.framesSinceReference = 0
                }
            }
            guard let output else {
                if logger.threshold <= .debug {
                    logger.debug("frame dropped by libvpx", ["capture_us": frame.captureTimestampMicros, "keyframe": keyframe,
                                                             "reason": "\(reason)", "kbps": encoder.settings.bitrateKbps])
                }
                if keyframe { state.keyframeOwed = true }
                if reason == .newFrame { state.scheduler.newFrameWasDropped() }
                hub.stats.dropped(.encoder)
                state.ratePolicy.dropped(now: now)
                return
            }
            // What the content costs (ContentCost): new frames and libvpx's drops; keyframes mark their window.
            if isKeyframe {
                state.ratePolicy.keyframe(bytes: output.bytes.count, now: now)
            } else if reason == .newFrame {
                state.ratePolicy.encoded(bytes: output.bytes.count, quantizer: output.quantizer, now: now)
            }
            state.budget.spend(bytes: output.bytes.count, now: now)
            state.lastDeliveredMicros = now
            hub.stats.encoded(bytes: output.bytes.count, keyframe: isKeyframe, droppable: output.isDroppable, reason: reason,
                              width: output.width, height: output.height, millis: millis, now: now)
            if logger.threshold <= .debug {
                // Per-frame stage times (CLOCK_MONOTONIC µs) for latency breakdowns (tools/bench).
                logger.debug("frame encoded", ["capture_us": frame.captureTimestampMicros, "start_us": started,
                                               "end_us": started + UInt64(millis * 1000), "bytes": output.bytes.count,
                                               "keyframe": isKeyframe, "reason": "\(reason)", "q": output.quantizer])
            }
            sinks.deliver(output)
            state.observer?(output, reason)
        } catch {
            state.scheduler.didEncode(at: now, keyframe: false, reason: reason)
            if keyframe { state.keyframeOwed = true }
            hub.stats.dropped(.encodeError)
            state.encodeErrors += 1
            // The first few, then every 100th: a broken encoder must not flood the log.
            if LogRateLimiter.isSampled(state.encodeErrors) {
                logger.error("encode failed", ["error": error, "count": state.encodeErrors])
            }
        }
    }

    /// Downscales a picture above `maximumEncodeSize`, and then to the rate policy's size when the target is too
    /// low for the full one (``ScreenRatePolicy``, `--scale-down`), into a pooled buffer (its own buffer goes
    /// back to the pool). False when libyuv refused (the frame is dropped, counted as `encodeError`).
    private func fitForEncoding(_ frame: inout VideoFrame, _ state: inout LoopState) -> Bool {
        let limit = configuration.maximumEncodeSize
        let size = PictureSize(width: frame.width, height: frame.height)
        let target = size.downscaled(toFit: limit)
        if state.lastFit?.from != size || state.lastFit?.to != target {
            let wasScaled = state.lastFit?.to != nil
            state.lastFit = (size, target)
            if target != nil || wasScaled, let suppressed = state.fitLog.admit() {
                if let target {
                    logger.info("picture above the encode limit; downscaled", [
                        "from": size, "to": target, "limit": limit, "suppressed": suppressed,
                    ])
                } else {
                    logger.info("picture within the encode limit again", ["size": size, "limit": limit, "suppressed": suppressed])
                }
            }
        }
        let fitted = target ?? size
        state.sourceSize = fitted
        let policyScale = state.ratePolicy.current.scale
        let encoded = policyScale < 1 ? Self.scaled(fitted, by: policyScale) : fitted
        guard encoded != size else { return true }
        var scaled = hub.pool.take(width: encoded.width, height: encoded.height)
        do throws(MediaError) {
            try frame.picture.scaled(to: encoded, filter: .box, into: &scaled)
        } catch {
            hub.pool.recycle(scaled)
            hub.pool.recycle(frame.picture)
            hub.stats.dropped(.encodeError)
            state.encodeErrors += 1
            if LogRateLimiter.isSampled(state.encodeErrors) {
                logger.error("downscale failed", ["from": size, "to": encoded, "error": error, "count": state.encodeErrors])
            }
            return false
        }
        swap(&frame.picture, &scaled)
        hub.pool.recycle(consume scaled)
        hub.stats.downscaled()
        return true
    }

    /// `size` with each side times `scale`, rounded down to even (I420 and libvpx want even sides), at least 16.
    static func scaled(_ size: PictureSize, by scale: Double) -> PictureSize {
        let side = { (n: Int) in max(16, Int(Double(n) * scale) & ~1) }
        return PictureSize(width: side(size.width), height: side(size.height))
    }

    /// The encoder for `frame`'s size: created on first use, reconfigured (with a keyframe) on a change.
    private func encoder(for frame: VideoFrame, _ state: inout LoopState) throws(MediaError) -> VP8Encoder {
        let settings = configuration.encoderSettings(width: frame.width, height: frame.height)
        let bitrate = state.explicitBitrate ?? settings.bitrateKbps
        if let encoder = state.encoder {
            if encoder.settings.width != frame.width || encoder.settings.height != frame.height {
                if let suppressed = state.resolutionLog.admit() {
                    logger.info("resolution changed; encoder reconfigured", [
                        "from": "\(encoder.settings.width)x\(encoder.settings.height)",
                        "to": "\(frame.width)x\(frame.height)", "kbps": bitrate, "suppressed": suppressed,
                    ])
                }
                try encoder.resize(width: frame.width, height: frame.height, bitrateKbps: bitrate)
                currentBitrate.store(bitrate, ordering: .relaxed)
                hub.stats.bitrate(bitrate)
                state.budget.setRate(kbps: bitrate, now: frame.captureTimestampMicros)
                state.applied = nil
            }
            return encoder
        }
        var initial = settings
        initial.bitrateKbps = bitrate
        let encoder = try VP8Encoder(settings: initial)
        logger.info("encoder created", [
            "size": "\(frame.width)x\(frame.height)", "kbps": bitrate, "cpu-used": initial.cpuUsed,
            "q": "\(initial.minQuantizer)-\(initial.maxQuantizer)", "threads": initial.threads,
        ])
        state.encoder = encoder
        currentBitrate.store(bitrate, ordering: .relaxed)
        hub.stats.bitrate(bitrate)
        state.budget.setRate(kbps: bitrate, now: clock.nowMicros())
        followRatePolicy(now: clock.nowMicros(), &state)
        return encoder
    }

    private func applyBitrate(_ change: Int?, now: UInt64, _ state: inout LoopState) {
        state.explicitBitrate = change
        guard let encoder = state.encoder else { return }
        let kbps = change ?? configuration.encoderSettings(width: encoder.settings.width, height: encoder.settings.height).bitrateKbps
        do throws(MediaError) {
            try encoder.setBitrate(kbps: kbps)
            state.budget.setRate(kbps: kbps, now: now)
            currentBitrate.store(kbps, ordering: .relaxed)
            hub.stats.bitrate(kbps)
            logger.info("bitrate changed", ["kbps": kbps])
        } catch {
            logger.warning("bitrate change refused", ["kbps": kbps, "error": error])
        }
    }

    /// Asks the rate policy what the current target allows and hands a changed decision to the
    /// scheduler (frame-rate cap) and the encoder (quantizer range, rate control for that frame rate).
    private func followRatePolicy(now: UInt64, _ state: inout LoopState) {
        guard let encoder = state.encoder else { return }
        let source = state.sourceSize ?? PictureSize(width: encoder.settings.width, height: encoder.settings.height)
        let decision = state.ratePolicy.update(
            targetKbps: encoder.settings.bitrateKbps, pixels: source.pixels, height: source.height, now: now)
        defer {
            hub.stats.rate(decision, budgetBits: state.budget.balance(at: now), bitsPerPixel: state.ratePolicy.bitsPerPixel)
            hub.stats.droppablePeriod(effectiveDroppablePeriod(state) ?? 0)
        }
        guard decision != state.applied else { return }
        state.scheduler.setMinFrameInterval(micros: UInt64((1e6 / decision.framesPerSecond).rounded()))
        do throws(MediaError) {
            try encoder.setQuantizerRange(min: decision.minQuantizer, max: decision.maxQuantizer)
            try encoder.setRateControl(.screen(framesPerSecond: decision.framesPerSecond))
            if decision.scale != (state.applied?.scale ?? 1) {
                logger.info(decision.scale < 1 ? "picture made smaller for the target" : "picture back to full size", [
                    "kbps": encoder.settings.bitrateKbps, "size": Self.scaled(source, by: decision.scale), "source": source,
                ])
            }
            logger.info("rate policy", ["kbps": encoder.settings.bitrateKbps, "decision": decision.description,
                                         "from": state.applied?.description ?? "-",
                                         "bpp": (state.ratePolicy.bitsPerPixel * 1000).rounded() / 1000])
        } catch {
            logger.warning("rate policy refused by the encoder", ["decision": decision.description, "error": error])
        }
        state.applied = decision
    }

    /// Same size and byte-identical planes (memcmp; stops at the first difference).
    static func samePixels(_ a: I420Buffer, _ b: I420Buffer) -> Bool {
        guard a.width == b.width, a.height == b.height else { return false }
        return a.bytes.withUnsafeBytes { x in
            b.bytes.withUnsafeBytes { y in
                x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
            }
        }
    }
}
