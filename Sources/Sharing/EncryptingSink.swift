public import FrameCrypto
public import Media
public import ScreencastSupport
import Synchronization
public import VideoSource

/// End-to-end encryption between the shared encoder and its consumers: every encoded VP8 frame is
/// encrypted once (FrameCryptor format, ``FrameCryptorFormat``) and the same ciphertext goes to every sink
/// behind it — the WHEP viewers now, an SFU leg later — so nobody between the call and a viewer with the key
/// (an SFU, a TURN relay) sees the picture.
///
/// ```
///   VideoSource ── consume(frame) ──▶ EncryptingSink ── encrypt once ──▶ ViewerHub (every peer), …
///                                       ▲ rotate(to:) (SIGHUP): next key index, switched at a keyframe
/// ```
/// The VP8 header stays clear (10 bytes on keyframes, 3 on delta frames), and `isKeyframe`, `isDroppable`
/// (a non-reference frame a slow viewer's sender may leave out), sizes and timestamps pass through
/// unchanged, so RFC 7741 packetization, the keyframe lobby, thinning and PLI handling work as before. A frame that cannot be encrypted is dropped (counted, logged), never sent in the clear.
///
/// Key rotation: ``rotate(to:)`` makes an encryptor for the next key index (after the newest one, wrapping
/// at 16) and asks the encoder for a keyframe; the first keyframe that arrives after it is the first frame
/// under the new key, so a viewer that has only the new key starts with a decodable frame.
public final class EncryptingSink: VideoSink, Sendable {
    /// The counters of `/stats` (no key material).
    public struct Stats: Sendable, Equatable {
        /// The key index frames are encrypted under now.
        public var keyIndex: Int
        /// The key index waiting for the next keyframe, if a rotation is pending.
        public var pendingKeyIndex: Int?
        /// Frames encrypted and handed on, since the start (all keys).
        public var framesEncrypted: UInt64
        /// Frames dropped because encryption failed (never sent in the clear).
        public var framesDropped: Int
        /// Rotations completed (switched at a keyframe).
        public var rotations: Int

        public init(keyIndex: Int, pendingKeyIndex: Int?, framesEncrypted: UInt64, framesDropped: Int, rotations: Int) {
            self.keyIndex = keyIndex
            self.pendingKeyIndex = pendingKeyIndex
            self.framesEncrypted = framesEncrypted
            self.framesDropped = framesDropped
            self.rotations = rotations
        }
    }

    private struct State {
        var current: FrameEncryptor
        var pending: FrameEncryptor?
        var framesEncrypted: UInt64 = 0
        var framesDropped = 0
        var rotations = 0
        /// A failure that repeats on every frame costs one warning per 5 s.
        var dropLog = LogRateLimiter()
    }

    private let state: Mutex<State>
    private let sinks: [any VideoSink]
    private let encoder: any SharedEncoderControl
    private let logger: Logger

    /// - Parameters:
    ///   - key: the AES-GCM key (from the passphrase: ``FrameKey/derive(passphrase:salt:iterations:)``).
    ///   - keyIndex: the first key index, 0…15.
    ///   - sinks: where encrypted frames go, in this order.
    ///   - encoder: asked for a keyframe on rotation and after a dropped frame.
    /// - Throws: ``FrameCryptoError/keyIndexOutOfRange(_:)``, ``FrameCryptoError/openSSL(function:detail:)``.
    public init(
        key: FrameKey, keyIndex: Int, sinks: [any VideoSink], encoder: any SharedEncoderControl, logger: Logger
    ) throws(FrameCryptoError) {
        state = Mutex(State(current: try FrameEncryptor(key: key, keyIndex: keyIndex)))
        self.sinks = sinks
        self.encoder = encoder
        self.logger = logger
    }

    /// Encrypts `frame` (switching to a pending key first when it is a keyframe) and hands the encrypted
    /// frame to every sink. Runs on the encoder thread.
    public func consume(_ frame: EncodedFrame) {
        var switched: Int?
        var logAs: (level: LogLevel, suppressed: Int) = (.warning, 0)
        let outcome = state.withLock { s -> Result<[UInt8], FrameCryptoError> in
            if frame.isKeyframe, let next = s.pending {
                s.current = next
                s.pending = nil
                s.rotations += 1
                switched = next.keyIndex
            }
            do throws(FrameCryptoError) {
                let bytes = try s.current.encrypt(frame.bytes)
                s.framesEncrypted += 1
                return .success(bytes)
            } catch {
                s.framesDropped += 1
                logAs = s.dropLog.level(.warning)
                return .failure(error)
            }
        }
        if let switched { logger.info("e2ee key rotated", ["key.index": switched]) }
        switch outcome {
        case .success(let bytes):
            var encrypted = frame
            encrypted.bytes = bytes
            for sink in sinks { sink.consume(encrypted) }
        case .failure(let error):
            // The viewers' decoders miss a reference now: start again from a keyframe.
            logger.log(logAs.level, "frame not encrypted, dropped", [
                "bytes": frame.bytes.count, "keyframe": frame.isKeyframe, "error": error, "suppressed": logAs.suppressed,
            ])
            encoder.requestKeyframe()
        }
    }

    /// The source stopped: every sink finishes.
    public func finish() {
        for sink in sinks { sink.finish() }
    }

    /// Schedules `key` under the next key index (after the newest, pending or current, wrapping at 16) and
    /// asks the encoder for a keyframe, the first frame to be encrypted with it. A rotation still pending
    /// is replaced. Derive the key beforehand, off the encoder thread (PBKDF2 takes tens of milliseconds).
    /// - Returns: the new key index.
    /// - Throws: ``FrameCryptoError/openSSL(function:detail:)`` (the current key stays).
    @discardableResult
    public func rotate(to key: FrameKey) throws(FrameCryptoError) -> Int {
        // Made under the lock (a context and 8 random bytes: microseconds), so the encryptor never leaves it.
        let index = try state.withLock { s throws(FrameCryptoError) -> Int in
            let index = ((s.pending?.keyIndex ?? s.current.keyIndex) + 1) % FrameKeyRing.size
            s.pending = try FrameEncryptor(key: key, keyIndex: index)
            return index
        }
        encoder.requestKeyframe()
        return index
    }

    public var stats: Stats {
        state.withLock { s in
            Stats(keyIndex: s.current.keyIndex, pendingKeyIndex: s.pending?.keyIndex, framesEncrypted: s.framesEncrypted,
                  framesDropped: s.framesDropped, rotations: s.rotations)
        }
    }

    /// The `e2ee` part of `/stats`: on, the key index (and a pending one), frame counters. Never the key.
    public var json: JSONValue {
        let s = stats
        return .object([
            ("enabled", .bool(true)), ("format", .string("FrameCryptor AES-GCM")), ("keyIndex", .number(s.keyIndex)),
            ("pendingKeyIndex", s.pendingKeyIndex.map { .number($0) } ?? .null),
            ("framesEncrypted", .uint(s.framesEncrypted)), ("framesDropped", .number(s.framesDropped)),
            ("rotations", .number(s.rotations)),
        ])
    }

    /// The `e2ee` part of `/stats` when the call does not encrypt.
    public static let disabledJSON: JSONValue = .object([("enabled", .bool(false))])
}
