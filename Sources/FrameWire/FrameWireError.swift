/// Why a frame stream was refused. Every error ends the connection: there is no resynchronisation,
/// because a status line can appear inside JPEG data (Protocol/frame-wire.md §5).
public enum FrameWireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes can no longer begin `HTTP/1.0 200` or `HTTP/1.1 200` (+ optional reason phrase).
    case badStatusLine(String)
    /// A header line without a colon, a folded line, a name outside the token set, or a bare CR.
    case badHeaderLine(String)
    /// `Content-Length`, `Buffer-Width` or `Buffer-Height` is absent (the header's name).
    case missingHeader(String)
    /// A required header whose value is not 1*DIGIT, is 0, or is beyond its limit (name, value); also a
    /// `Buffer-Format` other than `JPEG` or `I420`, a `Buffer-Color-Range` other than `limited` or `full`,
    /// or `limited` on a JPEG body (these three reported at the empty line).
    case badHeaderValue(name: String, value: String)
    /// One of the six checked headers repeated with a different value (the header's name).
    case conflictingHeaders(String)
    /// The header block grew past ``FrameWireLimits/maxHeaderBytes`` without its empty line.
    case headerTooLarge(limit: Int)
    /// `Content-Length` above ``FrameWireLimits/maxBodyBytes``; refused before any body byte is buffered.
    case bodyTooLarge(contentLength: String, limit: Int)
    /// A raw body (`Buffer-Format: I420`) whose `Content-Length` is not exactly the picture's size for
    /// `Buffer-Width`×`Buffer-Height` (the format, Content-Length, the bytes expected); reported at the
    /// empty line, before any body byte is buffered.
    case bodyLengthMismatch(format: String, contentLength: Int, expected: Int)
    /// A `BGRX-SHM` frame whose memory the reader cannot use (§2.8): no descriptor came for a new
    /// generation, the memory could not be mapped, is smaller than the picture's layout or does not
    /// describe it, or more descriptors came than a reader holds. Reported by the socket reader.
    case sharedMemory(SharedPictureError)

    /// The kind's name as used in `inspect --json` and the handed cases: `badStatusLine`, ….
    public var kind: String {
        switch self {
        case .badStatusLine: "badStatusLine"
        case .badHeaderLine: "badHeaderLine"
        case .missingHeader: "missingHeader"
        case .badHeaderValue: "badHeaderValue"
        case .conflictingHeaders: "conflictingHeaders"
        case .headerTooLarge: "headerTooLarge"
        case .bodyTooLarge: "bodyTooLarge"
        case .bodyLengthMismatch: "bodyLengthMismatch"
        case .sharedMemory: "sharedMemory"
        }
    }

    public var description: String {
        switch self {
        case .badStatusLine(let seen): "bad status line: \(seen)"
        case .badHeaderLine(let line): "bad header line: \(line)"
        case .missingHeader(let name): "missing header: \(name)"
        case .badHeaderValue(let name, let value): "bad value for \(name): \(value)"
        case .conflictingHeaders(let name): "conflicting values for \(name)"
        case .headerTooLarge(let limit): "header block longer than \(limit) bytes"
        case .bodyTooLarge(let length, let limit): "Content-Length \(length) is above the limit of \(limit) bytes"
        case .bodyLengthMismatch(let format, let length, let expected):
            "Content-Length \(length) does not match the \(format) picture's \(expected) bytes"
        case .sharedMemory(let error): "shared memory: \(error)"
        }
    }
}

/// How a frame stream ended.
public enum FrameStreamEnd: Sendable, Equatable, CustomStringConvertible {
    /// EOF exactly between messages (or after nothing but skipped empty lines).
    case eof
    /// EOF inside a message; the partial frame was not delivered.
    case truncated
    /// The stream broke a rule of the wire format.
    case error(FrameWireError)

    /// `eof`, `truncated` or `error`, as in `inspect --json`.
    public var name: String {
        switch self {
        case .eof: "eof"
        case .truncated: "truncated"
        case .error: "error"
        }
    }

    public var description: String {
        switch self {
        case .eof: "eof"
        case .truncated: "truncated"
        case .error(let error): "error: \(error)"
        }
    }
}

/// The limits a reader enforces, each tested (Protocol/frame-wire.md §4).
public struct FrameWireLimits: Sendable, Equatable {
    /// Longest header block, status line through the empty line, in bytes.
    public var maxHeaderBytes: Int
    /// Largest accepted `Content-Length`, in bytes.
    public var maxBodyBytes: Int
    /// Largest accepted `Buffer-Width` / `Buffer-Height`, in pixels.
    public var maxDimension: Int

    public init(maxHeaderBytes: Int = 8192, maxBodyBytes: Int = 64 << 20, maxDimension: Int = 16384) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.maxDimension = maxDimension
    }

    /// 8192 header bytes, 64 MiB of body, 16384 pixels a side.
    public static let standard = FrameWireLimits()
}
