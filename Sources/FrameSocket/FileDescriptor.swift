import Glibc
import Synchronization

/// Owns one file descriptor: closes it exactly once, on ``close()`` or in `deinit`.
///
/// The descriptor number is kept in an atomic so that a second `close()` (from any thread) is a
/// no-op and never closes a number the kernel has since handed to someone else. Using the number
/// while another thread closes it is still a race; the server and sender avoid it by letting only
/// the thread that uses a descriptor close it.
final class FileDescriptor: Sendable {
    private let storage: Atomic<Int32>

    /// Takes ownership of `rawValue` (≥ 0).
    init(_ rawValue: Int32) {
        storage = Atomic(rawValue)
    }

    /// The descriptor number, or -1 once closed.
    var rawValue: Int32 { storage.load(ordering: .acquiring) }

    /// True until ``close()``.
    var isOpen: Bool { rawValue >= 0 }

    /// Closes the descriptor; later calls do nothing. `EINTR` from `close` is not retried (on Linux
    /// the descriptor is released anyway).
    func close() {
        let fd = storage.exchange(-1, ordering: .acquiringAndReleasing)
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    deinit { close() }
}

/// A one-shot wake-up for threads blocked in `poll`: a connected, non-blocking, close-on-exec
/// socket pair. ``signal()`` makes ``pollDescriptor`` readable for good (it is never drained), so a
/// thread that polls it together with its sockets sees the request however late it looks.
final class WakeSignal: Sendable {
    private let readEnd: FileDescriptor
    private let writeEnd: FileDescriptor
    private let signalled = Atomic<Bool>(false)

    /// - Throws: ``FrameSocketError/systemCall(name:errno:path:)`` from `socketpair`.
    init() throws(FrameSocketError) {
        var pair: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, type, 0, &pair) == 0 else { throw .lastError("socketpair") }
        readEnd = FileDescriptor(pair[0])
        writeEnd = FileDescriptor(pair[1])
    }

    /// The descriptor to poll for `POLLIN`.
    var pollDescriptor: Int32 { readEnd.rawValue }

    /// True once ``signal()`` was called.
    var isSignalled: Bool { signalled.load(ordering: .acquiring) }

    /// Wakes every poller, now and later. Idempotent.
    func signal() {
        guard !signalled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = Glibc.send(writeEnd.rawValue, &byte, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
    }

    /// Closes both ends (also done in `deinit`).
    func close() {
        readEnd.close()
        writeEnd.close()
    }
}
