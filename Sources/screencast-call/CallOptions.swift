import FrameSocket
import Media
import ScreencastSupport
import VideoSource

/// The parsed command line of `screencast-call`.
struct CallOptions {
    var source: VideoSourceConfiguration
    var recordIVF: String?
    var statsIntervalSeconds: Double
    var statsFile: String?
    var logLevel: LogLevel

    static let usage = """
        Usage: screencast-call [options]

        Receives the agent's frames on a Unix socket, keeps the call's one shared video source and encodes it
        as VP8 (libvpx, real time). When no agent is connected, --source decides what feeds the source; when
        one connects, the screen takes over, and when it leaves the source falls back.

        Options:
          --socket PATH            the agent socket (default $XDG_RUNTIME_DIR/screencast/agent.sock,
                                   else /tmp/screencast-$UID/agent.sock)
          --source KIND            what feeds the source with no agent: screen (nothing; default),
                                   testpattern, or file:PATH (a .frames dump, looping)
          --bitrate KBPS           VP8 target bitrate, 1-1000000 (default: width x height x fps x 0.08 bits,
                                   clamped to 150-8000 kbps, following the picture size)
          --max-fps N              encode at most N new frames a second, 0.1-240 (default 30)
          --keyframe-interval S    a keyframe at least every S seconds (default: only on request)
          --cpu-used N             libvpx speed, -16 (fastest) to -1 (default -6); positive values are refused
          --min-q N, --max-q N     libvpx quantizer range, 0-63 (default 12 and 56)
          --encoder-threads N      libvpx threads, 1-16 (default 1)
          --pattern-size WxH       test pattern size (default 1280x720)
          --pattern-fps N          test pattern rate (default 30)
          --record-ivf FILE        write every encoded frame to an IVF file (ffprobe/ffmpeg play it)
          --stats-interval S       a stats line on stderr every S seconds, 0 for none (default 5)
          --stats-file FILE        also write the stats as JSON to FILE at each interval and at exit
          --watchdog S             drop an agent that completes no frame for S seconds (default 5)
          --exit-when-source-ends  exit 0 once the first agent's stream has ended (with --source file: once
                                   the file has played once) and everything is flushed
          --log-level LEVEL        debug, info, warn or error (default info); logs go to stderr
          -h, --help               this text

        SIGINT/SIGTERM: stop, flush the IVF file, remove the socket file, exit 0.
        Exit codes: 0 done, 1 runtime failure (socket in use, unreadable dump, …), 64 bad usage.
        """

    init(_ words: [String]) throws(UsageError) {
        let arguments = try CommandLineArguments(
            words,
            options: [
                "socket", "source", "bitrate", "max-fps", "keyframe-interval", "cpu-used", "min-q", "max-q",
                "encoder-threads", "pattern-size", "pattern-fps", "record-ivf", "stats-interval", "stats-file",
                "watchdog", "log-level",
            ],
            flags: ["exit-when-source-ends"])
        _ = try arguments.positionals(exactly: 0, names: "")

        let socket: SocketPath
        do {
            if let text = arguments.string("socket") { socket = try SocketPath(text) } else { socket = try SocketPath.defaultPath() }
        } catch {
            throw UsageError("--socket: \(error)")
        }

        let maxFPS = try arguments.double("max-fps", in: 0.1...240) ?? 30
        let patternFPS = try arguments.double("pattern-fps", in: 0.1...240) ?? 30
        var pattern = TestPatternSettings(framesPerSecond: patternFPS)
        if let size = arguments.string("pattern-size") {
            let parts = size.split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
                  (16...7680).contains(w), (16...4320).contains(h) else {
                throw UsageError("--pattern-size must be WxH within 16x16...7680x4320, not '\(size)'")
            }
            pattern.width = w
            pattern.height = h
        }
        let exitWhenEnds = arguments.has("exit-when-source-ends")
        let fallback: FallbackSource
        switch arguments.string("source") ?? "screen" {
        case "screen": fallback = .none
        case "testpattern": fallback = .testPattern(pattern)
        case let text where text.hasPrefix("file:") && text.count > 5:
            fallback = .file(path: String(text.dropFirst(5)), loop: !exitWhenEnds)
        case let text:
            throw UsageError("--source must be screen, testpattern or file:PATH, not '\(text)'")
        }

        let minQ = try arguments.int("min-q", in: 0...63) ?? 12
        let maxQ = try arguments.int("max-q", in: 0...63) ?? 56
        guard minQ <= maxQ else { throw UsageError("--min-q (\(minQ)) must not exceed --max-q (\(maxQ))") }
        if let text = arguments.string("cpu-used"), let value = Int(text), value >= 0 {
            throw UsageError("--cpu-used must be negative (-16...-1): positive values select libvpx's auto-speed")
        }
        let keyframeInterval = try arguments.double("keyframe-interval", in: 0.1...3600)

        source = VideoSourceConfiguration(
            socketPath: socket, fallback: fallback,
            bitrateKbps: try arguments.int("bitrate", in: 1...1_000_000),
            maxFramesPerSecond: maxFPS, keyframeIntervalSeconds: keyframeInterval,
            cpuUsed: try arguments.int("cpu-used", in: -16 ... -1) ?? -6,
            minQuantizer: minQ, maxQuantizer: maxQ,
            encoderThreads: try arguments.int("encoder-threads", in: 1...16) ?? 1,
            watchdogSeconds: try arguments.double("watchdog", in: 0.1...3600) ?? 5,
            endWhenSourceEnds: exitWhenEnds)
        recordIVF = arguments.string("record-ivf")
        if let path = recordIVF, path.isEmpty { throw UsageError("--record-ivf needs a file name") }
        statsIntervalSeconds = try arguments.double("stats-interval", in: 0...86_400) ?? 5
        statsFile = arguments.string("stats-file")
        let levelName = arguments.string("log-level") ?? "info"
        guard let level = LogLevel(name: levelName) else {
            throw UsageError("--log-level must be debug, info, warn or error, not '\(levelName)'")
        }
        logLevel = level
    }
}
