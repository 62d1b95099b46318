import FrameSocket
import FrameWire
import Foundation
import ScreencastSupport
import Synchronization

/// `record [--socket PATH] --out FILE`: listen as the call process would and write the first sender's
/// bytes exactly as read.
struct RecordCommand {
    let socket: SocketPath
    let outputPath: String
    let logger: Logger

    init(_ words: [String]) throws(UsageError) {
        let arguments = try CommandLineArguments(words, options: ["socket", "out", "log-level"], flags: [])
        _ = try arguments.positionals(exactly: 0, names: "")
        socket = try SocketArgument.path(arguments)
        guard let out = arguments.string("out"), !out.isEmpty else { throw UsageError("record needs --out FILE") }
        outputPath = out
        logger = try DumpTool.logger(arguments, component: "record")
    }

    func run() throws -> Int32 {
        // Record into a temporary file beside the output and rename it at the end, so a failed start (the
        // socket in use, a bad path) never destroys an existing file of the same name.
        let partial = outputPath + ".partial"
        let fd = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DumpToolError.io(partial, String(cString: strerror(errno))) }
        var keep = false
        defer {
            close(fd)
            if !keep { unlink(partial) }
        }
        let recording = Recording(fd: fd)
        let server = FrameServer(
            path: socket, logger: logger.named("frame-server"),
            rawBytes: { recording.write($0) },
            onEvent: { recording.handle($0) })
        do {
            try server.start()
        } catch {
            throw DumpToolError.io(socket.string, error.description)
        }
        logger.info("waiting for a sender", ["socket": socket.string, "out": outputPath])
        let signals = ShutdownSignals { _ in recording.finish(nil) }
        let outcome = recording.wait()
        server.stop()
        withExtendedLifetime(signals) {}
        let summary = recording.summary
        if let failure = summary.writeError { throw DumpToolError.io(partial, failure) }
        guard rename(partial, outputPath) == 0 else { throw DumpToolError.io(outputPath, String(cString: strerror(errno))) }
        keep = true
        logger.info("recorded", [
            "frames": summary.frames, "bytes": summary.bytes, "end": outcome?.name ?? "interrupted", "out": outputPath])
        switch outcome {
        case nil, .stream(.eof)?: return ExitCode.success
        default: return ExitCode.failure
        }
    }
}

/// The recording's state, shared by the server's reader thread and the main thread.
final class Recording: Sendable {
    struct Summary {
        var connection: Int?
        var frames = 0
        var bytes = 0
        var writeError: String?
        var finished = false
        var outcome: SourceEndReason?
    }

    private let fd: Int32
    private let state = Mutex(Summary())
    private let done = DispatchSemaphore(value: 0)

    init(fd: Int32) { self.fd = fd }

    var summary: Summary { state.withLock { $0 } }

    /// Appends a chunk read from the first sender (chunks of later senders are not recorded).
    func write(_ chunk: UnsafeRawBufferPointer) {
        state.withLock { summary in
            guard !summary.finished, summary.writeError == nil else { return }
            var offset = 0
            while offset < chunk.count {
                let count = Foundation.write(fd, chunk.baseAddress! + offset, chunk.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    summary.writeError = String(cString: strerror(errno))
                    return
                }
                offset += count
            }
            summary.bytes += chunk.count
        }
    }

    func handle(_ event: FrameServerEvent) {
        switch event {
        case .senderConnected(let sender):
            state.withLock { if $0.connection == nil { $0.connection = sender.connection } }
        case .frame(_, let sender):
            state.withLock { if $0.connection == sender.connection, !$0.finished { $0.frames += 1 } }
        case .senderEnded(let sender, let reason):
            // A connection that sent nothing (a probe, a sender that gave up) is not the one to record:
            // keep waiting for a sender with bytes.
            let isFirst = state.withLock { summary -> Bool in
                guard summary.connection == sender.connection else { return false }
                if summary.bytes == 0 {
                    summary.connection = nil
                    return false
                }
                return true
            }
            if isFirst { finish(reason) }
        case .senderRefused:
            break
        }
    }

    /// Ends the recording (the first sender's end, or nil for an interrupt); later calls do nothing.
    func finish(_ outcome: SourceEndReason?) {
        let first = state.withLock { summary -> Bool in
            guard !summary.finished else { return false }
            summary.finished = true
            summary.outcome = outcome
            return true
        }
        if first { done.signal() }
    }

    /// Blocks until ``finish(_:)``; returns the first sender's end reason, nil when interrupted.
    func wait() -> SourceEndReason? {
        done.wait()
        return state.withLock { $0.outcome }
    }
}
