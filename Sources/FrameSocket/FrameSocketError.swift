import Glibc
import ScreencastSupport

/// Everything that can go wrong in the Unix-socket transport: a bad socket path, a path that is
/// already served, a failing system call, or a server/sender used in the wrong state.
///
/// Wire-format problems are not here: a sender that breaks the frame format ends its connection
/// with a ``SourceEndReason/stream(_:)`` carrying the `FrameWire` error.
public enum FrameSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The socket path is the empty string.
    case emptyPath
    /// The socket path does not start with `/` (the path given).
    case relativePath(String)
    /// The socket path has more than `limit` (107) bytes of UTF-8; `sun_path` holds 108 bytes
    /// including the terminating NUL, and a longer path would be cut short silently.
    case pathTooLong(path: String, bytes: Int, limit: Int)
    /// The socket path contains a NUL byte (it would name a different, possibly abstract, socket).
    case pathContainsNUL(String)
    /// A live server already listens on the path (a probe connection succeeded).
    case inUse(path: String)
    /// Something that is not a socket (a regular file, a folder, …) is in the way; it is left alone.
    case notASocket(path: String)
    /// The socket's parent path exists but is not a folder.
    case notADirectory(path: String)
    /// The socket's folder cannot be made because a folder above it is missing (`missing`, the highest
    /// missing one): only the socket's own folder is created, 0700, never a chain.
    case parentMissing(path: String, missing: String)
    /// The socket's folder belongs to another user (neither us nor root), who could replace our socket.
    case foreignDirectory(path: String, owner: UInt32)
    /// A system call failed: its name, `errno`, and the path involved when there is one.
    case systemCall(name: String, errno: Int32, path: String?)
    /// ``FrameServer/start()`` was called on a server that is already running.
    case alreadyStarted
    /// The sender was closed (``FrameSender/close()``) before the operation could finish.
    case closed

    /// A one-line, human-readable explanation (for logs and CLI error messages).
    public var description: String {
        switch self {
        case .emptyPath:
            "socket path is empty"
        case .relativePath(let path):
            "socket path '\(path)' is relative; give an absolute path"
        case .pathTooLong(let path, let bytes, let limit):
            "socket path '\(path)' is \(bytes) bytes long; the limit is \(limit) bytes"
        case .pathContainsNUL(let path):
            "socket path '\(path.replacingOccurrences(of: "\0", with: "\\0"))' contains a NUL byte"
        case .inUse(let path):
            "socket '\(path)' is in use by a live server (another call? give this one its own --socket PATH)"
        case .notASocket(let path):
            "'\(path)' exists and is not a socket; not replacing it"
        case .notADirectory(let path):
            "'\(path)' is not a folder"
        case .parentMissing(let path, let missing):
            "cannot create the socket folder '\(path)': '\(missing)' does not exist (only the socket's own folder is created; make its parent first)"
        case .foreignDirectory(let path, let owner):
            "folder '\(path)' belongs to uid \(owner), not to this user; refusing to put a socket there"
        case .systemCall(let name, let code, let path):
            "\(name)\(path.map { " '\($0)'" } ?? "") failed: \(SystemErrorText.of(code)) (errno \(code))"
        case .alreadyStarted:
            "the server is already running"
        case .closed:
            "the sender is closed"
        }
    }

    /// A `.systemCall` error from the current `errno`.
    /// The wake-up socket pair every poll loop waits on (``WakeSignal``), its failure as this module's error.
    static func wakeSignal() throws(FrameSocketError) -> WakeSignal {
        do { return try WakeSignal() } catch { throw .systemCall(name: error.name, errno: error.errno, path: nil) }
    }

    static func lastError(_ name: String, path: String? = nil) -> FrameSocketError {
        .systemCall(name: name, errno: errno, path: path)
    }
}
