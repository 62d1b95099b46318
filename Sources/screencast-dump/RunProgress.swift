import Dispatch
import Foundation
import ScreencastSupport
import Synchronization

/// Runs `tick` every `seconds` on its own queue (first after one interval) until cancelled or released.
/// `replay` and `record` use one for their 5-second progress lines and `replay` one to watch a lossless run.
final class RepeatingTimer: @unchecked Sendable {
    // @unchecked Sendable: `timer` is set once in init; dispatch sources are thread-safe to cancel.
    private let timer: any DispatchSourceTimer

    init(every seconds: Double, label: String, _ tick: @escaping @Sendable () -> Void) {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: label))
        let interval = DispatchTimeInterval.microseconds(Int(seconds * 1e6))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler(handler: tick)
        timer.resume()  // a dispatch source must be resumed before it is released
    }

    /// Stops the ticks; a tick already running finishes. Idempotent.
    func cancel() { timer.cancel() }

    deinit { timer.cancel() }
}

/// How often `replay` and `record` print a progress line while they run.
enum RunProgress {
    static let intervalSeconds = 5.0

    /// `replay: 150 frames sent (1234567 bytes), 30.0 fps, 0 dropped, 5.0 s`.
    static func replayLine(sent: Int, bytes: Int, dropped: Int, elapsedMicros: UInt64) -> String {
        "replay: \(sent) frames sent (\(bytes) bytes), \(Format.fps(sent, over: elapsedMicros)), \(dropped) dropped, "
            + Format.elapsed(elapsedMicros)
    }

    /// `record: 150 frames (1234567 bytes), 30.0 fps, 5.0 s`.
    static func recordLine(frames: Int, bytes: Int, elapsedMicros: UInt64) -> String {
        "record: \(frames) frames (\(bytes) bytes), \(Format.fps(frames, over: elapsedMicros)), \(Format.elapsed(elapsedMicros))"
    }
}

/// A flag set from a signal handler or a timer and read by the main loop.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) }
}

/// A time read by the progress timer: set once (0 until then).
final class SharedInstant: Sendable {
    private let value = Atomic<UInt64>(0)
    /// Sets the instant unless it is set already.
    func setOnce(_ micros: UInt64) { _ = value.compareExchange(expected: 0, desired: micros, ordering: .relaxed) }
    /// The instant, or nil while unset.
    var micros: UInt64? {
        let current = value.load(ordering: .relaxed)
        return current == 0 ? nil : current
    }
}
