internal import COpenSSL

extension DTLSCertificate {
    /// The certificate as PEM (RFC 7468 §5: `-----BEGIN CERTIFICATE-----`, base64 of the DER, 64-column lines),
    /// from `PEM_write_bio_X509`; e.g. for an HTTPS server that presents the same self-signed identity.
    /// - Throws: ``DTLSError/certificate(_:)`` with OpenSSL's reason.
    public func certificatePEM() throws(DTLSError) -> String {
        try Self.pem("writing the certificate as PEM") { bio in PEM_write_bio_X509(bio, certificate.pointer) }
    }

    /// The private key as unencrypted PKCS #8 PEM (RFC 7468 §10: `-----BEGIN PRIVATE KEY-----`), from
    /// `PEM_write_bio_PrivateKey`. Keep it in memory only: it is the identity.
    /// - Throws: as ``certificatePEM()``.
    public func privateKeyPEM() throws(DTLSError) -> String {
        try Self.pem("writing the private key as PEM") { bio in
            PEM_write_bio_PrivateKey(bio, privateKey.pointer, nil, nil, 0, nil, nil)
        }
    }

    /// Runs `write` on a fresh memory BIO and returns what it wrote.
    private static func pem(_ step: String, _ write: (OpaquePointer) -> Int32) throws(DTLSError) -> String {
        OpenSSLErrorQueue.clear()
        guard let bio = BIO_new(BIO_s_mem()) else { throw .certificate(OpenSSLErrorQueue.drain(context: step)) }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw .certificate(OpenSSLErrorQueue.drain(context: step)) }
        let count = Int(BIO_ctrl_pending(bio))
        var bytes = [UInt8](repeating: 0, count: count)
        guard BIO_read(bio, &bytes, Int32(count)) == count else { throw .certificate(OpenSSLErrorQueue.drain(context: step)) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
