import AudioSource
import ScreencastSupport
import Synchronization

/// One encoding of the call's sound (Opus, AAC-LC), made once for every output that consumes it: the shared
/// audio source's 10-ms frames (``SharedAudioSource``, an ``AudioSink``) through one ``AudioEncoder``, fanned
/// out to every consumer's ``EncodedAudioSink``. Encodes on the source's thread (an Opus or AAC frame costs
/// well under a millisecond); a failed frame is counted and logged rate-limited, and the next goes on.
final class AudioEncoding: AudioSink, Sendable {
    let codec: AudioCodec
    private let logger: Logger
    /// The encoder, used on the source's delivery (serialized by the source); boxed for Sendable.
    private let encoder: Mutex<EncoderBox>
    private let sinks = Mutex<(next: Int, list: [(id: Int, sink: any EncodedAudioSink)])>((0, []))
    private let failureLog = Mutex(LogRateLimiter())

    /// Counters, in `/stats` under `audio.encodings`.
    struct Stats: Sendable {
        var framesIn: UInt64 = 0
        var framesOut: UInt64 = 0
        var bytesOut: UInt64 = 0
        var silentFramesOut: UInt64 = 0
        var failures: UInt64 = 0
    }
    private let counters = Mutex(Stats())

    /// `encoder` is used from the source's delivery thread only from now on.
    init(encoder: any AudioEncoder, logger: Logger) {
        codec = encoder.codec
        self.encoder = Mutex(EncoderBox(encoder: encoder))
        self.logger = logger
    }

    /// The codec's configuration for containers (``AudioEncoder/extradata``).
    var extradata: [UInt8] { encoder.withLock { $0.encoder.extradata } }

    /// Adds a consumer; returns its id for ``remove(_:)``.
    func add(_ sink: any EncodedAudioSink) -> Int {
        sinks.withLock { s in
            s.next += 1
            s.list.append((s.next, sink))
            return s.next
        }
    }

    /// Takes a consumer out (no `finish()`).
    func remove(_ id: Int) {
        sinks.withLock { $0.list.removeAll { $0.id == id } }
    }

    /// How many consumers it has.
    var consumerCount: Int { sinks.withLock { $0.list.count } }

    func consume(_ frame: AudioFrame) {
        let result = encoder.withLock { box in Result { try box.encoder.encode(frame) } }
        switch result {
        case .success(let encoded):
            counters.withLock { c in
                c.framesIn += 1
                for e in encoded {
                    c.framesOut += 1
                    c.bytesOut += UInt64(e.data.count)
                    if e.isSilence { c.silentFramesOut += 1 }
                }
            }
            guard !encoded.isEmpty else { return }
            let list = sinks.withLock { $0.list }
            for e in encoded { for entry in list { entry.sink.consume(e) } }
        case .failure(let error):
            let failures = counters.withLock { c in c.framesIn += 1; c.failures += 1; return c.failures }
            if let suppressed = failureLog.withLock({ $0.admit() }) {
                logger.warning("audio frame not encoded", ["codec": codec.rawValue, "reason": error, "failures": failures, "suppressed": suppressed])
            }
        }
    }

    /// The source stopped: every consumer finishes and is let go.
    func finish() {
        let list = sinks.withLock { s in defer { s.list = [] }; return s.list }
        for entry in list { entry.sink.finish() }
    }

    /// Its `/stats` entry.
    var json: JSONValue {
        let c = counters.withLock { $0 }
        return .object([
            ("codec", .string(codec.rawValue)), ("consumers", .int(Int64(consumerCount))), ("framesIn", .int(Int64(c.framesIn))),
            ("framesOut", .int(Int64(c.framesOut))), ("bytesOut", .int(Int64(c.bytesOut))),
            ("silentFramesOut", .int(Int64(c.silentFramesOut))), ("failures", .int(Int64(c.failures))),
        ])
    }
}

/// The call's audio encodings, by codec: each made once, on the shared audio source, when the first output
/// consuming it is attached.
final class AudioEncodings: Sendable {
    private let source: SharedAudioSource
    private let logger: Logger
    private let map = Mutex<[AudioCodec: AudioEncoding]>([:])

    init(source: SharedAudioSource, logger: Logger) {
        self.source = source
        self.logger = logger
    }

    /// Attaches an output's audio inlet to the encoding it consumes (made now if it is the first). Nil for an
    /// output of pictures only.
    /// - Throws: ``CallError/unsupportedSelection(output:selection:)`` (a video selection, or no inlet),
    ///   ``CallError/audio(_:)`` (the codec's encoder could not be made).
    func attach(_ output: any CallOutput) throws(CallError) -> (codec: AudioCodec, id: Int)? {
        guard let selection = output.consumesAudio else { return nil }
        guard let codec = selection.audioCodec, let inlet = output.audioInlet else {
            throw .unsupportedSelection(output: output.name, selection: selection.description)
        }
        let (encoding, made) = try map.withLock { m throws(CallError) -> (AudioEncoding, Bool) in
            if let existing = m[codec] { return (existing, false) }
            let encoding = AudioEncoding(encoder: try Call.makeAudioEncoder(codec), logger: logger.named(codec.rawValue))
            m[codec] = encoding
            return (encoding, true)
        }
        let id = encoding.add(inlet)
        if made { _ = source.add(encoding) }
        return (codec, id)
    }

    /// Takes an attached inlet off its encoding (no `finish()`).
    func detach(_ attachment: (codec: AudioCodec, id: Int)) {
        map.withLock { $0[attachment.codec] }?.remove(attachment.id)
    }

    /// Every encoding made, by codec name.
    var all: [AudioEncoding] { map.withLock { Array($0.values) }.sorted { $0.codec.rawValue < $1.codec.rawValue } }
}

/// An encoder in a Mutex. `@unchecked Sendable`: the encoder is a C handle's owner that is not Sendable, and
/// is only ever touched inside the Mutex that holds this box.
struct EncoderBox: @unchecked Sendable {
    let encoder: any AudioEncoder
}
