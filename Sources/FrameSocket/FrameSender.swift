import Foundation
public import FrameWire
import Glibc
import ScreencastSupport

/// The agent side of the agent↔call socket: a client that keeps one frame in flight, lets the newest
/// frame win, and reconnects with back-off.
///
/// - A writer thread (named `frame-sender`) connects to ``path``, retrying with ``Backoff`` while no
///   server is there (one log line per state change, not per try).
/// - ``offer(_:)`` never blocks: the message goes into a single pending slot; a message that was still
///   pending (not yet started) is replaced and counted in ``Stats/droppedFrames``. A slow or stopped
///   reader therefore makes the sender drop frames, never queue them: at most one message is pending
///   and one being written.
/// - Writes use `send(…, MSG_NOSIGNAL)`, so a vanished reader is an error (`EPIPE`), not SIGPIPE
///   death; the frame being written is then dropped (counted), the socket closed, and the sender
///   reconnects.
/// - ``close()`` is idempotent and prompt even while a write is blocked on a stopped reader; dropping
///   the last reference closes too.
///
/// All methods are thread-safe.
public final class FrameSender: Sendable {
    /// Counters since the sender was created.
    public struct Stats: Sendable, Equatable {
        /// Messages written completely.
        public var sentFrames = 0
        /// Bytes of those messages.
        public var sentBytes = 0
        /// Messages not written: replaced while pending, cut off by a failed write, or offered /
        /// pending at or after ``FrameSender/close()``.
        public var droppedFrames = 0
        /// Successful connections made.
        public var connects = 0
        /// Bytes held right now: the pending message plus the one being written (never more than two
        /// messages' worth).
        public var bufferedBytes = 0
        /// True while a connection is open.
        public var isConnected = false
        /// Why the last connection attempt failed (`strerror` text, with the path), nil once one succeeded.
        public var lastConnectFailure: String?
        /// Connections the call refused with a reason (``RefusalMessage``: another agent is sharing).
        public var refusals = 0
        /// The call's reason for the last refusal (nil: none so far).
        public var lastRefusal: String?
        /// Sound messages written completely (also counted in ``sentFrames`` and ``sentBytes``).
        public var sentSoundMessages = 0
        /// Sound messages not written, each counted and logged (never silently): the oldest ones when more
        /// than ``FrameSender/maxQueuedSoundMicros`` of sound waited (no reader, or a stalled one), one cut
        /// off by a failed write, or waiting at ``FrameSender/close()``.
        public var droppedSoundMessages = 0
        /// Sound messages waiting right now.
        public var queuedSoundMessages = 0

        /// All counters zero, not connected.
        public init() {}
    }

    /// Reconnect delays: `initial`, doubling per consecutive failure, at most `maximum`.
    public struct Backoff: Sendable, Equatable {
        /// Delay after the first failure (default 100 ms).
        public var initial: Duration
        /// Longest delay (default 2 s).
        public var maximum: Duration

        /// A `maximum` below `initial` is raised to `initial`.
        public init(initial: Duration = .milliseconds(100), maximum: Duration = .seconds(2)) {
            self.initial = initial
            self.maximum = max(initial, maximum)
        }

        /// 100 ms doubling to 2 s.
        public static let standard = Backoff()

        /// The wait after `failures` (≥ 1) consecutive failures: `initial × 2^(failures-1)`, capped.
        public func delay(afterFailures failures: Int) -> Duration {
            var delay = initial
            var step = 1
            while step < failures, delay < maximum {
                delay *= 2
                step += 1
            }
            return min(delay, maximum)
        }
    }

    /// The socket this sender connects to.
    public var path: SocketPath { core.path }

    private let core: SenderCore

    /// Starts the writer thread, which connects right away and then whenever the connection is lost.
    ///
    /// - Parameters:
    ///   - path: the server's socket.
    ///   - backoff: reconnect delays (default 100 ms doubling to 2 s).
    ///   - logger: receives `connected`, `waiting for server`, `server disconnected` and `closed`.
    /// - Throws: ``FrameSocketError/systemCall(name:errno:path:)`` when the wake-up socket pair cannot
    ///   be made (out of descriptors).
    public init(path: SocketPath, backoff: Backoff = .standard, logger: Logger) throws(FrameSocketError) {
        core = SenderCore(path: path, backoff: backoff, logger: logger, wake: try FrameSocketError.wakeSignal())
        let core = core
        BackgroundThread.start(name: "frame-sender") { core.runWriter() }
    }

    deinit { core.close() }

    /// Hands over one complete message (header block and body, e.g. from `FrameEncoder.encode`).
    /// Never blocks. A message still pending from before is replaced and counted as dropped; after
    /// ``close()`` the message is counted as dropped.
    public func offer(_ message: [UInt8]) { core.offer(message) }

    /// ``offer(_:)`` for a `BGRX-SHM` message (Protocol/frame-wire.md §2.8): `picture`'s descriptor is passed
    /// with `SCM_RIGHTS` on the message's first byte whenever this connection has not had that generation
    /// yet (the first such message after each connect, and after each new mapping); the sender holds
    /// `picture` until the message is written or dropped.
    public func offer(_ message: [UInt8], sharedPicture picture: SharedPicture) { core.offer(message, picture: picture) }

    /// Hands over one sound message (Protocol/frame-wire.md §2.10) lasting `durationMicros`. Never blocks and
    /// never replaces: sound messages wait in order and go before a waiting picture (they are small; each
    /// carries its own capture time). When more than ``maxQueuedSoundMicros`` of sound waits (no reader, or a
    /// stalled one), the oldest is dropped, counted in ``Stats/droppedSoundMessages`` and logged (at most one
    /// line a second, with the count).
    public func offerSound(_ message: [UInt8], durationMicros: UInt64) { core.offerSound(message, durationMicros: durationMicros) }

    /// The most sound that waits for the writer, µs (1 s): beyond it the oldest is dropped, counted and logged.
    public static let maxQueuedSoundMicros: UInt64 = 1_000_000

    /// Hands over one message without loss: waits until the pending slot is free (the writer has
    /// started the previous message), then fills it. For replaying dumps.
    ///
    /// - Throws: ``FrameSocketError/closed`` when the sender is or gets closed while waiting.
    public func send(_ message: [UInt8]) throws(FrameSocketError) { try core.send(message) }

    /// Waits until nothing is pending or being written (everything offered was written or dropped).
    ///
    /// - Returns: true when that happened within `timeout`; false on timeout or when closed first.
    @discardableResult
    public func flush(timeout: Duration) -> Bool { core.flush(timeout: timeout) }

    /// Waits until the writer thread has tried to connect at least once (it connected, or a connect failed).
    /// A short run (`--frames 1`) calls this before deciding whether to flush, so its outcome — and the
    /// reason it gives when nothing was sent — does not depend on how soon the writer thread first ran.
    ///
    /// - Returns: true when a connect was tried within `timeout`; false on timeout or when closed first.
    @discardableResult
    public func waitForFirstConnectAttempt(timeout: Duration) -> Bool { core.waitForFirstConnectAttempt(timeout: timeout) }

    /// Stops the writer thread and closes the connection; a pending message and a message cut off
    /// mid-write are counted as dropped. Idempotent; returns once the writer thread has
    /// finished its work (the thread itself exits a moment later).
    public func close() { core.close() }

    /// A snapshot of the counters.
    public var stats: Stats { core.statsSnapshot() }
}

/// The sender's shared state and its writer thread's loop.
///
/// `@unchecked Sendable` is safe because every mutable stored property (`pending`, `pendingPicture`, `inFlightBytes`,
/// `closed`, `threadDone`, `stats`) is read and written only while `condition` is locked; the `let`s
/// are Sendable; the connected socket is a local of the writer thread and never shared.
final class SenderCore: @unchecked Sendable {
    let path: SocketPath
    let backoff: FrameSender.Backoff
    let logger: Logger
    let wake: WakeSignal

    private let condition = NSCondition()
    private var pending: [UInt8]?
    /// Sound messages waiting, oldest first, with their durations (µs); written before `pending`.
    private var sound: [(message: [UInt8], micros: UInt64)] = []
    private var soundHead = 0
    private var queuedSoundMicros: UInt64 = 0
    /// Sound dropped since the last log line about it, and when that line was written.
    private var soundDropsUnlogged = 0
    private var soundDropLoggedAt: UInt64 = 0
    /// The memory the pending message refers to (`BGRX-SHM`), whose descriptor may need passing.
    private var pendingPicture: SharedPicture?
    private var inFlightBytes = 0
    private var writing = false
    private var closed = false
    private var threadDone = false
    private var stats = FrameSender.Stats()

    /// How often an idle writer checks that the server is still there.
    private static let idleCheckSeconds = 0.5
    /// A connection that lived at least this long resets the back-off.
    private static let healthyConnectionMicros: UInt64 = 1_000_000

    init(path: SocketPath, backoff: FrameSender.Backoff, logger: Logger, wake: WakeSignal) {
        self.path = path
        self.backoff = backoff
        self.logger = logger
        self.wake = wake
    }


    // MARK: - Caller side

    func offer(_ message: [UInt8], picture: SharedPicture? = nil) {
        condition.lock()
        defer { condition.unlock() }
        if closed {
            stats.droppedFrames += 1
            return
        }
        if pending != nil { stats.droppedFrames += 1 }
        pending = message
        pendingPicture = picture
        condition.broadcast()
    }

    func offerSound(_ message: [UInt8], durationMicros: UInt64) {
        condition.lock()
        defer { condition.unlock() }
        if closed {
            noteSoundDropped(1)
            return
        }
        sound.append((message, durationMicros))
        queuedSoundMicros += durationMicros
        var dropped = 0
        while queuedSoundMicros > FrameSender.maxQueuedSoundMicros, soundHead < sound.count - 1 {
            queuedSoundMicros -= sound[soundHead].micros
            sound[soundHead] = ([], 0)
            soundHead += 1
            dropped += 1
        }
        if soundHead > 64, soundHead * 2 > sound.count {
            sound.removeFirst(soundHead)
            soundHead = 0
        }
        if dropped > 0 { noteSoundDropped(dropped) }
        condition.broadcast()
    }

    private var soundWaiting: Int { sound.count - soundHead }

    /// Counts dropped sound and logs it: at once the first time, then at most once a second with the count
    /// since the last line. Called with `condition` locked.
    private func noteSoundDropped(_ count: Int) {
        stats.droppedSoundMessages += count
        soundDropsUnlogged += count
        let now = MonotonicClock.nowMicros()
        guard soundDropLoggedAt == 0 || now - soundDropLoggedAt >= 1_000_000 else { return }
        logger.warning("sound dropped", [
            "path": path, "messages": soundDropsUnlogged, "total": stats.droppedSoundMessages,
            "reason": stats.isConnected ? "the reader is slow" : "no reader",
        ])
        soundDropsUnlogged = 0
        soundDropLoggedAt = now
    }

    func send(_ message: [UInt8]) throws(FrameSocketError) {
        condition.lock()
        defer { condition.unlock() }
        while pending != nil, !closed { condition.wait() }
        guard !closed else { throw .closed }
        pending = message
        pendingPicture = nil
        condition.broadcast()
    }

    func flush(timeout: Duration) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout.seconds)
        condition.lock()
        defer { condition.unlock() }
        while pending != nil || soundWaiting > 0 || writing, !closed {
            if !condition.wait(until: deadline) { break }
        }
        return pending == nil && soundWaiting == 0 && !writing
    }

    func waitForFirstConnectAttempt(timeout: Duration) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout.seconds)
        condition.lock()
        defer { condition.unlock() }
        while stats.connects == 0, stats.lastConnectFailure == nil, !closed {
            if !condition.wait(until: deadline) { break }
        }
        return stats.connects > 0 || stats.lastConnectFailure != nil
    }

    func close() {
        condition.lock()
        if !closed {
            closed = true
            if pending != nil {
                pending = nil
                stats.droppedFrames += 1
            }
            if soundWaiting > 0 {
                stats.droppedFrames += soundWaiting
                noteSoundDropped(soundWaiting)
                sound = []
                soundHead = 0
                queuedSoundMicros = 0
            }
            pendingPicture = nil
            condition.broadcast()
        }
        condition.unlock()
        wake.request()
        condition.lock()
        while !threadDone { condition.wait() }
        condition.unlock()
    }

    func statsSnapshot() -> FrameSender.Stats {
        condition.lock()
        defer { condition.unlock() }
        var snapshot = stats
        snapshot.bufferedBytes = (pending?.count ?? 0) + inFlightBytes + sound[soundHead...].reduce(0) { $0 + $1.message.count }
        snapshot.queuedSoundMessages = soundWaiting
        return snapshot
    }

    // MARK: - Writer thread

    private enum Next {
        case message([UInt8], SharedPicture?, isSound: Bool)
        case idle
        case closed
    }

    private enum WriteResult {
        case written
        case failed(Int32)
        case closed
    }

    /// The writer thread: connect (with back-off) → take the pending message → write it → repeat.
    func runWriter() {
        var socket: FileDescriptor?
        var failures = 0
        var reportedWaiting: Int32?
        var reportedWaitingAt: UInt64 = 0
        var waitingSince: UInt64 = 0
        var reportedRefusal: String?
        var connectedAt: UInt64 = 0
        /// The memory generation whose descriptor this connection has (passed once per connection).
        var passedGeneration: UInt64?

        func disconnect(_ reason: String, errno code: Int32?) {
            let refusal = socket.flatMap(Self.readRefusal)
            socket?.close()
            socket = nil
            setConnected(false)
            if let refusal {
                // The call said why it does not take us (another agent is sharing): say so once per reason, and
                // ask again only every refusalDelay (it will not change in a second).
                noteRefusal(refusal)
                if reportedRefusal != refusal.reason {
                    reportedRefusal = refusal.reason
                    logger.warning("refused by the call", [
                        "path": path, "status": refusal.status, "reason": refusal.reason,
                        "retry.s": Int(Self.refusalDelay.seconds),
                    ])
                }
                pause(Self.refusalDelay)
                return
            }
            reportedRefusal = nil
            logger.warning("server disconnected", [
                "path": path, "reason": reason, "errno": code.map(String.init) ?? "-", "dropped": statsSnapshot().droppedFrames,
            ])
            if MonotonicClock.nowMicros() - connectedAt >= Self.healthyConnectionMicros {
                failures = 0
            } else {
                // Refused or cut off at once: keep backing off instead of hammering the server.
                failures += 1
                pause(backoff.delay(afterFailures: failures))
            }
        }

        while !isClosed {
            guard let connection = socket else {
                switch connect() {
                case .success(let connected):
                    socket = connected
                    passedGeneration = nil
                    connectedAt = MonotonicClock.nowMicros()
                    reportedWaiting = nil
                    let count = setConnected(true)
                    // After a refusal, "connected" is said once the call has kept us (below), not at every retry.
                    logger.log(reportedRefusal == nil ? .info : .debug, "connected", ["path": path, "connects": count])
                case .failure(let error):
                    let code: Int32 = if case .systemCall(_, let code, _) = error { code } else { 0 }
                    noteConnectFailure("\(SystemErrorText.of(code)) (\(path))")
                    // Said when the reason changes, and again every waitingReminderMicros while it lasts.
                    let now = MonotonicClock.nowMicros()
                    if reportedWaiting != code || now - reportedWaitingAt >= Self.waitingReminderMicros {
                        if reportedWaiting == code {
                            logger.info("waiting for server", [
                                "path": path, "reason": SystemErrorText.of(code), "waited.s": (now - waitingSince) / 1_000_000,
                            ])
                        } else {
                            waitingSince = now
                            logger.info("waiting for server", ["path": path, "reason": SystemErrorText.of(code)])
                        }
                        reportedWaiting = code
                        reportedWaitingAt = now
                    }
                    failures += 1
                    pause(backoff.delay(afterFailures: failures))
                }
                continue
            }
            switch nextMessage() {
            case .closed:
                break
            case .idle:
                if peerHasHungUp(connection) { disconnect("eof", errno: nil) }
            case .message(let message, let picture, let isSound):
                let passing = picture.flatMap { $0.generation == passedGeneration ? nil : $0 }
                let result = write(message, passing: passing?.descriptor, to: connection)
                if case .written = result, let passing { passedGeneration = passing.generation }
                finishWrite(message.count, written: { if case .written = result { true } else { false } }(), isSound: isSound)
                if case .failed(let code) = result {
                    disconnect(SystemErrorText.of(code), errno: code)
                } else if reportedRefusal != nil, MonotonicClock.nowMicros() - connectedAt >= Self.healthyConnectionMicros {
                    reportedRefusal = nil
                    logger.info("connected", ["path": path, "after": "a refusal"])
                }
            }
        }
        socket?.close()
        let final = statsSnapshot()
        logger.info("closed", ["path": path, "sent": final.sentFrames, "dropped": final.droppedFrames])
        condition.lock()
        stats.isConnected = false
        threadDone = true
        condition.broadcast()
        condition.unlock()
    }

    private var isClosed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closed
    }

    /// Records the connection state; returns the number of connects so far.
    @discardableResult
    private func setConnected(_ connected: Bool) -> Int {
        condition.lock()
        defer { condition.unlock() }
        stats.isConnected = connected
        if connected {
            stats.connects += 1
            stats.lastConnectFailure = nil
            condition.broadcast()
        }
        return stats.connects
    }

    private func noteConnectFailure(_ reason: String) {
        condition.lock()
        defer { condition.unlock() }
        stats.lastConnectFailure = reason
        condition.broadcast()
    }

    /// Waits for `delay` or until closed.
    private func pause(_ delay: Duration) {
        let deadline = Date(timeIntervalSinceNow: delay.seconds)
        condition.lock()
        defer { condition.unlock() }
        while !closed {
            if !condition.wait(until: deadline) { break }
        }
    }

    /// A non-blocking connect; the socket is non-blocking from then on (writes poll for room).
    private func connect() -> Result<FileDescriptor, FrameSocketError> {
        let socket: FileDescriptor
        do {
            socket = try UnixSocket.makeStream(nonBlocking: true)
        } catch {
            return .failure(error)
        }
        let code = UnixSocket.connect(socket, to: path)
        guard code == 0 else {
            socket.close()
            return .failure(.systemCall(name: "connect", errno: code, path: path.string))
        }
        return .success(socket)
    }

    /// Takes the pending message, or reports `.idle` after a quiet while (to check the connection).
    private func nextMessage() -> Next {
        let deadline = Date(timeIntervalSinceNow: Self.idleCheckSeconds)
        condition.lock()
        defer { condition.unlock() }
        while pending == nil, soundWaiting == 0, !closed {
            if !condition.wait(until: deadline) { return .idle }
        }
        guard !closed else { return .closed }
        if soundWaiting > 0 {
            let (message, micros) = sound[soundHead]
            sound[soundHead] = ([], 0)
            soundHead += 1
            queuedSoundMicros -= micros
            if soundHead == sound.count {
                sound.removeAll(keepingCapacity: true)
                soundHead = 0
            }
            writing = true
            inFlightBytes = message.count
            condition.broadcast()
            return .message(message, nil, isSound: true)
        }
        guard let message = pending else { return .closed }
        let picture = pendingPicture
        pending = nil
        pendingPicture = nil
        writing = true
        inFlightBytes = message.count
        condition.broadcast()
        return .message(message, picture, isSound: false)
    }

    private func finishWrite(_ count: Int, written: Bool, isSound: Bool) {
        condition.lock()
        defer { condition.unlock() }
        writing = false
        inFlightBytes = 0
        if written {
            stats.sentFrames += 1
            stats.sentBytes += count
            if isSound { stats.sentSoundMessages += 1 }
        } else {
            stats.droppedFrames += 1
            if isSound { noteSoundDropped(1) }
        }
        condition.broadcast()
    }

    /// Writes all of `message`, waiting for room with poll (and the wake-up, so close stays prompt); with
    /// `descriptor`, it goes with the first byte (`SCM_RIGHTS`).
    private func write(_ message: [UInt8], passing descriptor: Int32? = nil, to socket: FileDescriptor) -> WriteResult {
        let fd = socket.rawValue
        return message.withUnsafeBytes { raw -> WriteResult in
            guard let base = raw.baseAddress else { return .written }
            var offset = 0
            while offset < raw.count {
                let count: Int
                var code: Int32 = 0
                if let descriptor, offset == 0 {
                    let sent = UnixSocket.send(fd, UnsafeRawBufferPointer(rebasing: raw[...]), passing: descriptor)
                    count = max(sent, -1)
                    if sent < 0 { code = Int32(-sent) }
                } else {
                    count = Glibc.send(fd, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                    if count < 0 { code = errno }
                }
                if count > 0 {
                    offset += count
                    continue
                }
                if count == 0 { code = EPIPE }
                if code == EINTR { continue }
                guard code == EAGAIN || code == EWOULDBLOCK else { return .failed(code) }
                var fds = [
                    pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
                    pollfd(fd: wake.pollDescriptor, events: Int16(POLLIN), revents: 0),
                ]
                do throws(FrameSocketError) {
                    _ = try UnixSocket.poll(&fds, timeoutMilliseconds: -1)
                } catch {
                    if case .systemCall(_, let code, _) = error { return .failed(code) }
                    return .failed(EIO)
                }
                if fds[1].revents != 0 { return .closed }
                // POLLOUT, or POLLERR/POLLHUP: the next send tells which.
            }
            return .written
        }
    }

    /// While no server is there, "waiting for server" is said again this often, µs (30 s).
    static let waitingReminderMicros: UInt64 = 30_000_000

    /// How long a sender the call refused waits before it asks again (5 s): the other agent does not go away
    /// in a second, and the call logs each refusal.
    static let refusalDelay: Duration = .seconds(5)

    /// What the call wrote before it closed the connection, when it is a refusal (``RefusalMessage``); reads
    /// only what is already there (never waits).
    private static func readRefusal(_ socket: FileDescriptor) -> RefusalMessage? {
        var buffer = [UInt8](repeating: 0, count: RefusalMessage.maximumBytes + 1)
        var count = 0
        while count < buffer.count {
            let got = buffer.withUnsafeMutableBytes { recv(socket.rawValue, $0.baseAddress! + count, $0.count - count, Int32(MSG_DONTWAIT)) }
            if got > 0 { count += got } else { break }
        }
        return RefusalMessage.parse(Array(buffer.prefix(count)))
    }

    /// Records the call's last refusal in the stats.
    private func noteRefusal(_ refusal: RefusalMessage) {
        condition.lock()
        defer { condition.unlock() }
        stats.refusals += 1
        stats.lastRefusal = refusal.reason
        condition.broadcast()
    }

    /// True when the server closed its end (or sent something, which it never should).
    private func peerHasHungUp(_ socket: FileDescriptor) -> Bool {
        var fds = [pollfd(fd: socket.rawValue, events: Int16(POLLIN), revents: 0)]
        guard let ready = try? UnixSocket.poll(&fds, timeoutMilliseconds: 0), ready > 0 else { return false }
        return fds[0].revents & Int16(POLLHUP | POLLERR | POLLIN) != 0
    }
}

extension Duration {
    /// The duration in seconds as a `Double` (for `Date`/`NSCondition` deadlines).
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}
