public import ScreencastSupport
public import Streaming
public import VideoSource
public import Media

/// An output of the H.264 encoding through libavformat (``StreamWriter``): an RTMP destination (`rtmp-N`, FLV,
/// reconnecting) or a fragmented MP4 recording (`mp4`). Frames are queued on the encoder's thread and written
/// on the writer's own; a destination that fails or stalls never holds up the encoder, the viewers or the
/// other outputs. Takes the frames in the clear (end-to-end encryption is for WebRTC viewers).
public final class StreamOutput: CallOutput, VideoSink {
    public let name: String
    public let consumes = MediaSelection.videoH264
    public let protection = FrameProtection.clear
    /// The writer (its state and counters).
    public let writer: StreamWriter

    /// - Parameters:
    ///   - name: `rtmp-1`, `mp4`, ….
    ///   - context: from ``Call/context(for:consumer:)`` with ``MediaSelection/videoH264`` (keyframes).
    ///   - targetBitsPerSecond: the encoding's target now (for `/stats`).
    public init(
        name: String, target: StreamWriter.Target, context: OutputContext, targetBitsPerSecond: @escaping @Sendable () -> Int, logger: Logger
    ) {
        self.name = name
        writer = StreamWriter(
            name: name, target: target, targetBitsPerSecond: targetBitsPerSecond, queueLimit: Self.queueLimit(target),
            logger: logger, requestKeyframe: context.requestKeyframe)
    }

    /// 30 frames for a network destination (about 1 s: the seed's rule); a file waits longer before dropping.
    static func queueLimit(_ target: StreamWriter.Target) -> Int {
        if case .mp4 = target { return 300 }
        return 30
    }

    public var inlet: OutputInlet { .video(self) }

    public func start() { writer.start() }

    /// An RTMP destination closes at once; an MP4 file gets what waits and its trailer.
    public func stop() { writer.stop() }

    public func consume(_ frame: EncodedFrame) { writer.consume(frame) }

    public func finish() { writer.stop() }

    public var stats: (key: String, value: JSONValue)? { (name, writer.json) }

    public func checkComplete() -> String? { writer.failure }
}
