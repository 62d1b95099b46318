/// A 64-bit NTP timestamp (RFC 3550 §4, RFC 5905 §6): whole seconds since 1900-01-01 00:00 UTC in the
/// upper 32 bits and the fraction of a second in units of 2⁻³² s in the lower 32 bits.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                            Seconds                            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                            Fraction                           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Its middle 32 bits (``compact``, 16.16 fixed point) are what RTCP report blocks echo as LSR and measure
/// DLSR in (RFC 3550 §6.4.1).
public struct NTPTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Seconds between the NTP era (1900) and the Unix epoch (1970).
    public static let unixEpochOffsetSeconds: UInt64 = 2_208_988_800

    /// The full 64-bit value: seconds << 32 | fraction.
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public init(seconds: UInt32, fraction: UInt32) {
        rawValue = UInt64(seconds) << 32 | UInt64(fraction)
    }

    /// The NTP time of a Unix time given in microseconds since 1970-01-01 UTC (the fraction is rounded
    /// down to the 2⁻³² s grid; exact to well under a microsecond).
    public init(unixMicroseconds: UInt64) {
        let seconds = unixMicroseconds / 1_000_000 + Self.unixEpochOffsetSeconds
        let micros = unixMicroseconds % 1_000_000
        let fraction = (micros << 32) / 1_000_000
        rawValue = (seconds << 32) | fraction
    }

    /// Whole seconds since 1900 (the upper word; wraps in 2036, era 1 is not modelled).
    public var seconds: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 32) }
    /// The fraction of a second in units of 2⁻³² s (the lower word).
    public var fraction: UInt32 { UInt32(truncatingIfNeeded: rawValue) }

    /// The middle 32 bits: 16 bits of seconds and 16 bits of fraction, in units of 1/65536 s. This is
    /// the LSR value of a report block that answers a Sender Report carrying this timestamp.
    public var compact: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 16) }

    /// Microseconds since the Unix epoch (rounded down); nil for times before 1970.
    public var unixMicroseconds: UInt64? {
        let seconds = UInt64(self.seconds)
        guard seconds >= Self.unixEpochOffsetSeconds else { return nil }
        let micros = (UInt64(fraction) * 1_000_000) >> 32
        return (seconds - Self.unixEpochOffsetSeconds) * 1_000_000 + micros
    }

    public static func < (a: NTPTimestamp, b: NTPTimestamp) -> Bool { a.rawValue < b.rawValue }

    public var description: String { "\(seconds).\(String(fraction, radix: 16))" }
}

/// A source of wall-clock time, injected wherever NTP timestamps are produced so output can be replayed:
/// the process supplies one reading the system clock, tests supply fixed or scripted values.
public protocol WallClock: Sendable {
    /// Microseconds since 1970-01-01 00:00 UTC.
    func unixMicroseconds() -> UInt64
}

extension WallClock {
    /// The current time as an NTP timestamp.
    public func ntpNow() -> NTPTimestamp { NTPTimestamp(unixMicroseconds: unixMicroseconds()) }
}

/// Maps capture time (CLOCK_MONOTONIC microseconds, the project's capture timestamps) to RTP timestamps
/// of a given clock rate (90 kHz for video, RFC 7741 §4.1), starting from a random offset as RFC 3550 §5.1
/// asks. RTP timestamps wrap modulo 2³².
public struct RTPTimestampMapper: Sendable, Equatable {
    /// RTP clock rate in Hz (90 000 for video).
    public let clockRate: UInt32
    /// The RTP timestamp that ``originMicroseconds`` maps to.
    public let offset: UInt32
    /// The capture time (µs) that maps to ``offset``.
    public let originMicroseconds: UInt64

    public init(clockRate: UInt32 = 90_000, offset: UInt32, originMicroseconds: UInt64) {
        self.clockRate = clockRate
        self.offset = offset
        self.originMicroseconds = originMicroseconds
    }

    /// The RTP timestamp of a capture time in microseconds (times before the origin count backwards).
    /// Computed from the absolute difference, so rounding errors never accumulate.
    public func rtpTimestamp(forMicroseconds micros: UInt64) -> UInt32 {
        if micros >= originMicroseconds {
            let ticks = (micros - originMicroseconds) &* UInt64(clockRate) / 1_000_000
            return offset &+ UInt32(truncatingIfNeeded: ticks)
        } else {
            let ticks = (originMicroseconds - micros) &* UInt64(clockRate) / 1_000_000
            return offset &- UInt32(truncatingIfNeeded: ticks)
        }
    }
}
