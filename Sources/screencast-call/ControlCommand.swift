import Call
import Foundation
import ScreencastSupport
import Signaling

/// `screencast-call status` and `screencast-call kick ID`: the sharer's view of, and hand on, a running call.
enum ControlCommand {
    static let usage = """
        Usage: screencast-call status [--share] [--http HOST:PORT] [--token T]
               screencast-call kick ID [--share] [--http HOST:PORT] [--token T]
               screencast-call pause | resume [--share] [--http HOST:PORT] [--token T]

        Asks the call running on this machine, over its own HTTP server. status: the call's summary, then who
        is watching (viewer id, address, since when, kbps, loss, RTT, whether it gets the newest frames) and
        each output's state. kick ID: ends that viewer's session (its page may join again). pause: new
        pictures are dropped, viewers keep the last one and their pages say "sharing paused"; resume.

        Options:
          --share           the call runs with --share: https://127.0.0.1:8443, its kept token and
                            certificate ($XDG_STATE_HOME/screencast)
          --http HOST:PORT  where the call listens (default 127.0.0.1:8080, or 127.0.0.1:8443 with --share)
          --token T         the call's --token
        The controls answer requests from this machine only. Exit codes: 0 done; 64 bad usage; 1 no call
        answered, or it refused (an unknown viewer, a wrong token).
        """

    static let commands: Set<String> = ["status", "kick", "pause", "resume"]

    static func run(_ command: String, _ words: [String]) -> Int32 {
        if words.contains("--help") || words.contains("-h") {
            print(usage)
            return ExitCode.success
        }
        let control: CallControl
        let viewer: String?
        do {
            let arguments = try CommandLineArguments(words, options: ["http", "token"], flags: ["share"])
            let positionals = try arguments.positionals(exactly: command == "kick" ? 1 : 0, names: "the viewer's ID (screencast-call status lists them)")
            viewer = positionals.first
            // A token goes into a header: a CR, LF or other control character would write another header.
            if let token = arguments.string("token"), token.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value > 0x7E }) {
                throw UsageError("--token: only printable ASCII without spaces (the call's tokens are URL-safe)")
            }
            if let id = viewer, id.count > 128 { throw UsageError("kick: a viewer ID is at most 128 characters (status lists them)") }
            let share = arguments.has("share")
            var endpoint = share ? HTTPEndpoint(host: "127.0.0.1", port: 8443) : .default
            if let text = arguments.string("http") {
                do { endpoint = try HTTPEndpoint(parsing: text) } catch { throw UsageError("--http: \(error)") }
            }
            if endpoint.host == "0.0.0.0" { endpoint = HTTPEndpoint(host: "127.0.0.1", port: endpoint.port) }
            if endpoint.host == "::" { endpoint = HTTPEndpoint(host: "::1", port: endpoint.port) }
            if share {
                guard let folder = ShareState.defaultFolder() else { throw UsageError("--share: no HOME or XDG_STATE_HOME to find the kept token in") }
                let kept = CallControl.share(port: endpoint.port, state: ShareState(folder: folder))
                control = CallControl(
                    baseURL: "https://\(endpoint)", token: arguments.string("token") ?? kept.token, trustedCertificate: kept.trustedCertificate)
            } else {
                control = CallControl(baseURL: "http://\(endpoint)", token: arguments.string("token"), trustedCertificate: nil)
            }
        } catch {
            FileHandle.standardError.write(Data("screencast-call \(command): \((error as? UsageError)?.reason ?? "\(error)")\nTry 'screencast-call \(command) --help'.\n".utf8))
            return ExitCode.usage
        }
        do {
            if let viewer {
                print(try control.kick(viewer))
            } else if command == "pause" || command == "resume" {
                print(try control.pause(command == "pause"))
            } else {
                print(try control.status(), terminator: "")
            }
            return ExitCode.success
        } catch {
            FileHandle.standardError.write(Data("screencast-call \(command): \(error)\n".utf8))
            return ExitCode.failure
        }
    }
}
