import ScreencastSupport

/// Each viewer's current send rate for `/stats`, from its byte counter at successive reads: kilobits per
/// second over the last window of at least ``windowMicros`` (1 s), or over the viewer's life until one has
/// passed. Sans-I/O: the caller passes the clock.
struct SendRateMeter: Sendable {
    /// The shortest window a rate is computed over, microseconds.
    static let windowMicros: UInt64 = 1_000_000

    /// Per viewer: its ``SendRate``.
    private var rates: [String: SendRate] = [:]

    /// The rate of `id`, kbps, given its byte counter `bytes` now and its age (for a first read).
    mutating func kbps(id: String, bytes: Int, ageMicros: UInt64, nowMicros now: UInt64) -> Double {
        SendRate.kbps(&rates[id], bytes: bytes, ageMicros: ageMicros, nowMicros: now)
    }

    /// Forgets viewers no longer listed.
    mutating func keep(only ids: Set<String>) {
        rates = rates.filter { ids.contains($0.key) }
    }
}

/// One viewer's send rate under the rules of ``SendRateMeter`` (``ViewerHub`` keeps one in each viewer's record).
struct SendRate: Sendable {
    private struct Sample: Sendable {
        var bytes: Int
        var micros: UInt64
    }

    /// The sample the current window starts from, and the one after it (becomes the start once it is a window old).
    private var start: Sample
    private var next: Sample?

    /// The rate, kbps, given the byte counter `bytes` now and the viewer's age, µs (for a first read, when
    /// `rate` is nil: the average over its life so far).
    static func kbps(_ rate: inout SendRate?, bytes: Int, ageMicros: UInt64, nowMicros now: UInt64) -> Double {
        let current = Sample(bytes: bytes, micros: now)
        guard var entry = rate else {
            rate = SendRate(start: current, next: nil)
            return ageMicros > 0 ? Double(bytes) * 8 / (Double(ageMicros) / 1e6) / 1000 : 0
        }
        if let next = entry.next, now - next.micros >= SendRateMeter.windowMicros { entry.start = next }
        let span = now > entry.start.micros ? now - entry.start.micros : 0
        let rateKbps = span > 0 ? Double(max(0, bytes - entry.start.bytes)) * 8 / (Double(span) / 1e6) / 1000 : 0
        if now - entry.start.micros >= SendRateMeter.windowMicros { entry.next = current }
        rate = entry
        return rateKbps
    }
}
