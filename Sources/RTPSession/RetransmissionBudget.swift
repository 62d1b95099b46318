/// Bounds what NACKs may send again to a rate: the bytes retransmitted over the last ``windowMicros``, this
/// one included, stay within ``maxBitsPerSecond`` (libwebrtc's retransmission rate limiter does the same
/// with the congestion target over 500 ms). On a link that loses packets because it is full, repair that is
/// not bounded becomes most of what is sent: each retransmission is lost as often as the media, each loss is
/// NACKed again, and the loss keeps the congestion target down (at 300 kbit/s a viewer got 3 frames in 20 s).
///
/// Sans-I/O: times are the caller's monotonic µs; sizes are serialized RTP bytes (RTX header included).
/// At most ``maxEntries`` retransmissions are remembered (the oldest then count as expired: a bound on
/// memory that, at ~1 200-byte packets, only matters above 1 Gbit/s).
public struct RetransmissionBudget: Sendable, Equatable {
    /// The window the rate is measured over, µs (500 ms, as libwebrtc).
    public static let defaultWindowMicros: UInt64 = 500_000
    /// The most retransmissions remembered within the window.
    public static let maxEntries = 4096

    public let windowMicros: UInt64
    /// The rate retransmissions may use, bits per second; nil: unbounded (no estimate yet).
    public private(set) var maxBitsPerSecond: UInt64?
    /// Retransmissions refused because the window was spent.
    public private(set) var refused = 0
    /// Bytes sent within the window (as of the last call).
    public private(set) var spentBytes = 0

    private var times: [UInt64] = []
    private var sizes: [Int] = []
    private var head = 0

    public init(windowMicros: UInt64 = RetransmissionBudget.defaultWindowMicros, maxBitsPerSecond: UInt64? = nil) {
        self.windowMicros = max(1, windowMicros)
        self.maxBitsPerSecond = maxBitsPerSecond
    }

    /// Sets the rate (bits per second; nil: unbounded), e.g. the congestion controller's target or the REMB.
    public mutating func setRate(bitsPerSecond: UInt64?) { maxBitsPerSecond = bitsPerSecond }

    /// What the window allows in all, bytes: rate × window (nil when unbounded).
    public var windowBytes: Int? {
        maxBitsPerSecond.map { Int(clamping: ($0.multipliedReportingOverflow(by: windowMicros).partialValue) / 8_000_000) }
    }

    /// Spends `bytes` at `now` and returns true when the window, with them, stays within the rate; else
    /// spends nothing, counts the refusal and returns false.
    public mutating func tryUse(bytes: Int, nowMicros now: UInt64) -> Bool {
        expire(nowMicros: now)
        if let allowed = windowBytes, spentBytes + bytes > allowed {
            refused += 1
            return false
        }
        if times.count - head >= Self.maxEntries { drop() }
        times.append(now)
        sizes.append(bytes)
        spentBytes += bytes
        return true
    }

    private mutating func expire(nowMicros now: UInt64) {
        while head < times.count, now >= times[head], now - times[head] >= windowMicros { drop() }
        if head > 64, head * 2 >= times.count {  // compact now and then: amortized O(1), no per-call allocation
            times.removeFirst(head)
            sizes.removeFirst(head)
            head = 0
        }
    }

    private mutating func drop() {
        spentBytes -= sizes[head]
        head += 1
    }
}
