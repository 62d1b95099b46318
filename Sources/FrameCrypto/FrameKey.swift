internal import COpenSSL

/// An AES-GCM key for frames: 16 bytes (AES-128, what passphrases give) or 32 (AES-256).
///
/// Its `description` and mirror (`dump`) never show the bytes; ``rawBytes`` is for tests and for handing the
/// key to a cipher.
public struct FrameKey: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// The key bytes. Secret: never log or serve them.
    public let rawBytes: [UInt8]

    /// The ratchet salt the SDKs use when none is configured (LiveKit's `LKFrameEncryptionKey`).
    public static let defaultSalt = "LKFrameEncryptionKey"
    /// PBKDF2 iterations every SDK uses for passphrase keys.
    public static let defaultIterations = 100_000
    /// Key bytes a passphrase gives: 16 (AES-128).
    public static let derivedLength = 16

    /// A raw key.
    /// - Throws: ``FrameCryptoError/unsupportedKeyLength(_:)`` unless 16 or 32 bytes.
    public init(raw: [UInt8]) throws(FrameCryptoError) {
        guard raw.count == 16 || raw.count == 32 else { throw .unsupportedKeyLength(raw.count) }
        rawBytes = raw
    }

    /// The key of a shared passphrase, as every FrameCryptor SDK makes it: PBKDF2-HMAC-SHA256 (RFC 8018
    /// §5.2) over the passphrase's UTF-8 bytes, salt = the ratchet salt's UTF-8 bytes, 100 000 iterations,
    /// 16 bytes out (OpenSSL `PKCS5_PBKDF2_HMAC` with `EVP_sha256()`). Costs tens of milliseconds: derive
    /// once per key, off the frame path.
    /// - Throws: ``FrameCryptoError/emptyPassphrase``, ``FrameCryptoError/emptySalt``,
    ///   ``FrameCryptoError/iterationsOutOfRange(_:)``, ``FrameCryptoError/openSSL(function:detail:)``.
    public static func derive(
        passphrase: String, salt: String = defaultSalt, iterations: Int = defaultIterations
    ) throws(FrameCryptoError) -> FrameKey {
        guard !passphrase.isEmpty else { throw .emptyPassphrase }
        guard !salt.isEmpty else { throw .emptySalt }
        guard (1...10_000_000).contains(iterations) else { throw .iterationsOutOfRange(iterations) }
        let secret = Array(passphrase.utf8), saltBytes = Array(salt.utf8)
        var key = [UInt8](repeating: 0, count: derivedLength)
        ERR_clear_error()
        let status = secret.withUnsafeBufferPointer { pass in
            saltBytes.withUnsafeBufferPointer { salt in
                pass.withMemoryRebound(to: CChar.self) { pass in
                    PKCS5_PBKDF2_HMAC(
                        pass.baseAddress, Int32(pass.count), salt.baseAddress, Int32(salt.count), Int32(iterations),
                        EVP_sha256(), Int32(derivedLength), &key)
                }
            }
        }
        guard status == 1 else { throw .openSSL(function: "PKCS5_PBKDF2_HMAC", detail: OpenSSLFailure.firstEntry()) }
        return try FrameKey(raw: key)
    }

    /// AES key size in bits (128 or 256).
    public var bits: Int { rawBytes.count * 8 }

    public var description: String { "FrameKey(AES-\(bits)-GCM, bytes withheld)" }

    public var customMirror: Mirror { Mirror(self, children: ["bits": bits]) }
}

/// The first entry of OpenSSL's error queue as text (the queue is emptied).
enum OpenSSLFailure {
    static func firstEntry() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "no OpenSSL error recorded" }
        var text = [CChar](repeating: 0, count: 200)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
