import Media

/// Everything the `Capture` module throws: an X display that cannot be used, a capture target that does
/// not exist on it, a connection lost while capturing, or a frame that could not be encoded.
///
/// Each case's `description` is one line fit for a CLI error message.
public enum CaptureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No display was named and `DISPLAY` is not set.
    case noDisplay
    /// `xcb_connect` failed: the display name, and xcb's reason (`XCB_CONN_*` in words).
    case cannotConnect(display: String, reason: String)

    /// The reason of ``cannotConnect(display:reason:)`` when xcb cannot parse the name (`XCB_CONN_CLOSED_PARSE_ERR`).
    public static let badDisplayNameReason = "bad display name"

    /// A display name xcb cannot parse: the command line's fault (a CLI exits 64), unlike a display that
    /// does not answer.
    public var isBadDisplayName: Bool {
        if case .cannotConnect(_, let reason) = self { return reason == Self.badDisplayNameReason }
        return false
    }
    /// The X server lacks an extension capture needs (`DAMAGE`, `XFIXES`, `RANDR`), or has too old a version.
    case missingExtension(name: String, display: String)
    /// The root window's pixels are not 32-bit little-endian BGRX (e.g. a 16-bit display).
    case unsupportedPixelFormat(depth: Int, bitsPerPixel: Int, detail: String)
    /// `--monitor` names no monitor of the display; the names that exist.
    case noSuchMonitor(String, available: [String])
    /// `--window` names no window of the display (at start: the command line's fault), in words that say what
    /// was looked for.
    case noSuchWindow(String)
    /// `--region` does not overlap the screen (or no longer does after a resize).
    case regionOutsideScreen(region: CaptureRect, screenWidth: Int, screenHeight: Int)
    /// The connection to the X server broke (server killed, socket closed): display and xcb's reason.
    case connectionLost(display: String, reason: String)
    /// An X request failed with an X error: the request's name and the X error code.
    case requestFailed(request: String, errorCode: Int)
    /// A captured frame could not be scaled or encoded.
    case encodeFailed(MediaError)
    /// A configuration value outside its documented range (a programming error reported, not trapped).
    case invalidConfiguration(String)
    /// The capture thread could not be started, or a system call for its wake-up pipe failed.
    case systemCall(name: String, errno: Int32)
    /// `--source portal`: what is missing for a Wayland screen cast (no session bus, no xdg-desktop-portal, no
    /// ScreenCast backend), in words that name it.
    case portalMissing(String)
    /// The portal refused: the chooser was cancelled, or the backend failed the request.
    case portalDenied(String)
    /// The portal answered oddly or not in time (no stream, no PipeWire remote, a step's time limit).
    case portalFailed(String)
    /// The PipeWire stream could not be set up or failed (the daemon went away, an unusable format).
    case pipeWire(String)

    public var description: String {
        switch self {
        case .noDisplay:
            "no X display: DISPLAY is not set and no display was given"
        case .cannotConnect(let display, let reason):
            "cannot open X display '\(display)': \(reason)"
        case .missingExtension(let name, let display):
            "X display '\(display)' lacks the \(name) extension"
        case .unsupportedPixelFormat(let depth, let bitsPerPixel, let detail):
            "unsupported root pixel format (depth \(depth), \(bitsPerPixel) bits per pixel): \(detail)"
        case .noSuchMonitor(let name, let available):
            "no monitor '\(name)' (monitors: \(available.isEmpty ? "none" : available.joined(separator: ", ")))"
        case .noSuchWindow(let what):
            "no window \(what)"
        case .regionOutsideScreen(let region, let width, let height):
            "region \(region) lies outside the \(width)x\(height) screen"
        case .connectionLost(let display, let reason):
            "lost the connection to X display '\(display)': \(reason)"
        case .requestFailed(let request, let code):
            "X request \(request) failed with X error \(code)"
        case .encodeFailed(let error):
            "frame encoding failed: \(error)"
        case .invalidConfiguration(let message):
            "invalid capture configuration: \(message)"
        case .systemCall(let name, let code):
            "\(name) failed (errno \(code))"
        case .portalMissing(let what):
            "cannot share the Wayland screen: \(what)"
        case .portalDenied(let why):
            "the screen-cast portal refused: \(why)"
        case .portalFailed(let why):
            "the screen-cast portal failed: \(why)"
        case .pipeWire(let why):
            "PipeWire: \(why)"
        }
    }
}
