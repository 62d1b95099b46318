import Foundation
import ScreencastSupport

/// `screencast-dump`: inspect, extract, replay and record frame dumps (`.frames`: the raw socket byte stream).
/// The help texts are in HelpText.swift; each command in its own file.
enum DumpTool {
    static func main() -> Int32 {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard let command = arguments.first else {
            return usageError("a command is needed: inspect, extract, replay or record")
        }
        arguments.removeFirst()
        switch command {
        case "--help", "-h":
            return printHelp(HelpText.usage)
        case "--version":
            return printHelp("screencast-dump \(ScreencastVersion.string)")
        case "help":
            guard let topic = arguments.first, !["help", "--help", "-h"].contains(topic) else {
                return printHelp(HelpText.usage)
            }
            guard arguments.count == 1, let text = HelpText.of(topic) else {
                return usageError(arguments.count == 1 ? "no help for '\(topic)': not a command" : "help takes one command")
            }
            return printHelp(text)
        default:
            break
        }
        if let help = HelpText.of(command), asksForHelp(arguments) { return printHelp(help) }
        do {
            switch command {
            case "inspect":
                Self.stopBySignal()
                return try InspectCommand(arguments).run()
            case "extract":
                Self.stopBySignal()
                return try ExtractCommand(arguments).run()
            case "replay": return try ReplayCommand(arguments).run()
            case "record": return try RecordCommand(arguments).run()
            default: throw UsageError("unknown command '\(command)'")
            }
        } catch let error as UsageError {
            return usageError(error.reason)
        } catch let error as DumpToolError {
            fflush(nil)
            if case .unusablePath = error { return usageError("\(error)") }
            Console.error("screencast-dump: \(error)")
            return ExitCode.failure
        } catch {
            fflush(nil)
            Console.error("screencast-dump: \(error)")
            return ExitCode.failure
        }
    }

    /// True when `--help` or `-h` comes before any `--` (after which words are file names).
    /// `inspect` and `extract` hold nothing to close cleanly: SIGINT/SIGTERM (blocked at start for the
    /// commands that shut down cleanly) take their default action again, so a read blocked on a FIFO with no
    /// writer (`open(2)` waits for one) still ends at SIGTERM.
    private static func stopBySignal() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    private static func asksForHelp(_ words: [String]) -> Bool {
        for word in words {
            if word == "--" { return false }
            if word == "--help" || word == "-h" { return true }
        }
        return false
    }

    private static func printHelp(_ text: String) -> Int32 {
        print(text)
        return ExitCode.success
    }

    private static func usageError(_ reason: String) -> Int32 {
        Console.error("screencast-dump: \(reason)\nTry 'screencast-dump --help'.")
        return ExitCode.usage
    }

    /// The logger every command uses, at `--log-level` (default info).
    static func logger(_ arguments: CommandLineArguments, component: String) throws(UsageError) -> Logger {
        guard let text = arguments.string("log-level") else { return Logger(component: component) }
        guard let level = LogLevel(name: text) else {
            throw UsageError("--log-level must be debug, info, warn or error, not '\(text)'")
        }
        return Logger(component: component, threshold: level)
    }
}

ShutdownSignals.blockEarly()  // before any thread exists: SIGINT/SIGTERM are then never lost or fatal
exit(DumpTool.main())
