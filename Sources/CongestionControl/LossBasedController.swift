/// The loss-based controller (draft-ietf-rmcat-gcc-02 §6; libwebrtc's `SendSideBandwidthEstimation` v1):
///
/// - loss p < ``lowLoss`` (2 %): ×``increaseFactor`` (1.05), at most once per ``increaseIntervalMicros``
///   (200 ms);
/// - p > ``highLoss`` (10 %): ×(1 − 0.5 p), at most once per ``decreaseIntervalMicros`` (300 ms) + RTT — the
///   reaction to a decrease needs a round trip to show;
/// - in between: hold.
///
/// p is measured over at least ``minPacketsPerMeasurement`` (20) packets of TWCC feedback, so one lost packet
/// in a small feedback does not count as 50 %. The estimate never exceeds the delay-based one it is combined
/// with (``cap(at:)``): as in libwebrtc the target is their minimum, and the loss-based side only grows from
/// there — it cannot run away while the delay-based side limits.
public struct LossBasedController: Sendable {
    public static let lowLoss = 0.02
    public static let highLoss = 0.10
    public static let increaseFactor = 1.05
    public static let increaseIntervalMicros: Int64 = 200_000
    public static let decreaseIntervalMicros: Int64 = 300_000
    public static let minPacketsPerMeasurement = 20

    public let minBitrate: Double
    public let maxBitrate: Double
    /// The loss-based estimate, bits/s.
    public private(set) var bitrate: Double
    /// The last measured loss fraction, 0…1 (0 before the first measurement).
    public private(set) var lossFraction = 0.0
    public var roundTripMicros: Int64 = 200_000

    private var lost = 0
    private var expected = 0
    private var lastIncreaseMicros: Int64?
    private var lastDecreaseMicros: Int64?

    public init(startBitrate: Double, minBitrate: Double, maxBitrate: Double) {
        self.minBitrate = minBitrate
        self.maxBitrate = maxBitrate
        bitrate = min(max(startBitrate, minBitrate), maxBitrate)
    }

    /// Adds what one feedback reported (packets lost and received) at `nowMicros`; returns true when a
    /// measurement completed and the estimate was evaluated.
    @discardableResult
    public mutating func onFeedback(lost newlyLost: Int, received: Int, nowMicros: Int64) -> Bool {
        lost += newlyLost
        expected += newlyLost + received
        guard expected >= Self.minPacketsPerMeasurement else { return false }
        lossFraction = Double(lost) / Double(expected)
        lost = 0
        expected = 0
        if lossFraction < Self.lowLoss {
            if lastIncreaseMicros.map({ nowMicros - $0 >= Self.increaseIntervalMicros }) ?? true {
                bitrate = clamp(bitrate * Self.increaseFactor)
                lastIncreaseMicros = nowMicros
            }
        } else if lossFraction > Self.highLoss {
            if lastDecreaseMicros.map({ nowMicros - $0 >= Self.decreaseIntervalMicros + roundTripMicros }) ?? true {
                bitrate = clamp(bitrate * (1 - 0.5 * lossFraction))
                lastDecreaseMicros = nowMicros
            }
        }
        return true
    }

    /// Keeps the estimate at or below `bitsPerSecond` (the delay-based estimate and any ceiling).
    public mutating func cap(at bitsPerSecond: Double) { bitrate = clamp(min(bitrate, bitsPerSecond)) }

    /// Sets the estimate outright (a probe result showed the path carries it).
    public mutating func set(_ bitsPerSecond: Double) { bitrate = clamp(bitsPerSecond) }

    private func clamp(_ value: Double) -> Double { min(max(value, minBitrate), maxBitrate) }
}
