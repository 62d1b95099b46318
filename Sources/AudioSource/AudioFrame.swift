import Glibc

/// Ten milliseconds of the call's sound: what the shared audio source hands every audio encoding (Opus for
/// WebRTC, AAC-LC for RTMP and MP4).
///
/// Shape: 48 kHz, 2 channels, signed 16-bit samples in host order, interleaved `L R L R …`:
/// ``samples`` holds ``samplesPerChannel`` × ``channelCount`` = 960 values.
public struct AudioFrame: Sendable, Equatable {
    /// Samples per second per channel: every frame of the call (48 kHz, Opus's native rate, RFC 7587 §4.1).
    public static let sampleRate = 48_000
    /// Channels, interleaved (stereo).
    public static let channelCount = 2
    /// Samples per channel in a frame: 480, 10 ms at 48 kHz.
    public static let samplesPerChannel = 480
    /// A frame's duration, µs.
    public static let durationMicros: UInt64 = 10_000

    /// Where a frame's samples come from.
    public enum Origin: String, Sendable, Equatable, CaseIterable {
        /// The agent's captured sound (system sound, microphone, or both mixed in the agent).
        case screen
        /// Generated silence: no agent sends sound.
        case silence
        /// The test tone (``AudioSourceConfiguration/Idle/tone(frequencyHz:levelDBFS:)``).
        case tone
    }

    /// The PCM, interleaved stereo, 960 values.
    public var samples: [Int16]
    /// The first sample's place on the source's sample clock: 48 kHz ticks since the source started,
    /// continuous across origins (each frame is 480 after the one before). RTP timestamps (RFC 7587 §4.1:
    /// the 48 kHz clock) and AAC presentation times come from it.
    public var sampleTime: UInt64
    /// CLOCK_MONOTONIC µs at which the first sample was played (the agent's `Sound-Timestamp`, on the same
    /// clock as a picture's capture time): what lip sync maps to NTP in RTCP sender reports.
    public var captureMicros: UInt64
    /// Where the samples come from.
    public var origin: Origin

    /// A frame as given; `samples` must hold 960 values.
    public init(samples: [Int16], sampleTime: UInt64, captureMicros: UInt64, origin: Origin) {
        precondition(samples.count == Self.samplesPerChannel * Self.channelCount, "an AudioFrame holds 960 samples")
        self.samples = samples
        self.sampleTime = sampleTime
        self.captureMicros = captureMicros
        self.origin = origin
    }

    /// The root mean square of every sample of both channels, dBFS (a full-scale sine is −3.01; silence −∞).
    public var levelDBFS: Double {
        var sum = 0.0
        for s in samples { sum += Double(s) * Double(s) }
        let rms = (sum / Double(samples.count)).squareRoot() / 32768.0
        return rms > 0 ? 20 * log10(rms) : -.infinity
    }
}

/// A consumer of the shared audio source's frames (an audio encoding: Opus, AAC-LC).
///
/// Called on the source's threads (the agent reader's, or the source's own ticker), one frame at a time and in
/// ``AudioFrame/sampleTime`` order; return quickly (encode on a thread of your own if it may block).
public protocol AudioSink: AnyObject, Sendable {
    /// The next 10 ms.
    func consume(_ frame: AudioFrame)
    /// The source stopped; no frame follows.
    func finish()
}
