/// Writes frame messages exactly as the iOS screen-share extension does (Protocol/frame-wire.md §6):
///
///     HTTP/1.1 200 OK\r\n
///     Content-Length: N\r\n
///     Buffer-Width: W\r\n
///     Buffer-Height: H\r\n
///     Buffer-Orientation: O\r\n
///     [Buffer-Format: I420\r\n]       ; only for an I420 body, never for JPEG (JPEG stays iOS-identical)
///     [Buffer-Color-Range: R\r\n]     ; when the header has a range (our agent: `limited` on I420 frames)
///     [Buffer-Timestamp: T\r\n]        ; our agent only: capture time, CLOCK_MONOTONIC µs
///     [Buffer-Sequence: S\r\n]         ; our agent only: frame counter
///     [Buffer-Damage: x,y,w,h;…\r\n]  ; when the header has damage (our agent, §2.9; `none`: nothing changed)
///     [Capture-Display: D\r\n]         ; our agent only (§2.7): what it captures, for people
///     [Capture-Area: A\r\n]
///     [Capture-Rect: WxH+X+Y\r\n]
///     [Capture-FPS: F\r\n]
///     \r\n
///     <N bytes of JPEG, or of I420>
public enum FrameEncoder {
    /// The header block for a body of `bodyLength` bytes (`header.contentLength` is not used).
    public static func headerBlock(for header: FrameHeader, bodyLength: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160)
        appendHeaderBlock(for: header, bodyLength: bodyLength, to: &out)
        return out
    }

    /// Appends the header block for a body of `bodyLength` bytes to `out`.
    public static func appendHeaderBlock(for header: FrameHeader, bodyLength: Int, to out: inout [UInt8]) {
        out.append(contentsOf: "HTTP/1.1 200 OK\r\nContent-Length: ".utf8)
        appendDecimal(UInt64(bodyLength), to: &out)
        out.append(contentsOf: "\r\nBuffer-Width: ".utf8)
        appendDecimal(UInt64(header.bufferWidth), to: &out)
        out.append(contentsOf: "\r\nBuffer-Height: ".utf8)
        appendDecimal(UInt64(header.bufferHeight), to: &out)
        out.append(contentsOf: "\r\nBuffer-Orientation: ".utf8)
        appendDecimal(UInt64(header.orientation), to: &out)
        out.append(contentsOf: "\r\n".utf8)
        if header.format != .jpeg {
            out.append(contentsOf: "Buffer-Format: ".utf8)
            out.append(contentsOf: header.format.rawValue.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        if let range = header.colorRange {
            out.append(contentsOf: "Buffer-Color-Range: ".utf8)
            out.append(contentsOf: range.rawValue.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        if let memory = header.memory {
            out.append(contentsOf: "Buffer-Memory: ".utf8)
            appendDecimal(memory.generation, to: &out)
            out.append(.space)
            appendDecimal(UInt64(memory.slot), to: &out)
            out.append(.space)
            appendDecimal(memory.version, to: &out)
            out.append(contentsOf: "\r\n".utf8)
        }
        if let timestamp = header.timestampMicros {
            out.append(contentsOf: "Buffer-Timestamp: ".utf8)
            appendDecimal(timestamp, to: &out)
            out.append(contentsOf: "\r\n".utf8)
        }
        if let sequence = header.sequence {
            out.append(contentsOf: "Buffer-Sequence: ".utf8)
            appendDecimal(sequence, to: &out)
            out.append(contentsOf: "\r\n".utf8)
        }
        if let damage = header.damage {
            out.append(contentsOf: "Buffer-Damage: ".utf8)
            BufferDamage.append(damage, to: &out)
            out.append(contentsOf: "\r\n".utf8)
        }
        if let capture = header.capture {
            for (name, value) in capture.fields {
                out.append(contentsOf: name.utf8)
                out.append(contentsOf: ": ".utf8)
                out.append(contentsOf: value.utf8)  // no CR or LF: CaptureDescription.init removes them
                out.append(contentsOf: "\r\n".utf8)
            }
        }
        out.append(contentsOf: "\r\n".utf8)
    }

    /// One whole message: the header block (Content-Length from `body.count`) then the body, in one buffer.
    public static func encode(header: FrameHeader, body: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + body.count)
        appendHeaderBlock(for: header, bodyLength: body.count, to: &out)
        out.append(contentsOf: body)
        return out
    }

    /// One whole message for a decoded frame.
    public static func encode(_ frame: Frame) -> [UInt8] { encode(header: frame.header, body: frame.body) }

    private static func appendDecimal(_ value: UInt64, to out: inout [UInt8]) {
        out.append(contentsOf: String(value).utf8)  // short strings are stored inline: no allocation
    }
}
