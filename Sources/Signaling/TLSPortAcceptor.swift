internal import CMicroHTTPD
import Foundation
import Glibc
import ScreencastSupport
import Synchronization

/// The HTTPS port's own listening socket: it looks at each connection's first byte before libmicrohttpd
/// sees it. A TLS record starts with its ContentType, `handshake(22)` for a ClientHello (RFC 8446 §5.1,
/// RFC 5246 §6.2.1): such a connection is handed to the daemon (`MHD_add_connection`). Anything else is
/// plain HTTP sent to the HTTPS port (a link typed as `http://`), which TLS would only drop with an empty
/// reply: it gets a plaintext answer instead, a `301` to the same path over `https://` for a GET or HEAD
/// with a usable `Host`, else `400`, each with a line saying that this port speaks HTTPS.
///
/// Limits: a connection that sends nothing within `firstByteTimeoutMillis` (default
/// ``defaultFirstByteTimeoutMillis``, `HTTPServerOptions.tlsFirstByteTimeoutMillis`) is closed; at most
/// ``maxWaiting`` connections wait for their first byte at once, and at most ``maxWaitingPerAddress`` from
/// one address (more are closed at accept, logged at most once a minute): silent connections from one
/// client cannot lock every other out of the port before libmicrohttpd's own per-address limit applies (a
/// break-it trial held all 64 from one address); a plaintext request is read up to ``maxPlaintextBytes``.
/// A connection handed on must finish its TLS handshake and its request within
/// ``HTTPServerOptions/requestDeadlineMillis`` of being handed on (``RequestDeadlineTable``): the first byte of a
/// ClientHello alone no longer holds a connection (a review sent `16 03 01 40 00` and stalled).
public final class TLSPortAcceptor: @unchecked Sendable {
    // @unchecked Sendable: `listener` and `daemon` are set in init and only read after; `waiting` and
    // `stopped` are Mutex-guarded; the accept thread is the only one calling accept(2).
    /// How long a new connection may stay silent before it is closed, ms.
    public static let defaultFirstByteTimeoutMillis: Int32 = 10_000
    /// Connections waiting for their first byte at once; more are closed at accept. 4 addresses' worth at
    /// ``maxWaitingPerAddress`` (each has a thread for at most the first-byte timeout).
    public static let maxWaiting = 128
    /// Of ``maxWaiting``, those from one IP address: ``HTTPServerOptions/defaultPerAddressIncompleteLimit``, the
    /// same bound on a slow client as the daemon's (twenty browsers behind one NAT open 20–40 at once).
    public static let maxWaitingPerAddress = Int(HTTPServerOptions.defaultPerAddressIncompleteLimit)
    /// Bytes of a plaintext request read before it is answered.
    public static let maxPlaintextBytes = 8192
    private let firstByteTimeoutMillis: Int32

    let listener: Int32
    let port: UInt16
    private let daemon: OpaquePointer
    private let logger: Logger
    /// Connections waiting for their first byte: in all, and by peer address.
    private let waiting = Mutex((total: 0, byAddress: [String: Int]()))
    private let refusals = Mutex(LogRateLimiter(burst: 1, intervalMicros: 60_000_000))
    private let stopped = Mutex(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Binds `address` (SO_REUSEADDR, as libmicrohttpd does), listens, and starts accepting for `daemon`
    /// (started with `MHD_USE_NO_LISTEN_SOCKET`).
    /// - Throws: the `strerror` text of the failed call.
    init(address: SocketAddress, daemon: OpaquePointer, firstByteTimeoutMillis: Int32, logger: Logger) throws(SignalingError) {
        let fd = socket(address.isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .startFailed(endpoint: "-", reason: "socket: \(SystemErrorText.of())") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if address.isIPv6 { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        let bound = address.withSockaddr { bind(fd, $0, address.length) }
        guard bound == 0, listen(fd, 64) == 0 else {
            let reason = SystemErrorText.of()
            close(fd)
            throw .startFailed(endpoint: "-", reason: "bind: \(reason)")
        }
        var local = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let port = withUnsafeMutablePointer(to: &local) { pointer -> UInt16 in
            _ = pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
        listener = fd
        self.firstByteTimeoutMillis = max(1, firstByteTimeoutMillis)
        self.port = port
        self.daemon = daemon
        self.logger = logger
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Stops accepting and waits for the accept thread; connections already handed on are the daemon's.
    func stop() {
        let first = stopped.withLock { s -> Bool in
            defer { s = true }
            return !s
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        finished.wait()
        close(listener)
    }

    private func acceptLoop() {
        defer { finished.signal() }
        while !stopped.withLock({ $0 }) {
            var peer = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &peer) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
            }
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE || errno == ENOBUFS {
                    if errno != EINTR, errno != ECONNABORTED { usleep(10_000) }
                    continue
                }
                return  // shut down (EINVAL) or a fatal error
            }
            let key = Self.addressKey(peer)
            let admitted = waiting.withLock { w -> Bool in
                guard w.total < Self.maxWaiting, w.byAddress[key, default: 0] < Self.maxWaitingPerAddress else { return false }
                w.total += 1
                w.byAddress[key, default: 0] += 1
                return true
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            guard admitted else {
                close(fd)
                if let suppressed = refusals.withLock({ $0.admit() }) {
                    logger.warning("https connection refused at accept: too many waiting for their first byte", [
                        "address": key, "limit": Self.maxWaitingPerAddress, "total.limit": Self.maxWaiting, "suppressed": suppressed,
                    ])
                }
                continue
            }
            let (address, addressLength) = (peer, length)
            // A thread of its own (at most maxWaiting of them): a silent client must not hold a shared
            // dispatch worker for the whole timeout.
            Thread.detachNewThread { [self] in
                defer {
                    waiting.withLock { w in
                        w.total -= 1
                        w.byAddress[key, default: 1] -= 1
                        if w.byAddress[key] == 0 { w.byAddress[key] = nil }
                    }
                }
                route(fd, address: address, length: addressLength)
            }
        }
    }

    /// The peer's IP address as text (no port, `cmhd_address_text`): the key of the per-address limit.
    static func addressKey(_ peer: sockaddr_storage) -> String {
        var peer = peer
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let converted = withUnsafePointer(to: &peer) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { cmhd_address_text($0, &text, text.count) }
        }
        guard converted == 0 else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Waits for the first byte: a TLS handshake goes to the daemon, plain text gets its answer.
    private func route(_ fd: Int32, address: sockaddr_storage, length: socklen_t) {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        var first: UInt8 = 0
        guard poll(&poller, 1, firstByteTimeoutMillis) == 1, recv(fd, &first, 1, Int32(MSG_PEEK)) == 1 else {
            close(fd)
            return
        }
        if first == 22 {
            var address = address
            let added = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { MHD_add_connection(daemon, fd, $0, length) }
            }
            if added != .YES { logger.debug("https connection not taken (limits)") }  // MHD closed it
            return
        }
        answerPlaintext(fd)
        close(fd)
    }

    /// Reads what a plaintext client sent (one read, what is there) and answers it.
    private func answerPlaintext(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: Self.maxPlaintextBytes)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        let request = PlaintextRequest(Array(buffer.prefix(max(0, count))))
        let reply = request.reply
        logger.info("plain HTTP on the HTTPS port", ["status": reply.status, "path": request.target ?? "-"])
        _ = reply.bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}

/// A plaintext request that reached the HTTPS port, sans-I/O: its first bytes in, the answer out.
struct PlaintextRequest: Equatable {
    /// The method and request target of its request line, when it has one (`GET /?token=… HTTP/1.1`).
    var method: String?
    var target: String?
    /// The `Host` header, when it is a plain host name or address with an optional port.
    var host: String?

    init(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        // CRLF is one Character in Swift: split on any line end.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        let requestLine = lines.first.map { $0.split(separator: " ") } ?? []
        if requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1."), requestLine[1].hasPrefix("/") {
            method = String(requestLine[0])
            target = String(requestLine[1])
        }
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == "host" else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            let allowed = value.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || ".-:[]".unicodeScalars.contains($0) }
            if !value.isEmpty, value.count <= 255, allowed, value.unicodeScalars.allSatisfy(\.isASCII) { host = value }
            break
        }
    }

    /// `301` to `https://HOST/TARGET` for a GET or HEAD with a usable Host and target, else `400`; the body
    /// says in one line that this port speaks HTTPS.
    var reply: (status: Int, bytes: [UInt8]) {
        let location = host.flatMap { host in target.map { "https://\(host)\($0)" } }
        let redirect = location != nil && (method == "GET" || method == "HEAD")
        let body = "This port speaks HTTPS, not plain HTTP: open "
            + (location ?? "https://\(host ?? "this-host:port")/") + " (the certificate is self-signed: compare its"
            + " SHA-256 fingerprint with the one the sharer's terminal printed).\n"
        var head = redirect ? "HTTP/1.1 301 Moved Permanently\r\nLocation: \(location!)\r\n" : "HTTP/1.1 400 Bad Request\r\n"
        head += "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        return (redirect ? 301 : 400, Array((head + (method == "HEAD" ? "" : body)).utf8))
    }
}
