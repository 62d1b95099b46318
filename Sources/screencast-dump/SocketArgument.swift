import FrameSocket
import Foundation
import ScreencastSupport

/// `--socket PATH`, validated, or the default path shared with the agent and the call process.
enum SocketArgument {
    static func path(_ arguments: CommandLineArguments) throws(UsageError) -> SocketPath {
        do {
            if let text = arguments.string("socket") { return try SocketPath(text) }
            return try SocketPath.defaultPath()
        } catch {
            throw UsageError("--socket: \(error)")
        }
    }

    /// The default socket path here (for help texts), or why there is none.
    static var defaultPathText: String {
        do {
            return try SocketPath.defaultPath().string
        } catch {
            return "none: \(error)"
        }
    }

    /// Throws when something other than a socket is at `path` (a reader could never appear there): bad
    /// usage (exit 64), as the call process says for the same `--socket`.
    static func requireSocketOrNothing(at path: SocketPath) throws(UsageError) {
        var info = stat()
        guard stat(path.string, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw UsageError("--socket: '\(path.string)' exists and is not a socket")
        }
    }
}
