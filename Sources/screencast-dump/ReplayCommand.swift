import FrameSocket
import FrameWire
import Foundation
import ScreencastSupport

/// `replay FILE [--socket PATH] [--fps N | --as-fast-as-possible] [--loop] [--wait S]`: the options, the checks
/// of the dump, then a ``ReplaySession`` that sends it.
struct ReplayCommand {
    enum Pacing: Equatable {
        /// Keep the spacing of `Buffer-Timestamp`; frames without one follow 1/30 s after the previous.
        case timestamps
        /// A fixed rate, frames per second.
        case fps(Double)
        /// No pacing and no loss: each frame waits for the previous one to be taken.
        case asFastAsPossible
    }

    let path: String
    let socket: SocketPath
    let pacing: Pacing
    let loop: Bool
    /// Seconds to wait for a reader: at the start, for a paced run's reader to come back, and for the final flush.
    let waitSeconds: Double
    let logger: Logger

    init(_ words: [String]) throws(UsageError) {
        let arguments = try CommandLineArguments(
            words, options: ["socket", "fps", "wait", "log-level"], flags: ["as-fast-as-possible", "loop"])
        path = try arguments.positionals(exactly: 1, names: "the dump FILE to replay")[0]
        socket = try SocketArgument.path(arguments)
        let fps = try arguments.double("fps", in: 0.01...1000)
        if fps != nil, arguments.has("as-fast-as-possible") {
            throw UsageError("--fps and --as-fast-as-possible exclude each other")
        }
        pacing = arguments.has("as-fast-as-possible") ? .asFastAsPossible : fps.map { .fps($0) } ?? .timestamps
        loop = arguments.has("loop")
        waitSeconds = try arguments.double("wait", in: 0.1...86_400) ?? 10
        logger = try DumpTool.logger(arguments, component: "replay")
    }

    func run() throws -> Int32 {
        let plan = try ReplayPlan(path: path)
        if plan.segments.isEmpty, plan.tail.isEmpty { throw DumpToolError.io(path, "the dump is empty") }
        if loop, plan.segments.isEmpty { throw DumpToolError.io(path, "no complete frame to loop") }
        if case .error(let error) = plan.end {
            logger.warning("dump breaks the wire format; its faulty tail is sent as is", [
                "frames": plan.segments.count, "error": error.kind, "tail.bytes": plan.tail.count])
        } else if plan.end == .truncated {
            logger.warning("dump ends inside a frame; the partial frame is sent as is", ["tail.bytes": plan.tail.count])
        }
        if plan.clampedGaps > 0 {
            logger.warning("timestamp gaps out of range replaced", [
                "gaps": plan.clampedGaps, "max.gap.ms": ReplayPlan.maxGapMicros / 1000])
        }
        try SocketArgument.requireSocketOrNothing(at: socket)
        let sender: FrameSender
        do {
            sender = try FrameSender(path: socket, logger: logger.named("frame-sender"))
        } catch {
            throw DumpToolError.socket(socket.string, error)
        }
        let session = ReplaySession(command: self, plan: plan, sender: sender)
        return try session.run()
    }
}
