internal import COpenSSL

/// The datagrams between one `SSL` and the endpoint that drives it: a memory BIO that keeps datagram
/// boundaries, which OpenSSL 3.0's `BIO_s_mem` does not (it would run two datagrams together; 3.2's
/// `BIO_s_dgram_mem` is not available on Debian 12).
///
/// - Reading hands OpenSSL the one datagram the endpoint is processing, whole, once; then "retry" (no data).
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
