import ScreencastSupport

/// Keeps one kind of log line from flooding the log: a burst of `burst` lines goes out at once, after
/// that one line per `intervalMicros` (a token bucket); lines held back are counted, and the next line
/// that goes out carries the count (`suppressed=N`).
///
/// For "once per change" messages whose input can change on every frame (sizes or rotations that
/// alternate, connections that come and go): the first changes are all logged, a flood costs one line
/// per 5 s. Not thread-safe: one owner (or wrap it in a Mutex).
struct LogRateLimiter: Sendable {
    /// Lines that may go out back to back.
    let burst: Int
    /// One more line per this many µs once the burst is spent.
    let intervalMicros: UInt64
    private var tokens: Double
    private var lastRefill: UInt64?
    /// Lines held back since the last one that went out.
    private(set) var suppressed = 0

    init(burst: Int = 3, intervalMicros: UInt64 = 5_000_000) {
        self.burst = max(1, burst)
        self.intervalMicros = max(1, intervalMicros)
        tokens = Double(self.burst)
    }

    /// Whether a line may go out at `now` (µs, CLOCK_MONOTONIC): nil when it is held back (and counted),
    /// else how many were held back before it (0 usually).
    mutating func admit(now: UInt64 = MonotonicClock.nowMicros()) -> Int? {
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
}

/// The largest of the last `count` values recorded (a small ring): "the current size" of a stream whose
/// sizes may alternate, so that memory sized for it is neither kept after the stream shrinks for good nor
/// dropped and re-made on every alternation.
struct RecentMaximum: Sendable {
    private var values: [Int]
    private var next = 0

    init(count: Int = 8) { values = [Int](repeating: 0, count: max(1, count)) }

    mutating func record(_ value: Int) {
        values[next] = value
        next = (next + 1) % values.count
    }

    /// The largest of the recorded values (0 before any).
    var maximum: Int { values.max() ?? 0 }
}
