/// How a `VP8Encoder` is set up: the settings real-time screen sharing uses with libvpx.
///
/// Fixed by design (not settable): `VPX_DL_REALTIME`, one pass, no lag (`g_lag_in_frames` 0), CBR, no
/// automatic keyframes (keyframes come on request, see `VP8Encoder.encode`), no spatial resampling,
/// timebase 1/1 000 000 (pts in microseconds of capture time).
public struct VP8EncoderSettings: Sendable, Equatable {
    /// Picture width in pixels, 1…16383 (VP8's 14-bit field).
    public var width: Int
    /// Picture height in pixels, 1…16383.
    public var height: Int
    /// CBR target, kilobits per second (`rc_target_bitrate`), 1…1 000 000.
    public var bitrateKbps: Int
    /// `VP8E_SET_CPUUSED`: -16…-1. Negative values fix the speed/quality trade-off (-16 fastest); positive
    /// values would switch libvpx to its auto-speed, which stalls on static screens, and are refused.
    public var cpuUsed: Int
    /// Best quantizer rate control may pick, 0…63 (`rc_min_quantizer`).
    public var minQuantizer: Int
    /// Worst quantizer rate control may pick, `minQuantizer`…63 (`rc_max_quantizer`).
    public var maxQuantizer: Int
    /// Encoder threads (`g_threads`), 1…16. One is the safe default on a machine whose other cores are busy.
    public var threads: Int
    /// `VP8E_SET_SCREEN_CONTENT_MODE`: 0 off, 1 screen, 2 screen with aggressive rate control.
    public var screenContentMode: Int
    /// `VP8E_SET_STATIC_THRESHOLD`: blocks whose change is below it are skipped (0…1000 here).
    public var staticThreshold: Int
    /// libvpx's rate-control knobs (frame drops, buffer, keyframe cap); `VP8RateControl.unconstrained` (every
    /// frame encoded, no keyframe cap) unless given; the call uses `VP8RateControl.screen`.
    public var rateControl: VP8RateControl

    /// - Parameters: see the properties; the defaults are the (cpu-used -6, q 12…56, one thread,
    ///   screen-content mode 2, static threshold 100, `VP8RateControl.unconstrained`).
    public init(
        width: Int, height: Int, bitrateKbps: Int, cpuUsed: Int = -6, minQuantizer: Int = 12,
        maxQuantizer: Int = 56, threads: Int = 1, screenContentMode: Int = 2, staticThreshold: Int = 100,
        rateControl: VP8RateControl = .unconstrained
    ) {
        self.rateControl = rateControl
        self.width = width
        self.height = height
        self.bitrateKbps = bitrateKbps
        self.cpuUsed = cpuUsed
        self.minQuantizer = minQuantizer
        self.maxQuantizer = maxQuantizer
        self.threads = threads
        self.screenContentMode = screenContentMode
        self.staticThreshold = staticThreshold
    }

    /// The default target when none is given: `width × height × fps × 0.08` bits per second, in kbps,
    /// clamped to 150…8000 kbps (1280×720 at 30 fps: 2212 kbps; 1920×1080 at 30 fps: 4977 kbps).
    public static func defaultBitrateKbps(width: Int, height: Int, framesPerSecond: Double) -> Int {
        let bits = Double(width) * Double(height) * framesPerSecond * 0.08
        let kbps = (bits / 1000).rounded()
        guard kbps.isFinite else { return 150 }
        return Int(min(8000, max(150, kbps)))
    }

    /// Checks every range above.
    /// - Throws: `MediaError.invalidArgument` naming the first value out of range.
    public func validate() throws(MediaError) {
        func check(_ ok: Bool, _ message: @autoclosure () -> String) throws(MediaError) {
            if !ok { throw .invalidArgument(message()) }
        }
        try check((1...16383).contains(width) && (1...16383).contains(height),
                  "VP8 picture size \(width)x\(height) is outside 1...16383")
        try check((1...1_000_000).contains(bitrateKbps), "VP8 bitrate \(bitrateKbps) kbps is outside 1...1000000")
        try check((-16 ... -1).contains(cpuUsed),
                  "VP8 cpu-used \(cpuUsed) must be -16...-1 (positive values select libvpx's auto-speed)")
        try check((0...63).contains(minQuantizer) && (0...63).contains(maxQuantizer) && minQuantizer <= maxQuantizer,
                  "VP8 quantizers \(minQuantizer)...\(maxQuantizer) must satisfy 0 <= min <= max <= 63")
        try check((1...16).contains(threads), "VP8 threads \(threads) is outside 1...16")
        try check((0...2).contains(screenContentMode), "VP8 screen-content mode \(screenContentMode) is outside 0...2")
        try check((0...1000).contains(staticThreshold), "VP8 static threshold \(staticThreshold) is outside 0...1000")
        try rateControl.validate()
    }
}
