internal import CMicroHTTPD
import Glibc
import ScreencastSupport
import Synchronization

/// Limits of the HTTP server. The defaults let a whole office behind one NAT watch (twenty browsers from one
/// address, each with a few kept-alive connections) and make a slow or stalling client unable to lock the
/// others out: what is capped per address is what harms — connections that have not completed a request
/// (``defaultPerAddressIncompleteLimit``), and each request must arrive within ``defaultRequestDeadlineMillis``
/// whatever its pace — while established connections are bounded only by ``defaultPerAddressConnectionLimit``
/// of ``defaultConnectionLimit`` (a bad-input review held all 64 connections of older defaults from 2
/// addresses by dripping header bytes or stalling a TLS handshake; 16 viewers joining at once from one
/// address were refused under a limit of 8 connections per address, issue 31).
public struct HTTPServerOptions: Sendable {
    /// Default of ``connectionLimit``: 32 addresses' worth at ``defaultPerAddressConnectionLimit``. Each
    /// connection has a thread and a descriptor; the daemon polls with poll(2) (`MHD_USE_POLL_INTERNAL_THREAD`),
    /// so no FD_SETSIZE bound applies.
    public static let defaultConnectionLimit: UInt32 = 256
    /// Default of ``perAddressConnectionLimit``: a quarter of ``defaultConnectionLimit``, room for twenty to thirty
    /// browsers behind one NAT (a viewer page keeps one to three connections), while it takes four addresses to
    /// hold the server (a bad-input trial held all 256 from two addresses at the half it was first).
    public static let defaultPerAddressConnectionLimit: UInt32 = 64
    /// Default of ``perAddressIncompleteLimit``: connections from one address still sending their first request.
    /// A browser has one or two at a time; twenty opening the link in the same second may have 20–40 for a few
    /// ms. A slow client holds at most this many (each until the request deadline), an eighth of the server.
    public static let defaultPerAddressIncompleteLimit: UInt32 = 32
    /// Default of ``requestDeadlineMillis``, ms: a request takes a few ms on loopback and well under a second
    /// over a slow link (a WHEP offer is a few kB).
    public static let defaultRequestDeadlineMillis: UInt32 = 10_000

    /// Concurrent connections (each has a thread); more are refused at accept.
    public var connectionLimit: UInt32 = defaultConnectionLimit
    /// A connection idle this long (seconds) is closed, so a silent client cannot hold a thread.
    public var idleTimeoutSeconds: UInt32 = 30
    /// Concurrent connections from one IP address, established ones included; more are closed at accept
    /// (MHD_OPTION_PER_IP_CONNECTION_LIMIT), so one address cannot take every connection.
    public var perAddressConnectionLimit: UInt32 = defaultPerAddressConnectionLimit
    /// Connections from one IP address that have not completed a request yet (a slow or stalled request, a
    /// dripped TLS handshake); more are closed as they open (``RequestDeadlineTable``). Kept-alive connections
    /// that have completed one do not count.
    public var perAddressIncompleteLimit: UInt32 = defaultPerAddressIncompleteLimit
    /// How long a request may take to arrive, ms: from the connection's start (for HTTPS, from the TLS
    /// handshake's first record), or from the end of the previous request on a kept-alive connection, to
    /// its last header and body byte. A connection still receiving then is closed, however steadily it
    /// drips bytes (the idle timeout only catches silence). A kept-alive connection therefore lasts at
    /// most this long between requests. See ``RequestDeadlineTable``.
    public var requestDeadlineMillis: UInt32 = defaultRequestDeadlineMillis
    /// Bytes of headers and buffers per connection (MHD_OPTION_CONNECTION_MEMORY_LIMIT): request headers past
    /// it are refused with 431. Bodies are bounded per route (``HTTPRoute/bodyLimit``), not by this.
    public var memoryLimitBytes = 32 * 1024

    /// Serve HTTPS (TLS through libmicrohttpd's GnuTLS) with this identity instead of plain HTTP.
    public var tls: TLSIdentity?
    /// HTTPS only: a connection that sends nothing for this long (ms) is closed before TLS starts
    /// (``TLSPortAcceptor``).
    public var tlsFirstByteTimeoutMillis: Int32 = TLSPortAcceptor.defaultFirstByteTimeoutMillis

    public init(
        connectionLimit: UInt32 = defaultConnectionLimit, idleTimeoutSeconds: UInt32 = 30,
        perAddressConnectionLimit: UInt32 = defaultPerAddressConnectionLimit, tls: TLSIdentity? = nil
    ) {
        self.connectionLimit = connectionLimit
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.perAddressConnectionLimit = perAddressConnectionLimit
        self.tls = tls
    }
}

/// A certificate and its private key for HTTPS, both PEM (RFC 7468), e.g. a self-signed one made at start.
public struct TLSIdentity: Sendable {
    /// `-----BEGIN CERTIFICATE-----` …
    public var certificatePEM: String
    /// `-----BEGIN PRIVATE KEY-----` … (PKCS #8, unencrypted).
    public var privateKeyPEM: String
    /// The certificate's SHA-256 fingerprint as upper-case hex pairs (`AB:CD:…`), for people to compare.
    public var fingerprint: String

    public init(certificatePEM: String, privateKeyPEM: String, fingerprint: String) {
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
        self.fingerprint = fingerprint
    }
}

/// An HTTP/1.1 server on libmicrohttpd that hands every request to an ``HTTPRouter``. The one owner of
/// the `MHD_Daemon`: ``stop()`` (or `deinit`) calls `MHD_stop_daemon`.
///
/// Thread model: `MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION`. One MHD thread
/// accepts; every connection gets its own thread, on which the router's checks and handlers run. A
/// handler that takes a while (a WHEP POST that gathers ICE candidates) therefore delays only its own
/// request, never `/stats` or another viewer; still, handlers must finish in bounded time (a second or
/// two), because ``stop()`` waits for running handlers. Never call ``stop()`` from a handler.
///
/// Bodies are accumulated per request up to the route's ``HTTPRoute/bodyLimit``: a declared
/// `Content-Length` over the limit is refused with 413 before the body is read (the connection is then
/// closed); a chunked body that grows over the limit is drained and answered with 413.
public final class HTTPServer: Sendable {
    /// The endpoint asked for.
    public let endpoint: HTTPEndpoint
    /// The port actually bound (differs from ``endpoint``'s when that was 0).
    public let port: UInt16

    private let core: ServerCore
    private let logSink: LogSinkStorage
    /// The HTTPS key and certificate as C strings, alive as long as the daemon (MHD keeps the pointers).
    private let pem: PEMStrings?
    private let daemon: Mutex<OpaquePointer?>
    /// HTTPS only: the listening socket that tells TLS from plain HTTP (nil over plain HTTP: MHD listens).
    private let acceptor: TLSPortAcceptor?
    /// True when serving HTTPS.
    public var isTLS: Bool { pem != nil }

    /// Binds `endpoint` and starts serving `router`.
    /// - Throws: ``SignalingError/addressResolution(host:reason:)``, ``SignalingError/startFailed(endpoint:reason:)``.
    public static func start(
        endpoint: HTTPEndpoint, router: HTTPRouter, options: HTTPServerOptions = HTTPServerOptions(), logger: Logger
    ) throws(SignalingError) -> HTTPServer {
        let address = try endpoint.resolve()
        let deadlines = RequestDeadlineSweeper(
            deadlineMillis: options.requestDeadlineMillis, incompleteLimitPerAddress: options.perAddressIncompleteLimit, logger: logger)
        let core = ServerCore(router: router, deadlines: deadlines, logger: logger)
        let logSink = LogSinkStorage(core: core)
        // poll(), not select(): with select libmicrohttpd refuses to start once its listening socket or its
        // inter-thread channel is descriptor 1024 or above (FD_SETSIZE), and closes every accepted connection
        // that is — a call that holds many descriptors (viewers, sockets, files) would stop serving HTTP.
        var flags = MHD_USE_POLL_INTERNAL_THREAD.rawValue | MHD_USE_THREAD_PER_CONNECTION.rawValue
            | MHD_USE_ERROR_LOG.rawValue | MHD_USE_ITC.rawValue
        if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        // HTTPS: our own listening socket looks at each connection's first byte, so that plain HTTP sent to
        // this port gets an answer instead of TLS's empty reply (TLSPortAcceptor); the daemon gets the rest.
        if options.tls != nil { flags |= MHD_USE_TLS.rawValue | MHD_USE_NO_LISTEN_SOCKET.rawValue }
        let context = Unmanaged.passUnretained(core).toOpaque()
        let pem = options.tls.map(PEMStrings.init)
        let started = address.withSockaddr { sockaddr in
            cmhd_start_daemon(
                flags, sockaddr, endpoint.port,
                { cls, connection, url, method, _, data, size, state in
                    guard let cls, let connection, let url, let method, let size, let state else { return .NO }
                    return Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
                        .access(connection, url: url, method: method, data: data, size: size, state: state)
                },
                context,
                { cls, connection, state, _ in
                    if let cls, let connection {
                        Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().deadlines.requestCompleted(connection)
                    }
                    guard let state, let pointer = state.pointee else { return }
                    Unmanaged<RequestState>.fromOpaque(pointer).release()
                    state.pointee = nil
                },
                context, logSink.pointer, options.connectionLimit, options.idleTimeoutSeconds, options.memoryLimitBytes,
                options.perAddressConnectionLimit,
                { cls, connection, _, code in
                    guard let cls, let connection else { return }
                    let deadlines = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().deadlines
                    if code.rawValue == 0 {  // MHD_CONNECTION_NOTIFY_STARTED (1: _CLOSED)
                        deadlines.opened(connection, socket: cmhd_connection_fd(connection), address: ServerCore.clientAddress(connection))
                    } else {
                        deadlines.closed(connection)
                    }
                },
                context, pem?.key, pem?.certificate)
        }
        guard let started else {
            let reason = core.lastLibraryMessage.withLock { $0 } ?? "MHD_start_daemon failed"
            throw .startFailed(endpoint: endpoint.description, reason: reason)
        }
        var acceptor: TLSPortAcceptor?
        if options.tls != nil {
            do {
                acceptor = try TLSPortAcceptor(
                    address: address, daemon: started, firstByteTimeoutMillis: options.tlsFirstByteTimeoutMillis, logger: logger)
            } catch {
                MHD_stop_daemon(started)
                guard case .startFailed(_, let reason) = error else { throw error }
                throw .startFailed(endpoint: endpoint.description, reason: reason)
            }
        }
        core.running.withLock { $0 = true }
        deadlines.start()
        let server = HTTPServer(
            endpoint: endpoint, port: acceptor?.port ?? cmhd_bound_port(started), core: core, logSink: logSink, pem: pem,
            acceptor: acceptor, daemon: started)
        logger.info("http listening", ["address": HTTPEndpoint(host: endpoint.host, port: server.port)])
        return server
    }

    private init(
        endpoint: HTTPEndpoint, port: UInt16, core: ServerCore, logSink: LogSinkStorage, pem: PEMStrings?,
        acceptor: TLSPortAcceptor?, daemon: sending OpaquePointer
    ) {
        self.acceptor = acceptor
        self.pem = pem
        self.endpoint = endpoint
        self.port = port
        self.core = core
        self.logSink = logSink
        self.daemon = Mutex(daemon)
    }

    /// Closes the listening socket and every connection, waits for running handlers and the threads.
    /// Idempotent; returns once the port is free.
    public func stop() {
        let running = daemon.withLock { daemon -> OpaquePointer? in
            defer { daemon = nil }
            return daemon
        }
        guard let running else { return }
        acceptor?.stop()
        core.deadlines.stop()
        MHD_stop_daemon(running)
        core.logger.info("http stopped", ["port": port])
    }

    deinit { stop() }
}

/// What the C callbacks reach through `Unmanaged`: the router and the logger. Immutable apart from
/// the last library message, which a mutex guards.
final class ServerCore: Sendable {
    let router: HTTPRouter
    let logger: Logger
    /// Each connection's request deadline (``HTTPServerOptions/requestDeadlineMillis``).
    let deadlines: RequestDeadlineSweeper
    /// libmicrohttpd's messages once the server runs come from clients ("Server reached connection limit"
    /// for each connection refused at accept, a GnuTLS error for each broken handshake): at most
    /// ``libraryMessageBurst`` back to back, then one per ``libraryMessageIntervalMicros``, each saying how
    /// many were held back (a review's client reconnecting in a loop caused 112 handshake lines in 70 s and
    /// ~14,000 refusals).
    let libraryMessages = Mutex(LogRateLimiter(burst: ServerCore.libraryMessageBurst, intervalMicros: ServerCore.libraryMessageIntervalMicros))
    /// Library lines that may go out back to back while the server runs.
    static let libraryMessageBurst = 10
    /// One more library line per this many µs once the burst is spent (10 a minute).
    static let libraryMessageIntervalMicros: UInt64 = 6_000_000
    let lastLibraryMessage = Mutex<String?>(nil)
    /// False while the daemon starts: the library's messages then explain a start failure (warning level);
    /// later ones are mostly about clients that went away (info level).
    let running = Mutex(false)

    init(router: HTTPRouter, deadlines: RequestDeadlineSweeper, logger: Logger) {
        self.router = router
        self.deadlines = deadlines
        self.logger = logger
    }

    /// The connection's client IP address as text (no port), nil when libmicrohttpd does not know it.
    static func clientAddress(_ connection: OpaquePointer) -> String? {
        var text = [CChar](repeating: 0, count: 64)
        guard cmhd_client_address(connection, &text, text.count) == 0 else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The first name that appears twice, nil when each appears once.
    static func firstRepeatedName(_ names: [String]) -> String? {
        var seen = Set<String>()
        for name in names where !seen.insert(name).inserted { return name }
        return nil
    }

    /// The access handler (see `MHD_AccessHandlerCallback`): called once when the headers are in
    /// (`state` nil), once per body chunk, and once when the body is complete.
    func access(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>, data: UnsafePointer<CChar>?,
        size: UnsafeMutablePointer<Int>, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let pointer = state.pointee else {
            let arguments = Self.values(connection, .GET_ARGUMENT_KIND)
            let clientAddress = Self.clientAddress(connection)
            let request = HTTPRequest(
                method: String(cString: method), path: String(cString: url),
                query: Dictionary(arguments.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first }),
                headers: HTTPHeaders(Self.values(connection, .HEADER_KIND)), clientAddress: clientAddress)
            // A parameter given twice (`?token=a&token=b`) is ambiguous: refused, never one of them picked.
            if let repeated = Self.firstRepeatedName(arguments.map(\.name)) {
                deadlines.handling(connection)
                return queue(.text(400, "query parameter '\(repeated)' is given more than once"), request: request, on: connection)
            }
            let declared = request.headers["Content-Length"].flatMap { Int($0.trimmingWhitespace()) }
            switch router.begin(request, contentLength: declared) {
            case .respond(let response):
                deadlines.handling(connection)
                return queue(response, request: request, on: connection)
            case .readBody(let pending):
                state.pointee = Unmanaged.passRetained(RequestState(pending)).toOpaque()
                return .YES
            }
        }
        let request = Unmanaged<RequestState>.fromOpaque(pointer).takeUnretainedValue()
        if size.pointee > 0 {
            if let data, !request.overflowed {
                if request.body.count + size.pointee <= request.pending.limit {
                    data.withMemoryRebound(to: UInt8.self, capacity: size.pointee) {
                        request.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size.pointee))
                    }
                } else {
                    request.overflowed = true
                    request.body = []
                }
            }
            size.pointee = 0
            return .YES
        }
        deadlines.handling(connection)
        let response = request.overflowed
            ? router.bodyTooLarge(limit: request.pending.limit, crossOrigin: request.pending.route.crossOrigin) : router.finish(request.pending, body: request.body)
        return queue(response, request: request.pending.request, on: connection)
    }

    private func queue(_ response: HTTPResponse, request: HTTPRequest, on connection: OpaquePointer) -> MHD_Result {
        let made = response.body.withUnsafeBytes { cmhd_response_copying($0.baseAddress, $0.count) }
        guard let made else {
            logger.error("response allocation failed", ["path": request.path])
            return .NO
        }
        defer { MHD_destroy_response(made) }
        for field in response.headers where MHD_add_response_header(made, field.name, field.value) != .YES {
            logger.warning("response header refused", ["name": field.name])
        }
        logger.debug("request", ["method": request.method, "path": request.path, "status": response.status])
        return MHD_queue_response(connection, UInt32(response.status), made)
    }

    /// Every key/value of one kind (headers, query arguments) in order.
    private static func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [(name: String, value: String)] {
        let collector = FieldCollector()
        withExtendedLifetime(collector) {
            _ = MHD_get_connection_values(connection, kind, { cls, _, key, value in
                guard let cls, let key else { return .YES }
                Unmanaged<FieldCollector>.fromOpaque(cls).takeUnretainedValue().fields.append(
                    (name: String(cString: key), value: value.map { String(cString: $0) } ?? ""))
                return .YES
            }, Unmanaged.passUnretained(collector).toOpaque())
        }
        return collector.fields
    }

    /// A message from libmicrohttpd's own logger: a warning while the daemon starts (it explains a start
    /// failure), then at info level and rate-limited (``libraryMessages``).
    func libraryMessage(_ text: String) {
        var message = text
        while message.last == "\n" { message.removeLast() }
        lastLibraryMessage.withLock { $0 = message }
        if running.withLock({ $0 }) {
            guard let suppressed = libraryMessages.withLock({ $0.admit() }) else { return }
            if suppressed > 0 {
                logger.info("libmicrohttpd", ["message": message, "suppressed": suppressed])
            } else {
                logger.info("libmicrohttpd", ["message": message])
            }
            return
        }
        logger.warning("libmicrohttpd", ["message": message])
    }
}

/// The per-request state between access-handler calls, retained in MHD's `con_cls` and released by the
/// request-completed callback. Only the connection's own thread touches it.
private final class RequestState {
    let pending: HTTPRouter.Pending
    var body: [UInt8] = []
    var overflowed = false

    init(_ pending: HTTPRouter.Pending) { self.pending = pending }
}

/// Collects values during one `MHD_get_connection_values` call on the calling thread.
private final class FieldCollector {
    var fields: [(name: String, value: String)] = []
}

/// The `struct cmhd_logger` handed to libmicrohttpd, at a fixed address for the daemon's lifetime.
// @unchecked Sendable: the pointer is written once in init, read by MHD threads only through the C sink
// (which forwards to the Sendable ServerCore), and freed in deinit after the daemon has stopped.
private final class LogSinkStorage: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<cmhd_logger>
    private let core: ServerCore

    init(core: ServerCore) {
        self.core = core
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: cmhd_logger(
            sink: { context, message in
                guard let context, let message else { return }
                Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue().libraryMessage(String(cString: message))
            },
            context: Unmanaged.passUnretained(core).toOpaque()))
    }

    deinit { pointer.deallocate() }
}

/// The owner of the PEM C strings handed to MHD (`strdup`, freed in `deinit`).
///
/// `@unchecked Sendable` is safe: the pointers are set once in init, never written, and only read by MHD.
private final class PEMStrings: @unchecked Sendable {
    let key: UnsafeMutablePointer<CChar>?
    let certificate: UnsafeMutablePointer<CChar>?

    init(_ identity: TLSIdentity) {
        key = strdup(identity.privateKeyPEM)
        certificate = strdup(identity.certificatePEM)
    }

    deinit {
        // Overwrite the key before giving the memory back.
        if let key { memset(key, 0, strlen(key)) }
        free(key)
        free(certificate)
    }
}
