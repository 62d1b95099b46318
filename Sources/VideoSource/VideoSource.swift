public import FrameWire
import Dispatch
public import FrameSocket
import Media
public import ScreencastSupport
import Synchronization

/// What a `VideoSource` reports as it runs. Delivered on internal threads (the socket reader, a
/// capturer): handle them quickly, and never call `stop()` from the handler (signal another thread).
public enum VideoSourceEvent: Sendable {
    /// An agent connected. The screen becomes the active source with its first picture that decodes
    /// (`.switched(.screen)`), not before.
    case senderConnected(SenderInfo)
    /// The agent's connection ended (EOF, a wire error, the watchdog, …). If it had taken over, the
    /// source falls back (`.switched`).
    case senderEnded(SenderInfo, SourceEndReason)
    /// The active source changed (nil: none feeds it).
    case switched(SourceKind?)
    /// With `endWhenSourceEnds`: the first agent's stream ended (or the file's one pass did). Stop the
    /// source to flush what is left.
    case sourceEnded
}

/// The one shared video source of a call: capturers feed it, one VP8 encoder encodes it, sinks read it.
///
/// ```
///  screen (FrameServer → JPEG → I420 → rotate) ─┐
///  test pattern / file (the --source fallback) ─┴▶ hub: active source, one-frame slot (latest wins)
///                                                      │ encoder thread (EncodeScheduler: max fps,
///                                                      ▼ keyframe spacing, idle refinement)
///                                               VP8Encoder ─▶ EncodedFrame ─▶ every VideoSink
/// ```
///
/// - When an agent's first picture arrives (decoded), the screen takes over; when that agent leaves, the
///   fallback resumes. A connection that brings no picture switches nothing. A switch never re-creates the
///   encoder or touches the sinks: the next frame is a keyframe.
/// - Pictures above `maximumDecodePixels` are refused before they are decoded (`DropReason.tooLarge`);
///   pictures above `maximumEncodeSize` are downscaled (libyuv) before they are encoded.
/// - A slow encoder never queues: a newer frame replaces the waiting one (`DropReason.stale`).
/// - A static picture is re-encoded at a rising quality, then repeated about once a second
///   (`IdleRefinementPolicy`).
/// - Keyframe requests are coalesced and spaced (`keyframeMinSpacingSeconds`, default 1 s; counted in `stats`).
/// - Bitrate changes at run time (`setBitrate`) go to the running encoder.
public final class VideoSource: Sendable {
    private enum Phase { case idle, running, stopped }

    /// The configuration it was made with.
    public let configuration: VideoSourceConfiguration
    let clock: any VideoClock
    private let logger: Logger
    private let hub: SourceHub
    private let sinks = SinkRegistry()
    private let loop: EncoderLoop
    private let screen: ScreenCapturer?
    private let testPattern: TestPatternCapturer?
    private let file: FileCapturer?
    private let phase = Mutex(Phase.idle)
    /// "screen takes over" / "screen left" lines at info: a burst, then one per 5 s with `suppressed=N`
    /// (senders that connect, send one picture and leave, in a loop, cannot flood the log); the rest at debug.
    private let switchLog = Mutex(LogRateLimiter(burst: 8, intervalMicros: 5_000_000))
    private let stopping = Atomic<Bool>(false)
    private let sourceEnded = Atomic<Bool>(false)
    private let encoderDone = Mutex<DispatchSemaphoreBox?>(nil)
    private let onEvent: @Sendable (VideoSourceEvent) -> Void

    /// Checks the configuration and prepares the capturers (a file source reads its dump here).
    /// Nothing runs before `start()`. `onSound` takes the agent's sound messages (the call's audio source).
    /// - Throws: `VideoSourceError.invalidConfiguration`, `.unreadableDump`, `.emptyDump`, `.media`.
    public init(
        configuration: VideoSourceConfiguration, clock: any VideoClock = SystemVideoClock(), logger: Logger,
        onEvent: @escaping @Sendable (VideoSourceEvent) -> Void = { _ in }, onSound: SoundOutlet? = nil
    ) throws(VideoSourceError) {
        try configuration.validate()
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.onEvent = onEvent
        let stats = StatsRecorder(fallback: configuration.fallback.kind, startedAt: clock.nowMicros())
        let hub = SourceHub(stats: stats, pool: FramePool())
        self.hub = hub
        loop = EncoderLoop(hub: hub, sinks: sinks, configuration: configuration, clock: clock, logger: logger.named("encoder"))

        let fileEnded = SourceEndRelay()
        switch configuration.fallback {
        case .none:
            testPattern = nil
            file = nil
        case .testPattern(let settings):
            testPattern = TestPatternCapturer(hub: hub, clock: clock, settings: settings)
            file = nil
        case .file(let path, let loop):
            testPattern = nil
            file = try FileCapturer(
                path: path, loop: loop && !configuration.endWhenSourceEnds, hub: hub, clock: clock,
                logger: logger.named("file-source"), maximumDimension: configuration.maximumDimension,
                maximumDecodePixels: configuration.maximumDecodePixels, onEnded: { fileEnded.fire() })
        }

        let relay = ScreenEventRelay()
        if configuration.socketPath != nil {
            do {
                screen = try ScreenCapturer(
                    hub: hub, clock: clock, logger: logger.named("screen"), watchdogSeconds: configuration.watchdogSeconds,
                    maximumDimension: configuration.maximumDimension, maximumDecodePixels: configuration.maximumDecodePixels,
                    onConnected: { relay.connected($0) }, onFirstPicture: { relay.firstPicture($0) },
                    onEnded: { relay.ended($0, $1, $2) }, onSound: onSound)
            } catch {
                throw .media(error)
            }
        } else {
            screen = nil
        }
        // The capturers call back through relays, pointed here once self is complete.
        fileEnded.set { [weak self] in self?.fileEnded() }
        relay.set(
            connected: { [weak self] info in self?.screenConnected(info) },
            firstPicture: { [weak self] info in self?.screenTakesOver(info) },
            ended: { [weak self] info, reason, tookOver in self?.screenEnded(info, reason, tookOver: tookOver) })
    }

    deinit { stop() }

    /// Starts the encoder thread, the fallback capturer and the screen socket.
    /// - Throws: `VideoSourceError.alreadyStarted`, `.socket` (the socket is in use or its path is bad;
    ///   nothing is left running).
    public func start() throws(VideoSourceError) {
        try phase.withLock { (p: inout Phase) throws(VideoSourceError) in
            guard p == .idle else { throw .alreadyStarted }
            p = .running
        }
        let done = BackgroundThread.start(name: "vp8-encoder") { [loop] in loop.run() }
        encoderDone.withLock { $0 = DispatchSemaphoreBox(done) }
        let fallback = configuration.fallback.kind
        hub.activate(fallback)
        testPattern?.start()
        file?.start()
        testPattern?.setActive(true)
        file?.setActive(true)
        if let screen, let path = configuration.socketPath {
            do throws(VideoSourceError) {
                try screen.start(path: path, serverLogger: logger.named("frame-server"))
            } catch {
                stop()
                throw error
            }
        }
        logger.info("video source started", [
            "fallback": fallback?.rawValue ?? "none", "socket": configuration.socketPath?.string ?? "-",
            "max-fps": configuration.maxFramesPerSecond,
            "kbps": configuration.bitrateKbps.map(String.init) ?? "auto",
        ])
    }

    /// Stops the capturers and the socket (removing the socket file), encodes the frame still waiting,
    /// then calls every sink's `finish()` and releases the sinks. Idempotent; returns when all of that is done.
    public func stop() {
        let wasRunning = phase.withLock { p -> Bool in
            defer { p = .stopped }
            return p == .running
        }
        guard wasRunning else { return }
        stopping.store(true, ordering: .releasing)
        screen?.stop()
        testPattern?.stop()
        file?.stop()
        hub.stop()
        encoderDone.withLock { $0.take() }?.semaphore.wait()
        sinks.finishAll()
        logger.info("video source stopped")
    }

    // MARK: - Consumers

    /// Adds a consumer of encoded frames (from the next frame on). Does not disturb the encoder; ask for
    /// a keyframe if the consumer needs one.
    @discardableResult
    public func addSink(_ sink: any VideoSink) -> SinkToken { sinks.add(sink) }

    /// Removes a consumer; it gets no `finish()`.
    public func removeSink(_ token: SinkToken) { _ = sinks.remove(token) }

    /// Pauses the share (the sharer's `screencast-call pause`): new pictures from every capturer are dropped
    /// (counted as ``DropReason/inactive``) and viewers keep the last picture; ``resume()`` takes them again.
    /// Returns false when it was paused already.
    @discardableResult
    public func pause() -> Bool { hub.setPaused(true) }

    /// Takes new pictures again after ``pause()``; returns false when it was not paused.
    @discardableResult
    public func resume() -> Bool { hub.setPaused(false) }

    /// Whether the share is paused.
    public var isPaused: Bool { hub.isPaused }

    /// Asks for a keyframe (a new peer, a PLI/FIR). Requests are coalesced; one keyframe follows no
    /// sooner than `keyframeMinSpacingSeconds` after the previous one, also when the picture is static.
    public func requestKeyframe() { hub.requestKeyframe() }

    /// Changes the target bitrate of the running encoder (nil: back to the default for the size).
    public func setBitrate(kbps: Int?) { hub.requestBitrate(kbps) }

    /// Turns the droppable cadence on or off (off by default): with `period` N (2…6; larger is taken as 6,
    /// nil or below 2 is off), of every N new frames only one is a reference frame, and the N − 1 after it
    /// are non-reference frames (libvpx `VP8_EFLAG_NO_UPD_LAST | VP8_EFLAG_NO_UPD_GF | VP8_EFLAG_NO_UPD_ARF |
    /// VP8_EFLAG_NO_UPD_ENTROPY`; ``Media/EncodedFrame/isDroppable``) that a slow viewer's sender may leave
    /// out without breaking the frames after them. The encoder thread lowers N so that reference frames
    /// alone keep `minFramesPerSecond` at the current frame-rate cap (never below 2). Keyframes,
    /// refinements and repeats are always reference frames. Costs every viewer some bitrate (the
    /// non-reference frames are predicted from an older picture); turn it off when no viewer needs it.
    public func setDroppableCadence(period: Int?) { hub.requestDroppableCadence(period) }

    /// Adds a consumer of the source's new pictures (another encoding of the track, ``PictureSink``): from the
    /// next new picture on, and at once with the last one when there is one.
    @discardableResult
    public func addPictureSink(_ sink: any PictureSink) -> SinkToken { loop.tap.add(sink) }

    /// Removes a picture consumer.
    public func removePictureSink(_ token: SinkToken) { loop.tap.remove(token) }

    /// The clock capture timestamps are read on.
    public var captureClock: any VideoClock { clock }

    /// Where the encoder thread offers each new picture it encodes (``SecondEncoding`` attaches here).
    var frameTap: FrameTap { loop.tap }

    /// The source feeding the encoder now.
    public var activeSource: SourceKind? { hub.active }

    /// The counters and rates now (see `VideoSourceStats.json` for the JSON form).
    public var stats: VideoSourceStats {
        var stats = hub.stats.snapshot(now: clock.nowMicros(), queueDepth: hub.queueDepth)
        stats.source = hub.active
        stats.poolBytes = hub.pool.retainedBytes
        stats.poolBuffers = hub.pool.available
        let bitrate = loop.currentBitrate.load(ordering: .relaxed)
        if bitrate > 0 { stats.bitrateKbps = bitrate }
        return stats
    }

    // MARK: - Switching

    /// A sender connected: nothing switches until its first picture (an empty or failing connection must
    /// not interrupt the fallback, nor cost two keyframes).
    private func screenConnected(_ info: SenderInfo) {
        guard !stopping.load(ordering: .acquiring) else { return }
        onEvent(.senderConnected(info))
    }

    /// The sender's first decoded picture: the screen takes over (before that picture is submitted).
    private func screenTakesOver(_ info: SenderInfo) {
        guard !stopping.load(ordering: .acquiring) else { return }
        testPattern?.setActive(false)
        file?.setActive(false)
        if hub.activate(.screen) {
            let (level, suppressed) = switchLog.withLock { $0.level(.info) }
            logger.log(level, "screen takes over", ["connection": info.connection, "pid": info.pid, "suppressed": suppressed])
        }
        onEvent(.switched(.screen))
    }

    private func screenEnded(_ info: SenderInfo, _ reason: SourceEndReason, tookOver: Bool) {
        guard !stopping.load(ordering: .acquiring) else { return }
        onEvent(.senderEnded(info, reason))
        if configuration.endWhenSourceEnds {
            if !sourceEnded.exchange(true, ordering: .acquiringAndReleasing) { onEvent(.sourceEnded) }
            return
        }
        // A sender that never took over leaves the active source as it is (no switch, no keyframe).
        guard tookOver else { return }
        let fallback = configuration.fallback.kind
        if hub.activate(fallback) {
            let (level, suppressed) = switchLog.withLock { $0.level(.info) }
            logger.log(level, "screen left; falling back", ["source": fallback?.rawValue ?? "none", "suppressed": suppressed])
        }
        testPattern?.setActive(true)
        file?.setActive(true)
        onEvent(.switched(fallback))
    }

    private func fileEnded() {
        guard !stopping.load(ordering: .acquiring), configuration.endWhenSourceEnds else { return }
        if !sourceEnded.exchange(true, ordering: .acquiringAndReleasing) { onEvent(.sourceEnded) }
    }
}

/// Forwards the screen capturer's callbacks to the source that owns it (set after both exist).
private final class ScreenEventRelay: Sendable {
    private let handlers = Mutex<(
        connected: (@Sendable (SenderInfo) -> Void)?, firstPicture: (@Sendable (SenderInfo) -> Void)?,
        ended: (@Sendable (SenderInfo, SourceEndReason, Bool) -> Void)?
    )>((nil, nil, nil))

    func set(
        connected: @escaping @Sendable (SenderInfo) -> Void, firstPicture: @escaping @Sendable (SenderInfo) -> Void,
        ended: @escaping @Sendable (SenderInfo, SourceEndReason, Bool) -> Void
    ) {
        handlers.withLock { $0 = (connected, firstPicture, ended) }
    }

    func connected(_ info: SenderInfo) { handlers.withLock { $0.connected }?(info) }
    func firstPicture(_ info: SenderInfo) { handlers.withLock { $0.firstPicture }?(info) }
    func ended(_ info: SenderInfo, _ reason: SourceEndReason, _ tookOver: Bool) { handlers.withLock { $0.ended }?(info, reason, tookOver) }
}

/// Forwards the file capturer's "ended" to the source that owns it.
private final class SourceEndRelay: Sendable {
    private let handler = Mutex<(@Sendable () -> Void)?>(nil)
    func set(_ body: @escaping @Sendable () -> Void) { handler.withLock { $0 = body } }
    func fire() { handler.withLock { $0 }?() }
}

/// Where the agent's sound messages go (Protocol/frame-wire.md §2.10): the header and its PCM body (S16LE
/// interleaved), on the socket reader's thread; return quickly.
public typealias SoundOutlet = @Sendable (_ header: SoundHeader, _ body: [UInt8]) -> Void
