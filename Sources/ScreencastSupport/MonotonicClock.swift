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
