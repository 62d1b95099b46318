import FrameWire
import Foundation
import ScreencastSupport

/// The running totals of `inspect`: what the summary line needs, in constant memory however long the dump.
struct InspectSummary {
    var frames = 0
    var undecodable = 0
    var bodyBytes = 0
    var timestamps = TimestampRuns()
    var sound = SoundSummary()

    mutating func add(_ message: SoundMessage) { sound.add(message) }

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
        if let line = sound.line { text += "; " + line }
        return text
    }

    /// A sound message's table row: `S#  offset  length  sound  48000 Hz 2 ch  480 samples  10.0 ms  level  timestamp  seq`.
    static func soundRow(_ sound: SoundMessage, index: Int, level: SoundLevel) -> String {
        let header = sound.header
        let text = "S" + String(index) + "  " + String(sound.offset) + "  " + String(header.bodyByteCount) + "  sound "
            + "\(header.rate) Hz \(header.channels) ch  \(header.samples) samples  "
            + String(format: "%.1f ms  %@ dBFS  ", Double(header.durationMicros) / 1000, SoundSummary.dB(level.rmsDBFS))
            + "\(header.timestampMicros)  \(header.sequence.map(String.init) ?? "-")"
        return "    " + text
    }

    /// One element of `inspect --json`'s `sounds` array.
    static func soundJSON(_ sound: SoundMessage, level: SoundLevel) -> JSONValue {
        let header = sound.header
        var pairs: [(String, JSONValue)] = [
            ("offset", .number(sound.offset)), ("contentLength", .number(header.bodyByteCount)),
            ("format", .string(header.format.rawValue)), ("rate", .number(header.rate)),
            ("channels", .number(header.channels)), ("samples", .number(header.samples)),
            ("timestamp", .uint(header.timestampMicros)),
        ]
        if let sequence = header.sequence { pairs.append(("sequence", .uint(sequence))) }
        if let source = header.source { pairs.append(("source", .string(source))) }
        if level.rmsDBFS.isFinite { pairs.append(("rmsDBFS", .double((level.rmsDBFS * 10).rounded() / 10))) }
        return .object(pairs)
    }
}

/// The sound messages of a dump (Protocol/frame-wire.md §2.10): how many, how long, how loud.
struct SoundSummary {
    var messages = 0
    var samples = 0
    /// Sound time in µs: the sum of every message's duration.
    var micros: UInt64 = 0
    var level = SoundLevel()
    var first: UInt64?
    var last: UInt64?
    /// Messages whose timestamp is below the previous one's.
    var backwards = 0
    var formats: Set<String> = []

    mutating func add(_ message: SoundMessage) {
        let header = message.header
        messages += 1
        samples += header.samples
        micros += header.durationMicros
        level.add(message.body)
        if let last, header.timestampMicros < last { backwards += 1 }
        first = first ?? header.timestampMicros
        last = header.timestampMicros
        formats.insert("\(header.rate) Hz \(header.channels) ch \(header.format)")
    }

    /// `sound: 300 messages, 3.00 s, 48000 Hz 2 ch S16LE, level -9.0 dBFS RMS (peak -6.0 dBFS)`; nil without sound.
    var line: String? {
        guard messages > 0 else { return nil }
        var text = "sound: \(messages) message\(messages == 1 ? "" : "s"), " + String(format: "%.2f s", Double(micros) / 1e6)
            + ", " + formats.sorted().joined(separator: " / ")
            + ", level \(Self.dB(level.rmsDBFS)) dBFS RMS (peak \(Self.dB(level.peakDBFS)) dBFS)"
        if backwards > 0 { text += ", \(backwards) timestamp\(backwards == 1 ? " goes" : "s go") backwards" }
        return text
    }

    /// The `sound` member of `inspect --json`.
    var json: JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("messages", .number(messages)), ("samples", .number(samples)), ("durationMicros", .uint(micros)),
        ]
        if level.rmsDBFS.isFinite { pairs.append(("rmsDBFS", .double((level.rmsDBFS * 10).rounded() / 10))) }
        if level.peakDBFS.isFinite { pairs.append(("peakDBFS", .double((level.peakDBFS * 10).rounded() / 10))) }
        return .object(pairs)
    }

    /// A level in dB with one decimal, `-inf` for silence.
    static func dB(_ value: Double) -> String { value.isFinite ? String(format: "%.1f", value) : "-inf" }
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
