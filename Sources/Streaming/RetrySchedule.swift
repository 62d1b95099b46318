/// When to connect again after a destination dropped or refused (the live-push SDKs' policy, as the SFU
/// leg's): at once, then after 2 s, 5 s, 10 s, then every 10 s, at most ``limit`` attempts in a row
/// (0: forever); a connection that publishes starts the schedule over. Sans-I/O: the owner asks for the next
/// delay and sleeps itself.
public struct RetrySchedule: Sendable, Equatable {
    /// Delays of the first attempts, ms; the last repeats.
    public static let delaysMillis: [UInt64] = [0, 2_000, 5_000, 10_000]
    /// Attempts allowed in a row without publishing; 0: no limit.
    public let limit: Int
    /// Attempts since the last success.
    public private(set) var failures = 0
    /// Reconnect attempts since the output started (for `/stats`).
    public private(set) var reconnects = 0

    public init(limit: Int) { self.limit = max(0, limit) }

    /// The delay before the next attempt, ms, counting it; nil when ``limit`` attempts have failed in a row
    /// (the output gives up).
    public mutating func nextDelayMillis() -> UInt64? {
        if limit > 0, failures >= limit { return nil }
        let delay = Self.delaysMillis[min(failures, Self.delaysMillis.count - 1)]
        failures += 1
        reconnects += 1
        return delay
    }

    /// A connection published (header and a keyframe written): the next drop starts at "at once" again.
    public mutating func succeeded() { failures = 0 }
}
