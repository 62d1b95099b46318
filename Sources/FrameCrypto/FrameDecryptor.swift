/// The key ring of the format: 16 indices (0…15), what the webrtc-sdk's key providers hold by default.
public enum FrameKeyRing {
    /// Indices in the ring.
    public static let size = 16
    /// The valid key indices.
    public static let indices = 0..<size
}

/// Decrypts frames of the FrameCryptor format (``FrameCryptorFormat``) with the keys of a 16-index key ring:
/// what a receiver does, here for tests and for checking our own output.
///
/// Not thread-safe: one caller at a time.
public final class FrameDecryptor {
    private var ring: [GCMContext?] = Array(repeating: nil, count: FrameKeyRing.size)

    public init() {}

    /// Puts `key` at `index` (replacing any key there).
    /// - Throws: ``FrameCryptoError/keyIndexOutOfRange(_:)``, ``FrameCryptoError/openSSL(function:detail:)``.
    public func setKey(_ key: FrameKey, at index: Int) throws(FrameCryptoError) {
        guard FrameKeyRing.indices.contains(index) else { throw .keyIndexOutOfRange(index) }
        ring[index] = try GCMContext(key: key, encrypting: false)
    }

    /// Forgets the key at `index` (no effect when none is there or the index is outside the ring).
    public func removeKey(at index: Int) {
        guard FrameKeyRing.indices.contains(index) else { return }
        ring[index] = nil
    }

    /// True when the ring holds a key at `index`.
    public func hasKey(at index: Int) -> Bool { FrameKeyRing.indices.contains(index) && ring[index] != nil }

    /// The VP8 frame (or, with `media` `.opus`, the Opus packet) inside an encrypted frame: the clear prefix
    /// followed by the decrypted rest.
    /// - Throws: ``FrameCryptoError/frameTooShort(bytes:needed:)``, ``FrameCryptoError/unsupportedIVLength(_:)``,
    ///   ``FrameCryptoError/unknownKeyIndex(_:)``, ``FrameCryptoError/authenticationFailed(keyIndex:)`` (a
    ///   changed clear header, ciphertext, tag or IV, or a key that is not the sender's),
    ///   ``FrameCryptoError/openSSL(function:detail:)``.
    public func decrypt(_ frame: [UInt8], media: FrameCryptorMedia = .vp8) throws(FrameCryptoError) -> [UInt8] {
        let layout = try EncryptedFrameLayout(parsing: frame, media: media)
        guard FrameKeyRing.indices.contains(layout.keyIndex), let context = ring[layout.keyIndex] else {
            throw .unknownKeyIndex(layout.keyIndex)
        }
        var failure: FrameCryptoError?
        let plain = frame.withUnsafeBufferPointer { input in
            [UInt8](unsafeUninitializedCapacity: layout.plainLength) { buffer, count in
                let out = buffer.baseAddress!, base = input.baseAddress!
                out.initialize(from: base, count: layout.clearLength)
                do throws(FrameCryptoError) {
                    let authentic = try context.run(
                        iv: base + layout.ivOffset, aad: UnsafeBufferPointer(rebasing: input[0..<layout.clearLength]),
                        input: UnsafeBufferPointer(rebasing: input[layout.clearLength..<layout.tagOffset]),
                        output: out + layout.clearLength, tag: UnsafeMutablePointer(mutating: base + layout.tagOffset))
                    if authentic {
                        count = layout.plainLength
                    } else {
                        failure = .authenticationFailed(keyIndex: layout.keyIndex)
                        count = 0
                    }
                } catch {
                    failure = error
                    count = 0
                }
            }
        }
        if let failure { throw failure }
        return plain
    }
}
