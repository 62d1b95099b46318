import FrameWire
import Foundation

/// Errors of the dump tool that are not wire-format faults.
enum DumpToolError: Error, CustomStringConvertible {
    /// A file could not be opened, read or written (path, reason).
    case io(String, String)
    /// No reader accepted the connection in time (socket path, seconds waited).
    case noReader(String, Double)
    /// The reader went away (or refused us) in the middle of a lossless replay (socket path).
    case readerLeft(String)

    var description: String {
        switch self {
        case .io(let path, let reason): "\(path): \(reason)"
        case .noReader(let path, let seconds): "no reader at \(path) after \(seconds) s"
        case .readerLeft(let path): "the reader at \(path) went away or refused the stream; frames were lost"
        }
    }
}

/// Reading a `.frames` dump through the same decoder, and the same read sizes, as the socket reader.
enum DumpFile {
    /// Decodes the file at `path`, calling `handle` for each frame and finally for the end.
    /// - Parameter progress: bytes consumed so far, after each read.
    /// - Throws: ``DumpToolError/io(_:_:)`` when the file cannot be opened or a read fails.
    static func read(
        path: String, _ handle: (FrameDecoderEvent) -> Void, progress: (Int) -> Void = { _ in }
    ) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DumpToolError.io(path, String(cString: strerror(errno))) }
        defer { close(fd) }
        var decoder = FrameDecoder()
        while !decoder.isFinished {
            try decoder.read({ buffer in
                while true {
                    let count = Foundation.read(fd, buffer.baseAddress, buffer.count)
                    if count >= 0 { return count }
                    if errno != EINTR { throw DumpToolError.io(path, String(cString: strerror(errno))) }
                }
            }, emit: handle)
            progress(decoder.bytesConsumed)
        }
    }

    /// The whole file: mapped when it is a regular file (large dumps cost no memory), read otherwise
    /// (a FIFO, /dev/stdin). Throws ``DumpToolError/io(_:_:)`` with the reason (a folder, missing, …).
    static func contents(of path: String) throws -> Data {
        var info = stat()
        guard stat(path, &info) == 0 else { throw DumpToolError.io(path, String(cString: strerror(errno))) }
        if info.st_mode & S_IFMT == S_IFDIR { throw DumpToolError.io(path, "is a folder, not a dump file") }
        guard info.st_mode & S_IFMT == S_IFREG || info.st_mode & S_IFMT == S_IFIFO else {
            throw DumpToolError.io(path, "not a regular file or a FIFO")
        }
        if info.st_mode & S_IFMT == S_IFREG {
            do {
                return try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
            } catch {
                throw DumpToolError.io(path, String(cString: strerror(errno)))
            }
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw DumpToolError.io(path, String(cString: strerror(errno)))
        }
        defer { try? handle.close() }
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw DumpToolError.io(path, "\(error)")
        }
    }

    /// Writes `bytes` to a new file at `path` (replacing one), or throws ``DumpToolError/io(_:_:)``.
    static func write(_ bytes: [UInt8], to path: String) throws {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        } catch {
            throw DumpToolError.io(path, error.localizedDescription)
        }
    }
}
