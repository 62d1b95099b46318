/// Estimates whether queueing delay grows: the least-squares slope of the smoothed accumulated one-way
/// delay variation over the last ``windowSize`` groups (libwebrtc's `TrendlineEstimator`, which replaced the
/// Kalman filter of draft-ietf-rmcat-gcc-02 §5.3).
///
/// Per group: `d = arrival delta − send delta` (ms) is accumulated, the sum smoothed exponentially with
/// ``smoothing`` (0.9), and the pair (arrival time since the first group, smoothed sum) kept; once the window
/// is full the slope of the fitted line is the *trend*: about (send rate − capacity) / capacity while a queue
/// builds, 0 when delay is steady, negative while it drains. The detector compares
/// ``Sample/modifiedTrend`` = min(groups seen, 60) × trend × ``thresholdGain`` (4) with its threshold (ms).
struct TrendlineEstimator: Sendable {
    static let windowSize = 20
    static let smoothing = 0.9
    static let thresholdGain = 4.0
    /// The group count that scales the trend saturates here.
    static let deltaCountCap = 60
    private static let deltaCounterMax = 1000

    /// What one group contributed.
    struct Sample: Sendable, Equatable {
        /// The slope, ms of delay per ms of arrival time (dimensionless).
        var trend: Double
        /// min(groups, 60) × trend × gain: what the detector compares with its threshold, ms.
        var modifiedTrend: Double
        /// Groups seen (capped at 1000).
        var groups: Int
        /// This group's send delta, ms.
        var sendDeltaMillis: Double
        /// The accumulated delay variation, ms, and its smoothed value.
        var accumulatedDelayMillis: Double
        var smoothedDelayMillis: Double
    }

    private var groups = 0
    private var firstArrivalMicros: Int64?
    private var accumulatedDelay = 0.0
    private var smoothedDelay = 0.0
    /// (x: arrival ms since the first group, y: smoothed delay ms), oldest first, at most `windowSize`.
    private var window: [(x: Double, y: Double)] = []
    private(set) var trend = 0.0

    init() { window.reserveCapacity(Self.windowSize + 1) }

    /// Adds one group's deltas (µs) and the arrival time of its last packet (µs).
    mutating func update(deltas: InterArrivalDelta.Deltas, arrivalMicros: Int64) -> Sample {
        let sendDelta = Double(deltas.sendDeltaMicros) / 1000
        let delta = Double(deltas.arrivalDeltaMicros) / 1000 - sendDelta
        groups = min(groups + 1, Self.deltaCounterMax)
        let first = firstArrivalMicros ?? arrivalMicros
        firstArrivalMicros = first

        accumulatedDelay += delta
        smoothedDelay = Self.smoothing * smoothedDelay + (1 - Self.smoothing) * accumulatedDelay
        window.append((Double(arrivalMicros - first) / 1000, smoothedDelay))
        if window.count > Self.windowSize { window.removeFirst() }
        if window.count == Self.windowSize, let slope = Self.slope(window) { trend = slope }
        return Sample(trend: trend, modifiedTrend: Double(min(groups, Self.deltaCountCap)) * trend * Self.thresholdGain,
                      groups: groups, sendDeltaMillis: sendDelta, accumulatedDelayMillis: accumulatedDelay,
                      smoothedDelayMillis: smoothedDelay)
    }

    /// The least-squares slope Σ(x−x̄)(y−ȳ) / Σ(x−x̄)², or nil when all x are equal.
    static func slope(_ points: [(x: Double, y: Double)]) -> Double? {
        guard points.count >= 2 else { return nil }
        let count = Double(points.count)
        let meanX = points.reduce(0) { $0 + $1.x } / count
        let meanY = points.reduce(0) { $0 + $1.y } / count
        var numerator = 0.0
        var denominator = 0.0
        for point in points {
            numerator += (point.x - meanX) * (point.y - meanY)
            denominator += (point.x - meanX) * (point.x - meanX)
        }
        return denominator == 0 ? nil : numerator / denominator
    }
}
