import CCurl

/// One libcurl easy handle (`curl_easy_init`, freed by `curl_easy_cleanup` in deinit) performing one
/// HTTP request at a time, and the header list it sends (`curl_slist`, freed with it).
///
/// Responses are taken raw: the header block bytes (every block, for ``HTTPResponseHead`` to read the
/// last one) and the body, each capped (``HTTPClient/Limits``). Not thread-safe: one owner at a time
/// (``HTTPClient`` makes one per request).
final class CurlEasy {
    private let handle: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// What the callbacks collected; its address is given to libcurl, so it is a class.
    final class Collected {
        var head: [UInt8] = []
        var body: [UInt8] = []
        var limit: Int
        var exceeded = false
        /// Aborts the transfer once its generation moves on (``HTTPCancellation/cancelInFlight()``).
        let cancellation: HTTPCancellation?
        let generation: UInt64
        init(limit: Int, cancellation: HTTPCancellation?) {
            self.limit = limit
            self.cancellation = cancellation
            generation = cancellation?.generation ?? 0
        }
        var cancelled: Bool { cancellation.map { $0.generation != generation } ?? false }
    }

    /// `curl_global_init` once per process (libcurl ≥ 7.84 makes it thread-safe).
    private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    init() throws(PublishingError) {
        guard Self.globalInit == CURLE_OK, let handle = curl_easy_init() else {
            throw .transport(url: "", reason: "curl_easy_init failed")
        }
        self.handle = handle
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
    }

    /// Performs one request. `timeoutMillis` bounds the whole exchange (CURLOPT_TIMEOUT_MS), connecting
    /// included; redirects are not followed here (``HTTPClient`` follows 307/308 itself).
    /// - Returns: the status code, the raw header bytes and the body.
    /// - Throws: ``PublishingError/transport(url:reason:)`` (libcurl's words: connect refused, timeout, …),
    ///   ``PublishingError/responseTooLarge(url:limit:)``.
    /// - Parameter cancellation: a transfer in flight when it is cancelled ends at once (libcurl's progress
    ///   callback, at least once a second and on every chunk) with ``PublishingError/transport(url:reason:)``
    ///   "cancelled".
    func perform(
        method: String, url: String, headers: [String], body: [UInt8], timeoutMillis: Int, limit: Int,
        verifyPeer: Bool = true, cancellation: HTTPCancellation? = nil, trustedCertificate: String? = nil
    ) throws(PublishingError) -> (status: Int, head: [UInt8], body: [UInt8]) {
        curl_slist_free_all(headerList)
        headerList = nil
        // No "Expect: 100-continue": WHIP and Janus bodies are small.
        for header in headers + ["Expect:"] { headerList = curl_slist_append(headerList, header) }
        let collected = Collected(limit: limit, cancellation: cancellation)
        if collected.cancelled { throw .transport(url: url, reason: "cancelled") }
        let context = Unmanaged.passUnretained(collected).toOpaque()
        var codes: [CURLcode] = [
            ccurl_setopt_string(handle, CURLOPT_URL, url),
            ccurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method),
            ccurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList),
            ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeoutMillis),
            ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0),
            ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
            ccurl_setopt_callback(handle, CURLOPT_WRITEFUNCTION, curlCollectBody),
            ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, context),
            ccurl_setopt_callback(handle, CURLOPT_HEADERFUNCTION, curlCollectHead),
            ccurl_setopt_pointer(handle, CURLOPT_HEADERDATA, context),
            ccurl_setopt_xferinfo(handle, curlProgress),
            ccurl_setopt_pointer(handle, CURLOPT_XFERINFODATA, context),
            ccurl_setopt_long(handle, CURLOPT_NOPROGRESS, 0),
            ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, verifyPeer ? 1 : 0),
            ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, verifyPeer ? 2 : 0),
        ]
        if let trustedCertificate {
            // The one certificate trusted (CURLOPT_CAINFO), whatever names it holds (a self-signed one made for
            // the call's addresses): the peer must still prove it holds its key.
            codes.append(ccurl_setopt_string(handle, CURLOPT_CAINFO, trustedCertificate))
            codes.append(ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 0))
        }
        if method == "GET" {
            codes.append(ccurl_setopt_long(handle, CURLOPT_HTTPGET, 1))
        } else if !body.isEmpty || method == "POST" || method == "PATCH" {
            codes.append(ccurl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.count))
            codes.append(body.withUnsafeBufferPointer { buffer in
                ccurl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!))
            })
        } else {
            codes.append(ccurl_setopt_long(handle, CURLOPT_NOBODY, method == "HEAD" ? 1 : 0))
        }
        if let failed = codes.first(where: { $0 != CURLE_OK }) {
            throw .transport(url: url, reason: "curl_easy_setopt: \(String(cString: curl_easy_strerror(failed)))")
        }
        let result = withExtendedLifetime(collected) { curl_easy_perform(handle) }
        if collected.exceeded { throw .responseTooLarge(url: url, limit: limit) }
        if result == CURLE_ABORTED_BY_CALLBACK, collected.cancelled { throw .transport(url: url, reason: "cancelled") }
        guard result == CURLE_OK else { throw .transport(url: url, reason: String(cString: curl_easy_strerror(result))) }
        var status = 0
        _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return (status, collected.head, collected.body)
    }
}

/// CURLOPT_XFERINFOFUNCTION: 1 (abort) once the request's cancellation generation moved on.
private func curlProgress(_ context: UnsafeMutableRawPointer?, _: curl_off_t, _: curl_off_t, _: curl_off_t, _: curl_off_t) -> Int32 {
    guard let context else { return 0 }
    return Unmanaged<CurlEasy.Collected>.fromOpaque(context).takeUnretainedValue().cancelled ? 1 : 0
}

/// CURLOPT_WRITEFUNCTION: appends to the body; returning less than given makes libcurl stop (the limit).
private func curlCollectBody(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    collect(data, size * count, context) { $0.body.append(contentsOf: $1) }
}

/// CURLOPT_HEADERFUNCTION: one header line at a time (the status line and the blank line included).
private func curlCollectHead(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    collect(data, size * count, context) { $0.head.append(contentsOf: $1) }
}

private func collect(
    _ data: UnsafeMutablePointer<CChar>?, _ bytes: Int, _ context: UnsafeMutableRawPointer?,
    _ append: (CurlEasy.Collected, UnsafeRawBufferPointer) -> Void
) -> Int {
    guard let context, let data else { return 0 }
    let collected = Unmanaged<CurlEasy.Collected>.fromOpaque(context).takeUnretainedValue()
    guard collected.head.count + collected.body.count + bytes <= collected.limit else {
        collected.exceeded = true
        return 0
    }
    append(collected, UnsafeRawBufferPointer(start: data, count: bytes))
    return bytes
}
