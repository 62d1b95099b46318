import Glibc

/// Sound on the agent→call wire (Protocol/frame-wire.md §2.10): a message of kind `sound` beside the
/// pictures on the same socket, its body raw PCM.
///
///     HTTP/1.1 200 OK\r\n
///     Content-Length: 1920\r\n          ; = Sound-Samples × Sound-Channels × 2
///     Message-Kind: sound\r\n
///     Sound-Format: S16LE\r\n           ; signed 16-bit little-endian, channels interleaved
///     Sound-Rate: 48000\r\n             ; samples per second per channel
///     Sound-Channels: 2\r\n             ; 1…8, interleaved L R L R … for 2
///     Sound-Samples: 480\r\n            ; samples per channel in this message (10 ms at 48 kHz)
///     Sound-Timestamp: T\r\n            ; CLOCK_MONOTONIC µs at which the first sample was played
///     [Sound-Sequence: S\r\n]           ; the sender's sound message counter
///     [Sound-Source: system\r\n]        ; what is captured, for people: system, mic, both
///     \r\n
///     <Content-Length bytes of PCM>
public struct SoundHeader: Sendable, Equatable, Hashable {
    /// `Sound-Format`: how a sample is coded (only ``SoundSampleFormat/s16le`` exists).
    public var format: SoundSampleFormat
    /// `Sound-Rate`: samples per second per channel, ``SoundHeader/rateRange``.
    public var rate: Int
    /// `Sound-Channels`: 1…``SoundHeader/maxChannels``, interleaved in the body.
    public var channels: Int
    /// `Sound-Samples`: samples per channel in the body, 1…``SoundHeader/maxSamplesPerMessage``.
    public var samples: Int
    /// `Sound-Timestamp`: CLOCK_MONOTONIC µs of the first sample, when it was played (capture time; the
    /// same clock as a picture's `Buffer-Timestamp`).
    public var timestampMicros: UInt64
    /// `Sound-Sequence`: the sender's sound message counter (nil: absent).
    public var sequence: UInt64?
    /// `Sound-Source`: what the sender captures, for people (`system`, `mic`, `both`); nil when absent.
    public var source: String?

    /// The samples a message may carry per channel: 9600, 200 ms at 48 kHz (our agent sends 480, 10 ms).
    public static let maxSamplesPerMessage = 9600
    /// The most channels a message may carry.
    public static let maxChannels = 8
    /// The sample rates a reader accepts, Hz (our agent sends 48 000).
    public static let rateRange = 8000...192_000

    /// A header with each field as given; nothing is checked here (the decoder checks what it reads).
    public init(
        format: SoundSampleFormat = .s16le, rate: Int = 48000, channels: Int = 2, samples: Int,
        timestampMicros: UInt64, sequence: UInt64? = nil, source: String? = nil
    ) {
        self.format = format
        self.rate = rate
        self.channels = channels
        self.samples = samples
        self.timestampMicros = timestampMicros
        self.sequence = sequence
        self.source = source.map { String($0.unicodeScalars.filter { $0 != "\r" && $0 != "\n" }) }
    }

    /// The body's size in bytes: `samples × channels × bytes per sample`.
    public var bodyByteCount: Int { samples * channels * format.bytesPerSample }

    /// How long the message lasts, µs (`samples / rate`).
    public var durationMicros: UInt64 { rate > 0 ? UInt64(samples) * 1_000_000 / UInt64(rate) : 0 }
}

/// `Sound-Format`: how one sample is coded.
public enum SoundSampleFormat: String, Sendable, Equatable, Hashable, CaseIterable, CustomStringConvertible {
    /// Signed 16-bit integers, little-endian, channels interleaved (PulseAudio `PA_SAMPLE_S16LE`, WAV's PCM).
    case s16le = "S16LE"

    /// Bytes one sample of one channel takes.
    public var bytesPerSample: Int { 2 }
    public var description: String { rawValue }
}

/// One complete sound message: its header and exactly ``SoundHeader/bodyByteCount`` bytes of PCM.
public struct SoundMessage: Sendable, Equatable {
    public var header: SoundHeader
    /// The PCM as received: s16le, channels interleaved.
    public var body: [UInt8]
    /// Byte offset of the message's status line in its stream.
    public var offset: Int
    /// Bytes of the header block as received.
    public var headerLength: Int

    public init(header: SoundHeader, body: [UInt8], offset: Int = 0, headerLength: Int = 0) {
        self.header = header
        self.body = body
        self.offset = offset
        self.headerLength = headerLength
    }

    /// The bytes this message occupied in the stream.
    public var messageLength: Int { headerLength + body.count }

    /// The samples as Int16, interleaved (channel 0 of sample 0, channel 1 of sample 0, …).
    public var samples: [Int16] {
        body.withUnsafeBytes { raw in
            (0..<(raw.count / 2)).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
        }
    }
}

extension FrameEncoder {
    /// The header block of a sound message whose body is `bodyLength` bytes (§2.10), in the field order above.
    public static func appendSoundHeaderBlock(for header: SoundHeader, bodyLength: Int, to out: inout [UInt8]) {
        out.append(contentsOf: "HTTP/1.1 200 OK\r\nContent-Length: ".utf8)
        out.append(contentsOf: String(bodyLength).utf8)
        out.append(contentsOf: "\r\nMessage-Kind: sound\r\nSound-Format: ".utf8)
        out.append(contentsOf: header.format.rawValue.utf8)
        out.append(contentsOf: "\r\nSound-Rate: ".utf8)
        out.append(contentsOf: String(header.rate).utf8)
        out.append(contentsOf: "\r\nSound-Channels: ".utf8)
        out.append(contentsOf: String(header.channels).utf8)
        out.append(contentsOf: "\r\nSound-Samples: ".utf8)
        out.append(contentsOf: String(header.samples).utf8)
        out.append(contentsOf: "\r\nSound-Timestamp: ".utf8)
        out.append(contentsOf: String(header.timestampMicros).utf8)
        out.append(contentsOf: "\r\n".utf8)
        if let sequence = header.sequence {
            out.append(contentsOf: "Sound-Sequence: ".utf8)
            out.append(contentsOf: String(sequence).utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        if let source = header.source {
            out.append(contentsOf: "Sound-Source: ".utf8)
            out.append(contentsOf: source.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        out.append(contentsOf: "\r\n".utf8)
    }

    /// One whole sound message: header block (Content-Length from `body.count`), then the PCM.
    public static func encodeSound(header: SoundHeader, body: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(200 + body.count)
        appendSoundHeaderBlock(for: header, bodyLength: body.count, to: &out)
        out.append(contentsOf: body)
        return out
    }

    /// One whole message for a decoded sound message.
    public static func encode(_ sound: SoundMessage) -> [UInt8] { encodeSound(header: sound.header, body: sound.body) }

    /// Little-endian bytes of interleaved Int16 samples (a sound message's body).
    public static func soundBody(_ samples: [Int16]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: samples.count * 2)
        out.withUnsafeMutableBytes { raw in
            for (index, sample) in samples.enumerated() {
                raw.storeBytes(of: sample.littleEndian, toByteOffset: index * 2, as: Int16.self)
            }
        }
        return out
    }
}

/// Running level of s16 sound: RMS and peak over every sample of every channel, in dBFS (a full-scale
/// square wave is 0 dBFS RMS, a full-scale sine −3.01 dBFS).
public struct SoundLevel: Sendable, Equatable {
    public private(set) var samples = 0
    private var sumOfSquares: Double = 0
    private var peak: Int = 0

    public init() {}

    /// Adds a message's PCM (s16le, any channel count).
    public mutating func add(_ body: [UInt8]) {
        body.withUnsafeBytes { raw in
            for index in 0..<(raw.count / 2) {
                let value = Int(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: index * 2, as: Int16.self)))
                sumOfSquares += Double(value * value)
                peak = max(peak, abs(value))
            }
            samples += raw.count / 2
        }
    }

    /// RMS level, dBFS (−∞ for silence or no samples).
    public var rmsDBFS: Double {
        guard samples > 0, sumOfSquares > 0 else { return -.infinity }
        return 20 * log10((sumOfSquares / Double(samples)).squareRoot() / 32768)
    }

    /// Peak level, dBFS.
    public var peakDBFS: Double { peak > 0 ? 20 * log10(Double(peak) / 32768) : -.infinity }
}
