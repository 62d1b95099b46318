/// Measures what a probe cluster showed (libwebrtc's `ProbeBitrateEstimator`): from the feedback for the
/// packets tagged with the cluster, the send rate (bytes after the first sent over first…last send) and
/// the receive rate (bytes after the first received over first…last arrival).
///
/// A result needs ≥ 80 % of the cluster's packets and bytes received, both intervals in (0, 1 s], and a
/// receive rate at most 2× the send rate (else the timing is broken). The result is min(send, receive);
/// when the receive rate is below 90 % of the send rate the link saturated, and the result is 95 % of the
/// receive rate.
///
/// A cluster that ``ProbeCluster/measuresPastBurst`` has its receive rate read from its arrivals after the
/// first ``tailStart`` (55 %) of its bytes (at least ``minTailPackets``): a token bucket lets its burst through at the probe's rate, and
/// only what arrives after it shows the link's rate (a 15 ms cluster through tbf at 1 Mbit/s, `burst 15kb`,
/// read 1.35 Mbit/s, measured).
struct ProbeBitrateEstimator: Sendable {
    static let minTailPackets = 4
    /// Where the measured tail of a burst-robust cluster starts, of its minimum bytes: at 2 × a link of rate C
    /// a burst B is spent after 2B sent; a 400 ms cluster at 2 × 1 Mbit/s (100 kB) starts its tail at 55 kB,
    /// well past tbf's `burst 15kb` (30 kB), and the result waits for 80 % of the cluster.
    static let tailStart = 0.55
    static let minReceivedFraction = 0.8
    static let maxIntervalMicros: Int64 = 1_000_000
    static let maxValidRatio = 2.0
    static let minRatioForUnsaturatedLink = 0.9
    static let targetUtilization = 0.95
    /// Clusters are forgotten this long after their first packet arrived.
    static let historyMicros: Int64 = 1_000_000

    private struct Aggregate: Sendable {
        var firstSend: Int64
        var lastSend: Int64
        var lastSendSize: Int
        var firstArrival: Int64
        var lastArrival: Int64
        var firstArrivalSize: Int
        var bytes: Int
        var packets: Int
        /// Arrival time and size of each received packet, for a cluster that measures past the burst.
        var arrivals: [(micros: Int64, size: Int)] = []
    }

    private var clusters: [Int: Aggregate] = [:]
    /// The last result, bits/s, until fetched.
    private var pending: Double?
    /// Whether the pending result is of a cluster that ``ProbeCluster/measuresPastBurst``.
    private(set) var pendingMeasuredPastBurst = false
    /// The rate the pending result's cluster was sent at (``ProbeCluster/bitsPerSecond``).
    private(set) var pendingClusterBitsPerSecond = 0
    /// Whether the pending result's cluster arrived slower than it left (under
    /// ``minRatioForUnsaturatedLink`` of its send rate): it found the link full.
    private(set) var pendingSaturated = false

    /// Adds one received result of `cluster`; returns the cluster's rate when it now has enough.
    @discardableResult
    mutating func add(_ result: PacketResult, cluster: ProbeCluster) -> Double? {
        guard let arrival = result.arrivalMicros else { return nil }
        forgetOld(nowArrival: arrival)
        let send = result.sent.sendTimeMicros
        let size = result.sent.sizeBytes
        var aggregate = clusters[cluster.id] ?? Aggregate(
            firstSend: send, lastSend: send, lastSendSize: size, firstArrival: arrival, lastArrival: arrival,
            firstArrivalSize: size, bytes: 0, packets: 0)
        if send < aggregate.firstSend { aggregate.firstSend = send }
        if send >= aggregate.lastSend {
            aggregate.lastSend = send
            aggregate.lastSendSize = size
        }
        if arrival < aggregate.firstArrival {
            aggregate.firstArrival = arrival
            aggregate.firstArrivalSize = size
        }
        aggregate.lastArrival = max(aggregate.lastArrival, arrival)
        aggregate.bytes += size
        aggregate.packets += 1
        if cluster.measuresPastBurst { aggregate.arrivals.append((arrival, size)) }
        clusters[cluster.id] = aggregate

        guard Double(aggregate.packets) >= Self.minReceivedFraction * Double(cluster.minPackets),
              Double(aggregate.bytes) >= Self.minReceivedFraction * Double(cluster.minBytes) else { return nil }
        let sendInterval = aggregate.lastSend - aggregate.firstSend
        let receiveInterval = aggregate.lastArrival - aggregate.firstArrival
        guard sendInterval > 0, sendInterval <= Self.maxIntervalMicros, receiveInterval > 0,
              receiveInterval <= Self.maxIntervalMicros else { return nil }
        let sendRate = Units.bitsPerSecond(bytes: aggregate.bytes - aggregate.lastSendSize, micros: sendInterval)
        var receiveRate = Units.bitsPerSecond(bytes: aggregate.bytes - aggregate.firstArrivalSize, micros: receiveInterval)
        if cluster.measuresPastBurst {
            guard let tail = Self.tailRate(aggregate.arrivals, afterBytes: Int(Self.tailStart * Double(cluster.minBytes))) else { return nil }
            receiveRate = tail
        }
        guard receiveRate <= Self.maxValidRatio * sendRate else { return nil }
        var rate = min(sendRate, receiveRate)
        let saturated = receiveRate < Self.minRatioForUnsaturatedLink * sendRate
        if saturated { rate = Self.targetUtilization * receiveRate }
        pending = rate
        pendingSaturated = saturated
        pendingMeasuredPastBurst = cluster.measuresPastBurst
        pendingClusterBitsPerSecond = cluster.bitsPerSecond
        return rate
    }

    /// The receive rate over the arrivals after the first `afterBytes` (in arrival order), timed from the
    /// last arrival before them, bits/s; nil when fewer than ``minTailPackets`` come after, or no time passed.
    static func tailRate(_ arrivals: [(micros: Int64, size: Int)], afterBytes: Int) -> Double? {
        let sorted = arrivals.sorted { $0.micros < $1.micros }
        var start = 0, bytes = 0
        while start < sorted.count, bytes < afterBytes {
            bytes += sorted[start].size
            start += 1
        }
        guard sorted.count - start >= minTailPackets, start > 0 else { return nil }
        // The interval from the last arrival before the tail: the tail's packets all count.
        let span = sorted[sorted.count - 1].micros - sorted[start - 1].micros
        guard span > 0 else { return nil }
        return Units.bitsPerSecond(bytes: sorted[start...].reduce(0) { $0 + $1.size }, micros: span)
    }

    /// The last result since the last fetch, bits/s.
    mutating func fetchResult() -> Double? {
        defer { pending = nil }
        return pending
    }

    private mutating func forgetOld(nowArrival: Int64) {
        guard clusters.count > 4 else { return }
        clusters = clusters.filter { nowArrival - $0.value.firstArrival < Self.historyMicros }
    }
}
