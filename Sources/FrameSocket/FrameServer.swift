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
/// - The socket file is checked once a second: when it (or its folder) was removed while the server runs,
///   the server binds and listens there again, so later senders still find it (see `ServerLoop`).
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
    ///     5 s timeout happy. Time this process itself was stopped (SIGSTOP) does not count.
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
        run.wake.request()
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
        frameTimeoutMicros = frameTimeout.map(\.wholeMicroseconds)
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
        let (listener, identity) = try bindListener()
        let run: ServerRun
        do throws(FrameSocketError) {
            run = ServerRun(listener: listener, wake: try FrameSocketError.wakeSignal(), identity: identity)
        } catch {
            listener.close()
            _ = unlink(path.string)
            throw error
        }

        BackgroundThread.start(name: "frame-server") { [self] in
            run.markCurrentThread()
            var loop = ServerLoop(context: self, session: run)
            loop.run()
            run.finished.signal()
        }
        logger.info("listening", ["path": path.string])
        return run
    }

    /// Makes the folder if needed (0700), replaces a stale socket file, binds a new listening socket there
    /// (0600 before anyone can connect) and listens: at start, and again when the socket file went away.
    func bindListener() throws(FrameSocketError) -> (FileDescriptor, FileIdentity) {
        let file = path.string
        if try path.createDirectoryIfNeeded() {
            logger.debug("created socket folder", ["path": path.directory, "mode": "0700"])
        }
        try removeStaleSocket()

        let listener = try UnixSocket.makeStream(nonBlocking: true)
        let code = UnixSocket.bind(listener, to: path)
        if code == EADDRINUSE { listener.close(); throw .inUse(path: file) }
        guard code == 0 else { listener.close(); throw .systemCall(name: "bind", errno: code, path: file) }
        do throws(FrameSocketError) {
            // Before listen(), nobody can connect, so the file is never reachable with another mode.
            guard chmod(file, 0o600) == 0 else { throw .lastError("chmod", path: file) }
            guard listen(listener.rawValue, 8) == 0 else { throw .lastError("listen", path: file) }
            guard let identity = try UnixSocket.fileIdentity(file) else {
                throw .systemCall(name: "lstat", errno: ENOENT, path: file)
            }
            return (listener, identity)
        } catch {
            listener.close()
            _ = unlink(file)
            throw error
        }
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

}
