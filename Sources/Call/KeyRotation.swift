import AudioSource
import Media
import Dispatch
import FrameCrypto
import ScreencastSupport
import Sharing
import Synchronization
import VideoSource

/// End-to-end encryption's keys for the whole call: it makes every ``EncryptingSink`` (one per encoding, the
/// main one first) and the sound's ``EncryptingAudioSink`` from the passphrase, and rotates them together, so
/// all reach the same next key index (the sound switches when the main video sink has).
///
/// A rotation reads the key file again (``E2EESettings/keyFile``) and derives the next key (PBKDF2: tens of
/// milliseconds); ``requestRotation()`` does that on a queue of its own, so a signal thread stays free. A
/// refused file leaves the current key: the call never falls back to clear frames.
final class KeyRotation: Sendable {
    let settings: E2EESettings
    private let logger: Logger
    private let sinks = Mutex<[EncryptingSink]>([])
    private let audioSinks = Mutex<[EncryptingAudioSink]>([])
    private let queue = DispatchQueue(label: "screencast.e2ee-rotation")

    /// - Parameter logger: the `e2ee` logger (rotations are logged under it).
    init(settings: E2EESettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
    }

    /// A sink that encrypts each frame once for `sinks`, under the current key, asking `encoder` for keyframes
    /// (on a rotation, after a dropped frame). Registered for rotation; the first one made is the main one.
    func makeSink(for sinks: [any VideoSink], encoder: any SharedEncoderControl, logger: Logger) throws(CallError) -> EncryptingSink {
        do throws(FrameCryptoError) {
            let key = try FrameKey.derive(passphrase: settings.passphrase, salt: settings.salt)
            let sink = try EncryptingSink(key: key, keyIndex: settings.keyIndex, sinks: sinks, encoder: encoder, logger: logger)
            self.sinks.withLock { $0.append(sink) }
            return sink
        } catch {
            throw .encryption(error)
        }
    }

    /// A sink that encrypts each Opus packet once for `sink` under the current key and key index, registered
    /// for rotation; it follows the main video sink's switches.
    func makeAudioSink(for sink: any EncodedAudioSink, logger: Logger) throws(CallError) -> EncryptingAudioSink {
        do throws(FrameCryptoError) {
            let key = try FrameKey.derive(passphrase: settings.passphrase, salt: settings.salt)
            let audio = try EncryptingAudioSink(
                key: key, keyIndex: settings.keyIndex, sink: sink, leaderKeyIndex: { [weak self] in self?.main?.stats.keyIndex },
                logger: logger)
            audioSinks.withLock { $0.append(audio) }
            return audio
        } catch {
            throw .encryption(error)
        }
    }

    /// The sound's sink, nil before it is made (or when the call has no sound for viewers).
    var audio: EncryptingAudioSink? { audioSinks.withLock { $0.first } }

    /// The main sink (the first made), nil before any.
    var main: EncryptingSink? { sinks.withLock { $0.first } }

    /// Reads the key file again, derives its key and schedules it under the next key index on every sink (each
    /// switches at its next keyframe). Blocks for the derivation.
    /// - Returns: the new key index.
    /// - Throws: ``CallError/keyFile(_:)``, ``CallError/encryption(_:)`` (the current key stays),
    ///   ``CallError/notEncrypting`` before any sink exists.
    @discardableResult
    func rotate() throws(CallError) -> Int {
        let all = sinks.withLock { $0 }
        guard let first = all.first else { throw .notEncrypting }
        let passphrase: String
        do { passphrase = try E2EEKeyFile(path: settings.keyFile).read() } catch { throw .keyFile(error) }
        do throws(FrameCryptoError) {
            let key = try FrameKey.derive(passphrase: passphrase, salt: settings.salt)
            let index = try first.rotate(to: key)
            // Rotated together, every sink reaches the same next index.
            for sink in all.dropFirst() { try sink.rotate(to: key) }
            for sink in audioSinks.withLock({ $0 }) { try sink.rotate(to: key, keyIndex: index) }
            return index
        } catch {
            throw .encryption(error)
        }
    }

    /// ``rotate()`` on the rotation queue, its outcome logged (SIGHUP).
    func requestRotation() {
        queue.async { [self] in
            guard main != nil else { return logger.warning("SIGHUP before encryption started: no key rotated") }
            do {
                let index = try rotate()
                logger.info("e2ee key file read again: rotating at the next keyframe", ["key.index": index])
            } catch {
                logger.error("e2ee key not rotated: the current key stays", ["error": error])
            }
        }
    }
}
