import Glibc
import ScreencastSupport

/// `--e2ee-key-file FILE`: the shared passphrase of end-to-end encryption, read from a file so it never
/// appears on a command line (`ps`, shell history). Read at start and again on SIGHUP.
///
/// The file must be a regular file that neither group nor others may read, write or execute (mode 0600
/// or 0400, as `ssh` wants of private keys), of at most ``maximumBytes`` bytes of UTF-8 holding one line:
/// the passphrase, taken exactly, without its final line break (`\n` or `\r\n`).
public struct E2EEKeyFile: Sendable {
    /// The most bytes a key file may hold.
    public static let maximumBytes = 4096

    /// The key file's path.
    public let path: String

    /// A key file at `path` (nothing is read until ``read()``).
    public init(path: String) { self.path = path }

    /// The passphrase.
    /// - Throws: ``E2EEKeyFileError``; none of its messages contains the file's content.
    public func read() throws(E2EEKeyFileError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { throw .cannotOpen(path: path, reason: SystemErrorText.of()) }
        defer { close(fd) }
        // Checked on the opened file (fstat), so a file swapped after the check cannot slip through.
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .cannotOpen(path: path, reason: SystemErrorText.of()) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile(path: path) }
        let mode = Int(info.st_mode & 0o7777)
        guard mode & 0o077 == 0 else { throw .tooOpen(path: path, mode: mode) }
        guard info.st_size <= Self.maximumBytes else { throw .tooLarge(path: path, bytes: Int(info.st_size), limit: Self.maximumBytes) }
        var bytes = [UInt8](repeating: 0, count: Self.maximumBytes + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes[count...].withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw .readFailed(path: path, reason: SystemErrorText.of()) }
            if got == 0 { break }
            count += got
        }
        // The file grew between fstat and read.
        guard count <= Self.maximumBytes else { throw .tooLarge(path: path, bytes: count, limit: Self.maximumBytes) }
        var content = bytes[0..<count]
        if content.last == 0x0A { content.removeLast() }
        if content.last == 0x0D { content.removeLast() }
        guard !content.isEmpty else { throw .empty(path: path) }
        guard !content.contains(0x0A), !content.contains(0x0D), !content.contains(0) else { throw .notOneLine(path: path) }
        guard let text = String(validating: content, as: UTF8.self) else { throw .notUTF8(path: path) }
        return text
    }
}

/// Why a key file was refused. At start each is a usage fault (exit 64), except ``readFailed`` (exit 1); on
/// SIGHUP the call logs it and keeps its current key.
public enum E2EEKeyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case notARegularFile(path: String)
    /// Group or others have permissions on it (`mode`, e.g. 0o644).
    case tooOpen(path: String, mode: Int)
    case tooLarge(path: String, bytes: Int, limit: Int)
    case empty(path: String)
    /// A line break or NUL inside the passphrase.
    case notOneLine(path: String)
    case notUTF8(path: String)
    /// An I/O error while reading (not the user's fault).
    case readFailed(path: String, reason: String)

    /// True for every refusal the user can fix by changing the file or the command line (all but ``readFailed``).
    public var isUsageFault: Bool { if case .readFailed = self { false } else { true } }

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): "cannot open key file \(path): \(reason)"
        case .notARegularFile(let path): "key file \(path) is not a regular file"
        case .tooOpen(let path, let mode):
            "key file \(path) has mode 0\(String(mode, radix: 8)): group or others have access to it; run chmod 600 \(path)"
        case .tooLarge(let path, let bytes, let limit): "key file \(path) holds \(bytes) bytes, more than the \(limit) a passphrase may have"
        case .empty(let path): "key file \(path) is empty: write the passphrase in it"
        case .notOneLine(let path): "key file \(path) must hold the passphrase on one line (no line breaks or NUL inside)"
        case .notUTF8(let path): "key file \(path) is not UTF-8 text"
        case .readFailed(let path, let reason): "cannot read key file \(path): \(reason)"
        }
    }
}
