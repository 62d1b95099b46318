import Foundation
import Glibc

/// A validated filesystem path for the agent↔call Unix stream socket.
///
/// Valid means: not empty, absolute (starts with `/`, so never an abstract socket, whose name starts
/// with NUL), no NUL byte inside, and at most ``maxBytes`` (107) bytes of UTF-8, because `sun_path`
/// is 108 bytes including the terminating NUL. Anything else is refused with a ``FrameSocketError``
/// rather than truncated.
public struct SocketPath: Sendable, Hashable, CustomStringConvertible {
    /// The longest accepted path in bytes: `sizeof(sun_path)` (108) minus the terminating NUL.
    public static let maxBytes = 107

    /// The path as given (absolute).
    public let string: String

    /// Validates `path`.
    ///
    /// - Throws: ``FrameSocketError/emptyPath``, ``FrameSocketError/relativePath(_:)``,
    ///   ``FrameSocketError/pathContainsNUL(_:)`` or ``FrameSocketError/pathTooLong(path:bytes:limit:)``.
    public init(_ path: String) throws(FrameSocketError) {
        let bytes = path.utf8
        if bytes.isEmpty { throw .emptyPath }
        if bytes.contains(0) { throw .pathContainsNUL(path) }
        if bytes.first != UInt8(ascii: "/") { throw .relativePath(path) }
        if bytes.count > Self.maxBytes { throw .pathTooLong(path: path, bytes: bytes.count, limit: Self.maxBytes) }
        string = path
    }

    /// The project's default socket (docs/architecture.md, "Conventions"): `$XDG_RUNTIME_DIR/screencast/agent.sock`
    /// when `XDG_RUNTIME_DIR` is set to an absolute path, else `/tmp/screencast-$UID/agent.sock`.
    ///
    /// - Parameters:
    ///   - environment: the variables to read (default: this process's environment).
    ///   - uid: the user id for the `/tmp` fallback (default: `getuid()`).
    /// - Throws: the validation errors of ``init(_:)`` (e.g. a very long `XDG_RUNTIME_DIR`).
    public static func defaultPath(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        uid: UInt32 = getuid()
    ) throws(FrameSocketError) -> SocketPath {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            let base = runtime.hasSuffix("/") ? String(runtime.dropLast()) : runtime
            return try SocketPath(base + "/screencast/agent.sock")
        }
        return try SocketPath("/tmp/screencast-\(uid)/agent.sock")
    }

    /// The folder that holds the socket (everything before the last `/`; `/` for a top-level socket).
    public var directory: String {
        guard let slash = string.utf8.lastIndex(of: UInt8(ascii: "/")), slash != string.utf8.startIndex else {
            return "/"
        }
        return String(string[..<slash])
    }

    /// The path itself.
    public var description: String { string }

    /// Makes sure ``directory`` exists. Only the last component is created, with mode 0700; an existing
    /// folder is used as it is (never chmod-ed: it may be a shared system folder such as `/tmp`).
    ///
    /// - Returns: true when the folder was created here.
    /// - Throws: ``FrameSocketError/notADirectory(path:)`` when something else is in the way,
    ///   ``FrameSocketError/foreignDirectory(path:owner:)`` when the folder belongs to another user, or
    ///   ``FrameSocketError/systemCall(name:errno:path:)`` from `mkdir`/`chmod` (e.g. `ENOENT` when
    ///   the grandparent folder is missing, `EACCES`).
    @discardableResult
    func createDirectoryIfNeeded() throws(FrameSocketError) -> Bool {
        let dir = directory
        if mkdir(dir, 0o700) == 0 {
            // mkdir's mode passes through the umask; say exactly 0700.
            guard chmod(dir, 0o700) == 0 else { throw .lastError("chmod", path: dir) }
            return true
        }
        let code = errno
        if code == ENOENT, let missing = Self.highestMissingFolder(above: dir) {
            throw .parentMissing(path: dir, missing: missing)
        }
        guard code == EEXIST else { throw .systemCall(name: "mkdir", errno: code, path: dir) }
        var info = stat()
        guard stat(dir, &info) == 0 else { throw .lastError("stat", path: dir) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .notADirectory(path: dir) }
        // Another user's folder (say a /tmp/screencast-$UID made by someone else first) could let them
        // swap our socket: accept only folders of our own user or of root (such as /tmp itself).
        guard info.st_uid == getuid() || info.st_uid == 0 else {
            throw .foreignDirectory(path: dir, owner: info.st_uid)
        }
        return false
    }

    /// The highest folder above `folder` (itself excluded) that does not exist, e.g. `/tmp/a` for
    /// `/tmp/a/b` when `/tmp` exists; nil when the parent exists (the ENOENT came from elsewhere).
    static func highestMissingFolder(above folder: String) -> String? {
        var missing: String?
        var current = (folder as NSString).deletingLastPathComponent
        while current.count > 1, access(current, F_OK) != 0, errno == ENOENT {
            missing = current
            current = (current as NSString).deletingLastPathComponent
        }
        return missing
    }
}

extension SocketPath {
    /// Why no call could ever serve this path, checked before any work starts (the command line must change):
    /// the call creates only the socket's own folder, so a missing parent of that folder is
    /// ``FrameSocketError/parentMissing(path:missing:)`` (naming the highest missing folder), and a file
    /// that is not a socket (a folder, a regular file) is ``FrameSocketError/notASocket(path:)`` (never
    /// replaced). Nil when the path can be served (it may still be in use: that is a runtime matter).
    public var unservableReason: FrameSocketError? {
        func folder(of path: String) -> String {
            guard let slash = path.lastIndex(of: "/") else { return "." }
            let folder = String(path[..<slash])
            return folder.isEmpty ? "/" : folder
        }
        let own = folder(of: string)
        if access(own, F_OK) != 0 {
            guard access(folder(of: own), F_OK) != 0 else { return nil }
            var missing = folder(of: own)
            while missing != "/", access(folder(of: missing), F_OK) != 0 { missing = folder(of: missing) }
            return .parentMissing(path: own, missing: missing)
        }
        if let existing = try? UnixSocket.fileIdentity(string), !existing.isSocket { return .notASocket(path: string) }
        return nil
    }
}
