/// Decides the shared encoder's droppable cadence (``VideoSource/setDroppableCadence(period:)``) from the
/// viewers' estimates, sans-I/O: the owner passes what ``BitrateFollower`` counts and the time
/// (CLOCK_MONOTONIC µs), and applies the period returned when it changes.
///
/// - On while a GCC viewer is an outlier (``BitrateFollower/outliers``: its target below half the highest
///   estimate, so the encoder runs above what it carries and its sender chain thins its frames): one
///   reference frame in `N = clamp(ceil(highest / lowest outlier), 2, 6)` new frames, so the reference
///   frames alone come at about the outlier's share of the rate. The encoder thread lowers N further so the
///   thinned viewer keeps the rate policy's 5 fps floor at the current frame rate.
/// - Off once no outlier has been left for ``offHoldMicros`` (an estimate that hovers around the outlier
///   line does not switch libvpx's error-resilient mode on and off at every feedback), at once when the
///   estimates are gone.
///
/// Why not simply thin reference frames: a VP8 interframe left out breaks every later one for that viewer
/// until a keyframe, and keyframes come from the shared encoder, so every viewer pays for them.
public struct DroppableCadencePolicy: Sendable, Equatable {
    /// The periods the cadence takes: one reference frame in 2 … 6 new frames.
    public static let periods = 2...6
    /// How long no outlier must remain before the cadence goes off, µs.
    public let offHoldMicros: UInt64
    /// The default ``offHoldMicros``: 5 s.
    public static let defaultOffHoldMicros: UInt64 = 5_000_000
    /// The period in force (nil: off).
    public private(set) var period: Int?
    /// Since when no outlier has been seen while the cadence is on, µs.
    private var quietSince: UInt64?

    public init(offHoldMicros: UInt64 = DroppableCadencePolicy.defaultOffHoldMicros) {
        self.offHoldMicros = offHoldMicros
    }

    /// The period for a highest estimate and the lowest outlier's (kbps): `clamp(ceil(highest / outlier), 2, 6)`.
    public static func period(highestKbps: Int, outlierKbps: Int) -> Int {
        let ratio = (Double(max(1, highestKbps)) / Double(max(1, outlierKbps))).rounded(.up)
        return Int(min(Double(periods.upperBound), max(Double(periods.lowerBound), ratio)))
    }

    /// What the follower's estimates ask for at `nowMicros`; returns the new period (`.some(nil)`: off) when it
    /// changed, nil when it did not.
    public mutating func update(_ follower: BitrateFollower, nowMicros: UInt64) -> Int?? {
        update(highestKbps: follower.highestEstimateKbps, lowestOutlierKbps: follower.lowestOutlierKbps, nowMicros: nowMicros)
    }

    /// ``update(_:nowMicros:)`` from the numbers themselves (kbps; nil: no estimate, no outlier).
    public mutating func update(highestKbps: Int?, lowestOutlierKbps: Int?, nowMicros: UInt64) -> Int?? {
        let wanted: Int?
        if let highest = highestKbps, let outlier = lowestOutlierKbps {
            quietSince = nil
            wanted = Self.period(highestKbps: highest, outlierKbps: outlier)
        } else if period == nil || highestKbps == nil {
            quietSince = nil
            wanted = nil
        } else {
            let since = quietSince ?? nowMicros
            quietSince = since
            wanted = nowMicros >= since &+ offHoldMicros ? nil : period
        }
        guard wanted != period else { return nil }
        if wanted == nil { quietSince = nil }
        period = wanted
        return .some(wanted)
    }
}
