import Glibc
import Synchronization

/// A one-shot stop or wake request that threads blocked in poll(2) see: a connected, non-blocking,
/// close-on-exec socket pair whose read end becomes readable for good at ``request()`` (it is never
/// drained), so a thread that polls it beside its own descriptors sees the request however late it looks,
/// and a thread that only checks sees ``isRequested``. (A socket pair rather than a pipe: the write is sent
/// with `MSG_NOSIGNAL`, so no SIGPIPE can come of it.) Both ends close in `deinit`.
///
/// Used by the frame socket's server and sender (their poll loops) and the capture loops (their sleeps).
public final class WakeSignal: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    private let requested = Atomic<Bool>(false)

    /// - Throws: ``SystemCallError`` from `socketpair(2)` (no descriptors left).
    public init() throws(SystemCallError) {
        var pair: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, type, 0, &pair) == 0 else { throw SystemCallError(name: "socketpair", errno: errno) }
        readEnd = pair[0]
        writeEnd = pair[1]
    }

    deinit {
        Glibc.close(readEnd)
        Glibc.close(writeEnd)
    }

    /// The descriptor to poll for `POLLIN`.
    public var pollDescriptor: Int32 { readEnd }

    /// True once ``request()`` was called.
    public var isRequested: Bool { requested.load(ordering: .acquiring) }

    /// Wakes every poller, now and later. Idempotent; safe from any thread.
    public func request() {
        guard !requested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = Glibc.send(writeEnd, &byte, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
    }
}

/// A system call that failed, with its `errno`: what ScreencastSupport's own wrappers throw (each module maps
/// it into its error enum).
public struct SystemCallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call's name (`socketpair`).
    public let name: String
    /// Its `errno`.
    public let errno: Int32

    public init(name: String, errno: Int32) {
        self.name = name
        self.errno = errno
    }

    /// `socketpair: Too many open files`.
    public var description: String { "\(name): \(SystemErrorText.of(errno))" }
}
