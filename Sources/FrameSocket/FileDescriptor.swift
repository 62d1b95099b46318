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
