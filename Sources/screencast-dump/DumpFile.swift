import FrameWire
import Foundation
import ScreencastSupport

/// File access for the dump tool: reading a `.frames` dump through the same decoder (and the same read sizes)
/// as the socket reader, mapping a whole dump, writing files and making folders. Every failure is a
/// ``DumpToolError/io(_:_:)`` with `strerror` text.
enum DumpFile {
    /// Decodes the file at `path`, calling `handle` for each frame as it is decoded and finally for the end.
    /// - Returns: the bytes of the stream the decoder consumed: all of them after a clean end or a truncated
    ///   stream; after a wire-format error, up to and including the byte at which the fault was detected.
    /// - Throws: ``DumpToolError/io(_:_:)`` when the file cannot be opened or a read fails.
    @discardableResult
    static func read(path: String, _ handle: (FrameDecoderEvent) -> Void) throws -> Int {
        let fd = try openForReading(path)
        defer { close(fd) }
        var decoder = FrameDecoder()
        while !decoder.isFinished {
            try decoder.read({ buffer in
                while true {
                    let count = Foundation.read(fd, buffer.baseAddress, buffer.count)
                    if count >= 0 { return count }
                    if errno != EINTR { throw DumpToolError.system(path) }
                }
            }, emit: handle)
        }
        return decoder.bytesConsumed
    }

    /// The whole file: mapped when it is a regular file (large dumps cost no memory), read otherwise
    /// (a FIFO, /dev/stdin).
    static func contents(of path: String) throws -> Data {
        let fd = try openForReading(path)
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw DumpToolError.system(path, code)
        }
        if info.st_mode & S_IFMT == S_IFREG {
            defer { close(fd) }
            let size = Int(info.st_size)
            if size == 0 { return Data() }
            guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
                throw DumpToolError.system(path)
            }
            return Data(bytesNoCopy: base, count: size, deallocator: .custom { pointer, count in
                munmap(pointer, count)
            })
        }
        defer { close(fd) }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR { continue }
                throw DumpToolError.system(path)
            }
            data.append(contentsOf: chunk[0..<count])
        }
    }

    /// Throws the reason `path` cannot be read as a dump (missing, a folder, unreadable), else nothing.
    /// (A FIFO is only checked to exist: opening it would take the writer's stream.)
    static func checkReadable(_ path: String) throws {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFIFO { return }
        close(try openForReading(path))
    }

    /// Opens `path` for reading: a regular file, a FIFO or a character device such as /dev/stdin; a folder
    /// or a socket is refused with a clear reason.
    private static func openForReading(_ path: String) throws -> Int32 {
        // The FILE named on the command line: not there, a folder or unreadable is bad usage (exit 64).
        var info = stat()
        guard stat(path, &info) == 0 else { throw DumpToolError.unusablePath(path, SystemErrorText.of(errno)) }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: throw DumpToolError.unusablePath(path, "is a folder, not a dump file")
        case S_IFREG, S_IFIFO, S_IFCHR: break
        default: throw DumpToolError.unusablePath(path, "not a regular file or a FIFO")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DumpToolError.unusablePath(path, SystemErrorText.of(errno)) }
        // A regular file can be looked at before it is read: a known media file is named, not parsed.
        if info.st_mode & S_IFMT == S_IFREG {
            var head = [UInt8](repeating: 0, count: ForeignFile.bytesNeeded)
            let count = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            if count > 0, let kind = ForeignFile.kind(of: head[0..<count]) {
                close(fd)
                throw DumpToolError.io(path, "not a frame dump (this looks like \(kind))")
            }
        }
        return fd
    }

    /// Writes `bytes` to the file at `path`, created 0644 or replaced.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DumpToolError.system(path) }
        var failure: Int32?
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = Foundation.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += count
            }
        }
        if close(fd) != 0, failure == nil { failure = errno }
        if let failure { throw DumpToolError.system(path, failure) }
    }

    /// Makes the folder `path` (0755) in a folder that exists; an existing folder is fine. A missing parent is
    /// refused (exit 64, as `record` refuses one): a typo must not leave a tree of new folders behind.
    static func makeFolder(_ path: String) throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw DumpToolError.unusablePath(path, "exists and is not a folder") }
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path {
            guard stat(parent, &info) == 0 else {
                throw DumpToolError.unusablePath(path, "folder '\(parent)' does not exist (make it first)")
            }
            guard info.st_mode & S_IFMT == S_IFDIR else { throw DumpToolError.unusablePath(path, "'\(parent)' is not a folder") }
        }
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw DumpToolError.io(path, "cannot make the folder: \(SystemErrorText.of(errno))")
        }
    }

    /// The names in the folder `path` (without `.` and `..`).
    static func entries(of path: String) throws -> [String] {
        guard let dir = opendir(path) else { throw DumpToolError.system(path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}
