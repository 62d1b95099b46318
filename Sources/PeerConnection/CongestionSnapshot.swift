import CongestionControl
public import RTPSession
public import ScreencastSupport

extension RTPSenderChain.Report {
    /// The per-peer congestion view for `/stats` (kbps, ms, fractions 0…1): target, acknowledged rate, delay
    /// trend, loss, the estimator's state, the ceiling (REMB or an SFU cap), the pacing rate, frames thinned (`framesThinned`: reference frames dropped past the hard bound, each followed by a keyframe; `framesThinnedDroppable`: non-reference frames left out over the thinning budget, no keyframe; `referenceFramesOverBudget`: reference frames queued over the budget), probes sent and their last result, whether the sender is application-limited and its ALR probes;
    /// `null` when transport-wide congestion control was not negotiated.
    public var congestionJSON: JSONValue {
        guard let stats = congestion else { return .null }
        func kbps(_ bits: Int?) -> JSONValue { bits.map { .number($0 / 1000) } ?? .null }
        func rounded(_ value: Double, _ scale: Double) -> JSONValue { .double((value * scale).rounded() / scale) }
        return .object([
            ("targetKbps", kbps(stats.targetBitsPerSecond)),
            ("acknowledgedKbps", kbps(stats.acknowledgedBitsPerSecond)),
            ("delayBasedKbps", kbps(stats.delayBasedBitsPerSecond)),
            ("lossBasedKbps", kbps(stats.lossBasedBitsPerSecond)),
            ("ceilingKbps", kbps(stats.ceilingBitsPerSecond)),
            ("pacingKbps", kbps(pacingBitsPerSecond)),
            ("delayTrend", rounded(stats.delayTrend, 10_000)),
            ("modifiedTrendMs", rounded(stats.modifiedDelayTrend, 100)),
            ("thresholdMs", rounded(stats.delayThresholdMillis, 100)),
            ("usage", .string(stats.usage.rawValue)),
            ("state", .string(stats.rateControlState.rawValue)),
            ("lossFraction", rounded(stats.lossFraction, 1000)),
            ("rttMs", stats.roundTripMillis.map { rounded($0, 100) } ?? .null),
            ("bytesInFlight", .number(stats.bytesInFlight)),
            ("feedbackPackets", .number(stats.feedbackPackets)),
            ("feedbackMissed", .number(stats.feedbackPacketsMissed)),
            ("packetsNumbered", .number(congestionCounters?.packetsNumbered ?? 0)),
            ("framesThinned", .number(chain.framesThinned)),
            ("framesThinnedDroppable", .number(chain.framesThinnedDroppable)),
            ("referenceFramesOverBudget", .number(chain.referenceFramesOverBudget)),
            ("keyframeRequestsDeferred", .number(chain.keyframeRequestsDeferred)),
            ("probeClustersSent", .number(chain.probeClustersSent)),
            ("probeClustersExpired", .number(chain.probeClustersExpired)),
            ("probeResults", .number(stats.probeResults)),
            ("lastProbeKbps", kbps(stats.lastProbeBitsPerSecond)),
            ("probePaddingBytes", .number(chain.probePaddingBytes)),
            ("applicationLimited", .bool(stats.applicationLimited)),
            ("alrProbes", .number(stats.alrProbes)),
        ])
    }
}
