import Glibc
import Media
import ScreencastSupport

/// The capture thread's work for one X window (`--window`): the window's Composite pixmap read with MIT-SHM
/// (or GetImage), DAMAGE on the window for when to grab, and its ConfigureNotify/UnmapNotify/DestroyNotify.
///
/// - **The size on the wire stays the first one** (the window's size at start, through `--scale` /
///   `--max-size`): a resized window's picture is scaled into it, aspect kept, centred on black bars
///   (letterboxed), so a viewer's layout and the encoder's size never change under a dragged window edge.
/// - Moves need nothing (the pixmap does not depend on the position); a resize names a new pixmap.
/// - Hidden (unmapped, minimized): the last frame is repeated as keepalives until it is shown again.
/// - Closed (DestroyNotify): the run ends with ``ScreenCapture/Outcome/ended(_:)``, the window named.
/// - Every frame is whole (`Buffer-Damage` absent); the pointer is not drawn into a window's frames.
///
/// Not thread-safe: made and run on the capture thread only (see ``ScreenCapture``).
final class WindowCaptureLoop {
    private let configuration: CaptureConfiguration
    private let logger: Logger
    private let connection: XConnection
    private let window: CapturedWindow
    private let grabber: ScreenGrabber
    private let bodies: FrameBodyMaker
    private var scheduler: CaptureScheduler
    /// The frame size on the wire, fixed at start.
    private let frameSize: (width: Int, height: Int)
    /// The window's size when the capture began (what `--scale` / `--max-size` applied to).
    private let firstSize: (width: Int, height: Int)
    /// Scratch pictures for a resized window: the scaled picture and the letterboxed frame (allocations kept).
    private var scaled = BGRXImage()
    private var letterboxed = BGRXImage()
    private var hidden: Bool
    private var lastFrame: CapturedFrame?
    private var nextIndex: UInt64 = 0
    private var stats = CaptureStats()
    /// The grabber's method `stats.method` names.
    private var statsMethod: ScreenGrabber.Method?

    /// - Throws: the setup errors of ``CapturedWindow`` and of the X connection.
    init(configuration: CaptureConfiguration, window selector: WindowSelector, logger: Logger) throws(CaptureError) {
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        connection = try XConnection(display: configuration.display)
        window = try CapturedWindow(connection: connection, selector: selector)
        grabber = ScreenGrabber(connection: connection, allowSharedMemory: configuration.usesSharedMemory, logger: logger)
        bodies = try FrameBodyMaker(configuration: configuration)
        scheduler = CaptureScheduler(configuration: configuration)
        firstSize = (window.width, window.height)
        frameSize = configuration.outputSize.frameSize(width: window.width, height: window.height)
        hidden = window.pixmap == nil
        stats.area = CaptureRect(x: 0, y: 0, width: window.width, height: window.height)
        (stats.frameWidth, stats.frameHeight) = frameSize
        logger.info("capture area", [
            "what": "window \(WindowSelector.id(window.window))", "title": window.title, "area": stats.area,
            "frame": "\(frameSize.width)x\(frameSize.height)", "hidden": hidden,
        ])
        scheduler.markDirty()
    }

    /// Captures until `stop` (``ScreenCapture/Outcome/stopped``) or the window is closed (`ended`).
    /// - Throws: ``CaptureError/connectionLost(display:reason:)`` and X request errors.
    func run(
        stop: WakeSignal, readerPresent: () -> Bool, deliver: (CapturedFrame) -> Void, publish: (CaptureStats) -> Void
    ) throws(CaptureError) -> ScreenCapture.Outcome {
        var hold = ReaderHold()
        while !stop.isRequested {
            try connection.checkAlive()
            if let closed = try drainEvents() { return .ended(closed) }
            if hold.skipsTurn(
                readerPresent: readerPresent(), stats: &stats, scheduler: &scheduler, sleep: { sleep(micros: $0, stop: stop) }) { continue }
            let now = MonotonicClock.nowMicros()
            switch hidden ? scheduler.nextWhileHeld(now: now) : scheduler.next(now: now) {
            case .capture:
                scheduler.willCapture(now: now)
                if let frame = try produce(.change) { deliver(frame) }
            case .paintOver:
                if let frame = try produce(.paintOver) { deliver(frame) }
                scheduler.didPaintOver(now: now)
            case .keepalive:
                if let frame = lastFrame?.keepalive(now: now, index: nextIndex) {
                    nextIndex += 1
                    stats.countKeepalive(bytes: frame.body.count)
                    deliver(frame)
                }
                scheduler.didKeepalive(now: now)
            case .wait(let until):
                sleep(micros: until > now ? until - now : 0, stop: stop)
                continue
            }
            publish(stats)
        }
        return .stopped
    }

    /// Handles the window's events; returns why the capture ends when the window was closed.
    private func drainEvents() throws(CaptureError) -> String? {
        while let event = connection.pollEvent() {
            switch event {
            case .damage:
                stats.damageEvents += 1
                scheduler.markDirty()
            case .windowConfigured(let id, let rect) where id == window.window:
                if rect.width != window.configuredSize.width || rect.height != window.configuredSize.height {
                    window.configuredSize = (rect.width, rect.height)
                    try window.namePixmap()
                    logger.info("window resized", ["size": "\(window.width)x\(window.height)",
                                                   "frame": "\(frameSize.width)x\(frameSize.height)"])
                }
                stats.area = CaptureRect(x: rect.x, y: rect.y, width: window.width, height: window.height)
                scheduler.markDirty()
            case .windowUnmapped(let id) where id == window.window:
                hidden = true
                logger.info("window hidden; its last picture is repeated until it is shown again")
            case .windowMapped(let id) where id == window.window:
                try window.namePixmap()
                hidden = window.pixmap == nil
                logger.info("window shown again")
                scheduler.markDirty()
            case .windowDestroyed(let id) where id == window.window:
                return "the window \(WindowSelector.id(id))\(window.title.isEmpty ? "" : " ('\(window.title)')") was closed"
            case .error(let code):
                logger.warning("X error", ["code": code])
            default:
                break
            }
        }
        try connection.checkAlive()
        return nil
    }

    /// Grabs the window's pixmap and encodes it at the wire size (letterboxed when its size changed); nil when
    /// the window vanished or hid between the event and the grab (its events come next).
    private func produce(_ kind: CapturedFrame.Kind) throws(CaptureError) -> CapturedFrame? {
        guard let pixmap = window.pixmap else { return nil }
        let started = MonotonicClock.nowMicros()
        window.repair()
        let image: GrabbedImage
        do {
            image = try grabber.grab(CaptureRect(x: 0, y: 0, width: window.width, height: window.height), from: pixmap)
        } catch .requestFailed {
            // Resized, unmapped or destroyed under the grab: the events say which.
            scheduler.markDirty()
            return nil
        }
        let grabbed = MonotonicClock.nowMicros()
        let made: FrameBodyMaker.Body
        if image.width == firstSize.width, image.height == firstSize.height {
            made = try bodies.make(image.view, frameWidth: frameSize.width, frameHeight: frameSize.height, kind: kind,
                                   damage: nil, last: lastFrame)
        } else {
            try letterbox(image.view)
            made = try letterboxed.withPixels { pixels throws(CaptureError) in
                try bodies.make(pixels, frameWidth: frameSize.width, frameHeight: frameSize.height, kind: kind, damage: nil, last: lastFrame)
            }
        }
        let encoded = MonotonicClock.nowMicros()
        let area = CaptureRect(x: 0, y: 0, width: image.width, height: image.height)
        var frame = CapturedFrame(
            body: made.bytes, format: configuration.format, width: frameSize.width, height: frameSize.height,
            timestampMicros: grabbed, index: nextIndex, kind: kind, quality: made.quality, subsampling: made.subsampling,
            area: area, grabMicros: grabbed - started, encodeMicros: encoded - grabbed)
        frame.shared = made.shared
        nextIndex += 1
        lastFrame = frame
        stats.countProduced(frame, paintOver: kind == .paintOver, bytes: made.bytes.count)
        if grabber.method != statsMethod, let method = grabber.method {  // a new string only when the method changes
            statsMethod = method
            stats.method = "composite+" + method.rawValue
        }
        return frame
    }

    /// The window's picture scaled into the wire size, aspect kept, centred between black bars, into
    /// `letterboxed` (frame size).
    private func letterbox(_ source: BGRXPixels) throws(CaptureError) {
        let fit = Self.fit(width: source.width, height: source.height, into: frameSize)
        do throws(MediaError) {
            try BGRXScaler.scale(source, toWidth: fit.width, height: fit.height, into: &scaled)
        } catch {
            throw .encodeFailed(error)
        }
        letterboxed.resize(width: frameSize.width, height: frameSize.height)
        let (left, top) = ((frameSize.width - fit.width) / 2, (frameSize.height - fit.height) / 2)
        let row = fit.width * BGRXImage.bytesPerPixel
        let frameStride = letterboxed.stride
        scaled.withUnsafeBytes { from in
            let fromStride = scaled.stride
            letterboxed.withUnsafeMutableBytes { to in
                // Black bars (the rows and columns the picture leaves), then the picture's rows.
                to.initializeMemory(as: UInt8.self, repeating: 0)
                for y in 0..<fit.height {
                    (to.baseAddress! + (top + y) * frameStride + left * BGRXImage.bytesPerPixel)
                        .copyMemory(from: from.baseAddress! + y * fromStride, byteCount: row)
                }
            }
        }
    }

    /// The largest `width`×`height` scaled by one factor that fits `box` (each side at least 1).
    static func fit(width: Int, height: Int, into box: (width: Int, height: Int)) -> (width: Int, height: Int) {
        let factor = min(Double(box.width) / Double(width), Double(box.height) / Double(height))
        return (min(box.width, max(1, Int((Double(width) * factor).rounded()))),
                min(box.height, max(1, Int((Double(height) * factor).rounded()))))
    }

    private func sleep(micros: UInt64, stop: WakeSignal) {
        connection.flush()
        var fds = [
            pollfd(fd: connection.fileDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stop.pollDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        _ = poll(&fds, 2, Int32(min((micros + 999) / 1000, 1000)))
    }
}
