/// When the pacer may put the next packet on the wire: a leaky bucket kept as *time debt* (libwebrtc's
/// `PacingController` media budget; pion's `LeakyBucketPacer`). A sans-I/O value: the session asks
/// ``nextSendMicros(atMicros:)``, sends, and reports each packet with ``onPacketSent(sizeBytes:atMicros:keyframe:)``.
///
/// - Each packet adds its serialization time at the current rate to the debt (bytes × 8 / rate); the debt
///   drains in real time. A packet may go while the debt is at most ``Configuration/burstMicros`` (5 ms):
///   one packet may overdraw, and the next waits until it is repaid.
/// - Rates: ``Configuration/pacingFactor`` (2.5) × the target for ordinary media — a frame leaves in
///   40 % of its frame interval — and ``Configuration/keyframePacingFactor`` (1.0) × the target for keyframe
///   packets, so a keyframe spreads over the time the estimate needs to carry it (a 170 KB keyframe at
///   1 Mbit/s: 1.4 s) instead of bursting into a bottleneck queue.
/// - While a ``ProbeCluster`` is active every packet goes at the cluster's rate and counts towards it;
///   ``probePaddingBytes(atMicros:)`` says how much padding to send when no media is queued. The cluster
///   ends once its minimum packets and bytes went out.
public struct PacerBudget: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var pacingFactor: Double
        public var keyframePacingFactor: Double
        /// The bucket's depth as time at the current rate, µs.
        public var burstMicros: Int64
        /// The size of a padding packet for probes, bytes.
        public var paddingPacketBytes: Int

        public init(pacingFactor: Double = 2.5, keyframePacingFactor: Double = 1.0, burstMicros: Int64 = 5_000,
                    paddingPacketBytes: Int = 1000) {
            self.pacingFactor = max(pacingFactor, 0.1)
            self.keyframePacingFactor = max(keyframePacingFactor, 0.1)
            self.burstMicros = max(burstMicros, 0)
            self.paddingPacketBytes = max(paddingPacketBytes, 1)
        }
    }

    private struct ActiveProbe: Sendable {
        var cluster: ProbeCluster
        var bytes = 0
        var packets = 0
    }

    public let configuration: Configuration
    /// The congestion controller's target, bits/s.
    public private(set) var targetBitsPerSecond: Double
    private var debtMicros = 0.0
    private var lastMicros: Int64?
    private var probes: [ActiveProbe] = []

    public init(configuration: Configuration = .init(), targetBitsPerSecond: Int) {
        self.configuration = configuration
        self.targetBitsPerSecond = Double(max(targetBitsPerSecond, 1))
    }

    /// The rate ordinary media leaves at, bits/s.
    public var pacingBitsPerSecond: Double { configuration.pacingFactor * targetBitsPerSecond }

    /// The cluster packets sent now count towards, if any.
    public var activeProbeClusterID: Int? { probes.first?.cluster.id }

    /// The cluster packets sent now count towards, if any (its rate, minimums and when it was asked for).
    public var activeProbeCluster: ProbeCluster? { probes.first?.cluster }

    /// Probe clusters queued or under way.
    public var probeClusterCount: Int { probes.count }

    public mutating func setTarget(bitsPerSecond: Int) { targetBitsPerSecond = Double(max(bitsPerSecond, 1)) }

    /// Queues probe clusters (sent one after the other, before returning to the pacing rate).
    public mutating func startProbes(_ clusters: [ProbeCluster]) {
        probes += clusters.map { ActiveProbe(cluster: $0) }
    }

    /// The earliest time (µs, ≥ `now`) a packet may go.
    public func nextSendMicros(atMicros now: Int64) -> Int64 {
        let debt = debt(at: now)
        let excess = debt - Double(configuration.burstMicros)
        return excess <= 0 ? now : now + Int64(excess.rounded(.up))
    }

    /// How many bytes may go now at the current rate: the bucket's room, at least 1 when a packet may go (one
    /// packet may overdraw), 0 when the next must wait.
    public func sendableBytes(atMicros now: Int64, keyframe: Bool = false) -> Int {
        let room = Double(configuration.burstMicros) - debt(at: now)
        guard room >= 0 else { return 0 }
        return max(1, Int(room * rate(keyframe: keyframe) / 8 / 1_000_000))
    }

    /// Records a packet put on the wire at `now`; returns the probe cluster it counted towards (tag the
    /// packet's send-history entry with it).
    @discardableResult
    public mutating func onPacketSent(sizeBytes: Int, atMicros now: Int64, keyframe: Bool = false) -> Int? {
        let rate = rate(keyframe: keyframe)
        debtMicros = debt(at: now) + Double(sizeBytes) * 8 * 1_000_000 / rate
        lastMicros = now
        guard var probe = probes.first else { return nil }
        probe.bytes += sizeBytes
        probe.packets += 1
        if probe.bytes >= probe.cluster.minBytes, probe.packets >= probe.cluster.minPackets {
            probes.removeFirst()
        } else {
            probes[0] = probe
        }
        return probe.cluster.id
    }

    /// Padding bytes to send now for an active probe when no media is queued (0 without a probe, or when
    /// the budget says wait).
    public func probePaddingBytes(atMicros now: Int64) -> Int {
        guard probes.first != nil, nextSendMicros(atMicros: now) <= now else { return 0 }
        return configuration.paddingPacketBytes
    }

    /// Drops the probes not yet sent (e.g. the estimate fell meanwhile).
    public mutating func cancelProbes() { probes.removeAll() }

    /// Drops the active cluster (it could not be completed in time); the next one, if any, starts.
    public mutating func cancelActiveProbe() {
        if !probes.isEmpty { probes.removeFirst() }
    }

    private func rate(keyframe: Bool) -> Double {
        if let probe = probes.first { return Double(max(probe.cluster.bitsPerSecond, 1)) }
        return (keyframe ? configuration.keyframePacingFactor : configuration.pacingFactor) * targetBitsPerSecond
    }

    private func debt(at now: Int64) -> Double {
        guard let lastMicros else { return 0 }
        return max(0, debtMicros - Double(now - lastMicros))
    }
}
