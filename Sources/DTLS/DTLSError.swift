public import SDP

/// Why a DTLS endpoint (or our certificate) failed: the one error type of the `DTLS` module.
///
/// The OpenSSL cases carry the text of OpenSSL's per-thread error queue (every `ERR_get_error` entry,
/// rendered by `ERR_error_string_n` and joined with "; "), so a log line says what OpenSSL saw.
public enum DTLSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configuration given to an endpoint or to certificate generation is invalid (what was wrong; ours).
    case invalidConfiguration(String)
    /// Generating or encoding our self-signed certificate failed (ours, not the peer's).
    case certificate(String)
    /// Creating or configuring the OpenSSL context or connection failed (ours).
    case setup(String)
    /// The handshake failed in OpenSSL: a fatal alert from the peer, a malformed flight,
    /// no common cipher suite, too many retransmissions, …
    case handshake(String)
    /// The established connection failed in OpenSSL after the handshake: an authenticated fatal alert from
    /// the peer, or OpenSSL refusing a record it authenticated. The text names the call, its return value,
    /// `SSL_get_error`'s verdict and the error queue (`SSL_read −1, SSL_ERROR_SSL: error:…`).
    case connection(String)
    /// The peer's certificate does not match any `a=fingerprint` of its description (RFC 8122 §5,
    /// RFC 8827 §6.5), or it sent none (`received` nil). The endpoint fails; the peer gets a fatal alert.
    case fingerprintMismatch(expected: [Fingerprint], received: Fingerprint?)
    /// The handshake finished without a `use_srtp` profile we offered (RFC 5764 §4.1.1).
    case noCommonSRTPProfile
    /// `SSL_export_keying_material` failed (RFC 5705).
    case keyExport(String)
    /// The handshake did not finish within the configured time (measured on the injected clock).
    case timedOut
    /// Application data was written before the handshake finished or after the end (ours).
    case notConnected

    /// True when the peer is at fault (a 4xx-like failure), false for our own.
    public var isPeerError: Bool {
        switch self {
        case .invalidConfiguration, .certificate, .setup, .keyExport, .notConnected: false
        case .handshake, .connection, .fingerprintMismatch, .noCommonSRTPProfile, .timedOut: true
        }
    }

    public var description: String {
        switch self {
        case .invalidConfiguration(let reason): "invalid DTLS configuration: \(reason)"
        case .certificate(let reason): "DTLS certificate: \(reason)"
        case .setup(let reason): "DTLS setup: \(reason)"
        case .handshake(let reason): "DTLS handshake failed: \(reason)"
        case .connection(let reason): "DTLS connection failed: \(reason)"
        case .fingerprintMismatch(let expected, let received):
            "DTLS peer certificate \(received?.sdpValue ?? "absent") matches none of "
                + expected.map(\.sdpValue).joined(separator: ", ")
        case .noCommonSRTPProfile: "DTLS handshake negotiated no SRTP protection profile"
        case .keyExport(let reason): "DTLS-SRTP key export failed: \(reason)"
        case .timedOut: "DTLS handshake timed out"
        case .notConnected: "DTLS is not connected: no application data can be written"
        }
    }
}
