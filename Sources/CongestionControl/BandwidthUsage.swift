/// What the delay-based detector concludes about the path (draft-ietf-rmcat-gcc-02 §5.4; libwebrtc's
/// `BandwidthUsage`).
public enum BandwidthUsage: String, Sendable, Equatable, CaseIterable {
    /// Queues are stable.
    case normal
    /// Queueing delay is growing: we send more than the path carries.
    case overusing
    /// Queueing delay is shrinking: queues are draining.
    case underusing
}

/// The AIMD rate controller's state (draft-ietf-rmcat-gcc-02 §5.5, Figure 2).
public enum RateControlState: String, Sendable, Equatable, CaseIterable {
    /// Keep the rate (after a decrease, or while queues drain).
    case hold
    /// Raise the rate, multiplicatively far from the link capacity, additively near it.
    case increase
    /// Lower the rate to 0.85 × the acknowledged rate.
    case decrease
}

/// Conversions used throughout: time in µs (`Int64`), rates in bits per second.
enum Units {
    static let microsPerSecond = 1_000_000.0
    static let microsPerMilli: Int64 = 1000

    /// The rate, bits/s, of `bytes` over `micros`.
    static func bitsPerSecond(bytes: Int, micros: Int64) -> Double {
        micros > 0 ? Double(bytes) * 8 * microsPerSecond / Double(micros) : 0
    }
}
