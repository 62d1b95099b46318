import Capture
import FrameSocket
import Media
import ScreencastSupport

/// Where frames go.
enum AgentDestination: Equatable {
    /// To the call process's socket (optionally also recorded to a dump file).
    case socket(SocketPath, record: String?)
    /// Only to a dump file (`--output`).
    case file(String)
}

/// Where pictures come from: the X server, or a Wayland desktop's screen-cast portal (PipeWire).
enum AgentSource: String, Equatable {
    case x11
    case portal
}

/// The agent's command line, parsed and checked: every value is in range once this exists.
struct AgentOptions {
    var capture = CaptureConfiguration()
    var destination: AgentDestination
    /// `Buffer-Orientation`, 0…255 (default 1).
    var orientation = 1
    /// Stop after this many frames (all kinds).
    var frameLimit: Int?
    /// Stop after this many seconds.
    var durationSeconds: Double?
    /// Seconds between stats lines; 0 for none (default 5).
    var statsIntervalSeconds: Double = 5
    var logLevel: LogLevel = .info
    /// `--log-format`: key=value lines (text, the default) or JSON Lines.
    var logFormat: LogFormat = .text
    /// `--list-monitors`: print the monitors and exit.
    var listMonitors = false
    /// `--source x11|portal|auto` as resolved (auto: the portal on a Wayland session, see ``resolveSource``).
    var source: AgentSource = .x11
    /// The portal's restore token and `--forget-portal-choice`.
    var portal = PortalSettings()
    /// `--audio`: what sound to send beside the pictures (nil: `off`, the default).
    var audio: SoundSource?
    /// `--audio-device`: the PulseAudio source to record instead of the default one.
    var audioDevice: String?

    static let valueOptions: Set<String> = [
        "socket", "output", "record", "frames", "duration", "display", "log-level", "log-format", "fps", "scale", "max-size",
        "quality", "subsampling", "orientation", "keepalive", "cursor", "monitor", "region", "paint-over-quality",
        "paint-over-delay", "shm", "stats-interval", "format", "audio", "audio-device",
        "source", "window", "portal-reconnect",
    ]
    static let flagOptions: Set<String> = ["list-monitors", "no-paint-over", "forget-portal-choice"]

    /// Parses the words after the program name.
    /// - Throws: ``UsageError`` naming the first bad option or value.
    init(_ words: [String], environment: [String: String]) throws(UsageError) {
        let arguments = try CommandLineArguments(words, options: Self.valueOptions, flags: Self.flagOptions)
        _ = try arguments.positionals(exactly: 0, names: "")
        listMonitors = arguments.has("list-monitors")
        if let level = arguments.string("log-level") {
            guard let parsed = LogLevel(name: level) else {
                throw UsageError("--log-level must be debug, info, warn or error, not '\(level)'")
            }
            logLevel = parsed
        }
        logFormat = try arguments.logFormat() ?? .text
        if let display = arguments.string("display") {
            guard !display.isEmpty else { throw UsageError("--display needs a display name such as :0") }
            capture.display = display
        }

        // Destination.
        let output = try Self.nonEmpty(arguments, "output")
        let record = try Self.nonEmpty(arguments, "record")
        // A dump that cannot be created is the command line's fault: said before the display is opened.
        for (name, path) in [("--output", output), ("--record", record)] {
            if let path { try PathArgument.writableFile(path, option: name) }
        }
        if let output {
            guard arguments.string("socket") == nil else { throw UsageError("--output and --socket exclude each other") }
            guard record == nil else { throw UsageError("--output and --record exclude each other") }
            destination = .file(output)
        } else {
            let socket: SocketPath
            do throws(FrameSocketError) {
                if let path = arguments.string("socket") {
                    socket = try SocketPath(path)
                } else {
                    socket = try SocketPath.defaultPath(environment: environment)
                }
            } catch {
                throw UsageError("--socket: \(error)")
            }
            // A path no call could serve: waiting for one would be forever.
            if arguments.string("socket") != nil, let reason = socket.unservableReason { throw UsageError("--socket: \(reason)") }
            destination = .socket(socket, record: record)
        }
        frameLimit = try arguments.int("frames", in: 1...Int(Int32.max))
        durationSeconds = try arguments.double("duration", in: 0.001...31_536_000)
        statsIntervalSeconds = try arguments.statsInterval() ?? 5
        orientation = try arguments.int("orientation", in: 0...255) ?? 1

        // What to capture.
        let monitor = arguments.string("monitor")
        let region = arguments.string("region")
        if monitor != nil, region != nil { throw UsageError("--monitor and --region exclude each other") }
        if let monitor {
            guard !monitor.isEmpty else { throw UsageError("--monitor needs a name or an index") }
            capture.target = .monitor(MonitorSelector(parsing: monitor))
        }
        if let window = arguments.string("window") {
            guard !window.isEmpty else { throw UsageError("--window needs a window id (0x…), a title, or pick (the portal's chooser)") }
            if monitor != nil || region != nil { throw UsageError("--window excludes --monitor and --region") }
            if window != Self.portalWindowChoice { capture.window = WindowSelector(parsing: window) }
        }
        if let region {
            guard let rect = CaptureRect(parsing: region) else {
                throw UsageError("--region must be X,Y,W,H or WxH+X+Y in pixels (W and H at least 1), not '\(region)'")
            }
            capture.target = .region(rect)
        }

        // Rate, size, JPEG.
        capture.maxFramesPerSecond = try arguments.double("fps", in: 0.1...240) ?? 30
        let scale = try arguments.double("scale", in: 0.01...1)
        let maxSize = arguments.string("max-size")
        if scale != nil, maxSize != nil { throw UsageError("--scale and --max-size exclude each other") }
        if let scale { capture.outputSize = scale == 1 ? .native : .scale(scale) }
        if let maxSize {
            guard let size = OutputSize.parseSize(maxSize) else {
                throw UsageError("--max-size must be WxH with sides 1...16384, not '\(maxSize)'")
            }
            capture.outputSize = .fit(width: size.width, height: size.height)
        }
        capture.quality = try arguments.int("quality", in: 1...100) ?? 80
        if let subsampling = arguments.string("subsampling") {
            switch subsampling {
            case "420": capture.subsampling = .yuv420
            case "444": capture.subsampling = .yuv444
            default: throw UsageError("--subsampling must be 420 or 444, not '\(subsampling)'")
            }
        }
        if let format = arguments.string("format") {
            guard let parsed = CaptureFormat(rawValue: format) else {
                throw UsageError("--format must be jpeg, i420 or shm, not '\(format)'")
            }
            capture.format = parsed
            if parsed != .jpeg {
                for name in ["quality", "subsampling", "paint-over-quality", "paint-over-delay"] where arguments.string(name) != nil {
                    throw UsageError("--\(name) is for JPEG frames; --format \(format) sends raw pictures")
                }
            }
            if parsed == .shm {
                // The picture lives in memory only the socket's reader maps: there is nothing a file could hold.
                for name in ["output", "record"] where arguments.string(name) != nil {
                    throw UsageError("--\(name) cannot record --format shm (the picture is in shared memory); use jpeg or i420")
                }
            }
        }
        if let audio = arguments.string("audio") {
            guard audio == "off" || SoundSource(rawValue: audio) != nil else {
                throw UsageError("--audio must be system, mic, both or off, not '\(audio)'")
            }
            self.audio = SoundSource(rawValue: audio)
        }
        if let device = arguments.string("audio-device") {
            guard !device.isEmpty else { throw UsageError("--audio-device needs a PulseAudio source name") }
            guard let audio, audio != .both else {
                throw UsageError("--audio-device needs --audio system or --audio mic (both records the defaults)")
            }
            audioDevice = device
        }
        capture.keepaliveSeconds = try arguments.double("keepalive", in: 0.05...3600) ?? 2
        capture.drawsCursor = try Self.onOff(arguments, "cursor") ?? true
        capture.usesSharedMemory = try Self.choice(arguments, "shm", ["auto": true, "off": false]) ?? true

        let paintOverQuality = try arguments.int("paint-over-quality", in: 1...100)
        let paintOverDelay = try arguments.double("paint-over-delay", in: 0...3600)
        if arguments.has("no-paint-over") {
            guard paintOverQuality == nil, paintOverDelay == nil else {
                throw UsageError("--no-paint-over excludes --paint-over-quality and --paint-over-delay")
            }
            capture.paintOver = nil
        } else {
            capture.paintOver = PaintOver(quality: paintOverQuality ?? 95, delaySeconds: paintOverDelay ?? 1)
        }

        source = try Self.resolveSource(arguments, environment: environment)
        if source == .portal {
            portal.sharesWindow = arguments.string("window") == Self.portalWindowChoice
            portal.restoreToken = PortalRestoreToken.defaultLocation(environment: environment)
            portal.forgetsChoice = arguments.has("forget-portal-choice")
            portal.reconnectSeconds = try arguments.double("portal-reconnect", in: PortalSettings.reconnectRange)
                ?? PortalSettings.defaultReconnectSeconds
            return
        }
        if arguments.has("forget-portal-choice") { throw UsageError("--forget-portal-choice is for --source portal") }
        if arguments.string("portal-reconnect") != nil { throw UsageError("--portal-reconnect is for --source portal") }
        if arguments.string("window") == Self.portalWindowChoice {
            throw UsageError("--window pick asks the portal's chooser for a window (--source portal); on X11 name the window: --window ID|TITLE")
        }

        // No display at all is the command line's to fix (exit 64), unlike a display that does not answer.
        // Checked last, so any other fault of the command line is named first.
        if capture.display == nil, environment["DISPLAY"]?.isEmpty ?? true {
            throw UsageError(Self.noDisplayReason)
        }
    }

    /// The options only the X11 capture knows (and `--window` with an id or a title).
    static let x11Options = ["display", "monitor", "region", "shm"]

    /// `--window pick`: the portal's chooser picks the window.
    static let portalWindowChoice = "pick"

    /// `--source`: x11 or portal as given; auto (the default) picks the portal on a Wayland session
    /// (`XDG_SESSION_TYPE=wayland`, or `WAYLAND_DISPLAY` set and `DISPLAY` not) unless an X11-only option
    /// (`--display`, `--monitor`, `--region`, `--shm`, `--list-monitors`) was given.
    static func resolveSource(_ arguments: CommandLineArguments, environment: [String: String]) throws(UsageError) -> AgentSource {
        let namedWindow = arguments.string("window").map { $0 != portalWindowChoice } ?? false
        let x11Given = x11Options.first { arguments.string($0) != nil } ?? (arguments.has("list-monitors") ? "list-monitors" : nil)
            ?? (namedWindow ? "window ID|TITLE" : nil)
        switch arguments.string("source") ?? "auto" {
        case "x11": return .x11
        case "portal":
            if let x11Given {
                throw UsageError("--\(x11Given) is for X11; --source portal captures the monitor chosen in the portal (a window: --window pick)")
            }
            return .portal
        case "auto":
            guard x11Given == nil else { return .x11 }
            let wayland = environment["XDG_SESSION_TYPE"] == "wayland"
                || (!(environment["WAYLAND_DISPLAY"]?.isEmpty ?? true) && (environment["DISPLAY"]?.isEmpty ?? true))
            return wayland ? .portal : .x11
        case let other:
            throw UsageError("--source must be x11, portal or auto, not '\(other)'")
        }
    }

    /// Why the agent refuses to start when `DISPLAY` is unset (or empty) and `--display` was not given.
    static let noDisplayReason =
        "no X display: DISPLAY is not set and no --display was given; name the X server with --display :N (e.g. --display :0)"

    private static func nonEmpty(_ arguments: CommandLineArguments, _ name: String) throws(UsageError) -> String? {
        guard let value = arguments.string(name) else { return nil }
        guard !value.isEmpty else { throw UsageError("--\(name) needs a file name") }
        return value
    }

    private static func onOff(_ arguments: CommandLineArguments, _ name: String) throws(UsageError) -> Bool? {
        try choice(arguments, name, ["on": true, "off": false])
    }

    private static func choice(
        _ arguments: CommandLineArguments, _ name: String, _ values: KeyValuePairs<String, Bool>
    ) throws(UsageError) -> Bool? {
        guard let text = arguments.string(name) else { return nil }
        guard let value = values.first(where: { $0.key == text })?.value else {
            throw UsageError("--\(name) must be \(values.map(\.key).joined(separator: " or ")), not '\(text)'")
        }
        return value
    }
}
