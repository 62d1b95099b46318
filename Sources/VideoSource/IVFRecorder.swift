import Glibc
public import Media
public import ScreencastSupport
import Synchronization

/// A sink that records every encoded frame to an IVF file (`--record-ivf FILE`), which ffprobe, ffmpeg
/// and `IVFReader` read.
///
/// The file header (layout in `IVF`) carries the first frame's size and a length of 0 while recording;
/// `finish()` writes the length (`IVFWriter.length`, what ffprobe shows as the duration) and closes the
/// file. The timebase is one frame period at the call's most frames a second (`--max-fps`: 1/30 s by
/// default), which players and `ffmpeg -i FILE out.mp4` take as the frame rate; pts are capture times since
/// the first frame in those periods (`IVFWriter`). A write failure (a full disk, `/dev/full`) is logged once;
/// later frames are not written, and `failure` tells the owner (the call exits 1 for it).
public final class IVFRecorder: VideoSink {
    private struct State {
        var fd: Int32
        var writer = IVFWriter()
        var headerWritten = false
        var frameHeader: [UInt8] = []
        var failed = false
        /// `strerror` of the first failed write (or of the final header update or close).
        var failure: String?
        var finished = false
    }

    /// The file being written.
    public let path: String
    private let logger: Logger
    private let state: Mutex<State>

    /// Creates (or truncates) `path`, mode 0644, for frames at most `framesPerSecond` a second (the
    /// encoder's `maxFramesPerSecond`; the timebase is one period of it).
    /// - Throws: `VideoSourceError.recording` when the file cannot be created.
    public init(path: String, framesPerSecond: Double = IVF.defaultFramesPerSecond, logger: Logger) throws(VideoSourceError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .recording(path: path, reason: SystemErrorText.of()) }
        self.path = path
        self.logger = logger
        var initial = State(fd: fd, writer: IVFWriter(framesPerSecond: framesPerSecond))
        initial.frameHeader.reserveCapacity(IVF.frameHeaderSize)
        state = Mutex(initial)
    }

    deinit { finish() }

    /// Frames written so far.
    public var framesWritten: Int { state.withLock { $0.writer.frameCount } }

    /// Why the recording is incomplete (`strerror` of the first failed write, header update or close),
    /// nil while every byte went out.
    public var failure: String? { state.withLock { $0.failure } }

    /// Appends the frame (the first one also writes the file header with its size).
    public func consume(_ frame: EncodedFrame) {
        state.withLock { s in
            guard !s.failed, !s.finished else { return }
            if !s.headerWritten {
                s.headerWritten = true
                let header = s.writer.fileHeader(width: frame.width, height: frame.height)
                guard writeAll(s.fd, header) else { return fail(&s) }
            }
            s.writer.frameHeader(for: frame, into: &s.frameHeader)
            guard writeAll(s.fd, s.frameHeader), writeAll(s.fd, frame.bytes) else { return fail(&s) }
        }
    }

    /// Writes the length into the header and closes the file. Idempotent.
    public func finish() {
        state.withLock { s in
            guard !s.finished else { return }
            s.finished = true
            if !s.headerWritten, !s.failed {
                s.headerWritten = true
                if !writeAll(s.fd, s.writer.fileHeader(width: 0, height: 0)) { fail(&s) }
            }
            if !s.failed {
                var length = s.writer.length.littleEndian
                let written = withUnsafeBytes(of: &length) { pwrite(s.fd, $0.baseAddress, 4, off_t(IVF.lengthOffset)) }
                // A pipe cannot seek (ESPIPE): the stream is whole, only the length in its header stays 0.
                if written != 4, errno != ESPIPE { fail(&s, during: "the length update") }
            }
            if close(s.fd) != 0, !s.failed { fail(&s, during: "close") }
            if let failure = s.failure {
                logger.error("recording closed incomplete", ["path": path, "frames": s.writer.frameCount, "error": failure])
            } else {
                logger.info("recording closed", [
                    "path": path, "frames": s.writer.frameCount, "length.ms": s.writer.lengthMicros / 1000,
                    "timebase": "\(s.writer.timebaseNumerator)/\(s.writer.timebaseDenominator)",
                ])
            }
        }
    }

    private func fail(_ s: inout State, during step: String? = nil) {
        let reason = SystemErrorText.of()
        s.failed = true
        s.failure = s.failure ?? reason
        if let step {
            logger.error("recording failed", ["path": path, "step": step, "error": reason, "frames": s.writer.frameCount])
        } else {
            logger.error("recording failed; no more frames are written", [
                "path": path, "error": reason, "frames": s.writer.frameCount,
            ])
        }
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }
}
