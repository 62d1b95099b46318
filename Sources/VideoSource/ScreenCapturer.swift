import FrameSocket
import FrameWire
import Media
import ScreencastSupport
import Synchronization

/// The screen capturer: serves the agent's socket (`FrameServer`), decodes each frame's JPEG to I420 on
/// the server's reader thread, applies its rotation and submits it to the hub.
///
/// - A sender that connects makes the screen the active source; when it leaves, `onSenderEnded` decides
///   what happens next (fall back, or end).
/// - Undecodable bodies are dropped and counted (`decodeError`), the stream goes on.
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
    }

    private let hub: SourceHub
    private let clock: any VideoClock
    private let logger: Logger
    private let watchdogSeconds: Double
    private let connection = Mutex<Connection?>(nil)
    /// Used only on the server's reader thread; the Mutex makes that checkable, not contended.
    private let pipeline: Mutex<JPEGFramePipeline>
    private let server: Mutex<FrameServer?> = Mutex(nil)
    private let onConnected: @Sendable (SenderInfo) -> Void
    private let onEnded: @Sendable (SenderInfo, SourceEndReason) -> Void

    /// - Parameters:
    ///   - onConnected / onEnded: called on the reader thread after the counts are updated.
    init(
        hub: SourceHub, clock: any VideoClock, logger: Logger, watchdogSeconds: Double, maximumDimension: Int,
        onConnected: @escaping @Sendable (SenderInfo) -> Void,
        onEnded: @escaping @Sendable (SenderInfo, SourceEndReason) -> Void
    ) throws(MediaError) {
        self.hub = hub
        self.clock = clock
        self.logger = logger
        self.watchdogSeconds = watchdogSeconds
        pipeline = Mutex(try JPEGFramePipeline(pool: hub.pool, logger: logger, maximumDimension: maximumDimension))
        self.onConnected = onConnected
        self.onEnded = onEnded
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
            hub.stats.senderConnected()
            onConnected(info)
        case .frame(let frame, _):
            handleFrame(frame)
        case .senderEnded(let info, let reason):
            let ended = connection.withLock { $0.take() }
            hub.stats.senderEnded()
            if case .frameTimeout(let seconds) = reason {
                logger.warning("sender dropped: no complete frame in time", [
                    "connection": info.connection, "pid": info.pid, "seconds": seconds, "frames": ended?.frames ?? 0,
                ])
                hub.stats.watchdogDrop()
            }
            logger.info("screen sender ended", [
                "connection": info.connection, "reason": reason.name,
                "frames": ended?.frames ?? 0, "decoded": ended?.decoded ?? 0,
                "decode_failed": ended?.decodeFailed ?? 0,
            ])
            onEnded(info, reason)
        case .senderRefused:
            break
        }
    }

    private func handleFrame(_ frame: Frame) {
        let now = clock.nowMicros()
        hub.stats.received()
        let timestamp = Self.captureTime(sender: frame.header.timestampMicros, received: now)
        let (result, mismatches) = pipeline.withLock { p -> (Result<VideoFrame, MediaError>, Int) in
            let before = p.sizeMismatches
            return (p.process(frame, captureTimestampMicros: timestamp), p.sizeMismatches - before)
        }
        if mismatches > 0 { hub.stats.sizeMismatch() }
        switch result {
        case .success(let picture):
            connection.withLock { c in
                c?.frames += 1
                c?.decoded += 1
            }
            hub.stats.decoded()
            hub.submit(picture, from: .screen)
        case .failure(let error):
            let count = connection.withLock { c -> Int in
                c?.frames += 1
                c?.decodeFailed += 1
                return c?.decodeFailed ?? 0
            }
            hub.stats.dropped(.decodeError)
            if count <= 3 || count % 100 == 0 {
                logger.warning("frame dropped: JPEG does not decode", [
                    "offset": frame.offset, "bytes": frame.body.count, "error": error, "count": count,
                ])
            }
        }
    }

    /// The sender's timestamp when plausible (≤ now, ≥ now − 1 s), else the receive time.
    static func captureTime(sender: UInt64?, received: UInt64) -> UInt64 {
        if let sender, sender <= received, received - sender <= 1_000_000 { return sender }
        return received
    }
}
