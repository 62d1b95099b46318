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

    /// Reads a certificate and its private key back from PEM (``certificatePEM()`` and ``privateKeyPEM()``'s
    /// output; `PEM_read_bio_X509`, `PEM_read_bio_PrivateKey`), e.g. a `--share` call's HTTPS identity kept across
    /// restarts.
    /// - Throws: ``DTLSError/certificate(_:)`` when either does not parse, or the key is not the certificate's
    ///   (`X509_check_private_key`).
    public static func fromPEM(certificate certificateText: String, privateKey keyText: String) throws(DTLSError) -> DTLSCertificate {
        OpenSSLErrorQueue.clear()
        func read<T>(_ text: String, _ step: String, _ parse: (OpaquePointer) -> T?) throws(DTLSError) -> T {
            let bytes = Array(text.utf8)
            let parsed = bytes.withUnsafeBytes { raw -> T? in
                guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
                defer { BIO_free(bio) }
                return parse(bio)
            }
            guard let parsed else { throw .certificate(OpenSSLErrorQueue.drain(context: step)) }
            return parsed
        }
        let certificate = X509Handle(taking: try read(certificateText, "reading the certificate PEM") { PEM_read_bio_X509($0, nil, nil, nil) })
        let key = PrivateKeyHandle(taking: try read(keyText, "reading the private key PEM") {
            // No pass-phrase prompt: an encrypted key is refused at once (OpenSSL's default callback asks on the
            // terminal and would hang a start with a prompt nobody sees).
            PEM_read_bio_PrivateKey($0, nil, { _, _, _, _ in 0 }, nil)
        })
        guard X509_check_private_key(certificate.pointer, key.pointer) == 1 else {
            throw .certificate(OpenSSLErrorQueue.drain(context: "the private key is not the certificate's"))
        }
        return try DTLSCertificate(certificate: certificate, privateKey: key)
    }

    /// Seconds from now until the certificate's notAfter (negative once it has expired), from `ASN1_TIME_diff`.
    public var secondsUntilExpiry: Int {
        var days: Int32 = 0, seconds: Int32 = 0
        guard ASN1_TIME_diff(&days, &seconds, nil, X509_get0_notAfter(certificate.pointer)) == 1 else { return 0 }
        return Int(days) * 86_400 + Int(seconds)
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
