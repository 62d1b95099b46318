import Dispatch
import Foundation
import Glibc
import ScreencastSupport
import Synchronization

/// The request deadline's bookkeeping, sans-I/O: every open connection with the time its current request
/// began to arrive — the connection's start (accept, or `MHD_add_connection` after ``TLSPortAcceptor``), or the
/// end of its previous request on a kept-alive connection — and nil while the request is ours (its handler
/// runs, its answer goes out).
///
/// libmicrohttpd 0.9.75 (Debian 12) has only an idle timeout (`MHD_OPTION_CONNECTION_TIMEOUT`, reset by every
/// byte) and no bound on the time a request's headers, its body or a TLS handshake may take: a client that
/// drips a header byte every 20 s, or sends the 5-byte header of a TLS record and then a byte now and then,
/// holds its connection for ever (a bad-input review held all 64 with 2 addresses). This table is the
/// deadline libmicrohttpd lacks: a connection still receiving its request ``deadlineMicros`` after it began
/// is expired, and the server shuts its socket down (``HTTPServer``).
///
/// It also bounds what a slow client harms per address: connections that have not completed a request yet
/// (a slow or stalled first request, a dripped TLS handshake). A connection that has completed one is an
/// established client (a browser's kept-alive connection) and does not count: twenty browsers behind one
/// office NAT share an address and hold two or three such connections each (issue 31).
struct RequestDeadlineTable {
    /// A connection's socket and when its current request began to arrive (µs, CLOCK_MONOTONIC); nil while
    /// the request is being handled or answered.
    struct Entry: Equatable {
        var socket: Int32
        var waitingSince: UInt64?
        /// The client's IP address as text (nil: unknown); the key of ``incompleteLimitPerAddress``.
        var address: String?
        /// A request on this connection has been answered.
        var completedOne = false
    }

    /// How long a request (TLS handshake, headers and body) may take to arrive, µs.
    let deadlineMicros: UInt64
    /// By connection (its `MHD_Connection` address).
    private(set) var connections: [UInt: Entry] = [:]

    /// Connections from one address that have not completed a request, at most; more are refused as they open.
    let incompleteLimitPerAddress: Int

    init(deadlineMicros: UInt64, incompleteLimitPerAddress: Int = Int(HTTPServerOptions.defaultPerAddressIncompleteLimit)) {
        self.deadlineMicros = deadlineMicros
        self.incompleteLimitPerAddress = incompleteLimitPerAddress
    }

    /// A connection started (`MHD_CONNECTION_NOTIFY_STARTED`) from `address`: its first request begins to
    /// arrive now. False (and nothing recorded) when `address` already holds ``incompleteLimitPerAddress``
    /// connections that have not completed a request: the caller closes this one.
    mutating func opened(_ connection: UInt, socket: Int32, address: String? = nil, now: UInt64) -> Bool {
        if let address, incomplete(from: address) >= incompleteLimitPerAddress { return false }
        connections[connection] = Entry(socket: socket, waitingSince: now, address: address)
        return true
    }

    /// Connections from `address` that have not completed a request.
    func incomplete(from address: String) -> Int {
        connections.values.reduce(0) { $0 + ($1.address == address && !$1.completedOne ? 1 : 0) }
    }

    /// A connection closed (`MHD_CONNECTION_NOTIFY_CLOSED`, before libmicrohttpd closes its socket).
    mutating func closed(_ connection: UInt) { connections[connection] = nil }

    /// The request is in (its headers, and its body if it has one): the handler's time is not the client's.
    mutating func handling(_ connection: UInt) { connections[connection]?.waitingSince = nil }

    /// The request was answered (`MHD_OPTION_NOTIFY_COMPLETED`): a kept-alive connection's next request begins
    /// to arrive now.
    mutating func requestCompleted(_ connection: UInt, now: UInt64) {
        guard connections[connection] != nil else { return }
        connections[connection]?.waitingSince = now
        connections[connection]?.completedOne = true
    }

    /// The sockets of connections whose request has been arriving for longer than the deadline at `now`;
    /// each is returned once (its wait is cleared; the entry stays until the connection closes).
    mutating func expire(now: UInt64) -> [Int32] {
        var expired: [Int32] = []
        for (connection, entry) in connections {
            guard let since = entry.waitingSince, now >= since, now - since >= deadlineMicros else { continue }
            connections[connection]?.waitingSince = nil
            expired.append(entry.socket)
        }
        return expired
    }
}

/// The I/O half of the request deadline: a thread that sweeps a ``RequestDeadlineTable`` every
/// ``sweepMicros`` and shuts down (`shutdown(2)`, `SHUT_RDWR`) the socket of each expired connection, so
/// that libmicrohttpd's connection thread sees the end of the stream and closes it. The shutdown happens
/// under the table's lock, and libmicrohttpd reports a connection closed (removing it from the table) before
/// it closes the socket, so a descriptor number is never shut down after it was reused.
final class RequestDeadlineSweeper: Sendable {
    /// Time between sweeps, µs: a tenth of the deadline, at least 50 ms and at most 1 s, so a connection is
    /// closed between the deadline and the deadline plus this.
    let sweepMicros: UInt64
    private let table: Mutex<RequestDeadlineTable>
    private let logger: Logger
    private let stopping = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopped = Mutex(false)

    /// Connections closed as they opened because their address held too many incomplete ones (logged
    /// rate-limited: a client reconnecting in a loop must not flood the log).
    private let refusals = Mutex(LogRateLimiter(burst: 1, intervalMicros: 60_000_000))

    init(deadlineMillis: UInt32, incompleteLimitPerAddress: UInt32 = HTTPServerOptions.defaultPerAddressIncompleteLimit, logger: Logger) {
        let deadlineMicros = UInt64(max(1, deadlineMillis)) * 1_000
        table = Mutex(RequestDeadlineTable(deadlineMicros: deadlineMicros, incompleteLimitPerAddress: Int(incompleteLimitPerAddress)))
        sweepMicros = min(1_000_000, max(50_000, deadlineMicros / 10))
        self.logger = logger
    }

    func start() { Thread.detachNewThread { [self] in run() } }

    /// Stops the sweeping thread and waits for it. Idempotent.
    func stop() {
        let first = stopped.withLock { s -> Bool in
            defer { s = true }
            return !s
        }
        guard first else { return }
        stopping.signal()
        finished.wait()
    }

    /// A connection opened from `address`; when that address already holds its limit of incomplete connections
    /// the socket is shut down at once (libmicrohttpd's connection thread then sees the end and closes it).
    func opened(_ connection: OpaquePointer, socket: Int32, address: String?) {
        let (admitted, limit) = table.withLock { table -> (Bool, Int) in
            let admitted = table.opened(Self.key(connection), socket: socket, address: address, now: MonotonicClock.nowMicros())
            if !admitted, socket >= 0 { shutdown(socket, Int32(SHUT_RDWR)) }
            return (admitted, table.incompleteLimitPerAddress)
        }
        guard !admitted, let suppressed = refusals.withLock({ $0.admit() }) else { return }
        logger.info("http connection refused: too many incomplete requests from one address", [
            "address": address ?? "-", "limit": limit, "suppressed": suppressed,
        ])
    }

    func closed(_ connection: OpaquePointer) { table.withLock { $0.closed(Self.key(connection)) } }

    func handling(_ connection: OpaquePointer) { table.withLock { $0.handling(Self.key(connection)) } }

    func requestCompleted(_ connection: OpaquePointer) {
        table.withLock { $0.requestCompleted(Self.key(connection), now: MonotonicClock.nowMicros()) }
    }

    private static func key(_ connection: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection))) }

    private func run() {
        defer { finished.signal() }
        while stopping.wait(timeout: .now() + .microseconds(Int(sweepMicros))) == .timedOut {
            let closed = table.withLock { table -> Int in
                let expired = table.expire(now: MonotonicClock.nowMicros())
                for socket in expired { shutdown(socket, Int32(SHUT_RDWR)) }
                return expired.count
            }
            if closed > 0 {
                logger.info("http connections closed at the request deadline", [
                    "count": closed, "deadline.ms": table.withLock { $0.deadlineMicros } / 1_000,
                ])
            }
        }
    }
}
