import FrameSocket
import FrameWire
import Foundation
import ScreencastSupport

/// `record [--socket PATH] --out FILE`: listen as the call process would and write the first sender's
/// bytes exactly as read (see HelpText.record for what ends a recording).
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
        try PathArgument.writableFile(out, option: "--out")  // a missing folder: bad usage, said before listening
        logger = try DumpTool.logger(arguments, component: "record")
    }

    func run() throws -> Int32 {
        // Record into a temporary file beside the output and rename it at the end, so a failed start (the
        // socket in use, a bad path) never destroys an existing file of the same name.
        // A failure to create it names the path the user gave, never the temporary one.
        let partial = outputPath + ".partial"
        let fd = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DumpToolError.io(outputPath, "cannot be written: \(SystemErrorText.of(errno))") }
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
        // Before the socket exists: whoever sees it may already interrupt us.
        let signals = ShutdownSignals { _ in recording.finish(nil) }
        do {
            try server.start()
        } catch {
            throw DumpToolError.socket(socket.string, error)
        }
        logger.info("waiting for a sender", ["socket": socket.string, "out": outputPath])
        let progress = RepeatingTimer(every: RunProgress.intervalSeconds, label: "record.progress") {
            let now = recording.summary
            guard !now.finished, let start = now.startMicros else { return }  // nothing recorded yet
            Console.error(RunProgress.recordLine(
                frames: now.frames, bytes: now.bytes, elapsedMicros: MonotonicClock.nowMicros() - start))
        }
        let outcome = recording.wait()
        progress.cancel()
        server.stop()
        withExtendedLifetime(signals) {}
        let summary = recording.summary
        if let failure = summary.writeError { throw DumpToolError.io(partial, failure) }
        guard rename(partial, outputPath) == 0 else { throw DumpToolError.system(outputPath) }
        keep = true
        let elapsed = summary.startMicros.map { summary.endMicros - $0 } ?? 0
        Console.error("recorded \(outputPath): \(summary.frames) frames, "
            + (summary.sounds > 0 ? "\(summary.sounds) sound messages, " : "") + "\(summary.bytes) bytes in "
            + "\(Format.elapsed(elapsed)) (\(Format.fps(summary.frames, over: elapsed))), "
            + "end: \(outcome?.description ?? "interrupted")")
        switch outcome {
        case nil, .stream(.eof)?: return ExitCode.success
        case .stream(.error(let error))?:
            throw DumpToolError.recordedStreamEnded(socket.string, "the sender's stream broke the wire format (\(error)); "
                + "\(outputPath) ends with the read that found the fault")
        case .stream(.truncated)?:
            throw DumpToolError.recordedStreamEnded(socket.string, "the sender's stream ended inside a frame (truncated)")
        case .ioError(let error)?:
            throw DumpToolError.recordedStreamEnded(socket.string, "reading from the sender failed: \(error)")
        case let other?:
            throw DumpToolError.recordedStreamEnded(socket.string, "the sender's stream ended: \(other)")
        }
    }
}
