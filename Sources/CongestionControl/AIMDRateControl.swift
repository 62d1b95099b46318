import Foundation

/// The delay-based rate controller (draft-ietf-rmcat-gcc-02 §5.5; libwebrtc's `AimdRateControl` in its
/// send-side form): a state machine driven by the detector's ``BandwidthUsage``.
///
/// - normal → ``RateControlState/increase`` (from hold); overusing → ``RateControlState/decrease``;
///   underusing → ``RateControlState/hold`` (let the queues drain).
/// - Increase, far from the link capacity (no estimate, or the acknowledged rate left its band):
///   multiplicative, ×1.08 per second of elapsed time (at most 1 s counted, at least +1 kbit/s). Near it:
///   additive, one average packet per response time ((RTT + 100 ms) × 2) — about 4–30 kbit/s per second.
///   Never above 1.5 × the acknowledged rate + 10 kbit/s.
/// - Decrease: to ``beta`` (0.85) × the acknowledged rate, never above the current rate (then 0.85 × the
///   link capacity estimate if there is one); then hold until the detector says normal again.
/// - Everything clamped to the configured min…max.
struct AIMDRateControl: Sendable {
    static let beta = 0.85
    static let defaultRoundTripMicros: Int64 = 200_000
    static let multiplicativeIncreasePerSecond = 1.08
    static let minIncreaseBitsPerSecondPerSecond = 4000.0

    let minBitrate: Double
    let maxBitrate: Double
    private(set) var bitrate: Double
    private(set) var state = RateControlState.hold
    private(set) var linkCapacity = LinkCapacityEstimator()
    var roundTripMicros = defaultRoundTripMicros
    private var lastChangeMicros: Int64?
    private(set) var lastDecreaseMicros: Int64?
    private var latestAcknowledged: Double?

    init(startBitrate: Double, minBitrate: Double, maxBitrate: Double) {
        self.minBitrate = minBitrate
        self.maxBitrate = maxBitrate
        bitrate = min(max(startBitrate, minBitrate), maxBitrate)
    }

    /// Whether a further decrease is warranted while over-use continues: one RTT (10…200 ms) after the last
    /// change, or at once when the acknowledged rate fell below half the estimate.
    func timeToReduceFurther(nowMicros: Int64, acknowledgedBitsPerSecond: Double) -> Bool {
        let interval = min(max(roundTripMicros, 10_000), 200_000)
        if let lastChangeMicros, nowMicros - lastChangeMicros < interval {
            return acknowledgedBitsPerSecond < 0.5 * bitrate
        }
        return true
    }

    /// Sets the estimate outright (a probe result, or halving before any acknowledged rate). A probe result
    /// above the link capacity band shows the path changed: the capacity estimate is dropped, as an
    /// acknowledged rate above the band does while increasing.
    mutating func setEstimate(_ bitsPerSecond: Double, nowMicros: Int64, fromProbe: Bool = false) {
        if fromProbe, bitsPerSecond > linkCapacity.upperBound { linkCapacity.reset() }
        let previous = bitrate
        bitrate = clamp(bitsPerSecond)
        lastChangeMicros = nowMicros
        if bitrate < previous { lastDecreaseMicros = nowMicros }
    }

    /// One step with the detector's `usage` and the acknowledged rate (bits/s, nil before the first);
    /// returns the new estimate, bits/s.
    @discardableResult
    mutating func update(usage: BandwidthUsage, acknowledgedBitsPerSecond: Double?, nowMicros: Int64) -> Double {
        if let acknowledgedBitsPerSecond { latestAcknowledged = acknowledgedBitsPerSecond }
        let throughput = acknowledgedBitsPerSecond ?? latestAcknowledged ?? bitrate
        switch usage {
        case .normal:
            if state == .hold {
                lastChangeMicros = nowMicros
                state = .increase
            }
        case .overusing: state = .decrease
        case .underusing: state = .hold
        }

        switch state {
        case .hold: break
        case .increase:
            if throughput > linkCapacity.upperBound { linkCapacity.reset() }
            let limit = 1.5 * throughput + 10_000
            if bitrate < limit {
                let increase = linkCapacity.hasEstimate
                    ? additiveIncrease(nowMicros: nowMicros)
                    : multiplicativeIncrease(nowMicros: nowMicros)
                bitrate = min(bitrate + increase, limit)
            }
            lastChangeMicros = nowMicros
        case .decrease:
            var decreased = Self.beta * throughput
            if decreased > bitrate {
                if linkCapacity.hasEstimate { decreased = Self.beta * linkCapacity.estimate }
                decreased = min(decreased, bitrate)
            }
            if throughput < linkCapacity.lowerBound { linkCapacity.reset() }
            linkCapacity.onOveruse(acknowledgedBitsPerSecond: throughput)
            bitrate = decreased
            state = .hold
            lastChangeMicros = nowMicros
            lastDecreaseMicros = nowMicros
        }
        bitrate = clamp(bitrate)
        return bitrate
    }

    private func multiplicativeIncrease(nowMicros: Int64) -> Double {
        var factor = Self.multiplicativeIncreasePerSecond
        if let lastChangeMicros {
            let seconds = min(Double(nowMicros - lastChangeMicros) / Units.microsPerSecond, 1)
            factor = pow(factor, max(seconds, 0))
        }
        return max(bitrate * (factor - 1), 1000)
    }

    private func additiveIncrease(nowMicros: Int64) -> Double {
        guard let lastChangeMicros else { return 0 }
        return nearMaxIncreasePerSecond * Double(max(nowMicros - lastChangeMicros, 0)) / Units.microsPerSecond
    }

    /// bits/s per second near the capacity: an average packet (a 30 fps frame split into ≤ 1200-byte
    /// packets) per response time.
    var nearMaxIncreasePerSecond: Double {
        let frameBits = bitrate / 30
        let packets = (frameBits / (1200 * 8)).rounded(.up)
        let packetBits = frameBits / max(packets, 1)
        let responseSeconds = 2 * Double(roundTripMicros + 100_000) / Units.microsPerSecond
        return max(Self.minIncreaseBitsPerSecondPerSecond, packetBits / responseSeconds)
    }

    private func clamp(_ value: Double) -> Double { min(max(value, minBitrate), maxBitrate) }
}
