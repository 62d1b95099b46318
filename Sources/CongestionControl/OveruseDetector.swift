/// Turns the trend into a ``BandwidthUsage`` with an adaptive threshold (draft-ietf-rmcat-gcc-02 §5.4 and
/// the adaptive threshold of §5.4 / Holmer et al. 2016, as libwebrtc's `TrendlineEstimator::Detect` and
/// `UpdateThreshold` practise it).
///
/// - Overusing: the modified trend stays above the threshold for more than ``overuseTimeMillis`` (10 ms of
///   send time, counted from half the first send delta) over at least two groups, and the trend is not
///   falling. Underusing: below −threshold. Otherwise normal.
/// - The threshold γ follows |m|: γ += k · (|m| − γ) · Δt, with k = ``kUp`` (0.0087) when |m| > γ and
///   ``kDown`` (0.039) when below, Δt the ms since the last update (at most 100), clamped to
///   ``thresholdRange`` (6…600 ms). A spike |m| > γ + 15 ms does not move it (a sudden capacity drop must
///   not make the detector deaf). It starts at 12.5 ms.
struct OveruseDetector: Sendable {
    static let kUp = 0.0087
    static let kDown = 0.039
    static let thresholdRange: ClosedRange<Double> = 6...600
    static let initialThreshold = 12.5
    static let overuseTimeMillis = 10.0
    static let maxAdaptOffsetMillis = 15.0
    static let maxTimeDeltaMillis: Int64 = 100

    private(set) var threshold = initialThreshold
    private(set) var usage = BandwidthUsage.normal
    private(set) var modifiedTrend = 0.0
    private var timeOverUsing: Double?
    private var overuseCount = 0
    private var previousTrend = 0.0
    private var lastUpdateMillis: Int64?

    /// Updates from one trendline sample at `nowMillis` (the group's arrival time) and returns the usage.
    @discardableResult
    mutating func detect(_ sample: TrendlineEstimator.Sample, nowMillis: Int64) -> BandwidthUsage {
        guard sample.groups >= 2 else {
            usage = .normal
            return usage
        }
        let modified = sample.modifiedTrend
        modifiedTrend = modified
        if modified > threshold {
            timeOverUsing = timeOverUsing.map { $0 + sample.sendDeltaMillis } ?? sample.sendDeltaMillis / 2
            overuseCount += 1
            if let time = timeOverUsing, time > Self.overuseTimeMillis, overuseCount > 1, sample.trend >= previousTrend {
                timeOverUsing = 0
                overuseCount = 0
                usage = .overusing
            }
        } else if modified < -threshold {
            timeOverUsing = nil
            overuseCount = 0
            usage = .underusing
        } else {
            timeOverUsing = nil
            overuseCount = 0
            usage = .normal
        }
        previousTrend = sample.trend
        adaptThreshold(modified, nowMillis: nowMillis)
        return usage
    }

    private mutating func adaptThreshold(_ modified: Double, nowMillis: Int64) {
        let last = lastUpdateMillis ?? nowMillis
        lastUpdateMillis = nowMillis
        let magnitude = abs(modified)
        if magnitude > threshold + Self.maxAdaptOffsetMillis { return }
        let k = magnitude < threshold ? Self.kDown : Self.kUp
        let elapsed = Double(min(max(nowMillis - last, 0), Self.maxTimeDeltaMillis))
        threshold = min(max(threshold + k * (magnitude - threshold) * elapsed, Self.thresholdRange.lowerBound),
                        Self.thresholdRange.upperBound)
    }
}
