/// libvpx's CBR rate-control knobs for a `VP8Encoder` (`vpx_codec_enc_cfg_t` fields and one control),
/// chosen so the output holds the target on screen content: libvpx may drop a frame after an overshoot,
/// its buffer is short (a screen changes in bursts), and a keyframe is capped to a fraction of a second
/// of the target instead of the seconds a detailed 1280×720 screen would take at a low quantizer.
///
/// `screen(framesPerSecond:)` gives the call's choice for a target; these fields apply at
/// `VP8Encoder.init` and with `VP8Encoder.setRateControl(_:)` at run time.
public struct VP8RateControl: Sendable, Equatable {
    /// `rc_dropframe_thresh`, 0…100: libvpx drops a frame when its buffer falls below this percentage
    /// of `optimalBufferMillis` (0: never drops).
    public var dropFrameThreshold: Int
    /// `rc_undershoot_pct`, 0…100: how far under the target libvpx lets the buffer run before it spends.
    public var undershootPercent: Int
    /// `rc_overshoot_pct`, 0…100: how far over the target libvpx lets a frame go.
    public var overshootPercent: Int
    /// `rc_buf_sz`, ms of the target, 1…10 000.
    public var bufferMillis: Int
    /// `rc_buf_initial_sz`, ms, 1…`bufferMillis`.
    public var initialBufferMillis: Int
    /// `rc_buf_optimal_sz`, ms, 1…`bufferMillis`.
    public var optimalBufferMillis: Int
    /// `VP8E_SET_MAX_INTRA_BITRATE_PCT`: a keyframe's size target at most this percentage of an average
    /// frame's (target ÷ frame rate); 0: no cap. 0…100 000.
    public var maxIntraBitratePercent: Int

    /// See the properties.
    public init(
        dropFrameThreshold: Int, undershootPercent: Int, overshootPercent: Int, bufferMillis: Int,
        initialBufferMillis: Int, optimalBufferMillis: Int, maxIntraBitratePercent: Int
    ) {
        self.dropFrameThreshold = dropFrameThreshold
        self.undershootPercent = undershootPercent
        self.overshootPercent = overshootPercent
        self.bufferMillis = bufferMillis
        self.initialBufferMillis = initialBufferMillis
        self.optimalBufferMillis = optimalBufferMillis
        self.maxIntraBitratePercent = maxIntraBitratePercent
    }

    /// What the encoder did before rate control was tuned for screens (no drops, a 1-s buffer, no
    /// keyframe cap); kept for comparison in the bench.
    public static let unconstrained = VP8RateControl(
        dropFrameThreshold: 0, undershootPercent: 100, overshootPercent: 15, bufferMillis: 1000,
        initialBufferMillis: 500, optimalBufferMillis: 600, maxIntraBitratePercent: 0)

    /// A keyframe may take this many seconds of the target (a 1 Mbit/s link: 62 KB, ~0.5 s to send).
    public static let keyframeSeconds = 0.5

    /// The call's rate control for `framesPerSecond` new frames a second: drops allowed
    /// (threshold 30 %), overshoot 10 %, a 600-ms buffer starting at 300 ms, keyframes capped at
    /// `keyframeSeconds` of the target (percentage = seconds × fps × 100, at least 100).
    public static func screen(framesPerSecond: Double) -> VP8RateControl {
        let fps = framesPerSecond.isFinite ? max(0.1, framesPerSecond) : 30
        return VP8RateControl(
            dropFrameThreshold: 30, undershootPercent: 50, overshootPercent: 10, bufferMillis: 600,
            initialBufferMillis: 300, optimalBufferMillis: 400,
            maxIntraBitratePercent: max(100, Int((keyframeSeconds * fps * 100).rounded())))
    }

    /// Checks the ranges above.
    /// - Throws: `MediaError.invalidArgument` naming the first value out of range.
    public func validate() throws(MediaError) {
        func check(_ ok: Bool, _ message: @autoclosure () -> String) throws(MediaError) {
            if !ok { throw .invalidArgument(message()) }
        }
        try check((0...100).contains(dropFrameThreshold), "VP8 drop-frame threshold \(dropFrameThreshold) is outside 0...100")
        try check((0...100).contains(undershootPercent), "VP8 undershoot \(undershootPercent) % is outside 0...100")
        try check((0...100).contains(overshootPercent), "VP8 overshoot \(overshootPercent) % is outside 0...100")
        try check((1...10_000).contains(bufferMillis), "VP8 buffer \(bufferMillis) ms is outside 1...10000")
        try check((1...bufferMillis).contains(initialBufferMillis) && (1...bufferMillis).contains(optimalBufferMillis),
                  "VP8 initial/optimal buffer \(initialBufferMillis)/\(optimalBufferMillis) ms must be 1...\(bufferMillis)")
        try check((0...100_000).contains(maxIntraBitratePercent), "VP8 max intra bitrate \(maxIntraBitratePercent) % is outside 0...100000")
    }
}
