internal import COpenSSL
public import SDP
public import SRTP

/// One DTLS 1.2 endpoint for DTLS-SRTP (RFC 6347, RFC 5764), sans-I/O: OpenSSL runs over an in-memory
/// datagram BIO, and the owner moves the bytes and the time.
///
/// ```
///   owner (socket, ICE)                         DTLSEndpoint                         OpenSSL
///   start(now) ───────────────────────────────▶ SSL_do_handshake ──────────────────▶ ClientHello ─┐
///   receive(datagram, now) ───────────────────▶ BIO "incoming" ───▶ SSL_do_handshake/SSL_read      │
///   handleTimeout(now) when now ≥ nextTimeout ▶ DTLSv1_handle_timeout (retransmit a flight)        │
///   takeDatagrams() ◀── records packed into datagrams ≤ MTU ◀──────────────────────────────────────┘
///   state: idle → handshaking → connected(keys) → closed, or failed(error)
/// ```
///
/// - The client (`a=setup:active`) sends the ClientHello on `start`; the server (`passive`) waits for it.
/// - `use_srtp` offers ``DTLSConfiguration/srtpProfiles`` (AES-GCM first); the server picks by its own
///   preference. Once connected, ``keyingMaterial`` holds the keys exported with the label
///   `EXTRACTOR-dtls_srtp`, split per RFC 5764 §4.2.
/// - The peer's certificate is self-signed; it is accepted only when it matches a fingerprint from the
///   peer's SDP (RFC 8122 §5, RFC 8827 §6.5). A mismatch ends the handshake with a bad_certificate alert and
///   ``DTLSError/fingerprintMismatch(expected:received:)``.
/// - Retransmission (RFC 6347 §4.2.4): OpenSSL keeps the timer and decides, on its own wall clock, whether it
///   has expired; ``nextTimeout`` maps what `DTLSv1_get_timeout` has left onto the caller's clock. The
///   overall handshake limit runs on the caller's clock alone.
/// - Application data (RFC 8261: SCTP packets, one per record) is kept when the owner sets
///   ``keepsApplicationData`` and read with ``takeApplicationData(_:)``; otherwise it is read and dropped. ``write(_:)`` sends one record. A
///   close_notify moves to ``DTLSState/closed(byPeer:)`` and is answered with ours.
/// - No stray datagram ends a connection (RFC 6347 §4.1.2.7): each record's header is checked first
///   (``DTLSRecordScanner``: framing, type, version, epoch, a length no genuine record of the cipher suite
///   is shorter than); only the records that pass reach OpenSSL, which judges their authenticity and
///   discards forgeries silently. Only AEAD suites are offered (``DTLSCipherSuite``). After the handshake
///   only an authenticated record (a close_notify or fatal alert from the peer) can end the connection.
///   ``statistics`` counts what was dropped, by reason.
///
/// Every method runs OpenSSL on the calling thread; one owner (one thread at a time) drives an endpoint.
/// After a method throws, call ``takeDatagrams()`` too: it may hold the alert that tells the peer.
public final class DTLSEndpoint {
    public let role: DTLSRole
    public private(set) var state: DTLSState = .idle

    private let configuration: DTLSConfiguration
    private let ssl: SSLHandle
    private let pipe = DatagramPipe()
    private let callbacks: DTLSCallbackContext
    private var retransmitDeadline: UInt64?
    private var handshakeDeadline: UInt64?
    /// The datagram's records that passed ``DTLSRecordScanner``, when some did not (reused).
    private var keptRecords: [UInt8] = []
    /// Keep the application data that arrives (for ``takeApplicationData(_:)``) instead of dropping it.
    public var keepsApplicationData = false
    /// Application data read since the last ``takeApplicationData(_:)``: the records' plaintexts back to
    /// back (reused, so a packet costs no allocation), and where each ends.
    private var applicationData: [UInt8] = []
    private var applicationDataEnds: [Int] = []

    /// The most application data kept between two ``takeApplicationData(_:)`` calls (bytes); more is dropped
    /// and counted in ``Statistics/applicationDataDropped``. 64 records of 16 KiB, the most one datagram
    /// could carry.
    public static let maxKeptApplicationData = 1 << 20

    /// What ``receive(_:nowMicros:)`` took and dropped.
    public struct Statistics: Sendable, Equatable {
        /// Datagrams given to ``receive(_:nowMicros:)``.
        public var datagramsReceived = 0
        /// Datagrams dropped whole without a look inside: not DTLS by their first byte (RFC 7983 §7), or
        /// arriving after `closed` or `failed`.
        public var datagramsIgnored = 0
        /// Records handed to OpenSSL (which still discards, silently, those that fail authentication or
        /// replay checks).
        public var recordsPassed = 0
        /// Records dropped before OpenSSL saw them, by reason.
        public var recordsDropped: [DTLSRecordDrop: Int] = [:]

        /// Application data records read (plaintexts of authenticated records).
        public var applicationRecords = 0
        /// Application data records dropped: not kept (``keepsApplicationData`` false), or beyond
        /// ``maxKeptApplicationData``.
        public var applicationDataDropped = 0

        /// All records dropped before OpenSSL.
        public var totalRecordsDropped: Int { recordsDropped.values.reduce(0, +) }
    }

    /// What ``receive(_:nowMicros:)`` took and dropped so far.
    public private(set) var statistics = Statistics()

    /// Sets up OpenSSL for one connection; nothing is sent before ``start(nowMicros:)``.
    /// - Throws: ``DTLSError/invalidConfiguration(_:)``, or ``DTLSError/setup(_:)`` with OpenSSL's reason.
    public init(configuration: DTLSConfiguration) throws(DTLSError) {
        try configuration.validate()
        self.configuration = configuration
        role = configuration.role
        callbacks = DTLSCallbackContext(configuration: configuration)

        OpenSSLErrorQueue.clear()
        func failure(_ step: String) -> DTLSError { .setup(OpenSSLErrorQueue.drain(context: step)) }
        guard let method = DTLS_method(), let rawContext = SSL_CTX_new(method) else { throw failure("SSL_CTX_new") }
        let context = SSLContextHandle(taking: rawContext)
        let certificate = configuration.certificate
        guard copenssl_ctx_set_dtls12_only(rawContext) == 1 else { throw failure("DTLS 1.2 only") }
        copenssl_ctx_set_webrtc_options(rawContext)
        guard SSL_CTX_use_certificate(rawContext, certificate.certificate.pointer) == 1,
              SSL_CTX_use_PrivateKey(rawContext, certificate.privateKey.pointer) == 1,
              SSL_CTX_check_private_key(rawContext) == 1
        else { throw failure("loading our certificate") }
        let cipherList = configuration.cipherSuites.map(\.openSSLName).joined(separator: ":")
        guard SSL_CTX_set_cipher_list(rawContext, cipherList) == 1 else { throw failure("SSL_CTX_set_cipher_list") }
        // Returns 0 on success (unlike most of OpenSSL).
        let profiles = configuration.srtpProfiles.map(\.openSSLName).joined(separator: ":")
        guard SSL_CTX_set_tlsext_use_srtp(rawContext, profiles) == 0 else { throw failure("SSL_CTX_set_tlsext_use_srtp") }
        SSL_CTX_set_verify(rawContext, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, DTLSCallbackContext.verify)

        guard let rawSSL = SSL_new(rawContext) else { throw failure("SSL_new") }
        ssl = SSLHandle(taking: rawSSL, context: context, callbackTarget: callbacks)
        let bio = try DatagramBIO.make(pipe)
        SSL_set_bio(rawSSL, bio, bio)  // one BIO both ways: SSL_free frees it once
        guard copenssl_set_mtu(rawSSL, configuration.mtu) > 0 else { throw failure("SSL_set_mtu") }  // returns the MTU set
        DTLS_set_timer_cb(rawSSL, DTLSCallbackContext.timer)
        if role == .client { SSL_set_connect_state(rawSSL) } else { SSL_set_accept_state(rawSSL) }
    }

    // MARK: Driving

    /// Begins the handshake: the client queues its ClientHello; the server starts waiting. The handshake
    /// must finish by `nowMicros + handshakeTimeoutMicros`. Does nothing unless ``state`` is `idle`.
    public func start(nowMicros now: UInt64) throws(DTLSError) {
        guard case .idle = state else { return }
        state = .handshaking
        handshakeDeadline = now &+ configuration.handshakeTimeoutMicros
        try advanceHandshake(now)
    }

    /// Processes one datagram from the peer. Datagrams whose first byte is not DTLS's (20…63, RFC 7983 §7)
    /// are ignored, as is everything after `closed` or `failed`. Records that cannot be genuine are dropped
    /// before OpenSSL sees them (``DTLSRecordDrop``), the rest go to OpenSSL, which discards forgeries and
    /// replays silently (RFC 6347 §4.1.2.7); an `idle` endpoint starts when a record passes.
    /// - Throws: the failure that ended the endpoint (``state`` is then `failed` with it):
    ///   ``DTLSError/fingerprintMismatch(expected:received:)``, ``DTLSError/handshake(_:)`` (a fatal alert
    ///   from the peer, a malformed flight), ``DTLSError/noCommonSRTPProfile``, ``DTLSError/keyExport(_:)``,
    ///   ``DTLSError/connection(_:)`` (after the handshake: an authenticated fatal alert).
    public func receive(_ datagram: UnsafeRawBufferPointer, nowMicros now: UInt64) throws(DTLSError) {
        statistics.datagramsReceived += 1
        guard let first = datagram.first, (20...63).contains(first) else {
            statistics.datagramsIgnored += 1
            return
        }
        let connected: Bool
        switch state {
        case .idle, .handshaking: connected = false
        case .connected: connected = true
        case .closed, .failed:
            statistics.datagramsIgnored += 1
            return
        }
        // Judge each record's header before OpenSSL reads it: OpenSSL 3.0 ends an established connection on
        // a protected record shorter than the AEAD overhead (SSLfatal in tls1_enc, see DTLSRecordScanner).
        let rules = DTLSRecordScanner.Rules(connected: connected, protectedOverhead: cipherSuiteInUse?.recordOverhead)
        let (kept, dropped) = DTLSRecordScanner.scan(datagram, rules: rules)
        for reason in dropped { statistics.recordsDropped[reason, default: 0] += 1 }
        statistics.recordsPassed += kept.count
        guard !kept.isEmpty else { return }
        if case .idle = state { try start(nowMicros: now) }
        guard !dropped.isEmpty else { return try process(datagram, now) }
        keptRecords.removeAll(keepingCapacity: true)
        for range in kept { keptRecords.append(contentsOf: datagram[range]) }
        let result = keptRecords.withUnsafeBytes { records in
            Result { () throws(DTLSError) in try process(records, now) }
        }
        try result.get()
    }

    /// ``receive(_:nowMicros:)`` for an array.
    public func receive(_ datagram: [UInt8], nowMicros now: UInt64) throws(DTLSError) {
        let result = datagram.withUnsafeBytes { bytes in
            Result { () throws(DTLSError) in try receive(bytes, nowMicros: now) }
        }
        try result.get()
    }

    /// Runs due timers: fails the handshake after its time limit, and lets OpenSSL retransmit its last flight
    /// when the retransmission timer has expired. Call it when `nowMicros ≥ nextTimeout` (earlier is harmless).
    /// - Throws: ``DTLSError/timedOut``, or ``DTLSError/handshake(_:)`` when OpenSSL gives up.
    public func handleTimeout(nowMicros now: UInt64) throws(DTLSError) {
        switch state {
        case .handshaking:
            if let deadline = handshakeDeadline, now >= deadline { throw fail(.timedOut) }
        case .connected: break
        case .idle, .closed, .failed: return
        }
        guard let deadline = retransmitDeadline, now >= deadline else { return }
        OpenSSLErrorQueue.clear()
        if copenssl_dtls_handle_timeout(ssl.pointer) < 0 {
            throw fail(callbacks.failure ?? .handshake(OpenSSLErrorQueue.drain(context: "retransmission")))
        }
        refreshTimer(now)
    }

    /// Sends close_notify when connected (RFC 5246 §7.2.1) and moves to `closed`; an unfinished handshake is
    /// simply abandoned. Idempotent.
    public func close() {
        switch state {
        case .connected:
            OpenSSLErrorQueue.clear()
            _ = SSL_shutdown(ssl.pointer)
            OpenSSLErrorQueue.clear()
        case .idle, .handshaking: break
        case .closed, .failed: return
        }
        state = .closed(byPeer: false)
        retransmitDeadline = nil
        handshakeDeadline = nil
    }

    // MARK: Reading results

    /// When ``handleTimeout(nowMicros:)`` is next due, on the caller's clock; nil when nothing is pending.
    public var nextTimeout: UInt64? {
        switch state {
        case .handshaking: [retransmitDeadline, handshakeDeadline].compactMap { $0 }.min()
        case .connected: retransmitDeadline
        case .idle, .closed, .failed: nil
        }
    }

    /// The datagrams to send to the peer, in order, and forgets them: OpenSSL's records packed into
    /// datagrams of at most ``DTLSConfiguration/mtu`` bytes.
    public func takeDatagrams() -> [[UInt8]] {
        guard !pipe.records.isEmpty else { return [] }
        var datagrams: [[UInt8]] = []
        for record in pipe.records {
            if let last = datagrams.last, last.count + record.count <= configuration.mtu {
                datagrams[datagrams.count - 1].append(contentsOf: record)
            } else {
                datagrams.append(record)
            }
        }
        pipe.records.removeAll(keepingCapacity: true)
        return datagrams
    }

    /// Hands each application data record read since the last call to `body`, oldest first, and forgets
    /// them. The memory is valid only during `body`.
    public func takeApplicationData(_ body: (UnsafeRawBufferPointer) -> Void) {
        guard !applicationDataEnds.isEmpty else { return }
        applicationData.withUnsafeBytes { all in
            var start = 0
            for end in applicationDataEnds {
                body(UnsafeRawBufferPointer(rebasing: all[start..<end]))
                start = end
            }
        }
        applicationData.removeAll(keepingCapacity: true)
        applicationDataEnds.removeAll(keepingCapacity: true)
    }

    /// Sends `bytes` as one application data record (`SSL_write`); ``takeDatagrams()`` then holds it.
    /// - Throws: ``DTLSError/notConnected`` before the handshake finished or after the end,
    ///   ``DTLSError/invalidConfiguration(_:)`` for an empty or oversized record (more than 16384 bytes,
    ///   RFC 6347 §4.1 / RFC 5246 §6.2.1), ``DTLSError/connection(_:)`` when OpenSSL refuses.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(DTLSError) {
        guard case .connected = state else { throw .notConnected }
        guard !bytes.isEmpty, bytes.count <= 16_384 else {
            throw .invalidConfiguration("an application data record of \(bytes.count) bytes (1...16384)")
        }
        OpenSSLErrorQueue.clear()
        let written = SSL_write(ssl.pointer, bytes.baseAddress, Int32(bytes.count))
        guard written == Int32(bytes.count) else {
            let verdict = SSL_get_error(ssl.pointer, written)
            throw .connection("SSL_write \(written), \(Self.name(ofSSLError: verdict))" + OpenSSLErrorQueue.drain(context: ""))
        }
    }

    /// The exported SRTP keys once connected.
    public var keyingMaterial: SRTPKeyingMaterial? {
        if case .connected(let keys) = state { return keys }
        return nil
    }

    /// The peer certificate's fingerprint (with the hash function we checked), once its certificate arrived.
    public var peerFingerprint: Fingerprint? { callbacks.peerFingerprint }

    /// The cipher suite chosen in the handshake (the server picks, RFC 5246 §7.4.1.3), once known: from the
    /// ServerHello on the client, from the ClientHello on the server; nil before.
    public var cipherSuite: DTLSCipherSuite? { cipherSuiteInUse }

    // MARK: Internals

    /// `SSL_get_current_cipher` once the keys are in use, else the pending one the handshake chose.
    private var cipherSuiteInUse: DTLSCipherSuite? {
        guard let cipher = SSL_get_current_cipher(ssl.pointer) ?? SSL_get_pending_cipher(ssl.pointer),
              let name = SSL_CIPHER_get_name(cipher)
        else { return nil }
        // Only suites of the configured list can be negotiated; an unknown name would be OpenSSL's surprise,
        // and the strictest overhead keeps a short record from reaching it.
        return DTLSCipherSuite(rawValue: String(cString: name)) ?? .ecdheECDSAWithAES128GCMSHA256
    }

    /// Hands OpenSSL `records` (the datagram, or the records of it that passed) for the current state.
    private func process(_ records: UnsafeRawBufferPointer, _ now: UInt64) throws(DTLSError) {
        pipe.incoming = records
        defer { pipe.incoming = nil }
        switch state {
        case .handshaking: try advanceHandshake(now)
        case .connected: try readAfterHandshake(now)
        case .idle, .closed, .failed: return
        }
    }

    private func advanceHandshake(_ now: UInt64) throws(DTLSError) {
        OpenSSLErrorQueue.clear()
        let result = SSL_do_handshake(ssl.pointer)
        if result == 1 {
            try finishHandshake(now)
            return
        }
        switch SSL_get_error(ssl.pointer, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: refreshTimer(now)
        default: throw fail(callbacks.failure ?? .handshake(OpenSSLErrorQueue.drain(context: "handshake")))
        }
    }

    /// The handshake finished: check the certificate again (the verify callback may not have seen a
    /// certificate OpenSSL kept), the negotiated profile, then export the keys.
    private func finishHandshake(_ now: UInt64) throws(DTLSError) {
        guard let peer = SSL_get1_peer_certificate(ssl.pointer) else {
            throw fail(.fingerprintMismatch(expected: configuration.remoteFingerprints, received: nil), closing: true)
        }
        let certificate = X509Handle(taking: peer)
        guard callbacks.accepts(certificate: certificate.pointer) else {
            throw fail(callbacks.failure ?? .fingerprintMismatch(expected: configuration.remoteFingerprints, received: nil), closing: true)
        }
        guard let selected = SSL_get_selected_srtp_profile(ssl.pointer),
              let profile = SRTPProtectionProfile(rawValue: UInt16(truncatingIfNeeded: selected.pointee.id)),
              configuration.srtpProfiles.contains(profile)
        else { throw fail(.noCommonSRTPProfile, closing: true) }

        let label = "EXTRACTOR-dtls_srtp"
        var exported = [UInt8](repeating: 0, count: SRTPKeyingMaterial.exportLength(profile))
        OpenSSLErrorQueue.clear()
        let status = exported.withUnsafeMutableBufferPointer { out in
            SSL_export_keying_material(ssl.pointer, out.baseAddress, out.count, label, label.utf8.count, nil, 0, 0)
        }
        guard status == 1 else {
            throw fail(.keyExport(OpenSSLErrorQueue.drain(context: "SSL_export_keying_material")), closing: true)
        }
        let keys: SRTPKeyingMaterial
        do { keys = try SRTPKeyingMaterial(profile: profile, exported: exported) } catch { throw fail(.keyExport("\(error)"), closing: true) }
        state = .connected(keys)
        handshakeDeadline = nil
        refreshTimer(now)
    }

    /// After the handshake: reads records so that retransmitted flights get OpenSSL's answer (our last
    /// flight again), alerts are seen, and close_notify is answered. Application data is kept when asked
    /// (``keepsApplicationData``), else dropped.
    private func readAfterHandshake(_ now: UInt64) throws(DTLSError) {
        enum Outcome { case drained, closedByPeer, failed(DTLSError) }
        OpenSSLErrorQueue.clear()
        // One whole record's plaintext at most (RFC 5246 §6.2.1: 2^14 bytes).
        let outcome: Outcome = withUnsafeTemporaryAllocation(byteCount: 16_384, alignment: 16) { scratch in
            for _ in 0..<64 {  // a datagram holds a few records at most
                let count = SSL_read(ssl.pointer, scratch.baseAddress, Int32(scratch.count))
                if count > 0 {
                    statistics.applicationRecords += 1
                    if keepsApplicationData, applicationData.count + Int(count) <= Self.maxKeptApplicationData {
                        applicationData.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<Int(count)]))
                        applicationDataEnds.append(applicationData.count)
                    } else {
                        statistics.applicationDataDropped += 1
                    }
                    continue
                }
                let verdict = SSL_get_error(ssl.pointer, count)
                switch verdict {
                case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .drained
                case SSL_ERROR_ZERO_RETURN: return .closedByPeer
                default:
                    let queue = OpenSSLErrorQueue.drain(context: "")
                    return .failed(.connection("SSL_read \(count), \(Self.name(ofSSLError: verdict))"
                        + (queue.isEmpty ? ", error queue empty" : queue)))
                }
            }
            return .drained
        }
        switch outcome {
        case .drained: refreshTimer(now)
        case .closedByPeer:
            _ = SSL_shutdown(ssl.pointer)  // our close_notify in answer
            OpenSSLErrorQueue.clear()
            state = .closed(byPeer: true)
            retransmitDeadline = nil
        case .failed(let failure): throw fail(failure)
        }
    }

    /// `SSL_get_error`'s verdict by its C name.
    private static func name(ofSSLError code: Int32) -> String {
        switch code {
        case SSL_ERROR_NONE: "SSL_ERROR_NONE"
        case SSL_ERROR_SSL: "SSL_ERROR_SSL"
        case SSL_ERROR_WANT_READ: "SSL_ERROR_WANT_READ"
        case SSL_ERROR_WANT_WRITE: "SSL_ERROR_WANT_WRITE"
        case SSL_ERROR_SYSCALL: "SSL_ERROR_SYSCALL"
        case SSL_ERROR_ZERO_RETURN: "SSL_ERROR_ZERO_RETURN"
        default: "SSL_get_error \(code)"
        }
    }

    /// Maps what OpenSSL's retransmission timer has left onto the caller's clock.
    private func refreshTimer(_ now: UInt64) {
        let remaining = copenssl_dtls_timeout_us(ssl.pointer)
        retransmitDeadline = remaining < 0 ? nil : now &+ UInt64(remaining)
    }

    /// Moves to `failed` and returns the error to throw. `closing` sends close_notify first (the handshake
    /// finished, so OpenSSL queued no alert of its own).
    private func fail(_ failure: DTLSError, closing: Bool = false) -> DTLSError {
        if closing {
            OpenSSLErrorQueue.clear()
            _ = SSL_shutdown(ssl.pointer)
        }
        OpenSSLErrorQueue.clear()
        let error = failure
        state = .failed(error)
        retransmitDeadline = nil
        handshakeDeadline = nil
        return error
    }
}
