/// The seed's adaptive bitrate for one RTMP destination, from its send queue: one step down when the queue's
/// delay passes ``downDelayMicros`` (500 ms) or pictures were dropped, one step up after ``upQuietMicros``
/// (5 s) without drops and with the delay under that mark. Steps are fractions of the encoding's configured
/// target (``steps``: 100 %, 75 %, 50 %, 35 %); after a step down the next waits ``downSpacingMicros`` (2 s)
/// for the queue to show what the lower rate did. Sans-I/O: the destination feeds it its queue on each
/// picture, with the picture's capture time as now, and passes a changed fraction to the shared encoding
/// (which follows the lowest of its destinations).
public struct QueueBitrateAdapter: Sendable, Equatable {
    /// The targets, as fractions of the configured one, highest first.
    public static let steps: [Double] = [1.0, 0.75, 0.5, 0.35]
    /// A queue delay above this steps down, µs.
    public static let downDelayMicros: UInt64 = 500_000
    /// Time without drops (and under ``downDelayMicros``) before a step up, µs.
    public static let upQuietMicros: UInt64 = 5_000_000
    /// The least time between two steps down, µs.
    public static let downSpacingMicros: UInt64 = 2_000_000

    /// Index into ``steps``.
    public private(set) var step = 0
    private var dropped = 0
    /// When the last drop was seen, or the last step taken (what the quiet time counts from), µs.
    private var calmSince: UInt64
    private var lastDown: UInt64?

    /// Starts at the full target; `now` in µs.
    public init(now: UInt64) { calmSince = now }

    /// The fraction of the configured target now.
    public var fraction: Double { Self.steps[step] }

    /// The queue now: its delay (oldest to newest waiting picture), µs, and its drops since the start.
    /// - Returns: the new fraction when it changed, else nil.
    public mutating func observe(queueDelayMicros: UInt64, dropped total: Int, now: UInt64) -> Double? {
        let newDrops = total > dropped
        dropped = total
        if newDrops { calmSince = now }
        if newDrops || queueDelayMicros > Self.downDelayMicros {
            guard step + 1 < Self.steps.count, lastDown.map({ now >= $0 + Self.downSpacingMicros }) ?? true else { return nil }
            step += 1
            lastDown = now
            calmSince = now
            return fraction
        }
        guard step > 0, now >= calmSince + Self.upQuietMicros else { return nil }
        step -= 1
        calmSince = now
        return fraction
    }
}
