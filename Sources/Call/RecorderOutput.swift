public import Media
import ScreencastSupport
public import VideoSource

/// A recording of every encoded frame in the clear, to an IVF file (``IVFRecorder``; ffprobe and ffmpeg play
/// it). The file is closed after the encoding's last frame (its inlet's `finish()`); a recording that lost
/// frames (a full disk) is reported at the end, while the call and its other outputs went on.
public final class RecorderOutput: CallOutput {
    public let name = "ivf"
    public let consumes = MediaSelection.videoVP8
    public let protection = FrameProtection.clear
    /// The recorder (its path, frames written, failure).
    public let recorder: IVFRecorder
    private let logger: Logger

    /// Creates (or truncates) `path`.
    /// - Parameters:
    ///   - framesPerSecond: the source's frame-rate cap (`--max-fps`): the file's timebase is one frame period of
    ///     it, so players and converters read a real frame rate (``IVFRecorder``).
    ///   - logger: the call's logger (the recorder itself logs as `ivf`).
    /// - Throws: ``CallError/output(name:_:)`` when the file cannot be created.
    public init(path: String, framesPerSecond: Double = IVF.defaultFramesPerSecond, logger: Logger) throws(CallError) {
        do {
            recorder = try IVFRecorder(path: path, framesPerSecond: framesPerSecond, logger: logger.named("ivf"))
        } catch {
            throw .output(name: "ivf", error)
        }
        self.logger = logger
    }

    public var inlet: OutputInlet { .video(recorder) }

    /// Nothing to start: frames are written as they come, on the encoder's thread.
    public func start() {}

    /// Nothing to stop: the file closes after the last frame, when the encoding ends (or the output is removed).
    public func stop() {}

    public func checkComplete() -> String? {
        guard let failure = recorder.failure else { return nil }
        logger.error("the recording is incomplete", ["path": recorder.path, "error": failure, "frames": recorder.framesWritten])
        return failure
    }
}
