import Dispatch
import FrameWire
import Glibc
import ScreencastSupport

/// The sender currently being read: its socket, identity, decoder and counters. Used only on the
/// reader thread (a class so the decoder is mutated in place, never copied).
final class ServerConnection {
    let socket: FileDescriptor
    let info: SenderInfo
    var decoder: FrameDecoder
    var frames = 0
    /// Sound messages delivered (§2.10).
    var sounds = 0
    var bytes = 0
    /// When the sender connected or last completed a frame (CLOCK_MONOTONIC µs), for the frame timeout.
    var lastProgressMicros = MonotonicClock.nowMicros()
    /// Whether "sender connected" was logged (not held back by the connection-log rate limit); the end of
    /// an unannounced connection goes through the same limit.
    var announced = true
    /// Descriptors received (`SCM_RIGHTS`) and not yet taken by a `BGRX-SHM` frame of a new generation.
    var descriptors: [Int32] = []
    /// The kernel dropped descriptors (more at once than a read takes).
    var descriptorsTruncated = false
    /// The memory the last `BGRX-SHM` frame used.
    var picture: SharedPicture?

    /// Descriptors a sender may have waiting, unused by any frame (named limit).
    static let maxWaitingDescriptors = 4

    init(socket: FileDescriptor, info: SenderInfo, limits: FrameWireLimits) {
        self.socket = socket
        self.info = info
        decoder = FrameDecoder(limits: limits)
    }

    deinit { for fd in descriptors { close(fd) } }

    /// The mapping `header` names (Protocol/frame-wire.md §2.8): the current one for its generation and size,
    /// else the oldest waiting descriptor mapped as that generation (the previous mapping is let go).
    func sharedPicture(for header: FrameHeader) throws(SharedPictureError) -> SharedPicture? {
        guard let memory = header.memory else { return nil }
        if descriptorsTruncated || descriptors.count > Self.maxWaitingDescriptors {
            throw .tooManyDescriptors(limit: Self.maxWaitingDescriptors)
        }
        if let picture, picture.generation == memory.generation, picture.width == header.bufferWidth,
           picture.height == header.bufferHeight {
            return picture
        }
        guard !descriptors.isEmpty else { throw .descriptorMissing(generation: memory.generation) }
        picture = nil
        let fd = descriptors.removeFirst()
        let mapped = try SharedPicture.map(descriptor: fd, generation: memory.generation, width: header.bufferWidth,
                                           height: header.bufferHeight)
        picture = mapped
        return mapped
    }
}

/// The reader thread's loop: poll (wake, listener, connection) → read / accept, until woken.
///
/// Two things it watches besides the sockets:
/// - The socket file: once a second (``ServerLoop/pathCheckMicros``) it checks that the path still names
///   the socket it listens on. When the file (or its folder) was removed, say by a cleaner of `/tmp`, it
///   binds and listens there again (`socket file gone; listening again`), so the next sender can connect;
///   the current sender is not disturbed. A path another server took over is left to it (said once).
/// - Its own stops: the frame timeout counts only time the call spent waiting for the sender. When one turn
///   of the loop (poll, read, handlers) takes more than ``ServerLoop/stallAllowanceMicros`` beyond its poll
///   timeout (the process was stopped with SIGSTOP, starved, or busy in a handler), the excess is added to
///   the sender's deadline: a sender whose bytes waited in the socket meanwhile is not dropped for the
///   call's own absence.
struct ServerLoop {
    /// How often the socket file is checked, µs.
    static let pathCheckMicros: UInt64 = 1_000_000
    /// Lateness beyond the poll timeout that counts as the process having been stopped, µs.
    static let stallAllowanceMicros: UInt64 = 1_000_000

    let context: ServerContext
    let session: ServerRun
    private var connection: ServerConnection?
    /// The socket listened on now (the session's, or one bound again after the file went away).
    private var listener: FileDescriptor
    /// The socket file `listener` is bound to.
    private var identity: FileIdentity
    private var nextPathCheckMicros: UInt64
    /// Set while the path cannot be listened on again (said once); `foreign` is what holds the path then
    /// (a live server of someone else, a file that is not a socket), not probed again until it changes.
    private var pathLost = false
    private var foreign: FileIdentity?
    /// Connection lines ("sender connected", "sender refused", and "sender ended" of an unannounced
    /// connection): a client that connects in a loop costs a burst of lines, then one per 5 s carrying
    /// `suppressed=N`; the held-back ones go out at debug. Events still reach `onEvent` for every connection.
    private var connectionLog = LogRateLimiter(burst: 8, intervalMicros: 5_000_000)

    init(context: ServerContext, session: ServerRun) {
        self.context = context
        self.session = session
        listener = session.listener
        identity = session.identity
        nextPathCheckMicros = MonotonicClock.nowMicros() + Self.pathCheckMicros
    }

    private var logger: Logger { context.logger }

    mutating func run() {
        defer { tearDown() }
        var checked = MonotonicClock.nowMicros()
        while true {
            var fds = [
                pollfd(fd: session.wake.pollDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: listener.rawValue, events: Int16(POLLIN), revents: 0),
            ]
            if let connection { fds.append(pollfd(fd: connection.socket.rawValue, events: Int16(POLLIN), revents: 0)) }
            let timeout = pollTimeoutMilliseconds()
            do {
                _ = try UnixSocket.poll(&fds, timeoutMilliseconds: timeout)
            } catch {
                logger.error("reader stopped", ["error": error])
                return
            }
            if fds[0].revents != 0 || session.wake.isRequested { return }
            if fds.count > 2, fds[2].revents != 0, let connection { readOnce(connection) }
            let now = MonotonicClock.nowMicros()
            excuseStall(elapsed: now - checked, timeoutMilliseconds: timeout, now: now)
            checked = now
            if let connection, let limit = context.frameTimeoutMicros, now - min(now, connection.lastProgressMicros) >= limit {
                end(connection, .frameTimeout(Double(limit) / 1e6))
            }
            if fds[1].revents != 0 { acceptOne() }
            if now >= nextPathCheckMicros {
                nextPathCheckMicros = now + Self.pathCheckMicros
                checkPath()
            }
        }
    }

    /// How long poll may wait: until the current sender's frame deadline or the next check of the socket
    /// file, whichever comes first.
    private func pollTimeoutMilliseconds() -> Int32 {
        let now = MonotonicClock.nowMicros()
        var wait = nextPathCheckMicros > now ? nextPathCheckMicros - now : 0
        if let connection, let limit = context.frameTimeoutMicros {
            let waited = now - min(now, connection.lastProgressMicros)
            wait = min(wait, waited >= limit ? 0 : limit - waited)
        }
        return Int32(clamping: (wait + 999) / 1000)
    }

    /// One turn of the loop (poll, then the read and its handlers) that took much longer than its poll
    /// timeout allowed means this process was not running (stopped, or starved) or was busy: that time is
    /// not the sender's fault, so its frame deadline moves by as much (never past now).
    private func excuseStall(elapsed: UInt64, timeoutMilliseconds: Int32, now: UInt64) {
        let planned = UInt64(max(0, timeoutMilliseconds)) * 1000
        guard elapsed > planned + Self.stallAllowanceMicros, let connection else { return }
        let excess = elapsed - planned
        connection.lastProgressMicros = min(now, connection.lastProgressMicros + excess)
        logger.info("the call was paused (SIGSTOP or starved) for \(excess / 1000) ms; the sender's frame deadline is extended", [
            "connection": connection.info.connection,
        ])
    }

    /// Binds and listens again when the socket file is gone (or replaced by something that is not a live
    /// server); the old listening socket is closed once the new one listens.
    private mutating func checkPath() {
        let file = context.path.string
        let current = try? UnixSocket.fileIdentity(file)
        if let current, current == identity || current == foreign { return }
        do throws(FrameSocketError) {
            let (fresh, freshIdentity) = try context.bindListener()
            listener.close()
            listener = fresh
            identity = freshIdentity
            pathLost = false
            foreign = nil
            logger.warning("socket file gone; listening again", ["path": file])
        } catch {
            if !pathLost {
                logger.error("socket file gone; cannot listen there again", ["path": file, "error": error])
            }
            pathLost = true
            foreign = current
        }
    }

    /// One read of exactly `decoder.nextReadSize` bytes; ends the connection on EOF, a wire error or an
    /// I/O error. Called only when poll reported the socket readable (or hung up), so it does not block.
    private mutating func readOnce(_ connection: ServerConnection) {
        let fd = connection.socket.rawValue
        let info = connection.info
        let context = context
        var ended: SourceEndReason?
        var frames = 0
        var sounds = 0
        var bytes = 0
        do {
            try connection.decoder.read({ (buffer: UnsafeMutableRawBufferPointer) throws(FrameSocketError) -> Int in
                context.readObserver?(buffer.count)
                let count = try UnixSocket.receive(fd, into: buffer, descriptors: &connection.descriptors,
                                                   truncated: &connection.descriptorsTruncated)
                bytes += count
                if count > 0, let tap = context.rawBytes {
                    tap(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                }
                return count
            }, emit: { event in
                switch event {
                case .frame(var frame):
                    guard ended == nil else { return }  // the memory of an earlier frame failed: nothing more
                    if frame.header.format == .sharedBGRX {
                        do throws(SharedPictureError) {
                            frame.sharedPicture = try connection.sharedPicture(for: frame.header)
                        } catch {
                            ended = .stream(.error(.sharedMemory(error)))
                            return
                        }
                    }
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
                case .sound(let sound):
                    guard ended == nil else { return }
                    sounds += 1
                    context.onEvent(.sound(sound, info))
                case .end(let end):
                    if ended == nil { ended = .stream(end) }
                }
            })
        } catch let error as FrameSocketError {
            ended = .ioError(error)
        } catch {
            ended = .ioError(.systemCall(name: "read", errno: EIO, path: nil))
        }
        // Descriptors nobody asked for (a sender passing them with JPEG frames) cannot pile up: past the limit
        // the connection ends, and its deinit closes them.
        if ended == nil, connection.descriptorsTruncated || connection.descriptors.count > ServerConnection.maxWaitingDescriptors {
            ended = .stream(.error(.sharedMemory(.tooManyDescriptors(limit: ServerConnection.maxWaitingDescriptors))))
        }
        connection.frames += frames
        connection.sounds += sounds
        connection.bytes += bytes
        // A complete message of either kind is progress for the frame deadline.
        if frames > 0 || sounds > 0 { connection.lastProgressMicros = MonotonicClock.nowMicros() }
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
            "frames": ended.frames, "sounds": ended.sounds, "skipped": ended.decoder.skippedMessages, "bytes": ended.bytes,
            "detail": reason.description == reason.name ? "-" : reason.description,
        ])
    }

    /// Accepts one pending connection: keeps it as the sender, or closes it (busy / foreign user).
    private mutating func acceptOne() {
        let fd = accept(listener.rawValue, nil, nil)
        guard fd >= 0 else {
            let code = errno
            switch code {
            case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO:
                return
            default:
                // Out of descriptors or memory: say so, and pause so a still-pending connection does
                // not turn the loop into a busy spin.
                logger.error("accept failed", ["path": context.path, "errno": code, "reason": SystemErrorText.of(code)])
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
            // Say why before closing (Protocol/frame-wire.md §5), so the refused agent can tell its user; a fresh
            // socket's buffer takes these ~150 bytes at once, and nothing waits if it does not.
            let message = (refusal == .busy ? RefusalMessage.busy(currentPID: connection?.info.pid ?? 0) : .foreignUser).bytes
            _ = message.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
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

    /// Removes the socket file if it is still ours, closes the listener, then ends the sender. In that
    /// order: a sender that sees its connection end reconnects at once, and must find no listener (the
    /// kernel would otherwise complete its connect into the backlog of a server about to close).
    private mutating func tearDown() {
        let file = context.path.string
        if let current = try? UnixSocket.fileIdentity(file), current == identity {
            _ = unlink(file)
        }
        listener.close()
        if let connection { end(connection, .serverStopped) }
        logger.info("stopped", ["path": file])
    }
}
