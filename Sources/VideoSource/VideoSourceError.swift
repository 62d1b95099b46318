public import FrameSocket
public import Media

/// Every error the `VideoSource` module throws.
public enum VideoSourceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The screen socket could not be served (in use by another call process, a bad path, …).
    case socket(FrameSocketError)
    /// A `.frames` dump for the file source could not be read. Carries the path and the reason.
    case unreadableDump(path: String, reason: String)
    /// A `.frames` dump holds no frame whose JPEG decodes, so there is nothing to show.
    case emptyDump(path: String)
    /// A setting is out of range (bitrate, fps, sizes, quantizers, …). Carries what and why.
    case invalidConfiguration(String)
    /// A media operation failed where it cannot be skipped (such as creating a codec).
    case media(MediaError)
    /// The IVF recording file could not be created or written. Carries the path and `strerror`.
    case recording(path: String, reason: String)
    /// `start()` was called twice, or after `stop()`.
    case alreadyStarted

    public var description: String {
        switch self {
        case .socket(let error): "screen socket: \(error)"
        case .unreadableDump(let path, let reason): "cannot read dump \(path): \(reason)"
        case .emptyDump(let path): "dump \(path) holds no decodable frame"
        case .invalidConfiguration(let reason): "invalid configuration: \(reason)"
        case .media(let error): "\(error)"
        case .recording(let path, let reason): "cannot record to \(path): \(reason)"
        case .alreadyStarted: "the video source was already started"
        }
    }
}
