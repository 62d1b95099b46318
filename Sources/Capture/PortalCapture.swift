import Dispatch
import FrameWire
import Foundation
import Glibc
import Media
import ScreencastSupport
import Synchronization

/// What the portal capture is asked for beyond ``CaptureConfiguration``.
public struct PortalSettings: Sendable, Equatable {
    /// Where the restore token lives; nil keeps none (the chooser every time).
    public var restoreToken: PortalRestoreToken?
    /// Drop the saved token before asking (`--forget-portal-choice`): the chooser shows again.
    public var forgetsChoice = false
    /// Seconds the chooser may wait for a person before the agent gives up.
    public var chooserSeconds = 300.0

    public init(restoreToken: PortalRestoreToken? = nil, forgetsChoice: Bool = false) {
        self.restoreToken = restoreToken
        self.forgetsChoice = forgetsChoice
    }
}

/// Stops a capture's setup from another thread (a signal while the portal's chooser waits for a person).
/// `Sendable` through its atomic.
public final class CaptureCancellation: Sendable {
    private let flag = Atomic<Bool>(false)
    public init() {}
    public func cancel() { flag.store(true, ordering: .releasing) }
    public var isCancelled: Bool { flag.load(ordering: .acquiring) }
}

/// A capturer: the X11 one (``ScreenCapture``) or the Wayland portal's (``PortalCapture``), as the agent runs them.
public protocol FrameCapturer: AnyObject, Sendable {
    /// Begins capturing after an `init` that set up only. Idempotent.
    func start()
    /// Asks the capture to end; returns at once. Idempotent.
    func stop()
    /// Waits up to `timeout` seconds (nil: as long as it takes) for the end; nil while it runs.
    @discardableResult func wait(timeout: Double?) -> ScreenCapture.Outcome?
    /// The counters so far.
    var stats: CaptureStats { get }
    /// Whether anybody reads the frames now: while not, the capture makes none (no grab, no JPEG for nobody);
    /// when a reader comes back, the next frame is a whole picture at once. True at start.
    func setReaderPresent(_ present: Bool)
}

extension ScreenCapture: FrameCapturer {}

/// Captures a Wayland desktop through the xdg-desktop-portal ScreenCast session and its PipeWire stream, and
/// hands out frames exactly as ``ScreenCapture`` does (same `onFrame`, same encode path: ``FrameBodyMaker``).
///
/// ```
///  portal-glib thread: PortalSession (libportal) ── node, fd ──▶ pw-data-loop thread: PipeWireStream
///                                                                 │ newest buffer: changed rectangles copied
///                                                                 ▼ into the staging picture (+ damage), wake
///  portal-capture thread: CaptureScheduler (rate, paint-over, keepalive) ─▶ FrameBodyMaker ─▶ onFrame
/// ```
///
/// - `init` asks the portal (the chooser shows unless the saved restore token is accepted) and connects the
///   stream; setup problems are thrown (``CaptureError/portalMissing(_:)``, ``CaptureError/portalDenied(_:)``, …).
/// - `Buffer-Damage` comes from PipeWire's SPA_META_VideoDamage when the compositor provides it, else the
///   whole frame. The cursor is drawn by the compositor (cursor mode `embedded`) unless `drawsCursor` is off.
/// - The portal closing the session (Session::Closed: the desktop's "stop sharing") or the stream ending
///   (the output gone, the backend gone) ends the capture with ``ScreenCapture/Outcome/ended(_:)``; PipeWire
///   failing ends it with ``ScreenCapture/Outcome/failed(_:)``.
/// - Shutdown: the PipeWire consumer first, then (0.5 s later, xdpw 0.7.0 can crash otherwise) Session.Close.
public final class PortalCapture: FrameCapturer {
    private let control: CaptureControl
    private let staging: PortalStaging

    /// Asks the portal for a monitor and connects to its stream.
    /// - Parameters:
    ///   - configuration: rate, size, format, quality, cursor (`display`, `target` and `usesSharedMemory` are X11's).
    ///   - startsAtOnce: false to set up only, until ``start()``.
    ///   - cancellation: ends the setup's waits (the chooser) early, with ``CaptureError/portalFailed(_:)``.
    ///   - onFrame: receives every frame, on the `portal-capture` thread.
    /// - Throws: the portal's and PipeWire's setup errors of ``CaptureError``.
    public init(
        configuration: CaptureConfiguration, portal settings: PortalSettings, logger: Logger, startsAtOnce: Bool = true,
        cancellation: CaptureCancellation? = nil, onFrame: @escaping @Sendable (CapturedFrame) -> Void
    ) throws(CaptureError) {
        try configuration.validate()
        // Stored properties are set only once setup succeeded: a throwing init then runs no deinit (which
        // would wait for a capture thread that never started).
        let control = try CaptureControl()
        let staging = try PortalStaging()
        if startsAtOnce { control.go() }

        if settings.forgetsChoice, let store = settings.restoreToken {
            logger.info(store.forget() ? "forgot the portal's saved choice" : "no saved portal choice to forget", ["path": store.path])
        }
        var request = PortalSession.Request()
        request.embedsCursor = configuration.drawsCursor
        request.restoreToken = settings.forgetsChoice ? nil : settings.restoreToken?.load()
        request.chooserSeconds = settings.chooserSeconds
        request.cancellation = cancellation
        let session = try PortalSession(request, logger: logger.named("portal")) {
            staging.end(.ended("the portal closed the screen-cast session (stopped from the desktop)"))
        }
        let started = session.started
        if let store = settings.restoreToken {
            do throws(CaptureError) {
                if let token = started.restoreToken { try store.save(token) } else { store.forget() }
            } catch {
                logger.warning("cannot keep the portal's restore token; the chooser will show next time", ["path": store.path, "error": error])
            }
        }
        let stream: PipeWireStream
        do throws(CaptureError) {
            stream = try PipeWireStream(
                fileDescriptor: started.fileDescriptor, node: started.node, maxFramesPerSecond: configuration.maxFramesPerSecond,
                logger: logger.named("pipewire"), onPicture: { staging.put($0) },
                onEnd: { end in
                    switch end {
                    case .unlinked(let why): staging.end(.ended("the screen-cast stream ended: \(why)"))
                    case .failed(let why): staging.end(.failed(.pipeWire(why)))
                    }
                })
        } catch {
            session.close()
            throw error
        }
        self.control = control
        self.staging = staging
        let thread = Thread {
            BackgroundThread.nameCurrentThread("portal-capture")
            let outcome: ScreenCapture.Outcome
            do throws(CaptureError) {
                let loop = try PortalCaptureLoop(configuration: configuration, staging: staging, logger: logger)
                control.waitForGo()
                outcome = loop.run(
                    stop: control.stop, readerPresent: { control.readerPresent.load(ordering: .relaxed) }, deliver: onFrame,
                    publish: { control.publish($0) })
            } catch {
                outcome = .failed(error)
            }
            // The consumer first, then the session (xdpw 0.7.0 can crash when a session closes under a consumer).
            let wasStreaming = staging.hasPicture
            stream.stop()
            if wasStreaming, case .stopped = outcome { usleep(500_000) }
            session.close()
            if case .failed(let error) = outcome { logger.error("capture failed", ["reason": error]) }
            control.finish(outcome)
        }
        thread.name = "portal-capture"
        thread.start()
    }

    deinit {
        stop()
        control.waitUntilFinished(timeout: nil)
    }

    public func start() { control.go() }

    public func stop() {
        control.stop.request()
        control.go()
    }

    @discardableResult
    public func wait(timeout: Double?) -> ScreenCapture.Outcome? { control.waitUntilFinished(timeout: timeout) }

    public var stats: CaptureStats { control.statsSnapshot() }

    public func setReaderPresent(_ present: Bool) { control.readerPresent.store(present, ordering: .relaxed) }
}

/// The newest picture from PipeWire, copied out of its buffer on the `pw-data-loop` thread (only the changed
/// rectangles when the producer says which), the changes since the capture thread last took it, and the wake-up
/// pipe of the capture thread. `Sendable` through its `Mutex`; the pipe's ends are immutable descriptors.
final class PortalStaging: Sendable {
    struct Picture {
        var bytes: [UInt8] = []
        var width = 0
        var height = 0
        /// When PipeWire delivered the newest picture, µs.
        var receivedMicros: UInt64 = 0
        /// Rectangles changed since the last ``take(into:)``; nil: the whole picture.
        var changed: [CaptureRect]? = nil
        var fresh = false
        var pictures = 0
        var end: ScreenCapture.Outcome?
    }

    private let state = Mutex(Picture())
    private let readEnd: Int32
    private let writeEnd: Int32

    init() throws(CaptureError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw .systemCall(name: "pipe", errno: errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        Glibc.close(readEnd)
        Glibc.close(writeEnd)
    }

    var pollDescriptor: Int32 { readEnd }

    var hasPicture: Bool { state.withLock { $0.pictures > 0 } }

    /// A new picture (the pw-data-loop thread): the changed rows copied, the change recorded, the loop woken.
    func put(_ picture: PipeWirePicture) {
        let source = picture.pixels
        state.withLock { staged in
            let row = source.width * 4
            var rects = picture.damage
            if staged.width != source.width || staged.height != source.height {
                staged.bytes = [UInt8](repeating: 0, count: row * source.height)
                staged.width = source.width
                staged.height = source.height
                rects = nil
            }
            let copy = rects ?? [CaptureRect(x: 0, y: 0, width: source.width, height: source.height)]
            staged.bytes.withUnsafeMutableBytes { target in
                for r in copy {
                    for y in r.y..<(r.y + r.height) {
                        (target.baseAddress! + y * row + r.x * 4)
                            .copyMemory(from: source.base.baseAddress! + y * source.stride + r.x * 4, byteCount: r.width * 4)
                    }
                }
            }
            if let rects, staged.changed != nil {
                staged.changed! += rects
            } else {
                staged.changed = nil
            }
            staged.receivedMicros = picture.receivedMicros
            staged.fresh = true
            staged.pictures += 1
        }
        wake()
    }

    /// The capture ends (the portal or the stream said so).
    func end(_ outcome: ScreenCapture.Outcome) {
        state.withLock { if $0.end == nil { $0.end = outcome } }
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = Glibc.write(writeEnd, &byte, 1)
    }

    /// Empties the wake-up pipe; returns whether a new picture came and the end, if any.
    func poll() -> (fresh: Bool, end: ScreenCapture.Outcome?) {
        var sink = [UInt8](repeating: 0, count: 64)
        while Glibc.read(readEnd, &sink, sink.count) > 0 {}
        return state.withLock { staged in
            defer { staged.fresh = false }
            return (staged.fresh, staged.end)
        }
    }

    /// Copies what changed since the last take into `work` (made the picture's size first: then all of it) and
    /// returns those rectangles (nil: the whole picture), the picture's size and its delivery time.
    func take(into work: inout [UInt8]) -> (changed: [CaptureRect]?, width: Int, height: Int, receivedMicros: UInt64) {
        state.withLock { staged in
            var changed = staged.changed
            if work.count != staged.bytes.count {
                work = staged.bytes
                changed = nil
            } else if let rects = changed {
                let row = staged.width * 4
                staged.bytes.withUnsafeBytes { source in
                    work.withUnsafeMutableBytes { target in
                        for r in rects {
                            for y in r.y..<(r.y + r.height) {
                                (target.baseAddress! + y * row + r.x * 4)
                                    .copyMemory(from: source.baseAddress! + y * row + r.x * 4, byteCount: r.width * 4)
                            }
                        }
                    }
                }
            } else {
                work.withUnsafeMutableBytes { target in
                    staged.bytes.withUnsafeBytes { target.copyMemory(from: $0) }
                }
            }
            staged.changed = []
            return (changed, staged.width, staged.height, staged.receivedMicros)
        }
    }
}

/// The `portal-capture` thread's work: the scheduler (rate limit, paint-over, keepalive) over the staged
/// picture, and the encode. Not thread-safe: made and run on that thread only.
final class PortalCaptureLoop {
    private let configuration: CaptureConfiguration
    private let staging: PortalStaging
    private let logger: Logger
    private let bodies: FrameBodyMaker
    private var scheduler: CaptureScheduler
    private var work: [UInt8] = []
    private var changes = DamageAccumulator()
    private var area = CaptureRect(x: 0, y: 0, width: 0, height: 0)
    private var frameSize = (width: 0, height: 0)
    private var lastFrame: CapturedFrame?
    private var nextIndex: UInt64 = 0
    private var havePicture = false
    private var stats = CaptureStats()

    init(configuration: CaptureConfiguration, staging: PortalStaging, logger: Logger) throws(CaptureError) {
        self.configuration = configuration
        self.staging = staging
        self.logger = logger
        bodies = try FrameBodyMaker(configuration: configuration)
        let paintOver = configuration.effectivePaintOver
        // The producer already paces the stream to the frame rate negotiated (PipeWire's max framerate = --fps):
        // a second limiter at the same rate here, out of phase with it, held pictures up to a whole interval
        // (capture -> received p50 20 ms at 30 fps). Half the interval only absorbs the producer's jitter.
        scheduler = CaptureScheduler(
            minimumIntervalMicros: UInt64(500_000 / configuration.maxFramesPerSecond),
            keepaliveMicros: UInt64(configuration.keepaliveSeconds * 1_000_000),
            paintOverDelayMicros: paintOver.map { UInt64($0.delaySeconds * 1_000_000) })
        stats.method = "portal"
    }

    /// Captures until `stop`, the stream's end or a failure; returns how it ended.
    func run(
        stop: WakeSignal, readerPresent: () -> Bool = { true }, deliver: (CapturedFrame) -> Void,
        publish: (CaptureStats) -> Void
    ) -> ScreenCapture.Outcome {
        var hold = ReaderHold()
        while !stop.isRequested {
            let (fresh, end) = staging.poll()
            if let end { return end }
            if fresh {
                havePicture = true
                scheduler.markDirty()
            }
            switch hold.turn(readerPresent: readerPresent()) {
            case .hold:
                stats.turnsWithoutReader += 1
                sleep(micros: ReaderHold.pollMicros, stop: stop)
                continue
            case .resume:
                changes.invalidate()
                scheduler.markDirty()
            case .run:
                break
            }
            let now = MonotonicClock.nowMicros()
            let action: CaptureScheduler.Action = havePicture ? scheduler.next(now: now) : .wait(until: now + 1_000_000)
            do throws(CaptureError) {
                switch action {
                case .capture:
                    scheduler.willCapture(now: now)
                    deliver(try produce(.change))
                case .paintOver:
                    deliver(try produce(.paintOver))
                    scheduler.didPaintOver(now: now)
                case .keepalive:
                    if let frame = repeatLast(now: now) { deliver(frame) }
                    scheduler.didKeepalive(now: now)
                case .wait(let until):
                    sleep(micros: until > now ? until - now : 0, stop: stop)
                    continue
                }
            } catch {
                return .failed(error)
            }
            publish(stats)
        }
        return .stopped
    }

    private func produce(_ kind: CapturedFrame.Kind) throws(CaptureError) -> CapturedFrame {
        let started = MonotonicClock.nowMicros()
        let taken = staging.take(into: &work)
        let picture = CaptureRect(x: 0, y: 0, width: taken.width, height: taken.height)
        if picture != area {
            let first = area.isEmpty
            area = picture
            frameSize = configuration.outputSize.frameSize(width: picture.width, height: picture.height)
            stats.area = area
            (stats.frameWidth, stats.frameHeight) = frameSize
            changes.invalidate()
            logger.info(first ? "capture area" : "capture area changed", [
                "what": "portal monitor", "area": area, "frame": "\(frameSize.width)x\(frameSize.height)",
            ])
        }
        if let rects = taken.changed {
            for rect in rects { changes.add(rect, area: area) }
        } else {
            changes.invalidate()
        }
        var damage = changes.take(area: area, frameWidth: frameSize.width, frameHeight: frameSize.height)
        if kind == .paintOver { damage = nil }
        let grabbed = MonotonicClock.nowMicros()
        let (width, height, size) = (area.width, area.height, frameSize)
        let result = work.withUnsafeBytes { bytes -> Result<FrameBodyMaker.Body, CaptureError> in
            let pixels = BGRXPixels(base: bytes, width: width, height: height, stride: width * 4)
            do throws(CaptureError) {
                return .success(try bodies.make(pixels, frameWidth: size.width, frameHeight: size.height, kind: kind,
                                                damage: damage, last: lastFrame))
            } catch {
                return .failure(error)
            }
        }
        let made = try result.get()
        let encoded = MonotonicClock.nowMicros()
        var frame = CapturedFrame(
            body: made.bytes, format: configuration.format, width: frameSize.width, height: frameSize.height,
            timestampMicros: kind == .paintOver ? grabbed : taken.receivedMicros, index: nextIndex, kind: kind,
            quality: made.quality, subsampling: made.subsampling, area: area,
            grabMicros: grabbed - started, encodeMicros: encoded - grabbed)
        frame.shared = made.shared
        frame.damage = damage
        nextIndex += 1
        lastFrame = frame
        stats.frames += 1
        if kind == .paintOver { stats.paintOverFrames += 1 } else { stats.changeFrames += 1 }
        stats.grabMicros += frame.grabMicros
        stats.encodeMicros += frame.encodeMicros
        stats.jpegBytes += made.bytes.count
        return frame
    }

    private func repeatLast(now: UInt64) -> CapturedFrame? {
        guard let frame = lastFrame?.keepalive(now: now, index: nextIndex) else { return nil }
        nextIndex += 1
        stats.countKeepalive(bytes: frame.body.count)
        return frame
    }

    private func sleep(micros: UInt64, stop: WakeSignal) {
        var fds = [
            pollfd(fd: staging.pollDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stop.pollDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        _ = Glibc.poll(&fds, 2, Int32(min((micros + 999) / 1000, 1000)))
    }
}
