/// Keeps one kind of log line from flooding the log: a burst of `burst` lines goes out at once, after
/// that one line per `intervalMicros` (a token bucket); lines held back are counted, and the next line
/// that goes out carries the count (`suppressed=N`).
///
/// For "once per change" messages whose input can change on every frame (sizes or rotations that
/// alternate, connections that come and go): the first changes are all logged, a flood costs one line
/// per 5 s. Not thread-safe: one owner (or wrap it in a Mutex).
public struct LogRateLimiter: Sendable {
    /// Lines that may go out back to back.
    public let burst: Int
    /// One more line per this many µs once the burst is spent.
    public let intervalMicros: UInt64
    private var tokens: Double
    private var lastRefill: UInt64?
    /// Lines held back since the last one that went out.
    public private(set) var suppressed = 0

    public init(burst: Int = 3, intervalMicros: UInt64 = 5_000_000) {
        self.burst = max(1, burst)
        self.intervalMicros = max(1, intervalMicros)
        tokens = Double(self.burst)
    }

    /// Whether a line may go out at `now` (µs, CLOCK_MONOTONIC): nil when it is held back (and counted),
    /// else how many were held back before it (0 usually).
    public mutating func admit(now: UInt64 = MonotonicClock.nowMicros()) -> Int? {
        if let last = lastRefill {
            if now > last {
                tokens = min(Double(burst), tokens + Double(now - last) / Double(intervalMicros))
                lastRefill = now
            }
        } else {
            lastRefill = now
        }
        guard tokens >= 1 else {
            suppressed += 1
            return nil
        }
        tokens -= 1
        defer { suppressed = 0 }
        return suppressed
    }

    /// For lines that must never be lost entirely: `level` with the count held back before it when the line
    /// may go out at `now`, else `.debug` (so `--log-level debug` still sees every one) with 0.
    public mutating func level(_ level: LogLevel, now: UInt64 = MonotonicClock.nowMicros()) -> (level: LogLevel, suppressed: Int) {
        admit(now: now).map { (level, $0) } ?? (.debug, 0)
    }

    /// For counted faults of one owner (a sender's decode failures, an encoder's errors): whether the `count`th
    /// (from 1) is logged — the first `first`, then every `every`th — so a fault on every frame costs a line per
    /// 100 frames and the count in each line says how many there were.
    public static func isSampled(_ count: Int, first: Int = 3, every: Int = 100) -> Bool {
        count >= 1 && (count <= first || count % max(1, every) == 0)
    }
}
