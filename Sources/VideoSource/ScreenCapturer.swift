import FrameSocket
import FrameWire
import Media
import ScreencastSupport
import Synchronization

/// The screen capturer: serves the agent's socket (`FrameServer`), decodes each frame's JPEG to I420 on
/// the server's reader thread (a raw I420 body is used as it is), applies its rotation and submits it to
/// the hub.
///
/// - A sender's first picture that decodes makes the screen the active source (`onFirstPicture`, before
///   that picture is submitted); connecting alone does not, so connections that send nothing (or nothing
///   that decodes) never interrupt the fallback and cost no keyframes. When the sender leaves, `onEnded`
///   (told whether it had taken over) decides what happens next (fall back, or end).
/// - Undecodable bodies are dropped and counted (`decodeError`; also an I420 body of the wrong length, with
///   its own rate-limited log line), pictures above the decode budget too (`tooLarge`); the stream goes on.
/// - The end of a connection that sent nothing (EOF or a read error before any frame) is logged
///   rate-limited (3, then one per 5 s with the count held back): a client that connects and closes in
///   a loop cannot flood the log.
/// - Capture time: the sender's `Buffer-Timestamp` when it is plausible on our clock (not in the future,
///   at most 1 s old: same machine, same CLOCK_MONOTONIC), else the time the frame was read.
/// - Watchdog: a sender that completes no frame for `watchdogSeconds` (from connecting, or since its
///   last frame) is dropped with a log line (`FrameServer`'s frame timeout ends the connection; this
///   logs it and counts it). A static screen that sends keepalives (the agent sends one at least every
///   2 s) is never dropped.
final class ScreenCapturer: Sendable {
    /// Per-sender counts, logged when the sender ends.
    private struct Connection {
        var info: SenderInfo
        var frames = 0
        var decoded = 0
        var decodeFailed = 0
        var tooLarge = 0
        /// Its first decoded picture made the screen the active source.
        var tookOver = false
        /// It sent a complete frame (decodable or not): it counts as a sender in the stats.
        var sentFrame = false
        /// Its sound was noted in the log (once).
        var soundNoted = false
    }

    private let hub: SourceHub
    private let clock: any VideoClock
    private let logger: Logger
    private let watchdogSeconds: Double
    private let connection = Mutex<Connection?>(nil)
    /// Used only on the server's reader thread; the Mutex makes that checkable, not contended.
    private let pipeline: Mutex<WireFramePipeline>
    private let server: Mutex<FrameServer?> = Mutex(nil)
    /// "screen sender ended" lines at info: a burst, then one per 5 s with `suppressed=N`, so a loop of
    /// connections (empty, garbage, or one frame each) cannot flood the log; the rest go out at debug.
    private let endLog = Mutex(LogRateLimiter(burst: 8, intervalMicros: 5_000_000))
    /// Decode failures are logged for the first 3 and every 100th of a sender, and across senders no
    /// more than this allows (a loop of connections that each send garbage).
    private let decodeFailureLog = Mutex(LogRateLimiter())
    private let onConnected: @Sendable (SenderInfo) -> Void
    private let onFirstPicture: @Sendable (SenderInfo) -> Void
    private let onEnded: @Sendable (SenderInfo, SourceEndReason, _ tookOver: Bool) -> Void
    private let onSound: SoundOutlet?

    /// - Parameters:
    ///   - onConnected / onEnded: called on the reader thread after the counts are updated; `onEnded`
    ///     says whether the sender had taken over (`onFirstPicture` was called for it).
    ///   - onFirstPicture: called on the reader thread with a sender's first decoded picture, before it is
    ///     submitted (make the screen active here, or the picture is dropped as `inactive`).
    ///   - onSound: where the sender's sound messages go, on the reader thread (nil: noted once per sender in
    ///     the log and dropped).
    init(
        hub: SourceHub, clock: any VideoClock, logger: Logger, watchdogSeconds: Double, maximumDimension: Int,
        maximumDecodePixels: Int,
        onConnected: @escaping @Sendable (SenderInfo) -> Void,
        onFirstPicture: @escaping @Sendable (SenderInfo) -> Void,
        onEnded: @escaping @Sendable (SenderInfo, SourceEndReason, _ tookOver: Bool) -> Void,
        onSound: SoundOutlet? = nil
    ) throws(MediaError) {
        self.hub = hub
        self.clock = clock
        self.logger = logger
        self.watchdogSeconds = watchdogSeconds
        pipeline = Mutex(try WireFramePipeline(
            pool: hub.pool, logger: logger, maximumDimension: maximumDimension, maximumDecodePixels: maximumDecodePixels))
        self.onConnected = onConnected
        self.onFirstPicture = onFirstPicture
        self.onEnded = onEnded
        self.onSound = onSound
    }

    /// Binds the socket and starts reading.
    /// - Throws: `VideoSourceError.socket` (in use, bad path, …).
    func start(path: SocketPath, serverLogger: Logger) throws(VideoSourceError) {
        let server = FrameServer(
            path: path, frameTimeout: .microseconds(Int64((watchdogSeconds * 1e6).rounded())), logger: serverLogger
        ) { [self] event in handle(event) }
        do {
            try server.start()
        } catch {
            throw .socket(error)
        }
        self.server.withLock { $0 = server }
    }

    /// Stops the server (which ends the sender and removes the socket file).
    func stop() {
        let server = self.server.withLock { $0.take() }
        server?.stop()
    }

    // MARK: - Events (reader thread)

    private func handle(_ event: FrameServerEvent) {
        switch event {
        case .senderConnected(let info):
            connection.withLock { $0 = Connection(info: info) }
            pipeline.withLock { $0.reset() }
            hub.stats.connectionAccepted()
            onConnected(info)
        case .frame(let frame, _):
            let first = connection.withLock { c -> Bool in
                guard c?.sentFrame == false else { return false }
                c?.sentFrame = true
                return true
            }
            if first { hub.stats.senderSentFirstFrame() }
            handleFrame(frame)
        case .sound(let message, _):
            if let onSound {
                onSound(message.header, message.body)
                return
            }
            // A video source without an audio source beside it: say so once per sender, not silently.
            let first = connection.withLock { c -> Bool in
                guard c?.soundNoted == false else { return false }
                c?.soundNoted = true
                return true
            }
            if first {
                logger.warning("the agent sends sound, but this call has no audio source: its sound is dropped", [
                    "connection": connection.withLock { $0?.info.connection ?? 0 },
                ])
            }
        case .senderEnded(let info, let reason):
            let ended = connection.withLock { $0.take() }
            hub.stats.connectionEnded(wasSender: ended?.sentFrame ?? false)
            if case .frameTimeout(let seconds) = reason {
                logger.warning("sender dropped: no complete frame in time", [
                    "connection": info.connection, "pid": info.pid, "seconds": seconds, "frames": ended?.frames ?? 0,
                ])
                hub.stats.watchdogDrop()
            }
            let frames = ended?.frames ?? 0
            // At info a burst, then one line per 5 s (`suppressed=N`); the held-back ones still go out at
            // debug, so `--log-level debug` sees every connection.
            let (level, suppressed) = endLog.withLock { $0.level(.info) }
            if case .stream(.error(let error)) = reason {
                logger.log(level, "screen sender ended", [
                    "connection": info.connection, "reason": reason.name, "error": error.kind, "detail": "\(error)",
                    "frames": frames, "decoded": ended?.decoded ?? 0,
                    "decode_failed": ended?.decodeFailed ?? 0, "too_large": ended?.tooLarge ?? 0,
                    "suppressed": suppressed,
                ])
            } else {
                logger.log(level, "screen sender ended", [
                    "connection": info.connection, "reason": reason.name,
                    "frames": frames, "decoded": ended?.decoded ?? 0,
                    "decode_failed": ended?.decodeFailed ?? 0, "too_large": ended?.tooLarge ?? 0,
                    "suppressed": suppressed,
                ])
            }
            onEnded(info, reason, ended?.tookOver ?? false)
        case .senderRefused:
            break
        }
    }

    private func handleFrame(_ frame: Frame) {
        let now = clock.nowMicros()
        let header = frame.header
        hub.stats.received(capture: header.capture, damagedFraction: header.damage == nil ? nil : header.damagedFraction)
        let timestamp = Self.captureTime(sender: header.timestampMicros, received: now)
        let (result, mismatches, faults, partial) = pipeline.withLock { p -> (Result<VideoFrame, FrameFailure>, Int, Int, Int) in
            let before = (p.sizeMismatches, p.damageFaults, p.partialConversions)
            let result = p.process(frame, captureTimestampMicros: timestamp)
            return (result, p.sizeMismatches - before.0, p.damageFaults - before.1, p.partialConversions - before.2)
        }
        if mismatches > 0 { hub.stats.sizeMismatch() }
        if faults + partial > 0 { hub.stats.damage(faults: faults, partialConversions: partial) }
        switch result {
        case .success(let picture):
            let takeOver = connection.withLock { c -> SenderInfo? in
                c?.frames += 1
                c?.decoded += 1
                guard let info = c?.info, c?.tookOver == false else { return nil }
                c?.tookOver = true
                return info
            }
            hub.stats.decoded()
            if let takeOver { onFirstPicture(takeOver) }
            hub.submit(picture, from: .screen)
        case .failure(.tooLarge):
            connection.withLock { c in
                c?.frames += 1
                c?.tooLarge += 1
            }
            hub.stats.dropped(.tooLarge)
        case .failure(.rawLength(let width, let height, let expected, let got)):
            if let (count, suppressed) = countUndecodable() {
                logger.warning("frame dropped: I420 body length does not match its size", [
                    "offset": frame.offset, "size": "\(width)x\(height)", "bytes": got, "expected": expected,
                    "count": count, "suppressed": suppressed,
                ])
            }
        case .failure(.staleSharedPicture):
            connection.withLock { c in c?.frames += 1 }
            hub.stats.dropped(.stale)
        case .failure(.noSharedMemory):
            if let (count, suppressed) = countUndecodable() {
                logger.warning("frame dropped: a BGRX-SHM frame without its shared memory", [
                    "offset": frame.offset, "count": count, "suppressed": suppressed,
                ])
            }
        case .failure(.decode(let error)):
            if let (count, suppressed) = countUndecodable() {
                logger.warning("frame dropped: JPEG does not decode", [
                    "offset": frame.offset, "bytes": frame.body.count, "error": error, "count": count, "suppressed": suppressed,
                ])
            }
        }
    }

    /// Counts a frame whose body gave no picture (`DropReason.decodeError`). Returns the sender's count so
    /// far and the lines held back when this one should be logged: the first 3 and every 100th of a sender,
    /// and across senders no more than `decodeFailureLog` allows; nil otherwise.
    private func countUndecodable() -> (count: Int, suppressed: Int)? {
        let count = connection.withLock { c -> Int in
            c?.frames += 1
            c?.decodeFailed += 1
            return c?.decodeFailed ?? 0
        }
        hub.stats.dropped(.decodeError)
        guard LogRateLimiter.isSampled(count), let suppressed = decodeFailureLog.withLock({ $0.admit() }) else { return nil }
        return (count, suppressed)
    }

    /// The sender's timestamp when plausible (≤ now, ≥ now − 1 s), else the receive time.
    static func captureTime(sender: UInt64?, received: UInt64) -> UInt64 {
        if let sender, sender <= received, received - sender <= 1_000_000 { return sender }
        return received
    }
}
