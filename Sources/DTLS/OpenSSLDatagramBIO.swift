internal import COpenSSL

/// The datagrams between one `SSL` and the endpoint that drives it: a memory BIO that keeps datagram
/// boundaries, which OpenSSL 3.0's `BIO_s_mem` does not (it would run two datagrams together; 3.2's
/// `BIO_s_dgram_mem` is not available on Debian 12).
///
/// - Reading hands OpenSSL the one datagram the endpoint is processing, once; then "retry" (no data). The
///   endpoint first removes the records ``DTLSRecordScanner`` rejects, so OpenSSL sees only records it can
///   judge without ending the connection.
/// - Each write of a DTLS connection is one whole record (OpenSSL writes record by record), kept as one
///   entry; the endpoint packs records into datagrams of at most the MTU (RFC 6347 §4.1.1 allows several
///   records per datagram, never one record across two).
final class DatagramPipe {
    /// The datagram OpenSSL may read next. Set by the endpoint around one OpenSSL call; the memory is only
    /// valid during that call.
    var incoming: UnsafeRawBufferPointer?
    /// Records OpenSSL wrote, oldest first.
    var records: [[UInt8]] = []
}

/// The BIO method behind ``DatagramPipe``, created once per process.
enum DatagramBIO {
    /// A new BIO over `pipe`; the BIO keeps `pipe` alive until `BIO_free` (through `SSL_free`).
    static func make(_ pipe: DatagramPipe) throws(DTLSError) -> OpaquePointer {
        OpenSSLErrorQueue.clear()
        guard let method = table.pointer, let bio = BIO_new(method) else {
            throw .setup(OpenSSLErrorQueue.drain(context: "BIO_new"))
        }
        BIO_set_data(bio, Unmanaged.passRetained(pipe).toOpaque())
        BIO_set_init(bio, 1)
        return bio
    }

    /// The immutable C method table, never freed.
    private final class Table: @unchecked Sendable {  // Sendable: written once here, then only read by OpenSSL.
        let pointer: OpaquePointer?

        init() {
            let index = BIO_get_new_index()
            // BIO_meth_new copies the name.
            guard index > 0, let method = BIO_meth_new(index | BIO_TYPE_SOURCE_SINK, "screencast datagram pipe") else {
                pointer = nil
                return
            }
            BIO_meth_set_write(method, DatagramBIO.write)
            BIO_meth_set_read(method, DatagramBIO.read)
            BIO_meth_set_ctrl(method, DatagramBIO.control)
            BIO_meth_set_create(method) { bio in BIO_set_init(bio, 0); return 1 }
            BIO_meth_set_destroy(method, DatagramBIO.destroy)
            pointer = method
        }
    }

    private static let table = Table()

    private static func pipe(of bio: OpaquePointer?) -> DatagramPipe? {
        guard let bio, let data = BIO_get_data(bio) else { return nil }
        return Unmanaged<DatagramPipe>.fromOpaque(data).takeUnretainedValue()
    }

    private static let write: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = { bio, data, length in
        guard let bio, let pipe = pipe(of: bio), length >= 0 else { return -1 }
        copenssl_bio_clear_retry_flags(bio)
        pipe.records.append(length == 0 ? [] : Array(UnsafeRawBufferPointer(start: data, count: Int(length))))
        return length
    }

    private static let read: @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int32) -> Int32 = { bio, buffer, length in
        guard let bio, let pipe = pipe(of: bio), let buffer, length > 0 else { return -1 }
        copenssl_bio_clear_retry_flags(bio)
        guard let datagram = pipe.incoming else {
            copenssl_bio_set_retry_read(bio)
            return -1
        }
        pipe.incoming = nil
        // A datagram larger than OpenSSL's buffer is truncated, as a UDP socket would.
        let count = min(datagram.count, Int(length))
        if count > 0 { UnsafeMutableRawPointer(buffer).copyMemory(from: datagram.baseAddress!, byteCount: count) }
        return Int32(count)
    }

    private static let control: @convention(c) (OpaquePointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int = { bio, command, _, _ in
        switch command {
        case BIO_CTRL_FLUSH: return 1
        case BIO_CTRL_PENDING: return pipe(of: bio)?.incoming?.count ?? 0
        // The MTU set with SSL_set_mtu is the UDP payload limit: no IP/UDP overhead to subtract here.
        case BIO_CTRL_DGRAM_GET_MTU_OVERHEAD: return 0
        default: return 0
        }
    }

    private static let destroy: @convention(c) (OpaquePointer?) -> Int32 = { bio in
        guard let bio else { return 0 }
        if let data = BIO_get_data(bio) {
            Unmanaged<DatagramPipe>.fromOpaque(data).release()
            BIO_set_data(bio, nil)
        }
        BIO_set_init(bio, 0)
        return 1
    }
}

// MARK: Which records OpenSSL may see

/// Why a record of an incoming datagram was dropped before OpenSSL saw it. RFC 6347 §4.1.2.7: invalid
/// records are discarded silently, and one unauthenticated datagram must not end an association.
public enum DTLSRecordDrop: String, Sendable, CaseIterable {
    /// Fewer than the 13 header bytes (RFC 6347 §4.1) left at the end of the datagram.
    case truncatedHeader
    /// The length field runs past the end of the datagram (a record never spans datagrams, RFC 6347
    /// §4.1.1); nothing after it can be framed, so the rest of the datagram goes with it.
    case lengthBeyondDatagram
    /// A body longer than any DTLS 1.2 record's (2^14 + 2048 bytes, RFC 5246 §6.2.3, RFC 6347 §4.1).
    case longerThanAllowed
    /// Not change_cipher_spec, alert, handshake or application_data (20–23, RFC 5246 §6.2.1).
    case contentType
    /// A version other than DTLS 1.0/1.2 (FE FF, FE FD); once connected, other than DTLS 1.2.
    case version
    /// A record with an empty body.
    case empty
    /// An epoch we hold no keys for: once connected anything but epoch 1 (renegotiation is off); during the
    /// handshake epoch 2 and above, or epoch 1 before a cipher suite is chosen.
    case epoch
    /// A protected record (epoch ≥ 1) shorter than its cipher suite's fixed overhead
    /// (``DTLSCipherSuite/recordOverhead``): it cannot be genuine, and OpenSSL 3.0 ends the connection on it.
    case shorterThanCipherOverhead
}

/// Splits a datagram into DTLS records (RFC 6347 §4.1: one or more whole records per datagram) and judges
/// each by its header alone, before OpenSSL reads it. Authenticity stays OpenSSL's to judge: a record that
/// passes may still be discarded by it (bad tag, replay); a record dropped here could never have passed.
///
/// ```
///  0        1-2      3-4    5-10             11-12    13 …
///  type     version  epoch  sequence number  length   body (length bytes)
/// ```
///
/// Why it exists: OpenSSL 3.0 (3.0.19 measured) ends an established DTLS connection on a protected record
/// whose body is shorter than the AEAD overhead (AES-GCM: 8-byte explicit nonce + 16-byte tag; ChaCha20:
/// 16-byte tag). `tls1_enc` hands the short record's AAD to `EVP_CTRL_AEAD_TLS1_AAD`, the provider refuses it
/// (the length would go negative), and `tls1_enc` calls `SSLfatal(internal_error)` instead of returning
/// "publicly invalid". `dtls1_process_record` drops the error queue (`ERR_pop_to_mark`) but sees the state
/// machine in error and gives up, so `SSL_read` returns −1, `SSL_get_error` says `SSL_ERROR_SYSCALL` with an
/// empty queue, and a fatal internal_error alert goes to the peer (reported upstream as OpenSSL issue 25290;
/// newer sources check the length before the AAD call and discard the record).
enum DTLSRecordScanner {
    static let headerLength = 13
    /// The largest body of a protected record (RFC 5246 §6.2.3: TLSCiphertext.length ≤ 2^14 + 2048).
    static let maximumBodyLength = 16_384 + 2048

    /// What may pass now: judged from the endpoint's state.
    struct Rules {
        /// Connected: only DTLS 1.2 records of epoch 1.
        var connected: Bool
        /// The fixed overhead of every protected record under the chosen cipher suite; nil before one is chosen.
        var protectedOverhead: Int?

        func verdict(contentType: UInt8, version: UInt16, epoch: UInt16, length: Int) -> DTLSRecordDrop? {
            guard (20...23).contains(contentType) else { return .contentType }
            guard connected ? version == 0xFEFD : (version == 0xFEFD || version == 0xFEFF) else { return .version }
            guard length > 0 else { return .empty }
            guard length <= DTLSRecordScanner.maximumBodyLength else { return .longerThanAllowed }
            if epoch == 0 { return connected ? .epoch : nil }
            guard epoch == 1, let overhead = protectedOverhead else { return .epoch }
            return length < overhead ? .shorterThanCipherOverhead : nil
        }
    }

    /// The records of `datagram` that pass (byte ranges, in order) and the reasons of those that do not.
    static func scan(_ datagram: UnsafeRawBufferPointer, rules: Rules) -> (kept: [Range<Int>], dropped: [DTLSRecordDrop]) {
        var kept: [Range<Int>] = []
        var dropped: [DTLSRecordDrop] = []
        var offset = 0
        while offset < datagram.count {
            let remaining = datagram.count - offset
            guard remaining >= headerLength else {
                dropped.append(.truncatedHeader)
                break
            }
            func u16(_ at: Int) -> UInt16 { UInt16(datagram[offset + at]) << 8 | UInt16(datagram[offset + at + 1]) }
            let length = Int(u16(11))
            guard length <= remaining - headerLength else {
                dropped.append(.lengthBeyondDatagram)
                break
            }
            let end = offset + headerLength + length
            if let reason = rules.verdict(contentType: datagram[offset], version: u16(1), epoch: u16(3), length: length) {
                dropped.append(reason)
            } else {
                kept.append(offset..<end)
            }
            offset = end
        }
        return (kept, dropped)
    }
}
