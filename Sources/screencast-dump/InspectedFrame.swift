import FrameWire
import ScreencastSupport

/// What `inspect` learns about one frame of a dump; made, printed and dropped one frame at a time.
struct InspectedFrame {
    var header: FrameHeader
    var offset: Int
    /// The JPEG's own size, when the body decodes fully without a warning.
    var jpegSize: (width: Int, height: Int)?
    /// Why the body did not decode (libturbojpeg's message), else nil.
    var decodeError: String?

    /// One element of the `frames` array of `inspect --json` (layout in HelpText.inspect).
    var json: JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("offset", .number(offset)), ("contentLength", .number(header.contentLength)),
            ("bufferWidth", .number(header.bufferWidth)), ("bufferHeight", .number(header.bufferHeight)),
            ("orientation", .number(header.orientation)), ("rotation", .number(header.rotation.degrees)),
            ("format", .string(header.format.rawValue)),
        ]
        if header.format == .i420 {
            // Raw: its size is Buffer-Width/Height, its length checked by the wire decoder; its range said.
            pairs.append(("colorRange", .string(header.bodyColorRange.rawValue)))
        } else if let memory = header.memory {
            // Shared memory: the picture is not in the dump; where it was is.
            pairs.append(("memory", .array([.uint(memory.generation), .number(memory.slot), .uint(memory.version)])))
        } else if let jpegSize {
            pairs += [("jpegWidth", .number(jpegSize.width)), ("jpegHeight", .number(jpegSize.height))]
        } else {
            pairs.append(("decodeError", .string(decodeError ?? "unknown")))
        }
        if let timestamp = header.timestampMicros { pairs.append(("timestamp", .number(timestamp))) }
        if let sequence = header.sequence { pairs.append(("sequence", .number(sequence))) }
        if let capture = header.capture {
            pairs.append(("capture", .object(capture.fields.map { ($0.name, .string($0.value)) })))
        }
        // Buffer-Damage (frame-wire.md §2.9): [x, y, w, h] lists ([] for none), or the fault's kind.
        if let damage = header.damage {
            pairs.append(("damage", .array(damage.map { .array([.number($0.x), .number($0.y), .number($0.width), .number($0.height)]) })))
        }
        if let fault = header.damageFault { pairs.append(("damageFault", .string(fault.kind))) }
        return .object(pairs)
    }

    /// The column titles of the table.
    static let tableTitle = "    #     offset    length  buffer       orient  rot  format  jpeg         timestamp(us)  seq"

    /// The frame's table row (numbered `index`), plus a `decode error:` line when the body did not decode.
    func tableRows(index: Int) -> String {
        let jpeg = header.format == .i420 ? "(\(header.bodyColorRange))"
            : header.memory.map { "(shm \($0.generation)/\($0.slot))" } ?? jpegSize.map { "\($0.width)x\($0.height)" } ?? "UNDECODABLE"
        var text = pad(index, 5) + pad(offset, 11) + pad(header.contentLength, 10) + "  "
            + padRight("\(header.bufferWidth)x\(header.bufferHeight)", 11) + pad(header.orientation, 8)
            + pad(header.rotation.degrees, 5) + "  " + padRight(header.format.rawValue, 8) + padRight(jpeg, 12)
            + pad(header.timestampMicros.map(String.init) ?? "-", 14) + pad(header.sequence.map(String.init) ?? "-", 5)
        if let decodeError { text += "\n      decode error: \(decodeError)" }
        return text
    }
}

private func pad(_ value: CustomStringConvertible, _ width: Int) -> String {
    let text = value.description
    return String(repeating: " ", count: max(0, width - text.count)) + text
}

private func padRight(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
}
