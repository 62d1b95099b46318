/// Why a frame could not be encrypted or decrypted, or a key could not be made. The one error type of the
/// `FrameCrypto` module (typed throws throughout; nothing here traps on bytes from the network).
///
/// Errors never carry key material or passphrases.
public enum FrameCryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    // MARK: Reading an encrypted frame (the FrameCryptor format, see ``FrameCryptorFormat``)

    /// The frame is shorter than its clear header, tag and trailer need (bytes it has, bytes needed).
    case frameTooShort(bytes: Int, needed: Int)
    /// The trailer's `ivLength` byte is not 12 (the only IV length the format's readers accept).
    case unsupportedIVLength(Int)
    /// The trailer names a key index the key ring has no key for (0…15 without a key, or 16…255).
    case unknownKeyIndex(Int)
    /// AES-GCM authentication failed: the clear header, ciphertext, tag or IV was changed, or the key is
    /// not the sender's.
    case authenticationFailed(keyIndex: Int)

    // MARK: Encrypting

    /// An empty frame (nothing to encrypt; the encoder never hands one over).
    case emptyFrame
    /// A VP8 frame shorter than the clear header its first byte announces (10 bytes for a keyframe, 3 for a
    /// delta frame; RFC 6386 §9.1): not a frame libvpx makes, and no reader could split it.
    case vp8FrameTooShort(bytes: Int, clearLength: Int)
    /// A frame beyond ``FrameCryptorFormat/maximumFrameBytes`` (OpenSSL takes `int` lengths).
    case frameTooLarge(bytes: Int, limit: Int)

    // MARK: Keys

    /// A key index outside the key ring, 0…15.
    case keyIndexOutOfRange(Int)
    /// A raw key that is neither 16 (AES-128) nor 32 (AES-256) bytes long.
    case unsupportedKeyLength(Int)
    /// An empty passphrase (PBKDF2 would turn it into a key anyone can guess).
    case emptyPassphrase
    /// An empty ratchet salt.
    case emptySalt
    /// PBKDF2 iterations outside 1…10 000 000.
    case iterationsOutOfRange(Int)

    // MARK: OpenSSL

    /// An OpenSSL call failed for a reason of its own (allocation, an unavailable cipher); `function` names
    /// the call, `detail` the first entry of OpenSSL's error queue (never key bytes).
    case openSSL(function: String, detail: String)

    public var description: String {
        switch self {
        case .frameTooShort(let bytes, let needed):
            "encrypted frame of \(bytes) bytes is too short: its clear header, tag and trailer need \(needed)"
        case .unsupportedIVLength(let length): "trailer ivLength \(length), not 12"
        case .unknownKeyIndex(let index): "no key at key index \(index)"
        case .authenticationFailed(let index): "AES-GCM authentication failed under key index \(index) (tampered frame or wrong key)"
        case .emptyFrame: "empty frame"
        case .vp8FrameTooShort(let bytes, let clear): "VP8 frame of \(bytes) bytes is shorter than its \(clear)-byte clear header"
        case .frameTooLarge(let bytes, let limit): "frame of \(bytes) bytes exceeds the \(limit)-byte limit"
        case .keyIndexOutOfRange(let index): "key index \(index) outside 0...\(FrameKeyRing.size - 1)"
        case .unsupportedKeyLength(let length): "a raw key of \(length) bytes (AES-GCM keys are 16 or 32 bytes)"
        case .emptyPassphrase: "empty passphrase"
        case .emptySalt: "empty ratchet salt"
        case .iterationsOutOfRange(let count): "PBKDF2 iterations \(count) outside 1...10000000"
        case .openSSL(let function, let detail): "\(function) failed: \(detail)"
        }
    }

    /// True for faults of the frame (or of whoever sent it), false for our own (keys, OpenSSL).
    public var isFrameFault: Bool {
        switch self {
        case .frameTooShort, .unsupportedIVLength, .unknownKeyIndex, .authenticationFailed, .emptyFrame, .vp8FrameTooShort, .frameTooLarge:
            true
        case .keyIndexOutOfRange, .unsupportedKeyLength, .emptyPassphrase, .emptySalt, .iterationsOutOfRange, .openSSL: false
        }
    }
}
