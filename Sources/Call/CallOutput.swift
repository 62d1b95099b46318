public import Media
public import AudioSource
public import ScreencastSupport
public import Sharing
public import VideoSource

/// A kind of media a call carries.
public enum TrackKind: String, Sendable, Hashable {
    /// The shared video source: the screen, the test pattern or a dump file.
    case video
    /// The shared audio source (``SharedAudioSource``): the agent's sound, else silence or a test tone.
    case audio
}

/// A codec an encoding of a track produces.
public enum Codec: String, Sendable, Hashable {
    /// VP8 (libvpx, real time; RFC 7741 on the wire).
    case vp8
    /// H.264 (libx264, zero latency, CBR, Annex B with SPS/PPS before each keyframe): RTMP and MP4.
    case h264
    /// Opus (libopus, RFC 6716; RTP payload RFC 7587): WebRTC viewers, SFU legs, WebM.
    case opus
    /// AAC-LC (ISO/IEC 14496-3): RTMP and MP4.
    case aac
}

/// What an output consumes: one track in one codec. The call makes the encoding of each selection once,
/// for every output that consumes it.
public struct MediaSelection: Sendable, Hashable, CustomStringConvertible {
    /// The track (video today; audio next, issue 28).
    public var track: TrackKind
    /// The codec of that track's encoding (VP8 for WebRTC and IVF, H.264 for RTMP and MP4).
    public var codec: Codec

    /// `track` in `codec`.
    public init(track: TrackKind, codec: Codec) {
        self.track = track
        self.codec = codec
    }

    /// The screen in VP8: what viewers, the SFU leg and the IVF recorder consume today.
    public static let videoVP8 = MediaSelection(track: .video, codec: .vp8)
    /// The screen in H.264: what RTMP destinations and MP4 recordings consume (``H264Encoding``).
    public static let videoH264 = MediaSelection(track: .video, codec: .h264)

    /// The sound in Opus: what WebRTC viewers and SFU legs consume beside the picture.
    public static let audioOpus = MediaSelection(track: .audio, codec: .opus)
    /// The sound in AAC-LC: what RTMP destinations and MP4 recordings consume beside the picture.
    public static let audioAAC = MediaSelection(track: .audio, codec: .aac)

    /// The audio codec of an audio selection (nil for video).
    public var audioCodec: AudioCodec? {
        switch codec {
        case .opus: .opus
        case .aac: .aac
        case .vp8, .h264: nil
        }
    }

    /// `video/vp8`.
    public var description: String { "\(track.rawValue)/\(codec.rawValue)" }
}

/// Whether an output gets an encoding's frames end-to-end encrypted (when the call encrypts) or as encoded.
public enum FrameProtection: Sendable, Equatable {
    /// The encoded frames as they are, also when the call encrypts (a local recording).
    case clear
    /// Encrypted once for every such output when the call encrypts (``CallConfiguration/e2ee``; viewers, the
    /// SFU leg: nobody between the call and a viewer with the key sees the picture); as encoded otherwise.
    case endToEnd
}

/// Where an output takes its frames, by track.
public enum OutputInlet: Sendable {
    /// Encoded video frames, on the encoder's thread, in encode order (return quickly).
    case video(any VideoSink)

    /// The track this inlet carries.
    public var track: TrackKind {
        switch self {
        case .video: .video
        }
    }
}

/// What an output may ask of the encoding it consumes. Made by ``Call/context(for:consumer:)`` before the
/// output, so an output is built complete (no late wiring).
public struct OutputContext: Sendable {
    /// The consumer's name in the rate policy and in logs (`sfu`, `rtmp-1`, …).
    public let consumer: String
    /// What it consumes.
    public let selection: MediaSelection
    /// Asks the encoding for a keyframe (coalesced and spaced by the encoder).
    public let requestKeyframe: @Sendable () -> Void
    /// The most this output carries, bits per second (a receiver's REMB, a congestion target; nil: no
    /// figure any more): the shared encoder follows the lowest of its consumers, viewers and outputs alike.
    public let reportBitrate: @Sendable (_ bitsPerSecond: UInt64?, _ source: BitrateFollower.Source) -> Void
    /// The output heard from its receiver (feedback): its estimate keeps counting.
    public let reportHeard: @Sendable () -> Void
}

/// One consumer of one encoding: WHEP viewers, an SFU leg, a recorder, an RTMP destination, an MP4 recording.
///
/// The call delivers the encoding of ``consumes`` to ``inlet`` (encrypted when ``protection`` asks and the call
/// encrypts), calls ``start()`` once it runs, and ``stop()`` when the call stops or the output is removed; the
/// inlet's `finish()` follows the last frame. An output never stops the others: its failures stay its own
/// (logged, and reported by ``checkComplete()`` at the end).
public protocol CallOutput: AnyObject, Sendable {
    /// A short name for logs and `/stats` (`viewers`, `sfu`, `ivf`).
    var name: String { get }
    /// The track and codec it consumes.
    var consumes: MediaSelection { get }
    /// Whether it takes end-to-end-encrypted frames.
    var protection: FrameProtection { get }
    /// Where its frames go; its track must be ``consumes``'s.
    var inlet: OutputInlet { get }
    /// The sound it takes beside its picture (``MediaSelection/audioOpus``, ``MediaSelection/audioAAC``), nil for
    /// pictures only (the default). The call makes that audio encoding once for every output that consumes it.
    var consumesAudio: MediaSelection? { get }
    /// Where its encoded sound goes when ``consumesAudio`` is set (nil otherwise, the default); `finish()`
    /// follows the last frame, as for ``inlet``.
    var audioInlet: (any EncodedAudioSink)? { get }
    /// Starts its own work (threads, connections); returns at once. Called once.
    func start()
    /// Ends its own work (closes connections, waits for its threads). Idempotent; also before ``start()``.
    func stop()
    /// Its entry in `/stats` (name and value), nil for none.
    var stats: (key: String, value: JSONValue)? { get }
    /// Called once after the call has stopped and the last frame reached the inlet: nil when the output's work
    /// is whole, else why not (which it logs here).
    func checkComplete() -> String?
}

extension CallOutput {
    public var consumesAudio: MediaSelection? { nil }
    public var audioInlet: (any EncodedAudioSink)? { nil }
    public var stats: (key: String, value: JSONValue)? { nil }
    public func checkComplete() -> String? { nil }
}
