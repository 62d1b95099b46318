import FrameWire
import Foundation
import Media
import ScreencastSupport

/// What `inspect` learns about one frame of a dump.
struct InspectedFrame {
    var frame: FrameHeader
    var offset: Int
    /// The JPEG's own size, when the body decodes fully without a warning.
    var jpegSize: (width: Int, height: Int)?
    /// Why the body did not decode (libturbojpeg's message), else nil.
    var decodeError: String?

    var json: JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("offset", .number(offset)), ("contentLength", .number(frame.contentLength)),
            ("bufferWidth", .number(frame.bufferWidth)), ("bufferHeight", .number(frame.bufferHeight)),
            ("orientation", .number(frame.orientation)), ("rotation", .number(frame.rotation.degrees)),
        ]
        if let jpegSize {
            pairs += [("jpegWidth", .number(jpegSize.width)), ("jpegHeight", .number(jpegSize.height))]
        } else {
            pairs.append(("decodeError", .string(decodeError ?? "unknown")))
        }
        if let timestamp = frame.timestampMicros { pairs.append(("timestamp", .number(timestamp))) }
        if let sequence = frame.sequence { pairs.append(("sequence", .number(sequence))) }
        return .object(pairs)
    }
}

/// The whole reading of a dump: every frame, and how the stream ended.
struct DumpInspection {
    var frames: [InspectedFrame] = []
    var end: FrameStreamEnd = .eof
    var bytes = 0

    /// Reads `path` through the frame decoder and fully decodes every JPEG body (to I420, as the call
    /// process does). Undecodable bodies are recorded and reading goes on.
    /// - Throws: `DumpToolError.io` when the file cannot be opened or read.
    static func inspect(path: String) throws -> DumpInspection {
        var inspection = DumpInspection()
        let jpeg = try JPEGDecoder()
        var picture = I420Buffer()
        try DumpFile.read(path: path) { event in
            switch event {
            case .frame(let frame):
                var item = InspectedFrame(frame: frame.header, offset: frame.offset)
                do {
                    let info = try jpeg.decodeI420(frame.body, into: &picture)
                    item.jpegSize = (info.width, info.height)
                } catch {
                    item.decodeError = "\(error)"
                }
                inspection.frames.append(item)
            case .end(let end):
                inspection.end = end
            }
        } progress: { inspection.bytes = $0 }
        return inspection
    }

    /// The `inspect --json` document (layout in the issue and README).
    var json: JSONValue {
        let error: JSONValue
        if case .error(let wireError) = end {
            error = .object([("kind", .string(wireError.kind)), ("message", .string(wireError.description))])
        } else {
            error = .null
        }
        return .object([("frames", .array(frames.map(\.json))), ("end", .string(end.name)), ("error", error)])
    }

    /// A readable table and summary.
    var table: String {
        var lines = ["    #     offset    length  buffer       orient  rot  jpeg         timestamp(us)  seq"]
        for (index, item) in frames.enumerated() {
            let f = item.frame
            let jpeg = item.jpegSize.map { "\($0.width)x\($0.height)" } ?? "UNDECODABLE"
            lines.append(
                pad(index, 5) + pad(item.offset, 11) + pad(f.contentLength, 10) + "  "
                    + padRight("\(f.bufferWidth)x\(f.bufferHeight)", 11) + pad(f.orientation, 8) + pad(f.rotation.degrees, 5)
                    + "  " + padRight(jpeg, 12) + pad(f.timestampMicros.map(String.init) ?? "-", 14)
                    + pad(f.sequence.map(String.init) ?? "-", 5))
            if let error = item.decodeError { lines.append("      decode error: \(error)") }
        }
        let undecodable = frames.filter { $0.decodeError != nil }.count
        let bodyBytes = frames.reduce(0) { $0 + $1.frame.contentLength }
        var summary = "\(frames.count) frames, \(undecodable) undecodable, \(bodyBytes) body bytes of \(bytes), end: \(end)"
        let stamps = frames.compactMap(\.frame.timestampMicros)
        if stamps.count >= 2, let first = stamps.first, let last = stamps.last, last > first {
            let seconds = Double(last - first) / 1e6
            summary += String(format: ", %.2f s at %.1f fps", seconds, Double(stamps.count - 1) / seconds)
        }
        lines.append(summary)
        return lines.joined(separator: "\n")
    }
}

private func pad(_ value: CustomStringConvertible, _ width: Int) -> String {
    let text = value.description
    return String(repeating: " ", count: max(0, width - text.count)) + text
}

private func padRight(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
}
