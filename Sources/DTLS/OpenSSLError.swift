internal import COpenSSL

/// OpenSSL's per-thread error queue, turned into text for a typed error.
///
/// Every call into OpenSSL that can fail starts with ``clear()`` (so an entry left by unrelated code on this
/// thread is not blamed on us) and, on failure, reads the queue with ``drain(context:)``.
enum OpenSSLErrorQueue {
    /// Forgets whatever the queue holds for this thread.
    static func clear() { ERR_clear_error() }

    /// Empties the queue and renders its entries, oldest first, as `ERR_error_string_n` does
    /// (`error:0A000086:SSL routines::certificate verify failed`), joined by "; ". `context` names what failed
    /// and stands alone when the queue is empty.
    static func drain(context: String) -> String {
        var entries: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if entries.count < 8 { entries.append(render(code)) }
        }
        return entries.isEmpty ? context : "\(context): " + entries.joined(separator: "; ")
    }

    private static func render(_ code: UInt) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            ERR_error_string_n(code, buffer.baseAddress, buffer.count)
            return String(cString: buffer.baseAddress!)
        }
    }
}
