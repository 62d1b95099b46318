/// What the screen's content costs the encoder, learnt from the new frames libvpx made and the ones it
/// dropped (sans-I/O: the caller passes the time and the per-frame budget).
///
/// `ScreenRatePolicy` models a screen at a fixed bits per pixel; content far busier than that (a 1080p
/// terminal scrolling a line per frame costs ~0.5 bit per pixel at the configured quantizers, ten times the
/// model) leaves the frame-rate cap far above what the target carries, and libvpx then holds the rate by
/// dropping frames in bursts: the soak saw 4 fps on average with gaps of up to 4.8 s. This measures the
/// content over windows of ``windowMicros`` and reports its cost per pixel when it is clearly above the
/// budget (the target shared by the frames offered), so the policy lowers the frame rate evenly instead.
///
/// A window is **expensive** when libvpx dropped ``dropsThatCount`` frames or more (unless the frames it made
/// were small, under ``cheapRatio`` of the budget, and the drops under ``minorDropShare`` of the outcomes),
/// or the mean new frame
/// took more than ``expensiveRatio`` of the budget; after ``expensiveWindowsThatCount`` expensive windows
/// in a row the cost becomes the mean frame (or, when frames were within the budget and libvpx still
/// dropped, the budget spread over the frames offered). A window with a keyframe in it is never expensive,
/// nor is one that starts while keyframes are still being repaid: libvpx drops frames after a keyframe until
/// its bits are paid back at the target rate (a 20 KB keyframe at 184 kbit/s: 0.9 s of frames, into the next
/// windows, then refills its buffer for up to ``repaymentMarginMicros``), and that says nothing of the content. (Seen: Janus asking four keyframes after an ICE restart
/// of the SFU leg at 320x240 and 184 kbit/s made 138 drops, two "expensive" windows, a learnt cost of 0.275
/// bit per pixel and a 6 fps cap that held, since at a lowered cap frames are sized to the budget.) It is **cheap**
/// when the mean frame took less than ``cheapRatio`` of the budget: the learnt cost decays by ``decay`` a
/// window, and is forgotten below the model. Between the two the cost stays, so the cap does not hunt:
/// at a lowered cap libvpx sizes frames to the budget, which is neither.
///
/// Content far **cheaper** than the model is learnt too (``cheapBitsPerPixel``): the model's 0.05 bit per
/// pixel capped a 1080p screen at 3 Mbit/s to 28 fps while its frames took under half their budget (a
/// terminal running `top` beside a clock: 0.024 bit per pixel at 25 fps; the glass-to-glass bench's viewer
/// saw 25 frames a second with 60 asked, each waiting up to a whole 35-ms slot for the encoder). After
/// ``cheapWindowsThatCount`` windows in a row whose mean frame is under ``cheapRatio`` of the budget, the
/// cost becomes the mean frame with ``cheapHeadroom`` (never below ``lowestBitsPerPixel``), so the frame-rate
/// cap rises toward the configured maximum while the frames still fit the target; it only falls further
/// in later cheap windows, and any expensive window forgets it (back to the model at once).
struct ContentCost: Sendable, Equatable {
    /// Length of a measuring window, µs.
    static let windowMicros: UInt64 = 1_000_000
    /// A window with fewer outcomes (frames made or dropped) decides nothing; it is dropped after
    /// ``staleWindowMicros`` (the screen was still).
    static let minimumOutcomes = 3
    static let staleWindowMicros: UInt64 = 5_000_000
    /// libvpx drops in a window that make it expensive.
    static let dropsThatCount = 2
    /// A few drops among small frames are libvpx's buffer after one burst, not the content's cost: at 60 fps
    /// it dropped 2 frames a second after a 15 kB refresh of `top` while the frames took a third of their
    /// budget. Below this share of the outcomes such drops do not count.
    static let minorDropShare = 0.1
    /// Mean frame ÷ budget above which a window is expensive, below which it is cheap.
    static let expensiveRatio = 1.3
    static let cheapRatio = 0.6
    /// Expensive windows in a row before the cost is raised (a single burst of change is not the content).
    static let expensiveWindowsThatCount = 2
    /// Factor applied to the learnt cost after a cheap window.
    static let decay = 0.8
    /// How long libvpx goes on dropping after a keyframe's bits are repaid, µs: it refills its rate-control
    /// buffer (600 ms, `VP8RateControl.screen`) to the drop watermark before it stops (seen: 4 keyframes at
    /// 184 kbit/s made 114 drops, more than their bits at the target account for).
    static let repaymentMarginMicros: UInt64 = 1_000_000
    /// Cheap windows in a row before a cost below the model is learnt.
    static let cheapWindowsThatCount = 2
    /// A cost learnt below the model is the mean frame times this (the cap leaves frames a third of room).
    static let cheapHeadroom = 1.5
    /// The least cost learnt, bits per pixel (1080p: 10.4 kbit a frame; 3 Mbit/s then allows 289 fps).
    static let lowestBitsPerPixel = 0.005

    /// Bits per pixel of a new frame the content needs; 0 when nothing above the model was learnt.
    private(set) var bitsPerPixel = 0.0
    /// Bits per pixel of a new frame when the content was seen to cost clearly less than the model (nil:
    /// not learnt, or forgotten by an expensive window).
    private(set) var cheapBitsPerPixel: Double?
    private var cheapInARow = 0
    private var windowStart: UInt64?
    private var bits = 0.0
    private var frames = 0
    private var drops = 0
    private var quantizerSum = 0
    private var quantizerCount = 0
    private var keyframeInWindow = false
    private var expensiveInARow = 0
    /// Keyframe bits not yet turned into a repayment time (the target is known at evaluation), and when the
    /// last of them was made, µs.
    private var keyframeBitsPending = 0.0
    private var lastKeyframeAt: UInt64 = 0
    /// Until when libvpx is repaying keyframes at the target rate, µs: windows starting before it are not judged expensive.
    private(set) var repayingUntilMicros: UInt64 = 0

    /// A new frame (not a keyframe, refinement or repeat) libvpx made, of `bytes`, at `quantizer` (0…63;
    /// negative when unknown).
    mutating func encoded(bytes: Int, quantizer: Int, at now: UInt64) {
        open(at: now)
        bits += Double(bytes) * 8
        frames += 1
        if quantizer >= 0 {
            quantizerSum += quantizer
            quantizerCount += 1
        }
    }

    /// A keyframe of `bytes` was made: this window is not judged expensive, nor are the windows that start
    /// before its bits are repaid at the target rate (counted from the keyframe, or from the end of an
    /// earlier keyframe's repayment).
    mutating func keyframe(bytes: Int, at now: UInt64) {
        open(at: now)
        keyframeInWindow = true
        keyframeBitsPending += Double(max(0, bytes)) * 8
        lastKeyframeAt = max(lastKeyframeAt, now)
    }

    /// A new frame libvpx dropped to hold its rate.
    mutating func dropped(at now: UInt64) {
        open(at: now)
        drops += 1
    }

    /// Closes the window when it is ``windowMicros`` old and judges it for pictures of `pixels` against
    /// the budget of a frame: `targetBitsPerSecond` over the window shared by the frames offered in it (made
    /// or dropped; frames the frame-rate cap kept from libvpx are not offered). `modelBitsPerPixel` is the
    /// policy's own model, below which nothing is kept; a mean quantizer below `cheapQuantizer` is cheap.
    /// True when ``bitsPerPixel`` changed.
    mutating func evaluate(
        now: UInt64, targetBitsPerSecond: Double, pixels: Int, modelBitsPerPixel: Double, cheapQuantizer: Int
    ) -> Bool {
        guard let start = windowStart, now >= start + Self.windowMicros, targetBitsPerSecond > 0, pixels > 0 else { return false }
        if keyframeBitsPending > 0 {
            let repayMicros = UInt64(min(keyframeBitsPending / targetBitsPerSecond * 1e6, 60e6))
            repayingUntilMicros = max(repayingUntilMicros, lastKeyframeAt + Self.repaymentMarginMicros) + repayMicros
            keyframeBitsPending = 0
        }
        let outcomes = frames + drops
        guard outcomes >= Self.minimumOutcomes else {
            if now >= start + Self.staleWindowMicros { reset() }
            return false
        }
        defer { reset() }
        let budgetBits = targetBitsPerSecond * Double(now - start) / 1e6 / Double(outcomes)
        let before = bitsPerPixel
        let mean = frames > 0 ? bits / Double(frames) : 0
        let repaying = keyframeInWindow || start < repayingUntilMicros
        let small = frames > 0 && mean < Self.cheapRatio * budgetBits
        let dropsCount = drops >= Self.dropsThatCount && (!small || Double(drops) >= Self.minorDropShare * Double(outcomes))
        if !repaying, dropsCount || mean > Self.expensiveRatio * budgetBits {
            cheapInARow = 0
            cheapBitsPerPixel = nil
            expensiveInARow += 1
            if expensiveInARow >= Self.expensiveWindowsThatCount {
                let cost = mean > budgetBits ? mean : budgetBits * Double(outcomes) / Double(max(1, frames))
                bitsPerPixel = max(bitsPerPixel, cost / Double(pixels))
            }
            return bitsPerPixel != before
        }
        expensiveInARow = 0
        if small || (quantizerCount > 0 && quantizerSum < cheapQuantizer * quantizerCount) {
            bitsPerPixel *= Self.decay
            if bitsPerPixel <= modelBitsPerPixel { bitsPerPixel = 0 }
        }
        let cheapBefore = cheapBitsPerPixel
        learnCheap(small: small && !repaying && bitsPerPixel == 0, mean: mean, pixels: pixels, model: modelBitsPerPixel)
        return bitsPerPixel != before || cheapBitsPerPixel != cheapBefore
    }

    /// After `cheapWindowsThatCount` small windows in a row, the mean frame with headroom becomes the cost
    /// below the model (it only falls while windows stay small).
    private mutating func learnCheap(small: Bool, mean: Double, pixels: Int, model: Double) {
        guard small, mean > 0 else {
            cheapInARow = 0
            return
        }
        cheapInARow += 1
        guard cheapInARow >= Self.cheapWindowsThatCount else { return }
        let cost = max(Self.lowestBitsPerPixel, mean * Self.cheapHeadroom / Double(pixels))
        guard cost < model else { return }
        cheapBitsPerPixel = min(cheapBitsPerPixel ?? cost, cost)
    }

    private mutating func open(at now: UInt64) {
        if windowStart == nil { windowStart = now }
    }

    private mutating func reset() {
        windowStart = nil
        bits = 0
        frames = 0
        drops = 0
        quantizerSum = 0
        quantizerCount = 0
        keyframeInWindow = false
    }
}
