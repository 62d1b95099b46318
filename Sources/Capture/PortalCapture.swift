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
    /// Ask for a window instead of a monitor (`--window pick`); refused with ``CaptureError/portalMissing(_:)``
    /// when the portal offers no window sources (xdg-desktop-portal-wlr).
    public var sharesWindow = false
    /// How long the capture keeps asking the portal for a new stream after the PipeWire daemon went away, seconds,
    /// ``reconnectRange`` (default ``defaultReconnectSeconds``; 0: the capture fails at once). PipeWire restarts
    /// in well under a second when a service manager runs it.
    public var reconnectSeconds = PortalSettings.defaultReconnectSeconds
    public static let defaultReconnectSeconds = 60.0
    /// `--portal-reconnect`'s range, seconds.
    public static let reconnectRange = 0.0...3600.0

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
///   whole frame. The cursor (unless `drawsCursor` is off) comes as the stream's metadata when the portal offers
///   cursor mode METADATA (GNOME, KDE), drawn into each frame by ``CursorOverlay``'s blend; else the compositor
///   draws it (`embedded`: xdg-desktop-portal-wlr).
/// - The portal closing the session (Session::Closed: the desktop's "stop sharing") or the stream ending
///   (the output gone, the backend gone) ends the capture with ``ScreenCapture/Outcome/ended(_:)``; PipeWire
///   failing ends it with ``ScreenCapture/Outcome/failed(_:)``.
/// - The PipeWire daemon going away (restarted) is not an end: the share is closed and the portal asked again
///   (the restore token: no chooser), after 0.5 s, 1 s, then every 2 s for up to
///   ``PortalSettings/reconnectSeconds``; the
///   frames go on from where they were (index, size), the first one whole. Not in time: `failed`.
/// - The monitor resized: PipeWire negotiates the new size and the frames follow it (`capture area changed`).
/// - Shutdown: the PipeWire consumer first, then (0.5 s later, xdpw 0.7.0 can crash otherwise) Session.Close.
public final class PortalCapture: FrameCapturer {
    private let control: CaptureControl
    private let staging: PortalStaging
    /// Ends the waits of a reconnection (the portal asked again after PipeWire went away) on ``stop()``.
    private let reconnection: CaptureCancellation

    /// The pauses before the attempts to ask again, seconds; the last repeats until
    /// ``PortalSettings/reconnectSeconds``.
    static let reconnectDelays = [0.5, 1.0, 2.0]

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
        request.window = settings.sharesWindow
        request.restoreToken = settings.forgetsChoice ? nil : settings.restoreToken?.load()
        request.chooserSeconds = settings.chooserSeconds
        request.cancellation = cancellation
        let first = try PortalShare(request, configuration: configuration, settings: settings, staging: staging, logger: logger)
        self.control = control
        self.staging = staging
        let reconnection = CaptureCancellation()
        self.reconnection = reconnection
        let thread = Thread { [request] in
            BackgroundThread.nameCurrentThread("portal-capture")
            var outcome = ScreenCapture.Outcome.stopped
            var share: PortalShare? = first
            do throws(CaptureError) {
                let loop = try PortalCaptureLoop(configuration: configuration, staging: staging, logger: logger)
                control.waitForGo()
                while true {
                    let exit = loop.run(
                        stop: control.stop, readerPresent: { control.readerPresent.load(ordering: .relaxed) }, deliver: onFrame,
                        publish: { control.publish($0) })
                    guard case .pipeWireLost(let why) = exit else {
                        if case .outcome(let ended) = exit { outcome = ended }
                        break
                    }
                    // The daemon is gone: so is the stream (nothing to pause for). Ask the portal again.
                    logger.warning("the PipeWire daemon went away; asking the portal again", ["reason": why])
                    share?.close(pauseBeforeSession: false)
                    share = nil
                    guard let again = Self.reopen(request, configuration: configuration, settings: settings, staging: staging,
                                                  stop: control.stop, cancellation: reconnection, logger: logger)
                    else {
                        outcome = control.stop.isRequested ? .stopped : .failed(.pipeWire(
                            "the PipeWire daemon went away (\(why)) and the portal gave no new stream within \(String(format: "%g", settings.reconnectSeconds)) s"))
                        break
                    }
                    share = again
                    staging.reset()
                    logger.info("the share resumed on a new PipeWire stream")
                }
            } catch {
                outcome = .failed(error)
            }
            // The consumer first, then the session (xdpw 0.7.0 can crash when a session closes under a consumer).
            let wasStreaming = staging.hasPicture
            if case .stopped = outcome { share?.close(pauseBeforeSession: wasStreaming) } else { share?.close(pauseBeforeSession: false) }
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
        reconnection.cancel()
        control.go()
    }

    @discardableResult
    public func wait(timeout: Double?) -> ScreenCapture.Outcome? { control.waitUntilFinished(timeout: timeout) }

    public var stats: CaptureStats { control.statsSnapshot() }

    /// Asks the portal again (the saved restore token: no chooser when it is accepted) until a new stream is
    /// connected, a stop, or `settings.reconnectSeconds`; each attempt's waits are bounded by the time left. Runs on
    /// the `portal-capture` thread.
    private static func reopen(
        _ first: PortalSession.Request, configuration: CaptureConfiguration, settings: PortalSettings, staging: PortalStaging,
        stop: WakeSignal, cancellation: CaptureCancellation, logger: Logger
    ) -> PortalShare? {
        let deadline = MonotonicClock.nowMicros() + UInt64(settings.reconnectSeconds * 1e6)
        var attempt = 0
        while !stop.isRequested {
            let pause = reconnectDelays[min(attempt, reconnectDelays.count - 1)]
            attempt += 1
            let before = MonotonicClock.nowMicros()
            guard before < deadline else { return nil }
            var fds = [pollfd(fd: stop.pollDescriptor, events: Int16(POLLIN), revents: 0)]
            _ = Glibc.poll(&fds, 1, Int32(min(pause, Double(deadline - before) / 1e6) * 1000))
            let now = MonotonicClock.nowMicros()
            guard !stop.isRequested, now < deadline else { return nil }
            var request = first
            request.restoreToken = settings.restoreToken?.load() ?? first.restoreToken
            request.cancellation = cancellation
            let left = Double(deadline - now) / 1e6
            request.setupSeconds = min(request.setupSeconds, left)
            request.chooserSeconds = min(request.chooserSeconds, left)
            do throws(CaptureError) {
                staging.reset()
                return try PortalShare(request, configuration: configuration, settings: settings, staging: staging, logger: logger)
            } catch {
                logger.info("the portal gave no new stream yet; asking again", ["attempt": attempt, "error": error])
            }
        }
        return nil
    }

    public func setReaderPresent(_ present: Bool) { control.readerPresent.store(present, ordering: .relaxed) }
}
