import ScreencastSupport

/// Each viewer's current send rate for `/stats`, from its byte counter at successive reads: kilobits per
/// second over the last window of at least ``windowMicros`` (1 s), or over the viewer's life until one has
/// passed. Sans-I/O: the caller passes the clock.
struct SendRateMeter: Sendable {
    /// The shortest window a rate is computed over, microseconds.
    static let windowMicros: UInt64 = 1_000_000

    private struct Sample: Sendable {
        var bytes: Int
        var micros: UInt64
    }

    /// Per viewer: the sample the current window starts from, and the one after it (becomes the start once
    /// it is a window old).
    private var samples: [String: (start: Sample, next: Sample?)] = [:]

    /// The rate of `id`, kbps, given its byte counter `bytes` now and its age (for a first read).
    mutating func kbps(id: String, bytes: Int, ageMicros: UInt64, nowMicros now: UInt64) -> Double {
        let current = Sample(bytes: bytes, micros: now)
        guard var entry = samples[id] else {
            // First read: the average over its life so far.
            samples[id] = (Sample(bytes: bytes, micros: now), nil)
            return ageMicros > 0 ? Double(bytes) * 8 / (Double(ageMicros) / 1e6) / 1000 : 0
        }
        if let next = entry.next, now - next.micros >= Self.windowMicros { entry.start = next }
        let span = now > entry.start.micros ? now - entry.start.micros : 0
        let rate = span > 0 ? Double(max(0, bytes - entry.start.bytes)) * 8 / (Double(span) / 1e6) / 1000 : 0
        if now - entry.start.micros >= Self.windowMicros { entry.next = current }
        samples[id] = entry
        return rate
    }

    /// Forgets viewers no longer listed.
    mutating func keep(only ids: Set<String>) {
        samples = samples.filter { ids.contains($0.key) }
    }
}
