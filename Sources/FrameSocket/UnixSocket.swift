import Glibc

/// The few system calls the server and sender need, each retrying `EINTR` and turning failures into
/// ``FrameSocketError`` (or an `errno` where the caller decides what a failure means).
enum UnixSocket {
    /// A new `AF_UNIX` stream socket, close-on-exec, optionally non-blocking.
    static func makeStream(nonBlocking: Bool) throws(FrameSocketError) -> FileDescriptor {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        let fd = socket(AF_UNIX, type, 0)
        guard fd >= 0 else { throw .lastError("socket") }
        return FileDescriptor(fd)
    }

    /// Calls `body` with a `sockaddr_un` for `path` and its exact length (family + path + NUL).
    /// ``SocketPath`` guarantees the path fits and has no NUL, so this is never an abstract address.
    static func withAddress<R>(
        _ path: SocketPath, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R
    ) -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.string.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            precondition(bytes.count < raw.count, "SocketPath guarantees at most 107 bytes")
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }

    /// `connect(2)`; returns 0 or the `errno` it failed with.
    static func connect(_ fd: FileDescriptor, to path: SocketPath) -> Int32 {
        withAddress(path) { address, length in
            while true {
                if Glibc.connect(fd.rawValue, address, length) == 0 { return 0 }
                if errno != EINTR { return errno }
            }
        }
    }

    /// `bind(2)`; returns 0 or the `errno` it failed with.
    static func bind(_ fd: FileDescriptor, to path: SocketPath) -> Int32 {
        withAddress(path) { address, length in
            Glibc.bind(fd.rawValue, address, length) == 0 ? 0 : errno
        }
    }

    /// The peer's process and user id from `SO_PEERCRED` (`struct ucred`: pid, uid, gid as 32-bit
    /// integers), as recorded by the kernel when the peer called `connect`. Nil when unavailable.
    static func peerCredentials(_ fd: Int32) -> (pid: Int32, uid: UInt32)? {
        var words: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: words))
        let result = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &words, &length)
        guard result == 0, Int(length) == MemoryLayout.size(ofValue: words) else { return nil }
        return (words.0, words.1)
    }

    /// `poll(2)` over `fds`, retrying `EINTR` (an infinite wait stays infinite; a finite one is
    /// restarted, which can only make it longer by the time spent before the signal).
    ///
    /// - Returns: the number of ready descriptors (0 on timeout).
    static func poll(_ fds: inout [pollfd], timeoutMilliseconds: Int32) throws(FrameSocketError) -> Int32 {
        while true {
            let ready = fds.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), timeoutMilliseconds) }
            if ready >= 0 { return ready }
            if errno != EINTR { throw .lastError("poll") }
        }
    }

    /// `read(2)` into `buffer` (which is never empty), retrying `EINTR`.
    ///
    /// - Returns: bytes read, 0 at end of stream.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(FrameSocketError) -> Int {
        while true {
            let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if errno != EINTR { throw .lastError("read") }
        }
    }

    /// Room for the control message of one `recvmsg`: `CMSG_SPACE(4 × maxDescriptorsPerRead)` (a 16-byte
    /// `cmsghdr` on 64-bit Linux, then the descriptors, padded to 8).
    static let maxDescriptorsPerRead = 4
    private static let controlBytes = 16 + ((4 * maxDescriptorsPerRead + 7) & ~7)

    /// `recvmsg(2)` into `buffer` (never empty), retrying `EINTR`; descriptors passed with `SCM_RIGHTS`
    /// (received close-on-exec) are appended to `descriptors`, in order. `truncated` is set when the kernel
    /// had to drop descriptors (`MSG_CTRUNC`: more than ``maxDescriptorsPerRead`` at once).
    ///
    /// - Returns: bytes read, 0 at end of stream.
    static func receive(
        _ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, descriptors: inout [Int32], truncated: inout Bool
    ) throws(FrameSocketError) -> Int {
        try withUnsafeTemporaryAllocation(byteCount: controlBytes, alignment: 8) { (control) throws(FrameSocketError) -> Int in
            var vector = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
            while true {
                let count = withUnsafeMutablePointer(to: &vector) { vectorPointer -> Int in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = control.baseAddress
                    message.msg_controllen = control.count
                    let count = recvmsg(fd, &message, Int32(MSG_CMSG_CLOEXEC))
                    guard count >= 0 else { return count }
                    if message.msg_flags & Int32(MSG_CTRUNC) != 0 { truncated = true }
                    // Walk the cmsghdrs (CMSG_FIRSTHDR/CMSG_NXTHDR by hand: they are macros).
                    var offset = 0
                    let end = Int(message.msg_controllen)
                    while offset + 16 <= end {
                        let length = control.load(fromByteOffset: offset, as: Int.self)
                        let level = control.load(fromByteOffset: offset + 8, as: Int32.self)
                        let type = control.load(fromByteOffset: offset + 12, as: Int32.self)
                        guard length >= 16, offset + length <= end else { break }
                        if level == SOL_SOCKET, type == Int32(SCM_RIGHTS) {
                            for index in 0..<((length - 16) / 4) {
                                descriptors.append(control.load(fromByteOffset: offset + 16 + 4 * index, as: Int32.self))
                            }
                        }
                        offset += (length + 7) & ~7
                    }
                    return count
                }
                if count >= 0 { return count }
                if errno != EINTR { throw .lastError("recvmsg") }
            }
        }
    }

    /// `sendmsg(2)` of `bytes` with `descriptor` passed as `SCM_RIGHTS` (non-blocking, `MSG_NOSIGNAL`).
    /// The descriptor travels with the first byte sent.
    /// - Returns: bytes sent (≥ 1), or −errno.
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, passing descriptor: Int32) -> Int {
        withUnsafeTemporaryAllocation(byteCount: 24, alignment: 8) { control -> Int in
            control.storeBytes(of: 20, toByteOffset: 0, as: Int.self)  // CMSG_LEN(4)
            control.storeBytes(of: SOL_SOCKET, toByteOffset: 8, as: Int32.self)
            control.storeBytes(of: Int32(SCM_RIGHTS), toByteOffset: 12, as: Int32.self)
            control.storeBytes(of: descriptor, toByteOffset: 16, as: Int32.self)
            control.storeBytes(of: 0, toByteOffset: 20, as: Int32.self)
            var vector = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
            while true {
                let count = withUnsafeMutablePointer(to: &vector) { vectorPointer -> Int in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = control.baseAddress
                    message.msg_controllen = 24
                    return sendmsg(fd, &message, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
                if count >= 0 { return count }
                if errno != EINTR { return -Int(errno) }
            }
        }
    }

    /// Sets or clears `O_NONBLOCK`.
    static func setNonBlocking(_ fd: Int32, _ on: Bool) throws(FrameSocketError) {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0 else { throw .lastError("fcntl") }
        let wanted = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        guard wanted == flags || fcntl(fd, F_SETFL, wanted) == 0 else { throw .lastError("fcntl") }
    }

    /// Sets `FD_CLOEXEC` (for descriptors from `accept`, which Glibc's Swift module offers without
    /// `accept4`).
    static func setCloseOnExec(_ fd: Int32) throws(FrameSocketError) {
        guard fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else { throw .lastError("fcntl") }
    }

    /// `lstat(2)` of `path`: the file's type bits, device and inode, or nil when it does not exist.
    static func fileIdentity(_ path: String) throws(FrameSocketError) -> FileIdentity? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .lastError("lstat", path: path)
        }
        return FileIdentity(type: info.st_mode & S_IFMT, device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}

/// What identifies one file on disk: its type bits and (device, inode).
struct FileIdentity: Sendable, Equatable {
    var type: UInt32
    var device: UInt64
    var inode: UInt64

    /// True for a socket file.
    var isSocket: Bool { type == S_IFSOCK }
}
