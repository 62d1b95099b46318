import Foundation

/// Reads CLOCK_MONOTONIC in microseconds: the time base of capture timestamps
/// (`Buffer-Timestamp`) and of every interval this project measures.
public enum MonotonicClock {
    /// Microseconds since an unspecified start (boot), from `clock_gettime(CLOCK_MONOTONIC)`.
    public static func nowMicros() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }
}

extension Duration {
    /// The duration in whole microseconds, truncated; 0 for a negative one (timers and limits on the
    /// monotonic µs clock of ``MonotonicClock``).
    public var wholeMicroseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000)
    }
}
