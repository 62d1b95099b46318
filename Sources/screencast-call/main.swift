import Dispatch
import Foundation
import Media
import ScreencastSupport
import Synchronization
import VideoSource

/// `screencast-call`: the call process. Parses options, runs the shared video source until a signal or
/// (with --exit-when-source-ends) the end of the first source, then flushes and exits.
enum CallTool {
    static func main() -> Int32 {
        let words = Array(CommandLine.arguments.dropFirst())
        if words.contains("--help") || words.contains("-h") {
            print(CallOptions.usage)
            return ExitCode.success
        }
        let options: CallOptions
        do {
            options = try CallOptions(words)
        } catch {
            FileHandle.standardError.write(Data("screencast-call: \(error.reason)\nTry 'screencast-call --help'.\n".utf8))
            return ExitCode.usage
        }
        let logger = Logger(component: "call", threshold: options.logLevel)
        do {
            return try CallRun(options: options, logger: logger).run()
        } catch {
            logger.error("cannot run", ["error": error])
            FileHandle.standardError.write(Data("screencast-call: \(error)\n".utf8))
            return ExitCode.failure
        }
    }
}

/// One run: the source, its sinks, the stats timer and the wait for the end.
struct CallRun {
    let options: CallOptions
    let logger: Logger

    func run() throws -> Int32 {
        let finished = DispatchSemaphore(value: 0)
        let reason = Mutex<String?>(nil)
        let end: @Sendable (String) -> Void = { why in
            let first = reason.withLock { r -> Bool in
                guard r == nil else { return false }
                r = why
                return true
            }
            if first { finished.signal() }
        }
        let signals = ShutdownSignals { number in end(number == SIGINT ? "SIGINT" : "SIGTERM") }
        defer { withExtendedLifetime(signals) {} }

        let source = try VideoSource(configuration: options.source, logger: logger) { event in
            if case .sourceEnded = event { end("source ended") }
        }
        if let path = options.recordIVF {
            source.addSink(try IVFRecorder(path: path, logger: logger.named("ivf")))
        }
        try source.start()

        let reporter = StatsReporter(source: source, logger: logger.named("stats"), file: options.statsFile)
        let timer = reporter.schedule(every: options.statsIntervalSeconds)
        finished.wait()
        timer?.cancel()
        logger.info("stopping", ["reason": reason.withLock { $0 } ?? "-"])
        source.stop()
        reporter.report(final: true)
        return ExitCode.success
    }
}

exit(CallTool.main())
