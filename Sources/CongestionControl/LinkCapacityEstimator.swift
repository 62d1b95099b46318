import Foundation

/// An estimate of the bottleneck's capacity from the acknowledged rates seen at each over-use (libwebrtc's
/// `LinkCapacityEstimator`; the "average max bitrate" of draft-ietf-rmcat-gcc-02 §5.5).
///
/// Each over-use moves the estimate 5 % towards the acknowledged rate, and a normalized variance
/// (kbit/s, clamped to 0.4…2.5) towards the squared error; the deviation is √(variance × estimate). The AIMD
/// controller increases additively while the acknowledged rate lies within estimate ± 3 deviations, and
/// forgets the estimate when it leaves that band (the path changed).
struct LinkCapacityEstimator: Sendable {
    static let alpha = 0.05
    static let varianceRange: ClosedRange<Double> = 0.4...2.5

    /// kbit/s.
    private(set) var estimateKbps: Double?
    private var normalizedVariance = 0.4

    var hasEstimate: Bool { estimateKbps != nil }

    /// The estimate plus 3 deviations, bits/s; infinite without an estimate.
    var upperBound: Double {
        guard let estimateKbps else { return .infinity }
        return (estimateKbps + 3 * deviationKbps(estimateKbps)) * 1000
    }

    /// The estimate minus 3 deviations, bits/s; 0 without an estimate.
    var lowerBound: Double {
        guard let estimateKbps else { return 0 }
        return max(0, estimateKbps - 3 * deviationKbps(estimateKbps)) * 1000
    }

    /// The estimate, bits/s (0 without one).
    var estimate: Double { (estimateKbps ?? 0) * 1000 }

    mutating func onOveruse(acknowledgedBitsPerSecond: Double) {
        let sample = acknowledgedBitsPerSecond / 1000
        let estimate = estimateKbps.map { (1 - Self.alpha) * $0 + Self.alpha * sample } ?? sample
        estimateKbps = estimate
        let error = estimate - sample
        normalizedVariance = (1 - Self.alpha) * normalizedVariance + Self.alpha * error * error / max(estimate, 1)
        normalizedVariance = min(max(normalizedVariance, Self.varianceRange.lowerBound), Self.varianceRange.upperBound)
    }

    mutating func reset() { estimateKbps = nil }

    private func deviationKbps(_ estimate: Double) -> Double { (normalizedVariance * estimate).squareRoot() }
}
