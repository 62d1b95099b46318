import FrameWire
import Foundation
import ScreencastSupport

/// The running totals of `inspect`: what the summary line needs, in constant memory however long the dump.
struct InspectSummary {
    var frames = 0
    var undecodable = 0
    var bodyBytes = 0
    var timestamps = TimestampRuns()

    mutating func add(_ frame: InspectedFrame) {
        frames += 1
        if frame.decodeError != nil { undecodable += 1 }
        bodyBytes += frame.header.contentLength
        if let stamp = frame.header.timestampMicros { timestamps.add(stamp) }
    }

    /// `N frames, U undecodable, B body bytes, read R bytes, end: …` plus the timestamp span and rate.
    func line(end: StreamEnding) -> String {
        var text = "\(frames) frames, \(undecodable) undecodable, \(bodyBytes) body bytes, read \(end.bytesRead) bytes, "
            + "end: \(end.text)"
        if let stamps = timestamps.summary { text += ", " + stamps }
        return text
    }
}

/// How a dump's stream ended, with where: the decoder's end plus the bytes it consumed.
struct StreamEnding {
    var end: FrameStreamEnd
    /// Bytes consumed; after a wire-format error, through the byte at which the fault was detected.
    var bytesRead: Int

    /// Where a wire-format fault was detected, as a 0-based byte offset (like a frame's `offset`).
    var faultOffset: Int? {
        if case .error = end { return max(0, bytesRead - 1) }
        return nil
    }

    /// `eof`, `truncated (EOF inside a message)` or `error: REASON (detected at byte N, offset N-1)`.
    var text: String {
        switch end {
        case .eof: "eof"
        case .truncated: "truncated (the stream ends inside a message)"
        case .error(let error): "error: \(Self.message(error, bytesRead: bytesRead))"
        }
    }

    /// A wire error's text with where it was detected: `bad status line: … (detected at byte 9, offset 8)`.
    static func message(_ error: FrameWireError, bytesRead: Int) -> String {
        "\(error) (detected at byte \(bytesRead), offset \(max(0, bytesRead - 1)))"
    }

    /// The `error` member of `inspect --json`: null, or `{"kind","message","offset"}`.
    var json: JSONValue {
        guard case .error(let error) = end else { return .null }
        return .object([
            ("kind", .string(error.kind)), ("message", .string(Self.message(error, bytesRead: bytesRead))),
            ("offset", .number(faultOffset ?? 0)),
        ])
    }
}

/// Buffer-Timestamp values in stream order: how many go backwards, and the longest run that does not, over
/// which the frame rate is computed (a rate across a jump backwards would be meaningless).
struct TimestampRuns {
    private(set) var count = 0
    /// Timestamps lower than the previous frame's.
    private(set) var backwards = 0
    private var previous: UInt64?
    private var current = Run(first: 0, last: 0, frames: 0)
    private var longest = Run(first: 0, last: 0, frames: 0)

    struct Run {
        var first: UInt64
        var last: UInt64
        var frames: Int
        var micros: UInt64 { last - first }
    }

    mutating func add(_ stamp: UInt64) {
        count += 1
        if let previous, stamp < previous {
            backwards += 1
            current = Run(first: stamp, last: stamp, frames: 1)
        } else if current.frames == 0 {
            current = Run(first: stamp, last: stamp, frames: 1)
        } else {
            current.last = stamp
            current.frames += 1
        }
        if current.frames > longest.frames { longest = current }
        previous = stamp
    }

    /// The longest run of non-decreasing timestamps (the first of equally long ones).
    var longestRun: Run? { longest.frames > 0 ? longest : nil }

    /// `0.10 s at 30.0 fps`, or with jumps backwards `2 timestamps go backwards; longest monotonic run: …`;
    /// nil without at least two timestamps.
    var summary: String? {
        guard count >= 2, let run = longestRun else { return nil }
        let rate = run.frames >= 2 && run.micros > 0
            ? String(format: "%.2f s at %.1f fps", Double(run.micros) / 1e6, Double(run.frames - 1) / (Double(run.micros) / 1e6))
            : "no time passes"
        if backwards == 0 { return "timestamps: " + rate }
        return "\(backwards) timestamp\(backwards == 1 ? " goes" : "s go") backwards; "
            + "longest monotonic run: \(run.frames) frames, \(rate)"
    }
}
