internal import COpenSSL
import SDP

/// What OpenSSL's callbacks for one connection need, reached through `SSL_get_app_data`: the fingerprints
/// the peer's certificate must match, the retransmission timer policy, and what the check found.
final class DTLSCallbackContext {
    /// The peer's fingerprints as given (for the error).
    let remoteFingerprints: [Fingerprint]
    /// Those the certificate is checked against: the strongest supported hash function's.
    let pinned: [Fingerprint]
    let initialTimerMicros: UInt32
    let maximumTimerMicros: UInt32
    /// The peer certificate's fingerprint (with the pinned hash function), once seen.
    var peerFingerprint: Fingerprint?
    /// Set when the check failed: the error the endpoint reports instead of OpenSSL's generic one.
    var failure: DTLSError?

    init(configuration: DTLSConfiguration) {
        remoteFingerprints = configuration.remoteFingerprints
        pinned = Fingerprint.strongest(of: configuration.remoteFingerprints)
        initialTimerMicros = UInt32(configuration.initialRetransmissionMicros)
        maximumTimerMicros = UInt32(clamping: configuration.maximumRetransmissionMicros)
    }

    /// Checks a peer certificate (`X509 *`, borrowed) against the pinned fingerprints (RFC 8122 §5,
    /// RFC 8827 §6.5); on a mismatch records ``DTLSError/fingerprintMismatch(expected:received:)``.
    func accepts(certificate: OpaquePointer) -> Bool {
        guard let algorithm = pinned.first?.algorithm,
              let name = pinned.first?.openSSLDigestName,
              let digest = X509Handle.digest(of: certificate, openSSLName: name)
        else {
            failure = .fingerprintMismatch(expected: remoteFingerprints, received: nil)
            return false
        }
        let seen = Fingerprint(algorithm: algorithm, digest: digest)
        peerFingerprint = seen
        guard pinned.contains(where: { $0.matches(seen) }) else {
            failure = .fingerprintMismatch(expected: remoteFingerprints, received: seen)
            return false
        }
        return true
    }

    private static func context(of ssl: OpaquePointer?) -> DTLSCallbackContext? {
        guard let ssl, let target = copenssl_get_app_data(ssl) else { return nil }
        return Unmanaged<DTLSCallbackContext>.fromOpaque(target).takeUnretainedValue()
    }

    /// `SSL_verify_cb`: the peer's certificate is self-signed, so OpenSSL's chain verdict (`preverified`) is
    /// ignored; the leaf (depth 0) must match a pinned fingerprint, else the handshake ends with a
    /// bad_certificate alert. Other certificates of a chain are not pinned and pass.
    static let verify: @convention(c) (Int32, OpaquePointer?) -> Int32 = { _, store in
        guard let store,
              let ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
              let context = context(of: OpaquePointer(ssl))
        else { return 0 }
        guard X509_STORE_CTX_get_error_depth(store) == 0 else { return 1 }
        guard let certificate = X509_STORE_CTX_get_current_cert(store), context.accepts(certificate: certificate) else {
            X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED)
            return 0
        }
        X509_STORE_CTX_set_error(store, X509_V_OK)
        return 1
    }

    /// `DTLS_timer_cb`: the next retransmission timeout in microseconds; `previous` is 0 when a new flight
    /// starts its timer. Doubles up to the maximum (RFC 6347 §4.2.4.1).
    static let timer: @convention(c) (OpaquePointer?, UInt32) -> UInt32 = { ssl, previous in
        guard let context = context(of: ssl) else { return 1_000_000 }
        if previous == 0 { return context.initialTimerMicros }
        let doubled = previous.multipliedReportingOverflow(by: 2)
        return doubled.overflow ? context.maximumTimerMicros : min(doubled.partialValue, context.maximumTimerMicros)
    }
}
