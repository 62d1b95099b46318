/// An audio codec the call encodes its sound in.
public enum AudioCodec: String, Sendable, Hashable, CaseIterable {
    /// Opus (libopus; RFC 6716, RTP payload RFC 7587): WebRTC viewers, SFU legs, WebM recordings.
    case opus
    /// AAC-LC (FFmpeg's native encoder; ISO/IEC 14496-3): RTMP destinations (FLV) and MP4 recordings.
    case aac
}

/// One encoded audio frame (an Opus packet, an AAC access unit), as every consumer of that encoding gets it.
public struct EncodedAudioFrame: Sendable, Equatable {
    /// Its codec.
    public var codec: AudioCodec
    /// The payload as the codec made it: an Opus packet (RFC 6716 §3) or a raw AAC access unit (no ADTS header).
    public var data: [UInt8]
    /// Its first sample on the source's 48 kHz sample clock (``AudioFrame/sampleTime``): the RTP timestamp's
    /// offset (RFC 7587 §4.1) and the presentation time (÷ 48 000 s) of an FLV/MP4 audio tag.
    public var sampleTime: UInt64
    /// Samples per channel it covers (960 for 20 ms of Opus, 1024 for an AAC-LC frame).
    public var durationSamples: Int
    /// CLOCK_MONOTONIC µs at which its first sample was played (lip sync: RTCP sender reports map this to NTP).
    public var captureMicros: UInt64
    /// True when the encoder judged it silence (Opus DTX: a comfort-noise or empty frame).
    public var isSilence: Bool

    /// A frame as given (`durationSamples` per channel at 48 kHz).
    public init(codec: AudioCodec, data: [UInt8], sampleTime: UInt64, durationSamples: Int, captureMicros: UInt64, isSilence: Bool = false) {
        self.codec = codec
        self.data = data
        self.sampleTime = sampleTime
        self.durationSamples = durationSamples
        self.captureMicros = captureMicros
        self.isSilence = isSilence
    }
}

/// A consumer of one audio encoding's frames (the RTP sender of the viewers, an FLV muxer, …). Called on the
/// audio source's threads, in sample-clock order; return quickly.
public protocol EncodedAudioSink: AnyObject, Sendable {
    /// One encoded frame.
    func consume(_ frame: EncodedAudioFrame)
    /// The encoding ended; no frame follows.
    func finish()
}

/// An audio encoder the call's audio encoding drives: 10-ms ``AudioFrame``s in, whole codec frames out (an
/// encoder with a longer frame, 20 ms of Opus or 1024 samples of AAC, buffers and returns nothing some times).
/// Used from one thread at a time.
public protocol AudioEncoder: AnyObject {
    /// What it makes.
    var codec: AudioCodec { get }
    /// The codec's configuration for a container (AAC: the AudioSpecificConfig, ISO/IEC 14496-3 §1.6.2.1;
    /// Opus: the `OpusHead` of RFC 7845 §5.1); empty when the codec needs none.
    var extradata: [UInt8] { get }
    /// Encodes the next 10 ms; returns the frames completed by it, in order.
    /// - Throws: the encoder module's error (the caller counts it, logs it rate-limited and goes on).
    func encode(_ frame: AudioFrame) throws -> [EncodedAudioFrame]
}
