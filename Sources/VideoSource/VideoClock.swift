import ScreencastSupport
import Synchronization

/// The time source of a video source: capture timestamps, idle refinement and keyframe spacing read it,
/// so tests and replays can substitute their own. Microseconds on CLOCK_MONOTONIC's scale.
public protocol VideoClock: Sendable {
    /// Now, in microseconds (CLOCK_MONOTONIC for the system clock).
    func nowMicros() -> UInt64
}

/// The real clock: `MonotonicClock.nowMicros()`.
public struct SystemVideoClock: VideoClock {
    public init() {}
    /// CLOCK_MONOTONIC now, µs.
    public func nowMicros() -> UInt64 { MonotonicClock.nowMicros() }
}

/// A clock that moves only when told to (tests).
public final class ManualVideoClock: VideoClock {
    private let now: Mutex<UInt64>

    /// A clock standing at `startMicros`.
    public init(startMicros: UInt64 = 1_000_000) { now = Mutex(startMicros) }

    /// The time it was last set to, µs.
    public func nowMicros() -> UInt64 { now.withLock { $0 } }

    /// Moves the clock forward by `micros`.
    public func advance(by micros: UInt64) { now.withLock { $0 += micros } }

    /// Sets the clock (it may go backwards; the encoder still keeps timestamps increasing).
    public func set(_ micros: UInt64) { now.withLock { $0 = micros } }
}
