public import AudioSource
public import ScreencastSupport
public import Streaming
public import VideoSource
public import Media

/// An output of the H.264 encoding and the AAC-LC encoding beside it, through libavformat (``StreamWriter``):
/// an RTMP destination (`rtmp-N`, FLV video and audio tags, reconnecting) or a fragmented MP4 recording (`mp4`,
/// a video and an audio track); or of the VP8 and Opus encodings the viewers get: a WebM recording (`webm`). Frames are queued on the encoder's thread and written
/// on the writer's own; a destination that fails or stalls never holds up the encoder, the viewers or the
/// other outputs. Takes the frames in the clear (end-to-end encryption is for WebRTC viewers).
public final class StreamOutput: CallOutput, VideoSink {
    public let name: String
    public let consumes: MediaSelection
    public let protection = FrameProtection.clear
    public let consumesAudio: MediaSelection?
    /// The writer (its state and counters).
    public let writer: StreamWriter

    /// - Parameters:
    ///   - name: `rtmp-1`, `mp4`, ….
    ///   - target: RTMP or MP4 (H.264 and AAC-LC), or WebM (the VP8 and Opus encodings' frames as they are).
    ///   - context: from ``Call/context(for:consumer:)`` with ``MediaSelection/videoH264`` (keyframes), or with
    ///     ``MediaSelection/videoVP8`` for WebM.
    ///   - targetBitsPerSecond: the encoding's target now (for `/stats`).
    ///   - encoderFramesPerSecond: the encoding's frame rate now (for `/stats` and the stats line).
    ///   - limitBitrate: where an RTMP destination's adaptive limit goes (a fraction of the configured target).
    public init(
        name: String, target: StreamWriter.Target, context: OutputContext, targetBitsPerSecond: @escaping @Sendable () -> Int,
        encoderFramesPerSecond: @escaping @Sendable () -> Double = { 0 },
        limitBitrate: @escaping @Sendable (_ fraction: Double?) -> Void = { _ in }, logger: Logger
    ) {
        self.name = name
        if case .webm = target {
            consumes = .videoVP8  // the viewers' VP8 and Opus frames as encoded
            consumesAudio = .audioOpus
        } else {
            consumes = .videoH264
            consumesAudio = .audioAAC
        }
        writer = StreamWriter(
            name: name, target: target, targetBitsPerSecond: targetBitsPerSecond, queueLimit: Self.queueLimit(target),
            encoderFramesPerSecond: encoderFramesPerSecond, limitBitrate: limitBitrate, logger: logger, requestKeyframe: context.requestKeyframe)
        audioInlet = AudioInlet(writer: writer)
    }

    /// 30 frames for a network destination (about 1 s: the seed's rule); a file waits longer before dropping.
    static func queueLimit(_ target: StreamWriter.Target) -> Int {
        if target.isFile { return 300 }
        return 30
    }

    public var inlet: OutputInlet { .video(self) }

    public let audioInlet: (any EncodedAudioSink)?

    /// The sound encoding's configuration: AAC's AudioSpecificConfig (the FLV AAC sequence header, the MP4
    /// `esds`) or Opus's `OpusHead` (the WebM track's CodecPrivate).
    public func audioEncodingReady(codec: AudioCodec, extradata: [UInt8]) {
        if codec == consumesAudio?.audioCodec { writer.setAudio(codec: codec, extradata: extradata) }
    }

    public func start() { writer.start() }

    /// An RTMP destination closes at once; an MP4 file gets what waits and its trailer.
    public func stop() { writer.stop() }

    public func consume(_ frame: EncodedFrame) { writer.consume(frame) }

    public func finish() { writer.stop() }

    public var stats: (key: String, value: JSONValue)? { (name, writer.json) }

    public func checkComplete() -> String? { writer.failure }
}

/// The sound of a ``StreamOutput``: AAC or Opus frames to its writer's queue. Its end is the writer's (the picture's).
private final class AudioInlet: EncodedAudioSink {
    let writer: StreamWriter
    init(writer: StreamWriter) { self.writer = writer }
    func consume(_ frame: EncodedAudioFrame) { writer.consumeAudio(frame) }
    func finish() {}
}
