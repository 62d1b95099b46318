import Dispatch
import Foundation
import Glibc
import ScreencastSupport
import Synchronization

/// Captures the X11 screen on a thread of its own (named `screen-capture`) and hands out JPEG frames.
///
/// - `init` connects to the display and checks everything (extensions, pixel format, monitor, region)
///   before it returns, so setup problems surface as a thrown ``CaptureError``; then the first frame
///   follows at once.
/// - Frames come only when the captured area changed (DAMAGE, cursor movement, a resize), at most
///   `maxFramesPerSecond`; one paint-over once it has been static for a while; and a keepalive repeat
///   after `keepaliveSeconds` without any frame.
/// - `onFrame` runs on the capture thread, in order; it should hand the frame on without blocking (a slow
///   handler lowers the frame rate, it never queues frames).
/// - ``stop()`` is prompt and idempotent; ``wait(timeout:)`` reports how the capture ended. Dropping the last
///   reference stops the capture and waits for its thread, so the X connection is closed afterwards.
public final class ScreenCapture: Sendable {
    /// How a capture ended.
    public enum Outcome: Sendable, Equatable {
        /// ``ScreenCapture/stop()`` was called.
        case stopped
        /// Capturing failed (the X server went away, the monitor disappeared, …).
        case failed(CaptureError)
        /// The source was ended from outside, as its owner may do (the portal's session closed from the
        /// desktop, the screen-cast stream gone): not a failure; the reason, in words.
        case ended(String)
    }

    private let control: CaptureControl

    /// Connects to the display of `configuration` and starts capturing.
    /// - Parameters:
    ///   - configuration: what and how to capture; checked with ``CaptureConfiguration/validate()``.
    ///   - logger: receives `capture area`, `capturing with MIT-SHM` / `…GetImage`, warnings.
    ///   - startsAtOnce: true (default) to capture as soon as setup succeeded; false to set up only, so the
    ///     caller can prepare where frames go (a socket sender) once the display is known to work, and
    ///     then call ``start()``.
    ///   - onFrame: receives every frame, on the capture thread.
    /// - Throws: the setup errors of ``CaptureError`` (no display, cannot connect, missing extension,
    ///   unsupported pixel format, unknown monitor, region outside the screen, invalid configuration), or
    ///   ``CaptureError/systemCall(name:errno:)`` when the stop pipe cannot be made.
    public init(
        configuration: CaptureConfiguration, logger: Logger, startsAtOnce: Bool = true,
        onFrame: @escaping @Sendable (CapturedFrame) -> Void
    ) throws(CaptureError) {
        let control = try CaptureControl()
        if startsAtOnce { control.go() }
        self.control = control
        let thread = Thread {
            BackgroundThread.nameCurrentThread("screen-capture")
            let outcome = Self.capture(configuration: configuration, logger: logger, control: control, onFrame: onFrame)
            // The loop, and with it the X connections, is gone once `capture` has returned.
            if let outcome { control.finish(outcome) }
        }
        thread.name = "screen-capture"
        thread.start()
        if let error = control.waitForSetup() {
            control.waitUntilFinished(timeout: nil)
            throw error
        }
    }

    /// The capture thread's body: sets up (reporting the result to `init`), then runs until stopped.
    /// - Returns: how it ended; nil when setup failed (already reported).
    private static func capture(
        configuration: CaptureConfiguration, logger: Logger, control: CaptureControl,
        onFrame: (CapturedFrame) -> Void
    ) -> Outcome? {
        if let selector = configuration.window {
            return captureWindow(selector, configuration: configuration, logger: logger, control: control, onFrame: onFrame)
        }
        let loop: CaptureLoop
        do throws(CaptureError) {
            loop = try CaptureLoop(configuration: configuration, logger: logger)
        } catch {
            control.setupFinished(error)
            return nil
        }
        control.setupFinished(nil)
        control.waitForGo()
        do throws(CaptureError) {
            try loop.run(
                stop: control.stop, readerPresent: { control.readerPresent.load(ordering: .relaxed) }, deliver: onFrame,
                publish: { control.publish($0) })
            return .stopped
        } catch {
            logger.error("capture failed", ["reason": error])
            return .failed(error)
        }
    }

    /// The same for one window (`--window`): ends `ended` when the window is closed.
    private static func captureWindow(
        _ selector: WindowSelector, configuration: CaptureConfiguration, logger: Logger, control: CaptureControl,
        onFrame: (CapturedFrame) -> Void
    ) -> Outcome? {
        let loop: WindowCaptureLoop
        do throws(CaptureError) {
            loop = try WindowCaptureLoop(configuration: configuration, window: selector, logger: logger)
        } catch {
            control.setupFinished(error)
            return nil
        }
        control.setupFinished(nil)
        control.waitForGo()
        do throws(CaptureError) {
            return try loop.run(
                stop: control.stop, readerPresent: { control.readerPresent.load(ordering: .relaxed) }, deliver: onFrame,
                publish: { control.publish($0) })
        } catch {
            logger.error("capture failed", ["reason": error])
            return .failed(error)
        }
    }

    deinit {
        stop()
        control.waitUntilFinished(timeout: nil)
    }

    /// Begins capturing after an `init` with `startsAtOnce: false`; does nothing otherwise. Idempotent.
    public func start() { control.go() }

    /// Asks the capture thread to end; returns at once. Idempotent; callable from `onFrame`.
    public func stop() {
        control.stop.request()
        control.go()  // a capture never started ends without a frame
    }

    /// Waits until the capture thread has ended (after ``stop()`` or a failure).
    /// - Parameter timeout: seconds, or nil to wait as long as it takes.
    /// - Returns: how it ended, or nil when it was still running at the timeout.
    @discardableResult
    public func wait(timeout: Double?) -> Outcome? { control.waitUntilFinished(timeout: timeout) }

    /// The counters so far (a snapshot).
    public var stats: CaptureStats { control.statsSnapshot() }

    public func setReaderPresent(_ present: Bool) { control.readerPresent.store(present, ordering: .relaxed) }

    /// The display's RandR monitors (for `--list-monitors`), through a short-lived connection.
    /// - Parameter display: the display name; nil means `$DISPLAY`.
    /// - Throws: the connection errors of ``CaptureError``.
    public static func listMonitors(display: String?) throws(CaptureError) -> [MonitorInfo] {
        let connection = try XConnection(display: display)
        return try MonitorInfo.list(connection)
    }
}
