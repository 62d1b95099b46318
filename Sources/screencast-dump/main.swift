import Foundation
import ScreencastSupport

/// `screencast-dump`: inspect, extract, replay and record frame dumps (`.frames`: the raw socket byte stream).
let usage = """
    Usage: screencast-dump <command> [options]

    A frame dump (.frames) is the exact byte stream that crossed the agent→call Unix socket
    (Protocol/frame-wire.md).

    Commands:
      inspect [--json] FILE
          Decode the stream and fully decode every JPEG body. Prints a table and summary, or with --json one
          document: {"frames":[{"offset","contentLength","bufferWidth","bufferHeight","orientation","rotation",
          "jpegWidth","jpegHeight" | "decodeError"}…],"end":"eof"|"truncated"|"error","error":null|{"kind","message"}}.
          Exit 0 for a clean end, 1 for a truncated stream or a wire-format error.
      replay FILE [--socket PATH] [--fps N | --as-fast-as-possible] [--loop] [--wait S]
          Send the dump to a reader as a sender would, byte for byte. Paced by Buffer-Timestamp when present,
          else 30 fps (--fps overrides); paced frames that the reader is too slow for are dropped (newest wins).
          --as-fast-as-possible sends without pacing and without loss. --loop repeats the well-framed part until
          interrupted. --wait: seconds to wait for a reader (default 10).
      record [--socket PATH] --out FILE
          Listen as the call process would and record the first sender byte for byte until its stream ends
          (or SIGINT/SIGTERM). Exit 0 for a clean end or an interrupt, 1 when the stream broke the wire format.
      extract FILE --out DIR
          Write each body as DIR/000000.jpg, DIR/000001.jpg, …

    Options for every command:
      --socket PATH      the agent socket (default $XDG_RUNTIME_DIR/screencast/agent.sock,
                         else /tmp/screencast-$UID/agent.sock)
      --log-level LEVEL  debug, info, warn or error (default info); logs go to stderr
      -h, --help         this text

    Exit codes: 0 done, 1 runtime failure, 64 bad usage.
    """

enum DumpTool {
    static func main() -> Int32 {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") || arguments.first == "help" {
            print(usage)
            return arguments.isEmpty ? ExitCode.usage : ExitCode.success
        }
        let command = arguments.removeFirst()
        do {
            switch command {
            case "inspect": return try InspectCommand(arguments).run()
            case "extract": return try ExtractCommand(arguments).run()
            case "replay": return try ReplayCommand(arguments).run()
            case "record": return try RecordCommand(arguments).run()
            default: throw UsageError("unknown command '\(command)'")
            }
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("screencast-dump: \(error.reason)\nTry 'screencast-dump --help'.\n".utf8))
            return ExitCode.usage
        } catch {
            FileHandle.standardError.write(Data("screencast-dump: \(error)\n".utf8))
            return ExitCode.failure
        }
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

exit(DumpTool.main())
