import Dispatch
import Foundation
import FrameWire
import Glibc
import ScreencastSupport
import Synchronization

/// The call side of the agent↔call socket: listens on a Unix stream socket, accepts one sender at a
/// time, decodes its frames and reports them to the owner.
///
/// - ``start()`` creates the parent folder (0700, last component only), replaces a stale socket file,
///   refuses a path that a live server listens on (``FrameSocketError/inUse(path:)``), binds, makes
///   the socket file 0600 and starts the reader thread.
/// - The reader thread polls the listening socket, the current connection and a wake-up descriptor;
///   it reads exactly `FrameDecoder.nextReadSize` bytes per read (never 0), so a body lands straight
///   in the frame's storage. Peers must run as the server's user or as root (`SO_PEERCRED`); a second
///   sender is refused while the first keeps going.
/// - EOF, a wire-format error or a read error ends the connection with
///   ``FrameServerEvent/senderEnded(_:_:)``; the server then waits for the next sender.
/// - ``stop()`` is idempotent and prompt (it does not depend on a client), closes the connection,
///   removes the socket file (only if it is still the one this server bound) and waits for the thread to finish.
///
/// Events are delivered in order on the reader thread; a slow handler slows reading, which makes the
/// sender drop frames rather than queue them.
public final class FrameServer: Sendable {
    /// The socket this server binds.
    public var path: SocketPath { context.path }

    private let context: ServerContext
    private let running = Mutex<ServerRun?>(nil)

    /// - Parameters:
    ///   - path: the socket to serve (see ``SocketPath/defaultPath(environment:uid:)``).
    ///   - limits: wire-format limits for the decoder of each connection.
    ///   - logger: receives one line per event (`listening`, `sender connected`, `sender refused`,
    ///     `sender ended`, `stopped`; per-frame lines at debug level).
    ///   - rawBytes: optional tap that receives every chunk exactly as read from a sender, before it is
    ///     decoded (the buffer is valid only during the call); `screencast-dump record` writes these.
    ///   - onEvent: receives ``FrameServerEvent``s in order, on the reader thread.
    ///   - frameTimeout: when set, a sender that completes no frame within this time after connecting or after
    ///     its previous frame is dropped (``SourceEndReason/frameTimeout(_:)``), so a silent or stalled
    ///   client cannot hold the one sender slot forever. A static screen's keepalives (every 2 s) keep a
    ///     5 s timeout happy.
    public convenience init(
        path: SocketPath,
        limits: FrameWireLimits = .standard,
        frameTimeout: Duration? = nil,
        logger: Logger,
        rawBytes: (@Sendable (UnsafeRawBufferPointer) -> Void)? = nil,
        onEvent: @escaping @Sendable (FrameServerEvent) -> Void
    ) {
        self.init(
            path: path, limits: limits, frameTimeout: frameTimeout, logger: logger, rawBytes: rawBytes,
            readObserver: nil, onEvent: onEvent)
    }

    /// As the public init, plus `readObserver`, which is told the size of every read before it is
    /// made (tests assert it is never 0).
    init(
        path: SocketPath,
        limits: FrameWireLimits,
        frameTimeout: Duration? = nil,
        logger: Logger,
        rawBytes: (@Sendable (UnsafeRawBufferPointer) -> Void)?,
        readObserver: (@Sendable (Int) -> Void)?,
        onEvent: @escaping @Sendable (FrameServerEvent) -> Void
    ) {
        context = ServerContext(
            path: path, limits: limits, frameTimeout: frameTimeout, logger: logger, rawBytes: rawBytes,
            readObserver: readObserver, onEvent: onEvent
        )
    }

    deinit { stop() }

    /// True between a successful ``start()`` and ``stop()``.
    public var isRunning: Bool { running.withLock { $0 != nil } }

    /// Binds and listens, then starts the reader thread.
    ///
    /// - Throws: ``FrameSocketError/alreadyStarted``, ``FrameSocketError/inUse(path:)`` (a live server
    ///   answered a probe connection), ``FrameSocketError/notASocket(path:)`` (a non-socket file is in
    ///   the way; it is not touched), ``FrameSocketError/notADirectory(path:)``, or
    ///   ``FrameSocketError/systemCall(name:errno:path:)`` from `mkdir`, `socket`, `bind`, `chmod`,
    ///   `listen`, ….
    public func start() throws(FrameSocketError) {
        try running.withLock { (current: inout ServerRun?) throws(FrameSocketError) in
            guard current == nil else { throw .alreadyStarted }
            current = try context.open()
        }
    }

    /// Stops the reader thread, ends the current sender (``SourceEndReason/serverStopped``), removes
    /// the socket file and returns when all of that is done. Idempotent; a later ``start()`` may reuse
    /// the server. Called from within `onEvent` (the reader thread itself), it returns at once and the
    /// thread finishes as soon as the handler returns. When two threads call it at once, the one that
    /// finds the server already stopping returns without waiting.
    public func stop() {
        guard let run = running.withLock({ $0.take() }) else { return }
        run.wake.signal()
        if !run.isCurrentThread { run.finished.wait() }
    }
}

/// The server's fixed configuration, shared with its reader threads (all `let`s of Sendable types).
final class ServerContext: Sendable {
    let path: SocketPath
    let limits: FrameWireLimits
    /// A sender's longest time without completing a frame, µs; nil for no limit.
    let frameTimeoutMicros: UInt64?
    let logger: Logger
    let rawBytes: (@Sendable (UnsafeRawBufferPointer) -> Void)?
    let readObserver: (@Sendable (Int) -> Void)?
    let onEvent: @Sendable (FrameServerEvent) -> Void
    /// The uid peers must have (besides root).
    let serverUID: UInt32 = getuid()
    /// Accepted connections so far, across restarts.
    let connections = Atomic<Int>(0)

    init(
        path: SocketPath, limits: FrameWireLimits, frameTimeout: Duration?, logger: Logger,
        rawBytes: (@Sendable (UnsafeRawBufferPointer) -> Void)?, readObserver: (@Sendable (Int) -> Void)?,
        onEvent: @escaping @Sendable (FrameServerEvent) -> Void
    ) {
        self.path = path
        self.limits = limits
        frameTimeoutMicros = frameTimeout.map { UInt64($0.components.seconds) * 1_000_000 + UInt64($0.components.attoseconds / 1_000_000_000_000) }
        self.logger = logger
        self.rawBytes = rawBytes
        self.readObserver = readObserver
        self.onEvent = onEvent
    }

    /// Whether a peer with `uid` may send: the server's own user, or root.
    static func allows(peerUID uid: UInt32, serverUID: UInt32) -> Bool {
        uid == serverUID || uid == 0
    }

    /// Prepares the path, binds, listens and starts a reader thread.
    func open() throws(FrameSocketError) -> ServerRun {
        let file = path.string
        if try path.createDirectoryIfNeeded() {
            logger.debug("created socket folder", ["path": path.directory, "mode": "0700"])
        }
        try removeStaleSocket()

        let listener = try UnixSocket.makeStream(nonBlocking: true)
        let code = UnixSocket.bind(listener, to: path)
        if code == EADDRINUSE { throw .inUse(path: file) }
        guard code == 0 else { throw .systemCall(name: "bind", errno: code, path: file) }
        let run: ServerRun
        do throws(FrameSocketError) {
            // Before listen(), nobody can connect, so the file is never reachable with another mode.
            guard chmod(file, 0o600) == 0 else { throw .lastError("chmod", path: file) }
            guard listen(listener.rawValue, 8) == 0 else { throw .lastError("listen", path: file) }
            guard let identity = try UnixSocket.fileIdentity(file) else {
                throw .systemCall(name: "lstat", errno: ENOENT, path: file)
            }
            run = ServerRun(listener: listener, wake: try WakeSignal(), identity: identity)
        } catch {
            _ = unlink(file)
            throw error
        }

        WorkerThread.start(name: "frame-server") { [self] in
            run.markCurrentThread()
            var loop = ServerLoop(context: self, session: run)
            loop.run()
            run.finished.signal()
        }
        logger.info("listening", ["path": file])
        return run
    }

    /// Removes a socket file nobody listens on; refuses a live one and anything that is not a socket.
    private func removeStaleSocket() throws(FrameSocketError) {
        let file = path.string
        guard let existing = try UnixSocket.fileIdentity(file) else { return }
        guard existing.isSocket else { throw .notASocket(path: file) }
        let probe = try UnixSocket.makeStream(nonBlocking: true)
        let code = UnixSocket.connect(probe, to: path)
        probe.close()
        switch code {
        case 0, EAGAIN, EINPROGRESS:
            // Connected, or the backlog is full: either way a live server listens there.
            throw .inUse(path: file)
        case ECONNREFUSED:
            guard unlink(file) == 0 || errno == ENOENT else { throw .lastError("unlink", path: file) }
            logger.info("stale socket replaced", ["path": file])
        case ENOENT:
            return
        default:
            throw .systemCall(name: "connect", errno: code, path: file)
        }
    }
}

/// One start…stop period of a server: the listening socket, the wake-up signal and the thread's
/// completion. The reader thread alone uses and closes `listener`.
final class ServerRun: Sendable {
    let listener: FileDescriptor
    let wake: WakeSignal
    /// The socket file this run bound; only this file is removed at the end.
    let identity: FileIdentity
    /// Signalled once by the reader thread after it has cleaned up.
    let finished = DispatchSemaphore(value: 0)
    private let thread = Atomic<UInt>(0)

    init(listener: FileDescriptor, wake: WakeSignal, identity: FileIdentity) {
        self.listener = listener
        self.wake = wake
        self.identity = identity
    }

    /// Called first thing on the reader thread.
    func markCurrentThread() { thread.store(UInt(pthread_self()), ordering: .releasing) }

    /// True when called on this run's reader thread (stop from inside an event handler).
    var isCurrentThread: Bool {
        let id = thread.load(ordering: .acquiring)
        return id != 0 && pthread_equal(pthread_t(id), pthread_self()) != 0
    }

    deinit { wake.close() }
}

/// The sender currently being read: its socket, identity, decoder and counters. Used only on the
/// reader thread (a class so the decoder is mutated in place, never copied).
final class ServerConnection {
    let socket: FileDescriptor
    let info: SenderInfo
    var decoder: FrameDecoder
    var frames = 0
    var bytes = 0
    /// When the sender connected or last completed a frame (CLOCK_MONOTONIC µs), for the frame timeout.
    var lastProgressMicros = MonotonicClock.nowMicros()
    /// Whether "sender connected" was logged (not held back by the connection-log rate limit); the end of
    /// an unannounced connection goes through the same limit.
    var announced = true

    init(socket: FileDescriptor, info: SenderInfo, limits: FrameWireLimits) {
        self.socket = socket
        self.info = info
        decoder = FrameDecoder(limits: limits)
    }
}

/// The reader thread's loop: poll (wake, listener, connection) → read / accept, until woken.
struct ServerLoop {
    let context: ServerContext
    let session: ServerRun
    private var connection: ServerConnection?
    /// Connection lines ("sender connected", "sender refused", and "sender ended" of an unannounced
    /// connection): a client that connects in a loop costs a burst of lines, then one per 5 s carrying
    /// `suppressed=N`; the held-back ones go out at debug. Events still reach `onEvent` for every connection.
    private var connectionLog = LogRateLimiter(burst: 8, intervalMicros: 5_000_000)

    init(context: ServerContext, session: ServerRun) {
        self.context = context
        self.session = session
    }

    private var logger: Logger { context.logger }

    mutating func run() {
        defer { tearDown() }
        while true {
            var fds = [
                pollfd(fd: session.wake.pollDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: session.listener.rawValue, events: Int16(POLLIN), revents: 0),
            ]
            if let connection { fds.append(pollfd(fd: connection.socket.rawValue, events: Int16(POLLIN), revents: 0)) }
            do {
                _ = try UnixSocket.poll(&fds, timeoutMilliseconds: pollTimeoutMilliseconds())
            } catch {
                logger.error("reader stopped", ["error": error])
                return
            }
            if fds[0].revents != 0 || session.wake.isSignalled { return }
            if fds.count > 2, fds[2].revents != 0, let connection { readOnce(connection) }
            if let connection, let limit = context.frameTimeoutMicros,
               MonotonicClock.nowMicros() - connection.lastProgressMicros >= limit {
                end(connection, .frameTimeout(Double(limit) / 1e6))
            }
            if fds[1].revents != 0 { acceptOne() }
        }
    }

    /// How long poll may wait: until the current sender's frame deadline, else forever (-1).
    private func pollTimeoutMilliseconds() -> Int32 {
        guard let connection, let limit = context.frameTimeoutMicros else { return -1 }
        let waited = MonotonicClock.nowMicros() - connection.lastProgressMicros
        return waited >= limit ? 0 : Int32(clamping: (limit - waited + 999) / 1000)
    }

    /// One read of exactly `decoder.nextReadSize` bytes; ends the connection on EOF, a wire error or an
    /// I/O error. Called only when poll reported the socket readable (or hung up), so it does not block.
    private mutating func readOnce(_ connection: ServerConnection) {
        let fd = connection.socket.rawValue
        let info = connection.info
        let context = context
        var ended: SourceEndReason?
        var frames = 0
        var bytes = 0
        do {
            try connection.decoder.read({ (buffer: UnsafeMutableRawBufferPointer) throws(FrameSocketError) -> Int in
                context.readObserver?(buffer.count)
                let count = try UnixSocket.read(fd, into: buffer)
                bytes += count
                if count > 0, let tap = context.rawBytes {
                    tap(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                }
                return count
            }, emit: { event in
                switch event {
                case .frame(let frame):
                    frames += 1
                    if context.logger.threshold <= .debug {
                        context.logger.debug("frame", [
                            "connection": info.connection, "offset": frame.offset, "bytes": frame.body.count,
                            "seq": frame.header.sequence.map(String.init) ?? "-",
                            "capture_us": frame.header.timestampMicros.map(String.init) ?? "-",
                            "received_us": MonotonicClock.nowMicros(),
                        ])
                    }
                    context.onEvent(.frame(frame, info))
                case .end(let end):
                    ended = .stream(end)
                }
            })
        } catch let error as FrameSocketError {
            ended = .ioError(error)
        } catch {
            ended = .ioError(.systemCall(name: "read", errno: EIO, path: nil))
        }
        connection.frames += frames
        connection.bytes += bytes
        if frames > 0 { connection.lastProgressMicros = MonotonicClock.nowMicros() }
        if let ended { end(connection, ended) }
    }

    /// Closes the connection and reports "source ended".
    private mutating func end(_ ended: ServerConnection, _ reason: SourceEndReason) {
        ended.socket.close()
        connection = nil
        context.onEvent(.senderEnded(ended.info, reason))
        // A connection whose start was held back by the rate limit ends under it too (with or without
        // frames): held back again, it goes out at debug.
        let heldBack = !ended.announced && connectionLog.admit() == nil
        let level: LogLevel = switch reason {
        case _ where heldBack: .debug
        case .stream(.eof), .serverStopped: .info
        default: .warning
        }
        logger.log(level, "sender ended", [
            "connection": ended.info.connection, "pid": ended.info.pid, "reason": reason.name,
            "frames": ended.frames, "bytes": ended.bytes,
            "detail": reason.description == reason.name ? "-" : reason.description,
        ])
    }

    /// Accepts one pending connection: keeps it as the sender, or closes it (busy / foreign user).
    private mutating func acceptOne() {
        let fd = accept(session.listener.rawValue, nil, nil)
        guard fd >= 0 else {
            let code = errno
            switch code {
            case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO:
                return
            default:
                // Out of descriptors or memory: say so, and pause so a still-pending connection does
                // not turn the loop into a busy spin.
                logger.error("accept failed", ["path": context.path, "errno": code, "reason": FrameSocketError.errorText(code)])
                var fds = [pollfd(fd: session.wake.pollDescriptor, events: Int16(POLLIN), revents: 0)]
                _ = try? UnixSocket.poll(&fds, timeoutMilliseconds: 100)
                return
            }
        }
        let socket = FileDescriptor(fd)
        try? UnixSocket.setCloseOnExec(fd)
        let number = context.connections.add(1, ordering: .relaxed).newValue
        let credentials = UnixSocket.peerCredentials(fd)
        let info = SenderInfo(pid: credentials?.pid ?? 0, uid: credentials?.uid ?? UInt32.max, connection: number)

        let refusal: SenderRefusal? =
            if let credentials {
                if !ServerContext.allows(peerUID: credentials.uid, serverUID: context.serverUID) {
                    .foreignUser
                } else if connection != nil {
                    .busy
                } else {
                    nil
                }
            } else {
                .noCredentials
            }
        if let refusal {
            socket.close()
            let (level, suppressed) = connectionLog.level(.warning)
            logger.log(level, "sender refused", [
                "connection": number, "pid": info.pid, "uid": info.uid, "reason": refusal.rawValue,
                "current": connection?.info.connection ?? 0, "suppressed": suppressed,
            ])
            context.onEvent(.senderRefused(info, refusal))
            return
        }
        // Accepted sockets do not inherit O_NONBLOCK on Linux; reads happen only after poll anyway.
        try? UnixSocket.setNonBlocking(fd, false)
        let accepted = ServerConnection(socket: socket, info: info, limits: context.limits)
        connection = accepted
        let (level, suppressed) = connectionLog.level(.info)
        accepted.announced = level != .debug
        logger.log(level, "sender connected", ["connection": number, "pid": info.pid, "uid": info.uid, "suppressed": suppressed])
        context.onEvent(.senderConnected(info))
    }

    /// Ends the sender, removes the socket file if it is still ours, closes the listener.
    private mutating func tearDown() {
        if let connection { end(connection, .serverStopped) }
        let file = context.path.string
        if let current = try? UnixSocket.fileIdentity(file), current == session.identity {
            _ = unlink(file)
        }
        session.listener.close()
        logger.info("stopped", ["path": file])
    }
}
