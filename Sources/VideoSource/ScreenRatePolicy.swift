/// How the encoder degrades a screen as its target falls, and recovers as it rises (sans-I/O: the caller
/// passes the target, the picture size and the time).
///
/// Text must stay sharp, so the resolution is kept and the frame rate goes first: the cap is what gives
/// each frame `bitsPerPixel` bits per pixel, between `minFramesPerSecond` (5) and the configured maximum.
/// Only at the lowest frame rate does the quantizer floor rise (libvpx's best quantizer, which refinements
/// stop at), linearly with the shortfall up to `highestFloor`. While degraded, libvpx may use its worst
/// quantizer (63), so a burst of change cannot hold the rate above the target.
///
/// The bits per pixel a frame needs is a model (`bitsPerPixel`), moved to what the content is seen to cost
/// when that is clearly more or less (``ContentCost``): busy content lowers the frame rate evenly, instead of
/// leaving libvpx to drop frames in bursts; cheap content is not held below the configured frame rate by a
/// model it does not need.
///
/// Below that, the picture is made smaller (issue 31, the low-rate policy): when the target cannot carry even half
/// of what the lowest frame rate needs at the full size (`scaleDownBelow`), the encoded size steps down
/// (`scaleSteps`: ¾, then ½ of each side, never below `minimumScaledHeight` lines), so a 300 kbit/s viewer sees
/// 640×360 text that moves instead of a 1280×720 slideshow with stalls. It steps back up only when the larger
/// size would run at the lowest frame rate with the best quantizers (`scaleUpAbove`: a band of 2 × the pixel
/// ratio between the two thresholds, so it does not flap), after the same hold. Chrome's sender does the
/// opposite for screens: `contentHint = "detail"`/"text" maps to `degradationPreference` "maintain-resolution",
/// which only lowers the frame rate (to a frame every few seconds at 300 kbit/s, each one taking seconds to
/// arrive), and "balanced" (for camera video) scales early, at frame rates a screen does not need.
///
/// Falls apply at once. Rises wait until the target has allowed them for `recoveryHoldMicros`, then go
/// one step at a time, in the same order: the size first, then the frame rate, then (another hold later)
/// the floor.
struct ScreenRatePolicy: Sendable, Equatable {
    /// What the encoder is told.
    struct Decision: Sendable, Equatable, CustomStringConvertible {
        /// New frames per second at most.
        var framesPerSecond: Double
        /// libvpx's best quantizer, 0…63.
        var minQuantizer: Int
        /// libvpx's worst quantizer, `minQuantizer`…63.
        var maxQuantizer: Int
        /// The encoded picture's side as a share of the source picture's (after `--max-encode-size`): 1, or a
        /// step of ``Limits/scaleSteps``.
        var scale: Double = 1

        var description: String {
            "\(Self.format(framesPerSecond)) fps, q \(minQuantizer)-\(maxQuantizer)" + (scale < 1 ? ", scale \(scale)" : "")
        }
        static func format(_ fps: Double) -> String { fps == fps.rounded() ? "\(Int(fps))" : "\((fps * 10).rounded() / 10)" }
    }

    /// The limits it works within.
    struct Limits: Sendable, Equatable {
        /// The configured frame rate (`--max-fps`).
        var maxFramesPerSecond: Double
        /// The lowest frame rate before the floor rises (`--min-fps`, default 5).
        var minFramesPerSecond: Double = 5
        /// The configured quantizer range (`--min-q`, `--max-q`).
        var minQuantizer: Int
        var maxQuantizer: Int
        /// Bits per pixel per frame a screen needs at the best quantizers (0.05: 1280×720 at 1 Mbit/s
        /// gets 21.7 fps, at 300 kbps 6.5 fps).
        var bitsPerPixel: Double = 0.05
        /// The floor rises up to this quantizer (never above `maxQuantizer`).
        var highestFloor: Int = 40
        /// How long a rise must be allowed before it is taken, µs. (Tried at 1 s, 2026-12-06: a loopback
        /// viewer reached its configured frame rate sooner, but behind a bottleneck the encoder then kept up
        /// with GCC's slow rise after a step up, the sender was never application-limited, no ALR probe came,
        /// and the target took 10 s instead of 4 to find 3 Mbit/s: `ChromiumCongestionTests`.)
        var recoveryHoldMicros: UInt64 = 2_000_000
        /// The encoded sizes it may step down to, as shares of each side, largest first (1 is always allowed).
        var scaleSteps: [Double] = [1, 0.75, 0.5]
        /// A smaller size is never below this many lines (a 1280×720 screen goes to 640×360 at most; text below
        /// 360 lines is not readable at any frame rate).
        var minimumScaledHeight = 360
        /// Steps down when the target carries less than this share of what the lowest frame rate needs at
        /// the current size with the best quantizers.
        var scaleDownBelow = 0.5
        /// Steps up when the target carries at least this share of what the lowest frame rate needs at the
        /// next larger size (held `recoveryHoldMicros`).
        var scaleUpAbove = 1.0
        /// The size decision weighs the content's cost at most this many times the model's `bitsPerPixel` (0.2
        /// bits per pixel: busy text at 1280×720 then steps down below 230 kbit/s, and up above 920).
        var scaleCostCap = 4.0
    }

    let limits: Limits
    /// What the content costs, learnt from the encoder (see ``ContentCost``).
    private(set) var content = ContentCost()
    /// The decision in force.
    private(set) var current: Decision
    /// Since when the target has allowed something better than `current` (nil: it does not).
    private var betterSince: UInt64?
    private var lastChangeAt: UInt64?

    /// Starts undegraded (the configured maximum rate and range).
    init(limits: Limits) {
        self.limits = limits
        current = Decision(framesPerSecond: limits.maxFramesPerSecond, minQuantizer: limits.minQuantizer,
                           maxQuantizer: limits.maxQuantizer)
    }

    /// The sizes a picture of `height` lines may be encoded at, largest first (only 1 when `height` is nil).
    func scaleSteps(height: Int?) -> [Double] {
        guard let height else { return [1] }
        let steps = limits.scaleSteps.filter { $0 < 1 && Int(Double(height) * $0) >= limits.minimumScaledHeight }.sorted(by: >)
        return [1] + steps
    }

    /// The share of what the lowest frame rate needs at `scale` (best quantizers) that `targetKbps` carries, at
    /// the content's cost but at most ``Limits/scaleCostCap`` × the model's: a cost learnt from a few frames
    /// (a burst of change, refinements of a still screen) must not shrink the picture of a link that carries it
    /// (a loopback share at 550 kbit/s measured 0.8 bits per pixel and went to 640×360 without the cap).
    func carried(targetKbps: Int, pixels: Int, scale: Double) -> Double {
        let lowest = min(limits.minFramesPerSecond, limits.maxFramesPerSecond)
        let cost = min(bitsPerPixel, limits.bitsPerPixel * limits.scaleCostCap)
        return Double(max(1, targetKbps)) * 1000 / (Double(max(1, pixels)) * scale * scale * cost * lowest)
    }

    /// What `targetKbps` allows for a picture of `pixels`, with no hold (at full size: scaling is
    /// ``update(targetKbps:pixels:height:now:)``'s).
    func ideal(targetKbps: Int, pixels: Int) -> Decision {
        let bits = Double(max(1, targetKbps)) * 1000
        let perFrame = Double(max(1, pixels)) * bitsPerPixel
        let lowest = min(limits.minFramesPerSecond, limits.maxFramesPerSecond)
        // Whole frames per second (tenths below 1), so small changes of the target do not move the cap.
        var fps = bits / perFrame
        // (A hair added first: a cost measured as target ÷ n frames must give n, not n − 1 by rounding.)
        fps += 1e-9
        fps = fps >= 1 ? fps.rounded(.down) : (fps * 10).rounded(.down) / 10
        fps = min(limits.maxFramesPerSecond, max(lowest, fps))
        var floor = limits.minQuantizer
        let atLowest = bits / (perFrame * lowest)
        if atLowest < 1 {
            let top = max(limits.minQuantizer, min(limits.highestFloor, limits.maxQuantizer))
            floor += Int(((1 - atLowest) * Double(top - limits.minQuantizer)).rounded())
        }
        return Decision(framesPerSecond: fps, minQuantizer: floor, maxQuantizer: maxQuantizer(fps: fps, floor: floor))
    }

    /// Bits per pixel per frame the decisions assume: the model's, or what the content was seen to cost
    /// when that is clearly more or clearly less (``ContentCost``).
    var bitsPerPixel: Double {
        if content.bitsPerPixel > 0 { return max(limits.bitsPerPixel, content.bitsPerPixel) }
        return min(limits.bitsPerPixel, content.cheapBitsPerPixel ?? limits.bitsPerPixel)
    }

    /// A new frame libvpx made (not a keyframe, refinement or repeat) of `bytes` at `quantizer` (-1: unknown).
    mutating func encoded(bytes: Int, quantizer: Int, now: UInt64) {
        content.encoded(bytes: bytes, quantizer: quantizer, at: now)
    }

    /// A new frame libvpx dropped to hold its rate.
    mutating func dropped(now: UInt64) { content.dropped(at: now) }

    /// A keyframe of `bytes` was made (its window, and the drops that repay it, say nothing of the content).
    mutating func keyframe(bytes: Int, now: UInt64) { content.keyframe(bytes: bytes, at: now) }

    /// The decision at `now` for `targetKbps` and a source picture of `pixels` (`height` lines; nil: never
    /// scaled). `pixels` is the source's size, not the encoded one: the policy scales it itself.
    mutating func update(targetKbps: Int, pixels: Int, height: Int? = nil, now: UInt64) -> Decision {
        let steps = scaleSteps(height: height)
        // The current size, among the steps this picture allows (a new, smaller picture may allow fewer).
        var scale = steps.last { $0 >= current.scale } ?? steps.first ?? 1
        let encodedPixels = { (s: Double) in max(1, Int((Double(pixels) * s * s).rounded())) }
        _ = content.evaluate(
            now: now, targetBitsPerSecond: Double(max(1, targetKbps)) * 1000, pixels: encodedPixels(scale),
            modelBitsPerPixel: limits.bitsPerPixel, cheapQuantizer: limits.maxQuantizer / 2)
        // Smaller at once, to the largest step that carries enough (the smallest when none does).
        if carried(targetKbps: targetKbps, pixels: pixels, scale: scale) < limits.scaleDownBelow {
            scale = steps.first { $0 < scale && carried(targetKbps: targetKbps, pixels: pixels, scale: $0) >= limits.scaleDownBelow }
                ?? steps.last ?? scale
        }
        let larger = steps.last { $0 > scale }
        let canGrow = larger.map { carried(targetKbps: targetKbps, pixels: pixels, scale: $0) >= limits.scaleUpAbove } ?? false
        let ideal = ideal(targetKbps: targetKbps, pixels: encodedPixels(scale))
        var next = current
        if scale != current.scale {
            // A new size starts from what the target allows at that size (the floor raised for the larger one would
            // blur the smaller picture for nothing).
            next = ideal
            next.scale = scale
        } else {
            next.framesPerSecond = min(next.framesPerSecond, ideal.framesPerSecond)
            next.minQuantizer = max(next.minQuantizer, ideal.minQuantizer)
        }
        if next != current {
            lastChangeAt = now
            betterSince = nil
        } else if canGrow || ideal.framesPerSecond > current.framesPerSecond || ideal.minQuantizer < current.minQuantizer {
            let since = betterSince ?? now
            betterSince = since
            let hold = limits.recoveryHoldMicros
            if now >= since + hold, now >= (lastChangeAt ?? 0) + hold {
                if canGrow, let larger {
                    next = self.ideal(targetKbps: targetKbps, pixels: encodedPixels(larger))
                    next.scale = larger
                } else if ideal.framesPerSecond > current.framesPerSecond {
                    next.framesPerSecond = ideal.framesPerSecond
                } else {
                    next.minQuantizer = ideal.minQuantizer
                }
                lastChangeAt = now
                betterSince = now  // the next step's hold runs from this one
            }
        } else {
            betterSince = nil
        }
        next.maxQuantizer = maxQuantizer(fps: next.framesPerSecond, floor: next.minQuantizer, scale: next.scale)
        current = next
        return next
    }

    /// 63 while degraded (a lower frame rate, a raised floor or a smaller size), else the configured worst.
    private func maxQuantizer(fps: Double, floor: Int, scale: Double = 1) -> Int {
        fps < limits.maxFramesPerSecond || floor > limits.minQuantizer || scale < 1 ? 63 : limits.maxQuantizer
    }
}
