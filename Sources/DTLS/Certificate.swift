internal import COpenSSL
public import SDP
import Synchronization

/// Our DTLS identity: an ECDSA P-256 key and a self-signed X.509 certificate for it, as WebRTC endpoints use
/// (RFC 8827 §6.5: certificates are self-signed and authenticated by the fingerprint in the SDP).
///
/// One is made per process (``shared()``) and used by every peer connection; ``fingerprint`` goes into our
/// descriptions as `a=fingerprint:sha-256 AB:CD:…`.
public final class DTLSCertificate: @unchecked Sendable {
    // Sendable: immutable after `generate`; OpenSSL only reads the X509 and EVP_PKEY (SSL_CTX_use_* takes its
    // own reference), which OpenSSL 3 allows from many threads at once.

    let certificate: X509Handle
    let privateKey: PrivateKeyHandle
    /// SHA-256 of the DER certificate, upper-case hex pairs: the value of our `a=fingerprint` (RFC 8122 §5).
    public let fingerprint: Fingerprint
    /// The certificate, DER-encoded (RFC 5280).
    public let der: [UInt8]

    init(certificate: X509Handle, privateKey: PrivateKeyHandle) throws(DTLSError) {
        guard let der = certificate.der, let digest = certificate.digest(openSSLName: "SHA256") else {
            throw .certificate(OpenSSLErrorQueue.drain(context: "encoding the certificate"))
        }
        self.certificate = certificate
        self.privateKey = privateKey
        self.der = der
        fingerprint = Fingerprint(algorithm: "sha-256", digest: digest)
    }

    /// The fingerprint with another hash function (`sha-384`, …), or nil when unsupported.
    public func fingerprint(algorithm: String) -> Fingerprint? {
        let probe = Fingerprint(algorithm: algorithm, value: "")
        guard let name = probe.openSSLDigestName, let digest = certificate.digest(openSSLName: name) else { return nil }
        return Fingerprint(algorithm: algorithm, digest: digest)
    }

    /// Makes a new key and certificate: X.509 v3, subject and issuer `CN=<commonName>`, a random positive
    /// 63-bit serial, valid from `validityDays` ago to `validityDays` ahead (clock skew between peers does
    /// not matter: the peer checks the fingerprint, not the dates), signed ECDSA with SHA-256.
    /// - Throws: ``DTLSError/certificate(_:)`` and OpenSSL's reason.
    public static func generate(commonName: String = "screencast", validityDays: Int = 30) throws(DTLSError) -> DTLSCertificate {
        OpenSSLErrorQueue.clear()
        func failure(_ step: String) -> DTLSError { .certificate(OpenSSLErrorQueue.drain(context: step)) }
        guard (1...3650).contains(validityDays) else { throw .invalidConfiguration("certificate validity must be 1–3650 days") }
        guard !commonName.isEmpty, commonName.utf8.count <= 64 else {
            throw .invalidConfiguration("certificate common name must be 1–64 bytes")
        }

        guard let key = copenssl_generate_p256_key() else { throw failure("generating the P-256 key") }
        let privateKey = PrivateKeyHandle(taking: key)
        guard let x509 = X509_new() else { throw failure("X509_new") }
        let certificate = X509Handle(taking: x509)

        var serialBytes = [UInt8](repeating: 0, count: 8)
        guard RAND_bytes(&serialBytes, 8) == 1 else { throw failure("RAND_bytes") }
        let serial = max(1, serialBytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } >> 1)
        let seconds = validityDays * 86_400
        guard X509_set_version(x509, 2) == 1,  // 2 = v3
              ASN1_INTEGER_set_uint64(X509_get_serialNumber(x509), serial) == 1,
              X509_gmtime_adj(X509_getm_notBefore(x509), -seconds) != nil,
              X509_gmtime_adj(X509_getm_notAfter(x509), seconds) != nil,
              X509_set_pubkey(x509, key) == 1,
              let name = X509_get_subject_name(x509),
              copenssl_name_add_cn(name, commonName) == 1,
              X509_set_issuer_name(x509, name) == 1
        else { throw failure("building the certificate") }
        guard X509_sign(x509, key, EVP_sha256()) > 0 else { throw failure("signing the certificate") }
        return try DTLSCertificate(certificate: certificate, privateKey: privateKey)
    }

    /// The process's certificate, made on first use (thread-safe) and kept for the life of the process.
    public static func shared() throws(DTLSError) -> DTLSCertificate {
        try sharedCertificate.withLock { (stored: inout DTLSCertificate?) throws(DTLSError) -> DTLSCertificate in
            if let stored { return stored }
            let made = try generate()
            stored = made
            return made
        }
    }

    private static let sharedCertificate = Mutex<DTLSCertificate?>(nil)
}

extension Fingerprint {
    /// OpenSSL's digest name for the RFC 8122 hash function name (the IANA "Hash Function Textual Names"),
    /// or nil for one we do not check.
    var openSSLDigestName: String? {
        switch algorithm.lowercased() {
        case "sha-1": "SHA1"
        case "sha-224": "SHA224"
        case "sha-256": "SHA256"
        case "sha-384": "SHA384"
        case "sha-512": "SHA512"
        default: nil
        }
    }
}
