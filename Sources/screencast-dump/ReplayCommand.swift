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
        waitSeconds = try arguments.double("wait", in: 0...86_400) ?? 10
        logger = try DumpTool.logger(arguments, component: "replay")
    }

    func run() throws -> Int32 {
        let plan = try ReplayPlan(path: path)
        if plan.segments.isEmpty, plan.tail.isEmpty { throw DumpToolError.io(path, "the dump is empty") }
        if case .error(let error) = plan.end {
            logger.warning("dump breaks the wire format; its faulty tail is sent as is", [
                "frames": plan.segments.count, "error": error.kind, "tail.bytes": plan.tail.count])
        } else if plan.end == .truncated {
            logger.warning("dump ends inside a frame; the partial frame is sent as is", ["tail.bytes": plan.tail.count])
        }

        let stop = StopFlag()
        let signals = ShutdownSignals { _ in stop.set() }
        defer { withExtendedLifetime(signals) {} }

        let sender = try FrameSender(path: socket, logger: logger.named("frame-sender"))
        defer { sender.close() }
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
        repeat {
            for segment in plan.segments {
                if let due = segment.due(pacing) {
                    while !stop.isSet, MonotonicClock.nowMicros() < start + due {
                        usleep(UInt32(min(20_000, start + due - MonotonicClock.nowMicros())))
                    }
                }
                if stop.isSet { break }
                let message = Array(plan.bytes[segment.range])
                if pacing == .asFastAsPossible {
                    try sender.send(message)
                } else {
                    sender.offer(message)
                }
                offered += 1
            }
            start += plan.duration(pacing) ?? 0
            if pacing == .asFastAsPossible { start = MonotonicClock.nowMicros() }
        } while loop && !stop.isSet
        if !loop, !stop.isSet, !plan.tail.isEmpty { try sender.send(Array(plan.bytes[plan.tail])) }
        let flushed = sender.flush(timeout: .seconds(30))
        sender.close()
        let stats = sender.stats
        FileHandle.standardError.write(Data(
            ("replayed \(path): offered \(offered) frames, sent \(stats.sentFrames) messages (\(stats.sentBytes) bytes), "
                + "dropped \(stats.droppedFrames)\n").utf8))
        return flushed || stop.isSet ? ExitCode.success : ExitCode.failure
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

    init(path: String) throws {
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw DumpToolError.io(path, error.localizedDescription)
        }
        var decoder = FrameDecoder()
        var previousEnd = 0
        var first: UInt64?
        var lastOffset: UInt64 = 0
        var segments: [Segment] = []
        var end = FrameStreamEnd.eof
        let handle: (FrameDecoderEvent) -> Void = { event in
            switch event {
            case .frame(let frame):
                let frameEnd = frame.offset + frame.messageLength
                var offset = lastOffset + (segments.isEmpty ? 0 : 33_333)
                if let stamp = frame.header.timestampMicros {
                    if first == nil { first = stamp }
                    if let first, stamp >= first, stamp - first >= lastOffset { offset = stamp - first }
                }
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
        if end != .eof { tail = previousEnd..<bytes.count }
    }

    /// One pass's length in µs (the last frame's due time plus one frame interval), nil without pacing.
    func duration(_ pacing: ReplayCommand.Pacing) -> UInt64? {
        guard let last = segments.last, let due = last.due(pacing) else { return nil }
        let interval: UInt64 = if case .fps(let fps) = pacing { UInt64(1e6 / fps) } else { 33_333 }
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
    static func path(_ arguments: CommandLineArguments) throws(UsageError) -> SocketPath {
        do {
            if let text = arguments.string("socket") { return try SocketPath(text) }
            return try SocketPath.defaultPath()
        } catch {
            throw UsageError("--socket: \(error)")
        }
    }
}
