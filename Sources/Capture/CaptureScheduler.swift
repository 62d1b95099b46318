/// Decides when to capture, when to refresh at higher quality ("paint-over") and when to repeat the last
/// frame ("keepalive"). A sans-I/O state machine: the caller feeds it damage and the clock (µs), asks
/// ``next(now:)`` and reports what it did.
///
/// ```
///             damage                     min interval (1/fps) since last capture
///  idle ──────────────▶ dirty ──────────────────────────────────────────▶ capture ──▶ idle
///   │                                                                                │
///   ├─ static for paintOverDelay since the last change, not yet refreshed ─▶ paintOver (once)
///   └─ keepalive since the last delivered frame ───────────────────────────▶ keepalive (repeat)
/// ```
///
/// The first call asks for a capture (there is no frame yet). Damage while a capture is not yet due only
/// keeps the state dirty: frames never come faster than the rate limit, and never without damage.
struct CaptureScheduler: Equatable {
    /// What the capture loop should do now.
    enum Action: Equatable {
        /// Grab and encode a new frame (the screen changed, or there is no frame yet).
        case capture
        /// Grab and encode the static screen once more at the paint-over quality.
        case paintOver
        /// Send the last frame again with a new timestamp.
        case keepalive
        /// Nothing to do before this time (µs); new damage may make something due earlier.
        case wait(until: UInt64)
    }

    /// Smallest time between two captures, µs (1/fps).
    let minimumIntervalMicros: UInt64
    /// Longest time without a delivered frame, µs.
    let keepaliveMicros: UInt64
    /// Static time before the paint-over, µs; nil when there is none.
    let paintOverDelayMicros: UInt64?

    private(set) var dirty = true
    private(set) var paintedOver = false
    private(set) var lastCapture: UInt64?
    private(set) var lastDelivery: UInt64?
    private(set) var lastChange: UInt64?

    /// The scheduler of a capture loop with `configuration`'s frame rate (its interval × `intervalShare`: the portal
    /// takes half, its producer already paces), keepalive and paint-over delay.
    init(configuration: CaptureConfiguration, intervalShare: Double = 1) {
        self.init(
            minimumIntervalMicros: UInt64(1_000_000 * intervalShare / configuration.maxFramesPerSecond),
            keepaliveMicros: UInt64(configuration.keepaliveSeconds * 1_000_000),
            paintOverDelayMicros: configuration.effectivePaintOver.map { UInt64($0.delaySeconds * 1_000_000) })
    }

    init(minimumIntervalMicros: UInt64, keepaliveMicros: UInt64, paintOverDelayMicros: UInt64?) {
        self.minimumIntervalMicros = minimumIntervalMicros
        self.keepaliveMicros = max(1, keepaliveMicros)
        self.paintOverDelayMicros = paintOverDelayMicros
    }

    /// Something in the captured area changed (damage, cursor movement, a resize).
    mutating func markDirty() { dirty = true }

    /// The next action at time `now` (µs).
    func next(now: UInt64) -> Action {
        if dirty {
            guard let last = lastCapture else { return .capture }
            let due = last &+ minimumIntervalMicros
            return now >= due ? .capture : .wait(until: due)
        }
        var deadline = UInt64.max
        if let delay = paintOverDelayMicros, !paintedOver, let change = lastChange {
            let due = max(change &+ delay, (lastCapture ?? 0) &+ minimumIntervalMicros)
            if now >= due { return .paintOver }
            deadline = due
        }
        if let delivered = lastDelivery {
            let due = delivered &+ keepaliveMicros
            if now >= due { return .keepalive }
            deadline = min(deadline, due)
        }
        return .wait(until: deadline)
    }

    /// The next action at time `now` (µs) while nothing can be captured (the captured monitor is gone):
    /// only keepalives of the last frame, nothing before the first frame.
    func nextWhileHeld(now: UInt64) -> Action {
        guard let delivered = lastDelivery else { return .wait(until: UInt64.max) }
        let due = delivered &+ keepaliveMicros
        return now >= due ? .keepalive : .wait(until: due)
    }

    /// A changed frame is captured at `now`: called before the grab, so damage reported from then on
    /// (the grab's own events among it) marks the state dirty again instead of being cleared with it.
    mutating func willCapture(now: UInt64) {
        dirty = false
        paintedOver = false
        lastCapture = now
        lastDelivery = now
        lastChange = now
    }

    /// The paint-over was captured and delivered at `now`.
    mutating func didPaintOver(now: UInt64) {
        paintedOver = true
        lastCapture = now
        lastDelivery = now
    }

    /// The last frame was delivered again at `now`.
    mutating func didKeepalive(now: UInt64) { lastDelivery = now }
}
