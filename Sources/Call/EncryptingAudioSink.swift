public import AudioSource
import FrameCrypto
import ScreencastSupport
import Synchronization

/// End-to-end encryption of the call's sound, beside the pictures' ``EncryptingSink``: every Opus packet of
/// the one Opus encoding is encrypted once (FrameCryptor format, its TOC byte clear: ``FrameCryptorMedia/opus``)
/// under the same key and key index as the video, and the same ciphertext goes to every viewer.
///
/// ```
///   AudioEncoding ── consume(frame) ──▶ EncryptingAudioSink ── encrypt once ──▶ ViewerHub.sendAudio (every peer)
///                                         ▲ rotate(to:keyIndex:) with the video's (KeyRotation)
/// ```
/// Sample time, duration, capture time and `isSilence` pass through unchanged (RFC 7587 packetization and RTCP
/// are as before); each packet is 30 bytes longer. A packet that cannot be encrypted is dropped (counted,
/// logged), never sent in the clear.
///
/// Key rotation: a rotation is pending until the video's main sink has switched to its key index (at the
/// next keyframe), so both tracks change key together: ``leaderKeyIndex`` reads the video's current index.
final class EncryptingAudioSink: EncodedAudioSink {
    /// The counters of `/stats` (no key material).
    struct Stats: Sendable, Equatable {
        var keyIndex: Int
        var pendingKeyIndex: Int?
        var framesEncrypted: UInt64
        var framesDropped: Int
    }

    private struct State {
        var current: FrameEncryptor
        var pending: FrameEncryptor?
        var framesEncrypted: UInt64 = 0
        var framesDropped = 0
        /// A failure that repeats on every packet costs one warning per 5 s.
        var dropLog = LogRateLimiter()
    }

    private let state: Mutex<State>
    private let sink: any EncodedAudioSink
    private let leaderKeyIndex: @Sendable () -> Int?
    private let logger: Logger

    /// - Parameters:
    ///   - key: the AES-GCM key (the video's, ``FrameKey/derive(passphrase:salt:iterations:)``).
    ///   - keyIndex: the first key index, 0…15 (the video's).
    ///   - sink: where encrypted Opus packets go (the viewers).
    ///   - leaderKeyIndex: the video's current key index; a pending rotation switches once it matches.
    /// - Throws: ``FrameCryptoError/keyIndexOutOfRange(_:)``, ``FrameCryptoError/openSSL(function:detail:)``.
    init(
        key: FrameKey, keyIndex: Int, sink: any EncodedAudioSink, leaderKeyIndex: @escaping @Sendable () -> Int?,
        logger: Logger
    ) throws(FrameCryptoError) {
        state = Mutex(State(current: try FrameEncryptor(key: key, keyIndex: keyIndex)))
        self.sink = sink
        self.leaderKeyIndex = leaderKeyIndex
        self.logger = logger
    }

    /// Encrypts the Opus packet (switching to a pending key first when the video has) and hands it on. Runs
    /// on the audio encoding's thread.
    func consume(_ frame: EncodedAudioFrame) {
        let leader = leaderKeyIndex()
        var logAs: (level: LogLevel, suppressed: Int) = (.warning, 0)
        let outcome = state.withLock { s -> Result<[UInt8], FrameCryptoError> in
            if let next = s.pending, next.keyIndex == leader {
                s.current = next
                s.pending = nil
            }
            do throws(FrameCryptoError) {
                let bytes = try s.current.encrypt(frame.data, media: .opus)
                s.framesEncrypted += 1
                return .success(bytes)
            } catch {
                s.framesDropped += 1
                logAs = s.dropLog.level(.warning)
                return .failure(error)
            }
        }
        switch outcome {
        case .success(let bytes):
            var encrypted = frame
            encrypted.data = bytes
            sink.consume(encrypted)
        case .failure(let error):
            logger.log(logAs.level, "Opus packet not encrypted, dropped", [
                "bytes": frame.data.count, "error": error, "suppressed": logAs.suppressed,
            ])
        }
    }

    /// The encoding ended.
    func finish() { sink.finish() }

    /// Schedules `key` under `keyIndex` (the index the video's rotation chose); used from the video's next
    /// switch on. A rotation still pending is replaced.
    /// - Throws: ``FrameCryptoError/keyIndexOutOfRange(_:)``, ``FrameCryptoError/openSSL(function:detail:)``.
    func rotate(to key: FrameKey, keyIndex: Int) throws(FrameCryptoError) {
        // Made under the lock, so the encryptor never leaves it.
        try state.withLock { s throws(FrameCryptoError) in s.pending = try FrameEncryptor(key: key, keyIndex: keyIndex) }
    }

    var stats: Stats {
        state.withLock { s in
            Stats(keyIndex: s.current.keyIndex, pendingKeyIndex: s.pending?.keyIndex, framesEncrypted: s.framesEncrypted,
                  framesDropped: s.framesDropped)
        }
    }
}
