public import SDP
public import SRTP

/// Which side of the DTLS handshake we are (RFC 5763 §5, RFC 8842 §5: `a=setup:active` is the client,
/// `passive` the server).
public typealias DTLSRole = NegotiatedVideo.DTLSRole

extension NegotiatedVideo.DTLSRole {
    /// The other side's role: whose write key our ``SRTPReceiver`` uses.
    public var peer: DTLSRole { self == .client ? .server : .client }
}

extension SRTPKeyingMaterial {
    /// The key that side `role` sends with: ours for an ``SRTPSender``, the peer's for an ``SRTPReceiver``.
    public func writeKey(of role: DTLSRole) -> SRTPMasterKey {
        role == .client ? clientWrite : serverWrite
    }
}

/// Everything a ``DTLSEndpoint`` needs: our role and certificate, the peer's fingerprints, and the transport
/// limits. Times are microseconds on the caller's clock (CLOCK_MONOTONIC in the call process).
public struct DTLSConfiguration: Sendable {
    public var role: DTLSRole
    public var certificate: DTLSCertificate
    /// The peer's `a=fingerprint` values; its certificate must match one of the strongest hash function
    /// among them (RFC 8122 §5).
    public var remoteFingerprints: [Fingerprint]
    /// Offered (client) or accepted (server) in `use_srtp`, most preferred first (RFC 5764 §4.1.1).
    public var srtpProfiles: [SRTPProtectionProfile]
    /// The DTLS cipher suites offered (client) or accepted (server), most preferred first: AEAD only.
    public var cipherSuites: [DTLSCipherSuite]
    /// Largest datagram we send (UDP payload bytes): handshake messages are fragmented to fit
    /// (RFC 6347 §4.1.1.1). 1200 keeps clear of IPv6's minimum MTU with TURN overhead.
    public var mtu: Int
    /// First retransmission timeout of a flight (RFC 6347 §4.2.4.1: 1 s); it doubles on every retransmission
    /// up to ``maximumRetransmissionMicros``. OpenSSL treats a remaining time under 15 ms as expired, so keep
    /// it above that.
    public var initialRetransmissionMicros: UInt64
    /// Ceiling of the doubling retransmission timeout (RFC 6347 §4.2.4.1: at least 60 s is allowed).
    public var maximumRetransmissionMicros: UInt64
    /// The handshake fails with ``DTLSError/timedOut`` when not finished this long after `start`.
    public var handshakeTimeoutMicros: UInt64

    public init(
        role: DTLSRole, certificate: DTLSCertificate, remoteFingerprints: [Fingerprint],
        srtpProfiles: [SRTPProtectionProfile] = [.aeadAES128GCM, .aes128CMHMACSHA1_80],
        cipherSuites: [DTLSCipherSuite] = DTLSCipherSuite.allCases, mtu: Int = 1200,
        initialRetransmissionMicros: UInt64 = 1_000_000, maximumRetransmissionMicros: UInt64 = 60_000_000,
        handshakeTimeoutMicros: UInt64 = 30_000_000
    ) {
        self.role = role
        self.certificate = certificate
        self.remoteFingerprints = remoteFingerprints
        self.srtpProfiles = srtpProfiles
        self.cipherSuites = cipherSuites
        self.mtu = mtu
        self.initialRetransmissionMicros = initialRetransmissionMicros
        self.maximumRetransmissionMicros = maximumRetransmissionMicros
        self.handshakeTimeoutMicros = handshakeTimeoutMicros
    }

    /// The configuration an answer settled: our role and the peer's fingerprints from ``NegotiatedVideo``.
    public init(negotiated video: NegotiatedVideo, certificate: DTLSCertificate) {
        self.init(role: video.dtlsRole, certificate: certificate, remoteFingerprints: video.remote.fingerprints)
    }

    func validate() throws(DTLSError) {
        guard !Fingerprint.strongest(of: remoteFingerprints).isEmpty else {
            throw .invalidConfiguration("no remote fingerprint with a supported hash function (sha-1 … sha-512)")
        }
        guard !srtpProfiles.isEmpty, Set(srtpProfiles).count == srtpProfiles.count else {
            throw .invalidConfiguration("SRTP profiles must be a non-empty list without repeats")
        }
        guard !cipherSuites.isEmpty, Set(cipherSuites).count == cipherSuites.count else {
            throw .invalidConfiguration("DTLS cipher suites must be a non-empty list without repeats")
        }
        guard (256...65_507).contains(mtu) else { throw .invalidConfiguration("DTLS MTU must be 256–65507 bytes") }
        guard (20_000...60_000_000).contains(initialRetransmissionMicros),
              (initialRetransmissionMicros...3_600_000_000).contains(maximumRetransmissionMicros)
        else {
            throw .invalidConfiguration("DTLS retransmission timeouts must be 20 ms–60 s, the maximum ≥ the initial and ≤ 1 h")
        }
        guard handshakeTimeoutMicros > 0 else { throw .invalidConfiguration("DTLS handshake timeout must be positive") }
    }
}

/// A DTLS 1.2 cipher suite for our ECDSA certificates (OpenSSL's names). AEAD suites only: RFC 8827 §6.5
/// requires TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 of every WebRTC endpoint, and the CBC suites cannot
/// be made safe against stray datagrams: OpenSSL negotiates encrypt-then-MAC for them (RFC 7366), and its
/// DTLS record layer treats a failed MAC there as fatal (`SSLfatal(bad_record_mac)`), so any forged record
/// of the current epoch, whatever its length, would end the connection (measured on OpenSSL 3.0.19).
public enum DTLSCipherSuite: String, Sendable, CaseIterable {
    /// TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 (RFC 5289 §3.2).
    case ecdheECDSAWithAES128GCMSHA256 = "ECDHE-ECDSA-AES128-GCM-SHA256"
    /// TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 (RFC 5289 §3.2).
    case ecdheECDSAWithAES256GCMSHA384 = "ECDHE-ECDSA-AES256-GCM-SHA384"
    /// TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 (RFC 7905 §2).
    case ecdheECDSAWithChaCha20Poly1305SHA256 = "ECDHE-ECDSA-CHACHA20-POLY1305"

    /// OpenSSL's name (`SSL_CTX_set_cipher_list`, `SSL_CIPHER_get_name`).
    public var openSSLName: String { rawValue }

    /// Bytes every protected record carries beyond its plaintext: AES-GCM an 8-byte explicit nonce and a
    /// 16-byte tag (RFC 5288 §3), ChaCha20-Poly1305 a 16-byte tag and no explicit nonce (RFC 7905 §2). No
    /// genuine protected record is shorter.
    public var recordOverhead: Int {
        switch self {
        case .ecdheECDSAWithAES128GCMSHA256, .ecdheECDSAWithAES256GCMSHA384: 8 + 16
        case .ecdheECDSAWithChaCha20Poly1305SHA256: 16
        }
    }
}

/// Where a ``DTLSEndpoint`` is.
public enum DTLSState: Sendable, Equatable {
    /// Created; `start` (or a first datagram) begins the handshake.
    case idle
    case handshaking
    /// The handshake finished, the peer's certificate matched its fingerprint, and these keys were exported
    /// (RFC 5764 §4.2).
    case connected(SRTPKeyingMaterial)
    /// A close_notify was sent (by `close`) or received (`byPeer`) (RFC 5246 §7.2.1).
    case closed(byPeer: Bool)
    /// The endpoint failed with this error (the one the failing call threw).
    case failed(DTLSError)
}
