internal import COpenSSL

/// Owns one `EVP_CIPHER_CTX *` keyed once for AES-GCM (`EVP_aes_128_gcm()` or `EVP_aes_256_gcm()` by the
/// key's length), freed in `deinit` (`EVP_CIPHER_CTX_free` also wipes the key schedule).
///
/// Each frame only sets a new IV on the keyed context (`EVP_CipherInit_ex` with no cipher and no key), so no
/// allocation and no key expansion happens per frame. One direction per context. Not thread-safe: one
/// owner at a time (the encryptor or decryptor that made it).
final class GCMContext {
    private let context: OpaquePointer
    let encrypting: Bool

    /// - Throws: ``FrameCryptoError/openSSL(function:detail:)``.
    init(key: FrameKey, encrypting: Bool) throws(FrameCryptoError) {
        ERR_clear_error()
        guard let context = EVP_CIPHER_CTX_new() else {
            throw .openSSL(function: "EVP_CIPHER_CTX_new", detail: OpenSSLFailure.firstEntry())
        }
        self.context = context
        self.encrypting = encrypting
        let cipher = key.rawBytes.count == 32 ? EVP_aes_256_gcm() : EVP_aes_128_gcm()
        guard EVP_CipherInit_ex(context, cipher, nil, nil, nil, encrypting ? 1 : 0) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(FrameCryptorFormat.ivLength), nil) == 1,
              key.rawBytes.withUnsafeBufferPointer({ EVP_CipherInit_ex(context, nil, nil, $0.baseAddress, nil, -1) }) == 1
        else { throw .openSSL(function: "EVP_CipherInit_ex", detail: OpenSSLFailure.firstEntry()) }
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    /// AES-GCM over `input` (plaintext when encrypting, ciphertext when decrypting) with `aad` as additional
    /// data, output of the same length at `output`. Encrypting writes the 16-byte tag at `tag`; decrypting
    /// checks the tag read from `tag`.
    /// - Returns: false when decryption fails authentication (tag mismatch); encryption always returns true.
    /// - Throws: ``FrameCryptoError/openSSL(function:detail:)`` when OpenSSL refuses a call.
    func run(
        iv: UnsafePointer<UInt8>, aad: UnsafeBufferPointer<UInt8>, input: UnsafeBufferPointer<UInt8>,
        output: UnsafeMutablePointer<UInt8>, tag: UnsafeMutablePointer<UInt8>
    ) throws(FrameCryptoError) -> Bool {
        ERR_clear_error()
        var written: Int32 = 0
        guard EVP_CipherInit_ex(context, nil, nil, nil, iv, -1) == 1 else {
            throw .openSSL(function: "EVP_CipherInit_ex(iv)", detail: OpenSSLFailure.firstEntry())
        }
        if !aad.isEmpty {
            guard EVP_CipherUpdate(context, nil, &written, aad.baseAddress, Int32(aad.count)) == 1 else {
                throw .openSSL(function: "EVP_CipherUpdate(aad)", detail: OpenSSLFailure.firstEntry())
            }
        }
        var produced = 0
        if !input.isEmpty {
            guard EVP_CipherUpdate(context, output, &written, input.baseAddress, Int32(input.count)) == 1 else {
                throw .openSSL(function: "EVP_CipherUpdate", detail: OpenSSLFailure.firstEntry())
            }
            produced = Int(written)
        }
        let tagLength = Int32(FrameCryptorFormat.tagLength)
        if encrypting {
            guard EVP_CipherFinal_ex(context, output + produced, &written) == 1,
                  EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, tagLength, tag) == 1
            else { throw .openSSL(function: "EVP_CipherFinal_ex", detail: OpenSSLFailure.firstEntry()) }
            return true
        }
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, tagLength, tag) == 1 else {
            throw .openSSL(function: "EVP_CIPHER_CTX_ctrl(SET_TAG)", detail: OpenSSLFailure.firstEntry())
        }
        // A tag mismatch is a failed EVP_CipherFinal_ex with an empty error queue: the frame's fault.
        let authentic = EVP_CipherFinal_ex(context, output + produced, &written) == 1
        ERR_clear_error()
        return authentic
    }
}
