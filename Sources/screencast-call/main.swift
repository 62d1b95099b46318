import Call
import Foundation
import ScreencastSupport

/// `screencast-call`: the call process. Parses options into a ``CallConfiguration``, runs the ``Call`` until a
/// signal or (with --exit-when-source-ends) the end of the first source, then flushes and exits.
enum CallTool {
    static func main() -> Int32 {
        let words = Array(CommandLine.arguments.dropFirst())
        if words.contains("--version") {
            print("screencast-call \(ScreencastVersion.string)")
            return ExitCode.success
        }
        if let command = words.first, ControlCommand.commands.contains(command) {
            return ControlCommand.run(command, Array(words.dropFirst()))
        }
        if words.contains("--help") || words.contains("-h") {
            print(CallOptions.usage)
            return ExitCode.success
        }
        func usage(_ error: UsageError) -> Int32 {
            FileHandle.standardError.write(Data("screencast-call: \(error.reason)\nTry 'screencast-call --help'.\n".utf8))
            return ExitCode.usage
        }
        // The config file (call.toml, --config) under the command line; its keys are the options' names.
        let settings: ProgramSettings
        do {
            settings = try ProgramSettings.load(words, program: "call", options: CallOptions.valueOptions, flags: CallOptions.flagOptions)
        } catch {
            return usage(error)
        }
        let options: CallOptions
        do {
            options = try CallOptions(settings.words)
        } catch {
            return usage(settings.attributed(error))  // "call.toml:3: --bitrate must be …" when the file set it
        }
        if settings.printConfig {
            print(settings.toml(program: "screencast-call"), terminator: "")
            return ExitCode.success
        }
        // The passphrase, before anything starts: a refused key file is the invocation's fault (64).
        var passphrase: String?
        if let e2ee = options.e2ee {
            do {
                passphrase = try E2EEKeyFile(path: e2ee.keyFile).read()
            } catch {
                let usage = error.isUsageFault
                FileHandle.standardError.write(Data(
                    "screencast-call: --e2ee-key-file: \(error)\n\(usage ? "Try 'screencast-call --help'.\n" : "")".utf8))
                return usage ? ExitCode.usage : ExitCode.failure
            }
        }
        let logger = Logger(component: "call", threshold: options.logLevel, format: options.logFormat)
        // Descriptors: viewers, HTTP and ICE-TCP connections each hold one (OpenFileLimit says why the hard limit).
        if let (before, after) = OpenFileLimit.raiseToHard(), after != before {
            logger.debug("open file limit raised", ["from": before, "to": after])
        }
        do {
            return try run(options.configuration(passphrase: passphrase), logger: logger)
        } catch {
            // Once, as the final word (no log line repeating it).
            FileHandle.standardError.write(Data("screencast-call: \(error)\n".utf8))
            return ExitCode.failure
        }
    }

    /// One run: the call until a signal or (with --exit-when-source-ends) the end of the first source, then its
    /// orderly stop. SIGHUP rotates the e2ee key when the call encrypts, else stops it as SIGTERM does.
    /// - Returns: 0, or 1 when an output's work is incomplete (a recording that lost frames).
    static func run(_ configuration: CallConfiguration, logger: Logger) throws(CallError) -> Int32 {
        let call = try Call(configuration: configuration, logger: logger)
        let signals = ShutdownSignals(signals: CallSignals.handled) { number in
            if number == SIGHUP, call.encrypts { return call.requestKeyRotation() }
            call.requestStop(reason: number == SIGINT ? "SIGINT" : number == SIGHUP ? "SIGHUP" : "SIGTERM")
        }
        defer { withExtendedLifetime(signals) {} }
        // Under systemd (Type=notify): READY=1 once the socket and the page listen, WATCHDOG=1 while it works.
        let notifier = ServiceNotifier()
        try call.start()
        notifier?.ready(status: call.viewerURL.map { "viewer page " + $0 } ?? "running")
        notifier?.startWatchdog { call.isResponsive }
        if let notifier { logger.debug("service manager told ready", ["watchdog_us": notifier.watchdogMicros ?? 0]) }
        let reason = call.waitForStopRequest()
        notifier?.stopping(reason: reason)
        // A recording that lost frames (a full disk) is a failed run, even though the call went on.
        return call.stop().isComplete ? ExitCode.success : ExitCode.failure
    }
}

/// The signals the call handles: SIGINT and SIGTERM stop it; SIGHUP rotates the e2ee key (or stops it).
enum CallSignals {
    static let handled = [SIGINT, SIGTERM, SIGHUP]
}

/// Allocator settings of the call process.
enum CallMemory {
    /// Blocks at least this large are mmapped by glibc (`M_MMAP_THRESHOLD`), bytes; well above an RTP packet
    /// (~1.2 kB) and an encoded frame (tens of kB), below a 1080p JPEG body (~0.9 MB).
    static let mmapThresholdBytes = 256 * 1024
}

ShutdownSignals.blockEarly(CallSignals.handled)  // before any thread exists: these are then never lost or fatal
// Set before any thread exists. Blocks of 256 KiB and more (JPEG bodies of ~0.9 MB, I420 pictures of 3 MB,
// libvpx's frame buffers) get pages of their own and give them back when freed. glibc's default threshold
// instead moves up to the largest such block freed, after which those blocks come from the heaps and
// leave high-water marks there. Measured at 1080p scrolling with one viewer: RSS 1–2 MiB lower after a
// minute, and over 10 minutes 122.5 → 127.2 MiB with the default against 121.6 → 121.0 and 120.8 → 124.9
// MiB with this (so steps of ~3 MiB still happen, from elsewhere). The price is the page faults of mapping
// each JPEG body afresh: ~6200 a second at 30 fps, ~2 % of a core of system time.
GlibcMalloc.setMmapThreshold(bytes: CallMemory.mmapThresholdBytes)
exit(CallTool.main())
