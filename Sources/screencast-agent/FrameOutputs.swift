import Capture
import FrameSocket
import FrameWire
import Glibc
import Media
import ScreencastSupport
import Synchronization

/// A frame dump being written: the exact bytes a socket reader would get, one message after the other.
/// The one owner of its file descriptor (closed in `deinit`).
final class DumpFile: Sendable {
    let path: String
    private let fd: Int32

    /// Creates (or truncates) the file.
    /// - Throws: ``AgentError/dump(path:reason:)``.
    init(path: String) throws(AgentError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .dump(path: path, reason: SystemErrorText.of()) }
        self.path = path
        self.fd = fd
    }

    deinit { close(fd) }

    /// Appends `bytes` completely.
    /// - Throws: ``AgentError/dump(path:reason:)`` (disk full, …).
    func write(_ bytes: [UInt8]) throws(AgentError) {
        var failure: Int32 = 0
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += count
            }
        }
        if failure != 0 { throw .dump(path: path, reason: SystemErrorText.of(failure)) }
    }
}

/// Turns captured frames into wire messages (Protocol/frame-wire.md §6) and hands them to the socket
/// sender (never blocks: newest wins) and/or a dump file; counts them; asks for a stop at the frame limit.
///
/// A dump that cannot be written (a full disk) ends the run when it is the only output (`--output`). Beside
/// the socket (`--record`) it only ends the recording: one error line when it happens, the frames keep
/// going to the call, and the run ends with exit 1 (``AgentError/recordingIncomplete(path:reason:frames:)``).
///
/// Called on the capture thread; counters are read from the main thread (hence the `Mutex`).
final class FrameOutputs: Sendable {
    struct Counters {
        /// Frames handed on (to the sender and/or the dump).
        var frames = 0
        /// Frames written to the dump file.
        var dumped = 0
        /// Wire bytes handed on.
        var bytes = 0
        /// The first dump failure of `--output`, which ends the run.
        var failure: AgentError?
        /// The first dump failure of `--record`, which ends only the recording.
        var recordingFailure: AgentError?
        /// Sound messages handed on (to the sender and/or the dump).
        var soundMessages = 0
        /// The `Capture-*` fields of the last frame, kept while the capture area stays the same.
        var capture: (area: CaptureRect, description: CaptureDescription)?
    }

    let sender: FrameSender?
    let dump: DumpFile?

    /// Whether the capture should make frames now: a dump file always takes them; `--frames N` is a job of N
    /// frames (with no call it ends honestly, "sent none"); a socket alone only while a call is connected.
    var hasReader: Bool { dump != nil || frameLimit != nil || sender?.stats.isConnected ?? true }
    private let logger: Logger
    private let orientation: Int
    private let frameLimit: Int?
    /// What is captured, for the `Capture-*` fields (display, area, asked fps; the rect comes with each frame).
    private let captureBase: CaptureDescription
    private let counters = Mutex(Counters())
    /// Called when the frame limit is reached (false) or writing the dump failed (true).
    private let requestStop: @Sendable (_ failed: Bool) -> Void

    init(sender: FrameSender?, dump: DumpFile?, logger: Logger, orientation: Int, frameLimit: Int?,
         capture: CaptureDescription = CaptureDescription(), requestStop: @escaping @Sendable (_ failed: Bool) -> Void) {
        captureBase = capture
        self.sender = sender
        self.dump = dump
        self.logger = logger
        self.orientation = orientation
        self.frameLimit = frameLimit
        self.requestStop = requestStop
    }

    /// The wire message of `frame`: header with `Buffer-Timestamp` (capture time) and `Buffer-Sequence`, and
    /// `Buffer-Format: I420` with `Buffer-Color-Range: limited` for a raw frame, `Buffer-Format: BGRX-SHM` with
    /// `Buffer-Memory` for a shared one (never for JPEG, whose header stays the iOS sender's: a JPEG is full
    /// range by definition); `Buffer-Damage` (§2.9: the whole frame when the capture does not know); then the
    /// `Capture-*` fields when given.
    static func message(for frame: CapturedFrame, orientation: Int, capture: CaptureDescription? = nil) -> [UInt8] {
        let raw = frame.format == .i420
        let format: BufferFormat = switch frame.format {
        case .jpeg: .jpeg
        case .i420: .i420
        case .shm: .sharedBGRX
        }
        let header = FrameHeader(
            contentLength: frame.body.count, bufferWidth: frame.width, bufferHeight: frame.height,
            orientation: orientation, timestampMicros: frame.timestampMicros, sequence: frame.index,
            format: format, colorRange: raw ? (frame.colorRange == .limited ? .limited : .full) : nil,
            capture: capture, memory: frame.shared?.reference,
            damage: frame.damage ?? [DamageRect.whole(width: frame.width, height: frame.height)])
        return FrameEncoder.encode(header: header, body: frame.body)
    }

    /// The `Capture-*` fields for a frame of `area`: made again only when the area changed (a resize, a
    /// monitor moved), so a frame costs no new strings.
    private func captureFields(_ area: CaptureRect, _ counters: inout Counters) -> CaptureDescription? {
        guard !captureBase.isEmpty else { return nil }
        if let known = counters.capture, known.area == area { return known.description }
        var description = captureBase
        description.rect = "\(area.width)x\(area.height)+\(area.x)+\(area.y)"
        counters.capture = (area, description)
        return description
    }

    /// Sends and/or records one frame.
    func handle(_ frame: CapturedFrame) {
        let done = counters.withLock { counters -> Bool in
            guard counters.failure == nil, frameLimit.map({ counters.frames < $0 }) ?? true else { return false }
            let message = Self.message(for: frame, orientation: orientation, capture: captureFields(frame.area, &counters))
            if let dump, counters.recordingFailure == nil {
                do throws(AgentError) {
                    try dump.write(message)
                    counters.dumped += 1
                } catch {
                    guard sender != nil, case .dump(let path, let reason) = error else {
                        counters.failure = error
                        return true
                    }
                    let failure = AgentError.recordingIncomplete(path: path, reason: reason, frames: counters.dumped)
                    counters.recordingFailure = failure
                    logger.error("recording stopped; frames still go to the call", [
                        "path": path, "error": reason, "frames": counters.dumped,
                    ])
                }
            }
            if let shared = frame.shared { sender?.offer(message, sharedPicture: shared.picture) } else { sender?.offer(message) }
            counters.frames += 1
            counters.bytes += message.count
            return frameLimit.map { counters.frames >= $0 } ?? false
        }
        if done { requestStop(snapshot.failure != nil) }
    }

    /// The wire message of a sound fragment (Protocol/frame-wire.md §2.10).
    static func soundMessage(for fragment: SoundFragment, source: String?) -> [UInt8] {
        let header = SoundHeader(rate: fragment.rate, channels: fragment.channels, samples: fragment.frames,
                                 timestampMicros: fragment.timestampMicros, sequence: fragment.sequence, source: source)
        return FrameEncoder.encodeSound(header: header, body: FrameEncoder.soundBody(fragment.samples))
    }

    /// Sends and/or records one sound fragment: into the dump in the order it comes with the pictures, to the
    /// socket through the sender's sound queue (never replaced; dropped only when a second of sound waits,
    /// counted and logged). Called on a sound thread.
    func handleSound(_ fragment: SoundFragment, source: String?) {
        let message = Self.soundMessage(for: fragment, source: source)
        counters.withLock { counters in
            guard counters.failure == nil else { return }
            if let dump, counters.recordingFailure == nil {
                do throws(AgentError) {
                    try dump.write(message)
                } catch {
                    counters.failure = counters.failure ?? (sender == nil ? error : nil)
                }
            }
            sender?.offerSound(message, durationMicros: fragment.durationMicros)
            counters.soundMessages += 1
            counters.bytes += message.count
        }
    }

    /// A snapshot of the counters.
    var snapshot: Counters { counters.withLock { $0 } }
}

/// Runtime failures of the agent outside capture.
/// A fault of the command line found only once the display is known (a `--region` wholly outside the
/// screen): exit 64 with the reason and a pointer to `--help`, like any other bad usage.
struct AgentUsageFault: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

enum AgentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dump file could not be created or written.
    case dump(path: String, reason: String)
    /// A run asked for frames (`--frames N`) ended without sending one to the socket: `reason` says why
    /// (the last connection failure, or that the call never took a frame).
    case nothingSent(asked: Int, reason: String)
    /// `--record` could not write a frame (`reason`, e.g. a full disk) after `frames` whole frames; the run
    /// went on sending to the call.
    case recordingIncomplete(path: String, reason: String, frames: Int)

    var description: String {
        switch self {
        case .dump(let path, let reason): "cannot write dump '\(path)': \(reason)"
        case .nothingSent(let asked, let reason): "asked for \(asked) frame(s) and sent none: \(reason)"
        case .recordingIncomplete(let path, let reason, let frames):
            "the recording '\(path)' is incomplete: \(reason) after \(frames) whole frame(s); the call got the frames"
        }
    }
}
