internal import COpenSSL

// One owner class per OpenSSL handle: each holds its pointer from creation and frees it in `deinit`, so a
// handle is freed exactly once, whichever path (success, thrown error) lets go of it.

/// Owns an `X509 *` (a certificate).
final class X509Handle {
    let pointer: OpaquePointer

    /// Takes ownership of `pointer` (one reference).
    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { X509_free(pointer) }

    /// The digest of the DER encoding with OpenSSL's digest `name` (`SHA256`, …), or nil when unknown.
    func digest(openSSLName name: String) -> [UInt8]? { Self.digest(of: pointer, openSSLName: name) }

    /// The digest of a borrowed `X509 *`'s DER encoding with OpenSSL digest `name`, or nil.
    static func digest(of certificate: OpaquePointer, openSSLName name: String) -> [UInt8]? {
        guard let md = EVP_get_digestbyname(name) else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, md, &bytes, &length) == 1 else { return nil }
        return Array(bytes.prefix(Int(length)))
    }

    /// The DER encoding (RFC 5280), or nil when OpenSSL cannot encode it.
    var der: [UInt8]? {
        let length = i2d_X509(pointer, nil)
        guard length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509(pointer, &cursor)
        }
        return written == length ? bytes : nil
    }
}

/// Owns an `EVP_PKEY *` (our private key).
final class PrivateKeyHandle {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }
}

/// Owns an `SSL_CTX *`.
final class SSLContextHandle {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { SSL_CTX_free(pointer) }
}

/// Owns an `SSL *` (and, through `SSL_set_bio`, its BIO). Keeps alive the context it was made from and the
/// object its callbacks reach through `SSL_get_app_data`, for as long as the `SSL` lives.
final class SSLHandle {
    let pointer: OpaquePointer
    private let context: SSLContextHandle
    private let callbackTarget: AnyObject

    init(taking pointer: OpaquePointer, context: SSLContextHandle, callbackTarget: AnyObject) {
        self.pointer = pointer
        self.context = context
        self.callbackTarget = callbackTarget
        _ = copenssl_set_app_data(pointer, Unmanaged.passUnretained(callbackTarget).toOpaque())
    }

    deinit { SSL_free(pointer) }
}
