import FrameWire
import Glibc

/// The shared audio source's logic without threads or clocks: the agent's sound messages and the passing of
/// time in, 10-ms ``AudioFrame``s out, on one continuous 48 kHz sample clock.
///
/// - While the agent sends sound (a message within ``AudioSourceConfiguration/screenHoldMicros``), its samples
///   are cut into frames as they come (mono is doubled to stereo), stamped with the agent's play times.
/// - Otherwise ``tick(now:)`` fills the time with the idle content (silence or the test tone), one frame per
///   elapsed 10 ms, so every encoding keeps a continuous clock (an FLV stream stalls its players on a gap).
/// - The sample clock and the capture clock stay together: when the agent's timestamps run more than
///   ``AudioSourceConfiguration/maxSlipMicros`` from the timeline (a pause of the sound server, the idle content
///   having covered the time already, a sound card's clock drifting from CLOCK_MONOTONIC), the timeline drops
///   the overlap or fills the gap with silence; beyond ``reanchorMicros`` (a replayed dump's old timestamps, a
///   stall) it re-anchors: the capture time jumps, the sample clock goes on.
public struct AudioTimeline: Sendable {
    /// A difference between the agent's timestamps and the timeline, or between the timeline and now, beyond
    /// which the timeline re-anchors instead of filling or dropping, µs: 500 ms.
    public static let reanchorMicros: UInt64 = 500_000

    /// The idle content, hold and slip it works with.
    public let configuration: AudioSourceConfiguration
    /// What happened so far.
    public private(set) var stats = AudioSourceStats()
    /// 48 kHz ticks of the next frame's first sample.
    private var nextSampleTime: UInt64 = 0
    /// Capture time (µs) of the next frame's first sample; nil before the first frame or sound message.
    private var timelineMicros: UInt64?
    /// When the agent's sound last arrived (the caller's now, µs).
    private var lastScreenArrival: UInt64?
    /// The agent's samples not yet in a frame: interleaved stereo, fewer than a frame's after each call.
    private var pending: [Int16] = []
    /// The tone's phase, radians in [0, 2π).
    private var tonePhase = 0.0

    private static let frameValues = AudioFrame.samplesPerChannel * AudioFrame.channelCount

    /// A timeline that has produced nothing yet.
    public init(configuration: AudioSourceConfiguration) {
        self.configuration = configuration
        pending.reserveCapacity(Self.frameValues * 4)
    }

    /// True while the agent's sound drives the timeline (a message arrived within the hold time before `now`).
    public func screenIsActive(now: UInt64) -> Bool {
        guard let last = lastScreenArrival else { return false }
        return now &- last < configuration.screenHoldMicros || now < last
    }

    /// One sound message of the agent (Protocol/frame-wire.md §2.10), PCM S16LE interleaved in `body`.
    /// - Returns: the frames it completes (none, one, or a few), in order.
    /// - Throws: ``AudioSourceError/unsupportedFormat(rate:channels:)`` for a rate other than 48 kHz or more than
    ///   2 channels (counted in ``AudioSourceStats/unsupportedMessages``; nothing changes).
    public mutating func push(_ header: SoundHeader, body: UnsafeRawBufferPointer, now: UInt64) throws(AudioSourceError) -> [AudioFrame] {
        guard header.rate == AudioFrame.sampleRate, (1...2).contains(header.channels), header.format == .s16le else {
            stats.unsupportedMessages += 1
            throw .unsupportedFormat(rate: header.rate, channels: header.channels)
        }
        let count = min(header.samples, body.count / (2 * header.channels))
        stats.screenMessages += 1
        lastScreenArrival = now
        var skip = 0
        let stamp = Self.plausible(header.timestampMicros, now: now)
        if stamp != header.timestampMicros { stats.restamped += 1 }
        if timelineMicros == nil { timelineMicros = stamp }
        // Where the first new sample falls on the timeline, and how far the agent's stamp is from it.
        let expected = timelineMicros! &+ UInt64(pending.count / 2) * 1_000_000 / UInt64(AudioFrame.sampleRate)
        if stamp > expected, stamp - expected > configuration.maxSlipMicros {
            if stamp - expected > Self.reanchorMicros {
                reanchor(to: stamp)
            } else {
                let gap = Int((stamp - expected) * UInt64(AudioFrame.sampleRate) / 1_000_000)
                pending.append(contentsOf: repeatElement(0, count: gap * 2))
                stats.insertedSamples += UInt64(gap)
            }
        } else if expected > stamp, expected - stamp > configuration.maxSlipMicros {
            if expected - stamp > Self.reanchorMicros {
                reanchor(to: stamp)
            } else {
                skip = min(count, Int((expected - stamp) * UInt64(AudioFrame.sampleRate) / 1_000_000))
                stats.droppedSamples += UInt64(skip)
            }
        }
        for i in skip..<count {
            let left = Int16(littleEndian: body.loadUnaligned(fromByteOffset: i * 2 * header.channels, as: Int16.self))
            let right = header.channels == 2
                ? Int16(littleEndian: body.loadUnaligned(fromByteOffset: i * 4 + 2, as: Int16.self)) : left
            pending.append(left)
            pending.append(right)
        }
        var frames: [AudioFrame] = []
        while pending.count >= Self.frameValues {
            frames.append(makeFrame(Array(pending[0..<Self.frameValues]), origin: .screen))
            pending.removeFirst(Self.frameValues)
        }
        return frames
    }

    /// Time passed: while the agent's sound is not active, the idle content for every whole 10 ms up to `now`
    /// (a partial frame of the agent's sound left over is padded with silence and goes first).
    public mutating func tick(now: UInt64) -> [AudioFrame] {
        guard !screenIsActive(now: now) else { return [] }
        var frames: [AudioFrame] = []
        if !pending.isEmpty {
            pending.append(contentsOf: repeatElement(0, count: Self.frameValues - pending.count))
            frames.append(makeFrame(pending, origin: .screen))
            pending.removeAll(keepingCapacity: true)
        }
        guard let timeline = timelineMicros else {
            timelineMicros = now
            return frames
        }
        if timeline > now &+ Self.reanchorMicros || now > timeline &+ Self.reanchorMicros {
            reanchor(to: now)
        }
        while timelineMicros! &+ AudioFrame.durationMicros <= now {
            frames.append(makeFrame(idleSamples(), origin: configuration.idle == .silence ? .silence : .tone))
        }
        return frames
    }

    /// How far a sound message's `Sound-Timestamp` may lie from now on our clock before it is replaced by now, µs:
    /// 5 s back (a sound server's latency, a slow reader) and 1 s ahead. The agent stamps CLOCK_MONOTONIC on this
    /// machine; anything else (a replayed dump's old times, a forged u64) is not a time of this clock, and
    /// arithmetic on it must never overflow.
    public static let plausibleMicros: (past: UInt64, future: UInt64) = (5_000_000, 1_000_000)

    /// `stamp` when it is within ``plausibleMicros`` of `now`, else `now`.
    static func plausible(_ stamp: UInt64, now: UInt64) -> UInt64 {
        if stamp > now { return stamp - now <= plausibleMicros.future ? stamp : now }
        return now - stamp <= plausibleMicros.past ? stamp : now
    }

    private mutating func reanchor(to micros: UInt64) {
        timelineMicros = micros
        stats.reanchors += 1
    }

    private mutating func makeFrame(_ samples: [Int16], origin: AudioFrame.Origin) -> AudioFrame {
        let frame = AudioFrame(samples: samples, sampleTime: nextSampleTime, captureMicros: timelineMicros!, origin: origin)
        nextSampleTime += UInt64(AudioFrame.samplesPerChannel)
        timelineMicros! &+= AudioFrame.durationMicros
        stats.count(frame)
        return frame
    }

    private mutating func idleSamples() -> [Int16] {
        guard case .tone(let frequency, let level) = configuration.idle else {
            return [Int16](repeating: 0, count: Self.frameValues)
        }
        let amplitude = min(32767.0, pow(10, level / 20) * 2.0.squareRoot() * 32768.0)
        let step = 2 * Double.pi * frequency / Double(AudioFrame.sampleRate)
        var samples = [Int16](repeating: 0, count: Self.frameValues)
        for i in 0..<AudioFrame.samplesPerChannel {
            let value = Int16((amplitude * sin(tonePhase)).rounded())
            samples[2 * i] = value
            samples[2 * i + 1] = value
            tonePhase += step
            if tonePhase >= 2 * Double.pi { tonePhase -= 2 * Double.pi }
        }
        return samples
    }
}

/// The audio source's counters (in `/stats` as `audio.source`).
public struct AudioSourceStats: Sendable, Equatable {
    /// Frames made, by origin.
    public var screenFrames: UInt64 = 0
    /// Frames of generated silence (no agent sound).
    public var silenceFrames: UInt64 = 0
    /// Frames of the test tone (no agent sound).
    public var toneFrames: UInt64 = 0
    /// The agent's sound messages taken.
    public var screenMessages: UInt64 = 0
    /// Sound messages refused (a rate other than 48 kHz, more than 2 channels).
    public var unsupportedMessages: UInt64 = 0
    /// Samples per channel of silence put in a gap of the agent's sound (timeline kept with the capture clock).
    public var insertedSamples: UInt64 = 0
    /// Samples per channel of the agent's sound dropped because the timeline had covered their time already.
    public var droppedSamples: UInt64 = 0
    /// Times the timeline jumped to a new capture time (see ``AudioTimeline/reanchorMicros``).
    public var reanchors: UInt64 = 0
    /// Sound messages whose `Sound-Timestamp` was not a time of this clock, stamped with now instead
    /// (``AudioTimeline/plausibleMicros``).
    public var restamped: UInt64 = 0
    /// The last frame's RMS level, dBFS (nil before the first frame; −∞ for digital silence).
    public var lastLevelDBFS: Double?

    public init() {}

    /// Frames made in all.
    public var frames: UInt64 { screenFrames + silenceFrames + toneFrames }

    mutating func count(_ frame: AudioFrame) {
        switch frame.origin {
        case .screen: screenFrames += 1
        case .silence: silenceFrames += 1
        case .tone: toneFrames += 1
        }
        lastLevelDBFS = frame.levelDBFS
    }
}
