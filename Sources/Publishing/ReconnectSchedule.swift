/// When to try publishing again after the SFU leg dropped (the RTMP push SDKs' policy): at once, then
/// after 2 s, 5 s, 10 s, then every 10 s, until an attempt stays up; a success starts the schedule over.
/// Sans-I/O: the owner asks for the next delay and sleeps itself.
public struct ReconnectSchedule: Sendable, Equatable {
    /// Delays of the first attempts, ms; the last repeats.
    public static let delaysMillis: [UInt64] = [0, 2_000, 5_000, 10_000]
    /// Attempts since the last success.
    public private(set) var failures = 0
    /// Reconnects started since publishing began (for `/stats`).
    public private(set) var reconnects = 0

    public init() {}

    /// The delay before the next attempt, ms; counts it.
    public mutating func nextDelayMillis() -> UInt64 {
        let delay = Self.delaysMillis[min(failures, Self.delaysMillis.count - 1)]
        failures += 1
        reconnects += 1
        return delay
    }

    /// The leg came up (media connected): the next drop starts at "at once" again.
    public mutating func succeeded() { failures = 0 }
}
