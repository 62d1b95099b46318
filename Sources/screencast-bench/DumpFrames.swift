import Foundation
import FrameWire

/// The frames of a `.frames` dump (the agent's `--output`): JPEG bodies with their capture timestamps.
struct DumpFrames {
    struct Entry {
        var jpeg: [UInt8]
        /// `Buffer-Timestamp` (µs); 1/30 s apart when the dump has none.
        var timestampMicros: UInt64
    }

    var entries: [Entry] = []

    /// Reads the whole dump.
    /// - Throws: `BenchError` when the file cannot be read or holds no frame.
    init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else { throw BenchError("cannot read \(path)") }
        var decoder = FrameDecoder()
        var frames: [Frame] = []
        decoder.feed(data) { if case .frame(let frame) = $0 { frames.append(frame) } }
        decoder.finish { if case .frame(let frame) = $0 { frames.append(frame) } }
        guard !frames.isEmpty else { throw BenchError("\(path) holds no frame") }
        var previous: UInt64 = 0
        for (index, frame) in frames.enumerated() {
            let timestamp = frame.header.timestampMicros ?? UInt64(index) * 33_333
            previous = max(timestamp, previous)
            entries.append(Entry(jpeg: frame.body, timestampMicros: previous))
        }
    }

    /// Seconds from the first frame to the last.
    var durationSeconds: Double {
        guard let first = entries.first, let last = entries.last else { return 0 }
        return Double(last.timestampMicros - first.timestampMicros) / 1e6
    }
}

/// A failure of a bench stage (missing input, a display that does not open).
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
