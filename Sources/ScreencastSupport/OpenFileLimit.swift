import Glibc

/// The process's limit on open descriptors (`RLIMIT_NOFILE`, getrlimit(2)/setrlimit(2)).
///
/// The call holds a descriptor per viewer socket, per HTTP connection and, with ICE-TCP, per TCP connection to
/// a session's passive port, which libnice 0.1.21 accepts without a cap: a desktop's usual soft limit of 1024
/// would let a few hundred idle TCP connections from someone with the link stop the call from accepting anything.
/// Raising the soft limit to the hard one (often 524288 under systemd) costs nothing: libmicrohttpd polls with
/// poll(2), not select(2), so no FD_SETSIZE bound applies (``HTTPServer``).
public enum OpenFileLimit {
    /// Raises the soft limit to the hard limit. Returns the limits before and after (nil when getrlimit fails).
    @discardableResult
    public static func raiseToHard() -> (before: UInt64, after: UInt64)? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        let before = UInt64(limit.rlim_cur)
        guard limit.rlim_cur < limit.rlim_max else { return (before, before) }
        limit.rlim_cur = limit.rlim_max
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (before, before) }
        return (before, UInt64(limit.rlim_cur))
    }

    /// The soft limit now (0 when unknown).
    public static var current: UInt64 {
        var limit = rlimit()
        return getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? UInt64(limit.rlim_cur) : 0
    }
}
