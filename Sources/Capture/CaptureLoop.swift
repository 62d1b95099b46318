import FrameWire
import Glibc
import Media
import ScreencastSupport

/// The capture thread's work, start to end: owns the X connection and everything built on it (grabber,
/// damage, cursor), the JPEG encoder (or the I420 conversion) and the scheduler. Each turn it reads the pointer, drains X events,
/// asks the ``CaptureScheduler`` what is due, and does it — or sleeps in `poll` on the X socket and the
/// stop pipe until something may be due.
///
/// Not thread-safe: made and run on the capture thread only (see ``ScreenCapture``).
final class CaptureLoop {
    private let configuration: CaptureConfiguration
    private let logger: Logger
    private let connection: XConnection
    private let grabber: ScreenGrabber
    private let damage: DamageTracker
    private let cursor: CursorOverlay?
    /// The encode path shared with the portal capture (JPEG, I420 or the shared-memory slots).
    private let bodies: FrameBodyMaker
    private let paintOver: PaintOver?
    private var scheduler: CaptureScheduler
    private var area = CaptureRect(x: 0, y: 0, width: 0, height: 0)
    private var frameSize = (width: 0, height: 0)
    private var lastFrame: CapturedFrame?
    private var nextIndex: UInt64 = 0
    /// What changed since the last frame (its `Buffer-Damage`).
    private var changes = DamageAccumulator()
    /// The sequence numbers of the last grab's request and of the `DamageSubtract` before it
    /// (see ``isBeforeLastGrab(_:)`` and ``isAfterLastRepair(_:)``).
    private var lastGrabSequence: UInt32?
    private var lastRepairSequence: UInt32?
    private var stats = CaptureStats()
    /// How often the pointer is read while nothing else is due.
    private let pointerPollMicros: UInt64
    /// Since when (µs) the captured monitor is missing from the server's list; nil while it is there.
    private var monitorMissingSince: UInt64?
    /// How often the monitor list is read again while the monitor is missing (events wake us too).
    private static let missingMonitorPollMicros: UInt64 = 100_000

    /// Connects and prepares everything; the first frame is made by ``run(stop:deliver:publish:)``.
    /// - Throws: any ``CaptureError`` of setup: bad configuration, no display, missing extensions, an
    ///   unknown monitor, a region outside the screen.
    init(configuration: CaptureConfiguration, logger: Logger) throws(CaptureError) {
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        connection = try XConnection(display: configuration.display)
        try connection.selectScreenChangeEvents()
        damage = try DamageTracker(connection: connection)
        cursor = configuration.drawsCursor ? try CursorOverlay(connection: connection) : nil
        grabber = ScreenGrabber(connection: connection, allowSharedMemory: configuration.usesSharedMemory, logger: logger)
        bodies = try FrameBodyMaker(configuration: configuration)
        paintOver = configuration.effectivePaintOver
        let interval = UInt64(1_000_000 / configuration.maxFramesPerSecond)
        scheduler = CaptureScheduler(configuration: configuration)
        pointerPollMicros = min(max(interval, 16_000), 100_000)
        try updateArea()
    }

    /// Captures until `stop` is requested or something fails.
    /// - Parameters:
    ///   - deliver: receives each frame on this thread; it should not block for long (offer it on).
    ///   - publish: receives the counters after every frame and every batch of events.
    /// - Throws: ``CaptureError/connectionLost(display:reason:)`` when the X server goes away, or the
    ///   errors of a resize that leaves nothing to capture (a monitor that disappeared, a region outside).
    func run(
        stop: WakeSignal, readerPresent: () -> Bool = { true }, deliver: (CapturedFrame) -> Void,
        publish: (CaptureStats) -> Void
    ) throws(CaptureError) {
        var hold = ReaderHold()
        while !stop.isRequested {
            try connection.checkAlive()
            if let cursor, let moved = try cursor.update(), moved.contains(where: { $0.intersects(area) }) {
                for rect in moved { changes.add(rect, area: area) }
                scheduler.markDirty()
            }
            try drainEvents()
            if pendingScreenChange {
                pendingScreenChange = false
                try updateArea()
            }
            if monitorMissingSince != nil { try updateArea() }
            // Nobody reads (no call on the socket): the X events are drained above, nothing is grabbed or encoded.
            if hold.skipsTurn(
                readerPresent: readerPresent(), stats: &stats, scheduler: &scheduler,
                sleep: { sleep(micros: $0, stop: stop) }, resume: { changes.invalidate() }) { continue }
            let now = MonotonicClock.nowMicros()
            let held = monitorMissingSince != nil
            switch held ? scheduler.nextWhileHeld(now: now) : scheduler.next(now: now) {
            case .capture:
                // Before the grab: changes reported during it must leave the scheduler dirty (the server
                // reports no more of them while their box is unrepaired).
                scheduler.willCapture(now: now)
                deliver(try produce(.change))
            case .paintOver:
                deliver(try produce(.paintOver))
                scheduler.didPaintOver(now: now)
            case .keepalive:
                if let frame = repeatLast(now: now) { deliver(frame) }
                scheduler.didKeepalive(now: now)
            case .wait(let until):
                var timeout = until > now ? until - now : 0
                if cursor != nil { timeout = min(timeout, pointerPollMicros) }
                if held { timeout = min(timeout, Self.missingMonitorPollMicros) }
                sleep(micros: timeout, stop: stop)
                continue
            }
            publish(stats)
        }
    }

    // MARK: - Events and area

    /// Handles what the server sent. `grabbed`: called right after a grab, before its frame's damage is
    /// taken: changes the server reported before it handled the grab are in that frame's pixels, so they
    /// join its damage (the grab's reply came after them, so they are all here); later ones are the next
    /// frame's, returned.
    ///
    /// A change reported between the `DamageSubtract` before the grab and the grab itself also makes a
    /// next frame, with its box in that frame's damage: it left the DAMAGE region non-empty, and the server
    /// reports a change only when the region's bounding box grows, so a later change inside that box raises
    /// no event. (One reported before the subtract needs nothing more: the subtract emptied the region.)
    @discardableResult
    private func drainEvents(grabbed: Bool = false) throws(CaptureError) -> [CaptureRect] {
        var screenChanged = false
        var later: [CaptureRect] = []
        while let event = connection.pollEvent() {
            switch event {
            case .damage(let rect, let sequence):
                stats.damageEvents += 1
                guard rect.intersects(area) else { break }
                if isBeforeLastGrab(sequence) {
                    changes.add(rect, area: area)
                    if isAfterLastRepair(sequence) {
                        if grabbed { later.append(rect) }
                        scheduler.markDirty()
                    }
                } else if grabbed {
                    later.append(rect)
                    scheduler.markDirty()
                } else {
                    changes.add(rect, area: area)
                    scheduler.markDirty()
                }
            case .screenChanged:
                screenChanged = true
            case .cursorChanged:
                cursor?.shapeChanged()
            case .error(let code):
                logger.warning("X error", ["code": code])
            case .other, .windowConfigured, .windowDestroyed, .windowUnmapped, .windowMapped:
                break
            }
        }
        try connection.checkAlive()
        if screenChanged, grabbed {
            changes.invalidate()
            pendingScreenChange = true
        } else if screenChanged {
            try updateArea()
        }
        return later
    }

    /// A screen change seen while a frame was being made: the area is worked out again after it.
    private var pendingScreenChange = false

    /// True for a change the server reported before it handled the last grab: its pixels are in the last
    /// frame (or the one being made), though later changes inside its box may be too (see ``drainEvents(grabbed:)``).
    /// Sequence numbers are compared modulo 2¹⁶, as events carry only their low 16 bits.
    private func isBeforeLastGrab(_ sequence: UInt16) -> Bool {
        lastGrabSequence.map { Self.precedes(sequence, $0) } ?? false
    }

    /// True for a change the server reported after it handled the `DamageSubtract` before the last grab:
    /// the DAMAGE region holds it still.
    private func isAfterLastRepair(_ sequence: UInt16) -> Bool {
        lastRepairSequence.map { !Self.precedes(sequence, $0) } ?? false
    }

    /// Whether an event's 16-bit sequence number is earlier than `request`'s (compared modulo 2¹⁶).
    private static func precedes(_ sequence: UInt16, _ request: UInt32) -> Bool {
        Int16(bitPattern: sequence &- UInt16(truncatingIfNeeded: request)) < 0
    }

    /// Works out the captured area on the current screen (after start and after every resize).
    private func updateArea() throws(CaptureError) {
        let size = try connection.rootSize()
        let screen = CaptureRect(x: 0, y: 0, width: size.width, height: size.height)
        var wanted: CaptureRect
        var name = "root"
        switch configuration.target {
        case .root:
            wanted = screen
        case .monitor(let selector):
            guard let monitor = try findMonitor(selector) else { return }
            wanted = monitor.area
            name = "monitor \(monitor.name)"
        case .region(let region):
            wanted = region
            name = "region"
        }
        let visible = wanted.intersection(screen)
        guard !visible.isEmpty else {
            throw .regionOutsideScreen(region: wanted, screenWidth: size.width, screenHeight: size.height)
        }
        if visible != wanted {
            logger.warning("capture area clipped to the screen", ["wanted": wanted, "area": visible])
        }
        scheduler.markDirty()
        guard visible != area else { return }
        changes.invalidate()
        let first = area.isEmpty
        area = visible
        frameSize = configuration.outputSize.frameSize(width: visible.width, height: visible.height)
        stats.area = area
        (stats.frameWidth, stats.frameHeight) = frameSize
        logger.info(first ? "capture area" : "capture area changed", [
            "what": name, "area": area, "screen": "\(size.width)x\(size.height)",
            "frame": "\(frameSize.width)x\(frameSize.height)",
        ])
    }

    /// The monitor `selector` names, or nil while it is missing after the capture started (then frames
    /// are held, see ``CaptureConfiguration/monitorAbsenceLimitSeconds``).
    /// - Throws: ``CaptureError/noSuchMonitor(_:available:)`` at start, or once it has been missing
    ///   for the limit; the errors of `GetMonitors`.
    private func findMonitor(_ selector: MonitorSelector) throws(CaptureError) -> MonitorInfo? {
        let monitors = try MonitorInfo.list(connection)
        do throws(CaptureError) {
            let monitor = try MonitorInfo.find(selector, in: monitors)
            if monitorMissingSince != nil {
                logger.info("monitor back", ["monitor": selector, "area": monitor.area])
                monitorMissingSince = nil
            }
            return monitor
        } catch {
            guard !area.isEmpty else { throw error }
            let now = MonotonicClock.nowMicros()
            let since = monitorMissingSince ?? now
            if monitorMissingSince == nil {
                logger.warning("monitor gone; holding frames until it is back", [
                    "monitor": selector, "limit.s": CaptureConfiguration.monitorAbsenceLimitSeconds,
                    "monitors": monitors.map { "\($0.index)=\($0.name)" }.joined(separator: ","),
                ])
                monitorMissingSince = since
            }
            if Double(now - since) >= CaptureConfiguration.monitorAbsenceLimitSeconds * 1e6 { throw error }
            return nil
        }
    }

    // MARK: - Frames

    /// Grabs the area, draws the cursor, scales and encodes.
    private func produce(_ kind: CapturedFrame.Kind) throws(CaptureError) -> CapturedFrame {
        let started = MonotonicClock.nowMicros()
        lastRepairSequence = damage.repairAll()
        let image: GrabbedImage
        do {
            image = try grabber.grab(area)
        } catch {
            // A resize can land between our last look at the screen and the grab (BadMatch): look again.
            guard case .requestFailed = error else { throw error }
            try updateArea()
            image = try grabber.grab(area)
        }
        let grabbed = MonotonicClock.nowMicros()
        lastGrabSequence = image.requestSequence
        cursor?.draw(into: image, showing: area)
        let later = try drainEvents(grabbed: true)
        // A paint-over re-encodes every pixel of the JPEG: the whole frame changed for a reader.
        var damage = changes.take(area: area, frameWidth: frameSize.width, frameHeight: frameSize.height)
        if kind == .paintOver { damage = nil }
        for rect in later { changes.add(rect, area: area) }
        if pendingScreenChange { changes.invalidate() }
        let made = try bodies.make(image.view, frameWidth: frameSize.width, frameHeight: frameSize.height, kind: kind,
                                   damage: damage, last: lastFrame)
        let body = made.bytes
        let quality = made.quality
        let subsampling = made.subsampling
        let shared = made.shared
        let encoded = MonotonicClock.nowMicros()
        var frame = CapturedFrame(
            body: body, format: configuration.format, width: frameSize.width, height: frameSize.height, timestampMicros: grabbed, index: nextIndex,
            kind: kind, quality: quality, subsampling: subsampling, area: area,
            grabMicros: grabbed - started, encodeMicros: encoded - grabbed)
        nextIndex += 1
        frame.shared = shared
        frame.damage = damage
        lastFrame = frame
        stats.countProduced(frame, paintOver: kind == .paintOver, bytes: body.count)
        stats.method = grabber.method?.rawValue ?? ""
        return frame
    }

    /// The last frame again, stamped `now`.
    private func repeatLast(now: UInt64) -> CapturedFrame? {
        guard let frame = lastFrame?.keepalive(now: now, index: nextIndex) else { return nil }
        nextIndex += 1
        stats.countKeepalive(bytes: frame.body.count)
        return frame
    }

    /// Sleeps up to `micros` or until the X socket has data or a stop is requested.
    private func sleep(micros: UInt64, stop: WakeSignal) {
        connection.flush()
        var fds = [
            pollfd(fd: connection.fileDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stop.pollDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        let milliseconds = Int32(min((micros + 999) / 1000, 1000))
        _ = poll(&fds, 2, milliseconds)
    }
}
