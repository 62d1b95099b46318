import Capture
import Foundation
import ScreencastSupport

/// `screencast-agent`: parse the options, then capture and send until stopped (see `agentUsage`).
enum Agent {
    static func main() -> Int32 {
        signal(SIGPIPE, SIG_IGN)  // a vanished reader is an error return, never death
        let words = Array(CommandLine.arguments.dropFirst())
        if words.contains("--version") {
            print("screencast-agent \(ScreencastVersion.string)")
            return ExitCode.success
        }
        if words.contains("--help") || words.contains("-h") {
            print(agentUsage)
            return ExitCode.success
        }
        let options: AgentOptions
        let settings: ProgramSettings
        do {
            // The config file (agent.toml, --config) under the command line; its keys are the options' names.
            settings = try ProgramSettings.load(words, program: "agent", options: AgentOptions.valueOptions, flags: AgentOptions.flagOptions)
        } catch {
            fail("\(error.reason)\nTry 'screencast-agent --help'.")
            return ExitCode.usage
        }
        do {
            options = try AgentOptions(settings.words, environment: ProcessInfo.processInfo.environment)
        } catch {
            fail("\(settings.attributed(error).reason)\nTry 'screencast-agent --help'.")
            return ExitCode.usage
        }
        if settings.printConfig {
            print(settings.toml(program: "screencast-agent"), terminator: "")
            return ExitCode.success
        }
        let logger = Logger(component: "agent", threshold: options.logLevel, format: options.logFormat)
        do {
            if options.listMonitors {
                for monitor in try ScreenCapture.listMonitors(display: options.capture.display) { print(monitor) }
                return ExitCode.success
            }
            return try AgentRun(options: options, logger: logger).run()
        } catch let fault as AgentUsageFault {
            fail("\(fault.reason)\nTry 'screencast-agent --help'.")
            return ExitCode.usage
        } catch let error as CaptureError where error.isBadDisplayName {
            fail("\(error)\nTry 'screencast-agent --help'.")  // --display (or $DISPLAY) does not parse: bad usage
            return ExitCode.usage
        } catch {
            fail("\(error)")
            return ExitCode.failure
        }
    }

    private static func fail(_ message: String) {
        FileHandle.standardError.write(Data("screencast-agent: \(message)\n".utf8))
    }
}

ShutdownSignals.blockEarly()  // before any thread exists: SIGINT/SIGTERM are then never lost or fatal
exit(Agent.main())
