/// The congestion controller's state for `/stats` and logs (units in the names: bits/s, ms, µs).
public struct CongestionControlStats: Sendable, Equatable {
    /// What the encoder and pacer should use: min(delay-based, loss-based, ceiling) within min…max.
    public var targetBitsPerSecond: Int
    /// The delay-based (AIMD) estimate.
    public var delayBasedBitsPerSecond: Int
    /// The loss-based estimate.
    public var lossBasedBitsPerSecond: Int
    /// What the receiver acknowledged, from TWCC arrival times; nil before the first 500 ms of arrivals.
    public var acknowledgedBitsPerSecond: Int?
    /// The external ceiling (REMB, an SFU's cap), if one is set.
    public var ceilingBitsPerSecond: Int?
    /// The pacing rate for ordinary media.
    public var pacingBitsPerSecond: Int
    /// The delay trend (least-squares slope, dimensionless) and the detector's view of it.
    public var delayTrend: Double
    /// min(groups, 60) × trend × 4, ms — compared with ``delayThresholdMillis``.
    public var modifiedDelayTrend: Double
    /// The adaptive over-use threshold, ms (6…600).
    public var delayThresholdMillis: Double
    public var usage: BandwidthUsage
    public var rateControlState: RateControlState
    /// The link capacity the AIMD controller believes in, bits/s, if it has one.
    public var linkCapacityBitsPerSecond: Int?
    /// The loss fraction of the last measurement (≥ 20 packets), 0…1.
    public var lossFraction: Double
    /// The RTT given to the controller, ms; nil before the first.
    public var roundTripMillis: Double?
    /// Bytes sent and not yet reported by feedback.
    public var bytesInFlight: Int
    public var feedbackPackets: Int
    /// Feedback packets the receiver numbered but that never arrived.
    public var feedbackPacketsMissed: Int
    /// Statuses in feedback about packets we have no record of.
    public var unknownPackets: Int
    public var probeClustersRequested: Int
    public var probeResults: Int
    /// The last probe result, bits/s.
    public var lastProbeBitsPerSecond: Int?
    /// Whether the sender is application-limited (``ApplicationLimitedDetector``) and the ALR probes asked for so far.
    public var applicationLimited: Bool
    public var alrProbes: Int
}
