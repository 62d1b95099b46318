import FrameSocket
import FrameWire
import Foundation
import ScreencastSupport
import Synchronization

/// `replay FILE [--socket PATH] [--fps N | --as-fast-as-possible] [--loop] [--wait S]`.
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

        let sender = try FrameSender(path: socket, logger: logger.named("frame-sender"))
        defer { sender.close() }
        let stop = StopFlag()
        // Closing the sender wakes a `send` or `flush` that waits for a reader, so an interrupt is prompt.
        let signals = ShutdownSignals { _ in
            stop.set()
            sender.close()
        }
        defer { withExtendedLifetime(signals) {} }

        let waitStart = MonotonicClock.nowMicros()
        while !sender.stats.isConnected {
            if stop.isSet { return ExitCode.success }
            if Double(MonotonicClock.nowMicros() - waitStart) / 1e6 >= waitSeconds {
                throw DumpToolError.noReader(socket.string, waitSeconds)
            }
            usleep(10_000)
        }

        var start = MonotonicClock.nowMicros()
        var offered = 0
        let lossless = pacing == .asFastAsPossible
        // Lossless mode: a drop means the reader went away (or refused us) mid-replay. A `send` may then be
        // waiting for a reader that never comes back, so a watcher closes the sender, which wakes it.
        let readerLeft = StopFlag()
        // (A dispatch source must be resumed before it is released, so it exists only in lossless mode.)
        var watcher: (any DispatchSourceTimer)?
        if lossless {
            let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "replay.watch"))
            timer.schedule(deadline: .now(), repeating: .milliseconds(50))
            timer.setEventHandler {
                if sender.stats.droppedFrames > 0 {
                    readerLeft.set()
                    sender.close()
                }
            }
            timer.resume()
            watcher = timer
        }
        defer { watcher?.cancel() }
        do {
            repeat {
                for segment in plan.segments {
                    if let due = segment.due(pacing) {
                        while !stop.isSet, MonotonicClock.nowMicros() < start + due {
                            usleep(UInt32(min(20_000, start + due - MonotonicClock.nowMicros())))
                        }
                    }
                    if stop.isSet { break }
                    let message = Array(plan.bytes[segment.range])
                    if lossless { try sender.send(message) } else { sender.offer(message) }
                    offered += 1
                }
                start = lossless ? MonotonicClock.nowMicros() : start + (plan.duration(pacing) ?? 0)
            } while loop && !stop.isSet && !readerLeft.isSet
            if readerLeft.isSet { throw DumpToolError.readerLeft(socket.string) }
            if !loop, !stop.isSet, !plan.tail.isEmpty { try sender.send(Array(plan.bytes[plan.tail])) }
        } catch FrameSocketError.closed where stop.isSet {
            // Interrupted while waiting for the reader: a clean stop.
        } catch FrameSocketError.closed where readerLeft.isSet {
            throw DumpToolError.readerLeft(socket.string)
        }
        let flushed = sender.flush(timeout: .seconds(30))
        sender.close()
        let stats = sender.stats
        FileHandle.standardError.write(Data(
            ("replayed \(path): offered \(offered) frames, sent \(stats.sentFrames) messages (\(stats.sentBytes) bytes), "
                + "dropped \(stats.droppedFrames)\(stop.isSet ? ", interrupted" : "")\n").utf8))
        if stop.isSet { return ExitCode.success }
        if lossless, stats.droppedFrames > 0 { throw DumpToolError.readerLeft(socket.string) }
        return flushed ? ExitCode.success : ExitCode.failure
    }
}

/// A dump cut into messages: each frame's exact bytes (with any empty lines before it) and its due time.
struct ReplayPlan {
    struct Segment {
        var range: Range<Int>
        var index: Int
        var timestampMicros: UInt64?
        /// Microseconds after the first frame per `Buffer-Timestamp` (pacing by timestamps).
        var timestampOffset: UInt64

        /// When this segment is due, in µs after the start of the pass, or nil for no pacing.
        func due(_ pacing: ReplayCommand.Pacing) -> UInt64? {
            switch pacing {
            case .timestamps: timestampOffset
            case .fps(let fps): UInt64(Double(index) * 1e6 / fps)
            case .asFastAsPossible: nil
            }
        }
    }

    let bytes: Data
    var segments: [Segment] = []
    /// Bytes after the last whole frame (a truncated frame or a wire-format fault), sent as is.
    var tail: Range<Int> = 0..<0
    var end: FrameStreamEnd = .eof
    /// Timestamp gaps that were negative or above ``maxGapMicros`` and replaced by ``defaultGapMicros``.
    var clampedGaps = 0

    /// One frame at 30 fps, µs: the gap used without (usable) timestamps.
    static let defaultGapMicros: UInt64 = 33_333
    /// The longest timestamp gap kept as is, µs (5 s; a static screen's keepalives are 2 s apart).
    static let maxGapMicros: UInt64 = 5_000_000

    init(path: String) throws {
        bytes = try DumpFile.contents(of: path)
        var decoder = FrameDecoder()
        var previousEnd = 0
        var previousStamp: UInt64?
        var lastOffset: UInt64 = 0
        var segments: [Segment] = []
        var end = FrameStreamEnd.eof
        var clamped = 0
        let handle: (FrameDecoderEvent) -> Void = { event in
            switch event {
            case .frame(let frame):
                let frameEnd = frame.offset + frame.messageLength
                // The gap to the previous frame: from Buffer-Timestamp when both have one and it is within
                // 0…maxGap, else one frame at 30 fps. Offsets therefore never overflow or run backwards.
                var gap: UInt64 = ReplayPlan.defaultGapMicros
                if let stamp = frame.header.timestampMicros, let previous = previousStamp {
                    if stamp >= previous, stamp - previous <= ReplayPlan.maxGapMicros {
                        gap = stamp - previous
                    } else {
                        clamped += 1
                    }
                }
                previousStamp = frame.header.timestampMicros
                let offset = segments.isEmpty ? 0 : lastOffset + gap
                segments.append(Segment(range: previousEnd..<frameEnd, index: segments.count,
                                        timestampMicros: frame.header.timestampMicros, timestampOffset: offset))
                lastOffset = offset
                previousEnd = frameEnd
            case .end(let streamEnd):
                end = streamEnd
            }
        }
        bytes.withUnsafeBytes { decoder.feed($0, emit: handle) }
        decoder.finish(emit: handle)
        self.segments = segments
        self.end = end
        self.clampedGaps = clamped
        if end != .eof { tail = previousEnd..<bytes.count }
    }

    /// One pass's length in µs (the last frame's due time plus one frame interval), nil without pacing.
    func duration(_ pacing: ReplayCommand.Pacing) -> UInt64? {
        guard let last = segments.last, let due = last.due(pacing) else { return nil }
        let interval: UInt64 = if case .fps(let fps) = pacing { UInt64(1e6 / fps) } else { Self.defaultGapMicros }
        return due + interval
    }
}

/// A flag set from a signal handler and read by the sending loop.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) }
}

/// `--socket PATH`, validated, or the default path shared with the agent and the call process.
enum SocketArgument {
    /// Throws when something other than a socket is at `path` (a reader could never appear there).
    static func requireSocketOrNothing(at path: SocketPath) throws {
        var info = stat()
        guard stat(path.string, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw DumpToolError.io(path.string, "not a socket") }
    }

    static func path(_ arguments: CommandLineArguments) throws(UsageError) -> SocketPath {
        do {
            if let text = arguments.string("socket") { return try SocketPath(text) }
            return try SocketPath.defaultPath()
        } catch {
            throw UsageError("--socket: \(error)")
        }
    }
}
