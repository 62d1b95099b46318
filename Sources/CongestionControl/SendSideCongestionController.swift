import RTP

/// Sender-side Google Congestion Control for one transport (draft-ietf-rmcat-gcc-02 as libwebrtc's
/// `GoogCcNetworkController` practises it), as a sans-I/O value: the session reports packets sent, TWCC
/// feedback, RTTs and ceilings with the current time (µs of a monotonic clock), and gets back
/// ``CongestionUpdate``s to apply to the encoder and the ``PacerBudget``.
///
/// target = min(delay-based, loss-based, ceiling), clamped to ``Configuration/minBitsPerSecond`` …
/// ``Configuration/maxBitsPerSecond``. Per feedback: results (``TransportFeedbackAdapter``) → acknowledged
/// rate → probe results → delay-based (``DelayBasedEstimator``) → loss-based (``LossBasedController``) →
/// probes (``ProbeController``). Per tick: probe timeouts and periodic probes, and a feedback timeout —
/// sending without any feedback for ``Configuration/feedbackTimeoutMicros`` (3 s) lowers the target ×0.8
/// per second, as libwebrtc does when feedback stops.
///
/// The sender is application-limited (``ApplicationLimitedDetector``, fed the non-probe packets sent) when
/// it sends well below its target; ALR probes then measure the link (``ProbeController``).
///
/// Calls per the session:
/// - each RTP packet leaving the pacer: ``onPacketSent(sequenceNumber:sizeBytes:atMicros:probeClusterID:)``;
/// - each TWCC feedback packet: ``onTransportFeedback(_:atMicros:)``;
/// - each RTT from RTCP (RR/SR): ``onRoundTripTime(micros:)``;
/// - REMB or an SFU cap: ``setCeiling(bitsPerSecond:atMicros:)``;
/// - every 25–100 ms: ``onTick(atMicros:)``.
public struct SendSideCongestionController: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var minBitsPerSecond: Int
        public var startBitsPerSecond: Int
        public var maxBitsPerSecond: Int
        public var feedbackTimeoutMicros: Int64
        public var probing: ProbeController.Configuration
        /// The pacer's factor over the target (``PacerBudget/Configuration/pacingFactor``), for the stats.
        public var pacingFactor: Double
        /// Whether a probe lifts an application-limited sender only to ``SendSideCongestionController/applicationLimitedHeadroom``
        /// × its acknowledged rate (the RTP session's screen sender: yes; the simulator's greedy sender: no).
        public var capsProbesWhenApplicationLimited = false

        public init(minBitsPerSecond: Int = 100_000, startBitsPerSecond: Int = 300_000, maxBitsPerSecond: Int = 3_000_000,
                    feedbackTimeoutMicros: Int64 = 3_000_000, probing: ProbeController.Configuration = .init(),
                    pacingFactor: Double = 2.5) {
            self.minBitsPerSecond = minBitsPerSecond
            self.startBitsPerSecond = startBitsPerSecond
            self.maxBitsPerSecond = maxBitsPerSecond
            self.feedbackTimeoutMicros = feedbackTimeoutMicros
            self.probing = probing
            self.pacingFactor = pacingFactor
        }
    }

    /// A probe above the target lifts a loss-based estimate that limits it only while the last measured loss
    /// is below this (5 %, inside GCC's 2–10 % hold band: a queue's drops, not a lossy path).
    public static let probeLiftMaxLoss = 0.05
    /// Below this fraction of the target the acknowledged rate marks the sender application-limited.
    public static let applicationLimitedFraction = 0.9
    /// What an application-limited sender may be lifted to by a probe, × its acknowledged rate (+ 10 kbit/s).
    public static let applicationLimitedHeadroom = 1.5

    public let configuration: Configuration
    private var adapter = TransportFeedbackAdapter()
    private var acknowledged = AcknowledgedBitrateEstimator()
    private var probeEstimator = ProbeBitrateEstimator()
    private var delayBased: DelayBasedEstimator
    private var lossBased: LossBasedController
    private var probeController: ProbeController
    private var applicationLimited: ApplicationLimitedDetector
    /// Clusters requested and not yet forgotten, by id.
    private var clusters: [Int: ProbeCluster] = [:]
    private var ceiling: Double?
    private var roundTripMicros: Int64?
    private var lastFeedbackMicros: Int64?
    private var lastTimeoutMicros: Int64?
    private var lastSendMicros: Int64?
    private var firstSendMicros: Int64?
    private(set) var probeClustersRequested = 0
    private var probeResults = 0
    private var lastProbeResult: Double?
    /// The current target, bits/s.
    public private(set) var targetBitsPerSecond: Int

    /// Validates `configuration` (0 < min ≤ start ≤ max, timeout > 0).
    public init(configuration: Configuration) throws(CongestionControlError) {
        guard configuration.minBitsPerSecond > 0 else {
            throw .invalidConfiguration("minBitsPerSecond", "must be above 0, is \(configuration.minBitsPerSecond)")
        }
        guard configuration.minBitsPerSecond <= configuration.startBitsPerSecond,
              configuration.startBitsPerSecond <= configuration.maxBitsPerSecond else {
            throw .invalidConfiguration("startBitsPerSecond", "must lie within min…max")
        }
        guard configuration.feedbackTimeoutMicros > 0 else {
            throw .invalidConfiguration("feedbackTimeoutMicros", "must be above 0")
        }
        self.configuration = configuration
        (delayBased, lossBased, applicationLimited) = Self.estimatorsAtStart(configuration)
        probeController = ProbeController(configuration: configuration.probing, maxBitrate: Double(configuration.maxBitsPerSecond))
        targetBitsPerSecond = configuration.startBitsPerSecond
    }

    /// The delay-based and loss-based estimators and the ALR detector as they start, at the configured start rate.
    private static func estimatorsAtStart(_ configuration: Configuration)
        -> (DelayBasedEstimator, LossBasedController, ApplicationLimitedDetector) {
        let (low, start, high) = (Double(configuration.minBitsPerSecond), Double(configuration.startBitsPerSecond),
                                  Double(configuration.maxBitsPerSecond))
        return (DelayBasedEstimator(startBitrate: start, minBitrate: low, maxBitrate: high),
                LossBasedController(startBitrate: start, minBitrate: low, maxBitrate: high),
                ApplicationLimitedDetector(targetBitsPerSecond: configuration.startBitsPerSecond))
    }

    /// The first update: the start target and the initial probes (3× and 6× the start rate).
    public mutating func start(atMicros now: Int64) -> CongestionUpdate {
        let probes = probeController.start(startBitrate: Double(targetBitsPerSecond), nowMicros: now)
        return update(changed: true, probes: probes)
    }

    /// The transport's path changed (an ICE restart connected a new candidate pair): what was measured
    /// belongs to the old path, and an outage before it has driven the target down to the floor by the
    /// feedback timeout. As libwebrtc's `GoogCcNetworkController::OnNetworkRouteChange`: the delay-based,
    /// loss-based, acknowledged-rate and probe estimators start again at ``Configuration/startBitsPerSecond``
    /// (the ceiling stays), nothing counts as in flight, the feedback timeout and the RTT start afresh, and the
    /// start probes go out again. Probe cluster ids go on counting, so late feedback on an old cluster is
    /// not read as a new one's.
    public mutating func onRouteChange(atMicros now: Int64) -> CongestionUpdate {
        let previous = targetBitsPerSecond
        (delayBased, lossBased, applicationLimited) = Self.estimatorsAtStart(configuration)
        acknowledged = AcknowledgedBitrateEstimator()
        probeEstimator = ProbeBitrateEstimator()
        probeController.reset()
        adapter.forgetInFlight()
        clusters = [:]
        roundTripMicros = nil
        (lastFeedbackMicros, lastTimeoutMicros, lastSendMicros, firstSendMicros) = (nil, nil, nil, nil)
        recomputeTarget()
        let probes = probeController.start(startBitrate: Double(targetBitsPerSecond), nowMicros: now)
        return update(changed: previous != targetBitsPerSecond, probes: probes)
    }

    /// An RTP packet left the pacer with transport-wide `sequenceNumber`.
    public mutating func onPacketSent(sequenceNumber: UInt16, sizeBytes: Int, atMicros now: Int64, probeClusterID: Int? = nil) {
        adapter.onPacketSent(sequenceNumber: sequenceNumber, sendTimeMicros: now, sizeBytes: sizeBytes, probeClusterID: probeClusterID)
        // What the application sends: probe packets (padding, or media sent ahead of its turn) do not count.
        if probeClusterID == nil { applicationLimited.onBytesSent(sizeBytes, atMicros: now) }
        lastSendMicros = now
        if firstSendMicros == nil { firstSendMicros = now }
    }

    /// A TWCC feedback packet arrived at `now`.
    public mutating func onTransportFeedback(_ feedback: RTCPTransportFeedback, atMicros now: Int64) -> CongestionUpdate {
        let packets = adapter.adapt(feedback, receivedAtMicros: now)
        lastFeedbackMicros = now
        lastTimeoutMicros = nil
        guard !packets.results.isEmpty else { return update(changed: false, probes: []) }
        let received = packets.receivedByArrival
        acknowledged.update(received)
        for result in received {
            guard let id = result.sent.probeClusterID, let cluster = clusters[id] else { continue }
            probeEstimator.add(result, cluster: cluster)
        }
        let pastBurst = probeEstimator.pendingMeasuredPastBurst
        let clusterAtMax = Double(probeEstimator.pendingClusterBitsPerSecond) >= probeController.maxBitrate.rounded() - 1
        let saturated = probeEstimator.pendingSaturated
        var probe = probeEstimator.fetchResult()
        if probe != nil, saturated { probeController.onSaturatedResult() }
        var probeAboveTarget: Double?
        if var result = probe {
            probeResults += 1
            lastProbeResult = result
            // An application-limited sender (acknowledged under 90 % of the target) gets no more than 1.5 × what
            // it uses + 10 kbit/s from a probe (libwebrtc's AIMD throughput limit): a short cluster measures
            // a token bucket's burst, not the link (1.35 Mbit/s read through tbf at 1 Mbit/s, measured), and
            // a sender that does not fill its target never meets the over-use that would correct it.
            // A cluster long enough to see past a token bucket's burst measured the link: its result sets the
            // estimate directly (libwebrtc's ALR probing), however little the encoder sends.
            let target = Double(targetBitsPerSecond)
            if configuration.capsProbesWhenApplicationLimited, !pastBurst {
                if let used = acknowledged.bitsPerSecond {
                    if used < Self.applicationLimitedFraction * target {
                        result = min(result, max(target, Self.applicationLimitedHeadroom * used + 10_000))
                    }
                } else {
                    // Nothing acknowledged yet: at most 3 × the start rate (libwebrtc's first start probe).
                    result = min(result, max(target, 3 * Double(configuration.startBitsPerSecond)))
                }
                probe = result
            }
            if result > Double(targetBitsPerSecond) { probeAboveTarget = result }
            // Lower than the estimate: no news (libwebrtc ignores such probes too; a probe that met cross
            // traffic or a short queue must not drag the estimate down — over-use detection does that).
            if result <= delayBased.bitrate { probe = nil }
        }

        let previousTarget = targetBitsPerSecond
        // An over-use while a probe is in the path is the probe's: it ran into the link, and the decrease is
        // taken from what the link delivered then, not from an application-limited sender's own rate.
        let delivered = ProbeDeliveryRate.bitsPerSecond(received)
        let delay = delayBased.onFeedback(packets, acknowledgedBitsPerSecond: acknowledged.bitsPerSecond, probeBitsPerSecond: probe,
                                          overuseThroughputFloor: delivered)
        if delay.probe {
            lossBased.set(delay.bitrate)
            acknowledged.expectFastRateChange()
        } else if let result = probeAboveTarget, let delivered, clusterAtMax,
                  delayBased.acceptProbeThatOverused(measured: min(result, delivered), nowMicros: now) {
            // A cluster at the max is a chain's last: when its result comes with the over-use it caused (a 400
            // ms cluster at or above a token bucket's rate always does), it is read that way, not dropped, or
            // the chain found the link for nothing (Chromium behind tbf at 3 Mbit/s, the max: the target stayed
            // at 1.5 Mbit/s in 3 runs of 5 with the last cluster read at 2.84 Mbit/s). A lower cluster's
            // over-use ends its chain as GCC has it: through a token bucket whose burst outlasts the cluster
            // (2 × 292 kbit/s for 400 ms into 300 kbit/s, `burst 15kb`) its reading is the burst's, and taken
            // it held the target at 381 kbit/s for 2 s.
            lossBased.set(delayBased.bitrate)
            acknowledged.expectFastRateChange()
        } else if let result = probeAboveTarget, delayBased.usage != .overusing, lossBased.lossFraction < Self.probeLiftMaxLoss {
            // The loss-based side limited the target though loss is low (it grows only 5 % per 200 ms): the
            // path carried more. With heavy loss it keeps its back-off.
            lossBased.set(min(result, delayBased.bitrate))
            acknowledged.expectFastRateChange()
        }
        if delayBased.usage == .overusing { probeController.onOveruse(nowMicros: now) }
        lossBased.onFeedback(lost: packets.lostCount, received: received.count, nowMicros: now)
        let target = recomputeTarget()
        markApplicationLimited()
        var probes = probeController.onEstimate(target, nowMicros: now)
        if delay.recoveredFromOveruse { probes += probeController.onRecoveredFromOveruse(nowMicros: now) }
        return update(changed: targetBitsPerSecond != previousTarget, probes: probes)
    }

    /// An RTT measured from RTCP (RFC 3550 §6.4.1), µs.
    public mutating func onRoundTripTime(micros: Int64) {
        guard micros > 0 else { return }
        roundTripMicros = micros
        delayBased.setRoundTrip(micros: micros)
        lossBased.roundTripMicros = micros
    }

    /// An external ceiling (REMB, an SFU's cap), bits/s; nil removes it.
    public mutating func setCeiling(bitsPerSecond: Int?, atMicros now: Int64) -> CongestionUpdate {
        ceiling = bitsPerSecond.map { Double(max($0, 0)) }
        let previous = targetBitsPerSecond
        recomputeTarget()
        return update(changed: previous != targetBitsPerSecond, probes: [])
    }

    /// Periodic work: probe timeouts and periodic probes, the feedback timeout.
    public mutating func onTick(atMicros now: Int64) -> CongestionUpdate {
        let previous = targetBitsPerSecond
        if let lastSendMicros, let reference = lastFeedbackMicros ?? firstSendMicros, lastSendMicros > reference,
           now - reference > configuration.feedbackTimeoutMicros,
           lastTimeoutMicros.map({ now - $0 >= 1_000_000 }) ?? true {
            lastTimeoutMicros = now
            lossBased.set(0.8 * Double(targetBitsPerSecond))
            recomputeTarget()
        }
        applicationLimited.onTick(atMicros: now)
        markApplicationLimited()
        let probes = probeController.onTick(nowMicros: now, applicationLimitedSince: applicationLimited.startMicros)
        return update(changed: previous != targetBitsPerSecond, probes: probes)
    }

    /// The controller's state for `/stats`.
    public var stats: CongestionControlStats {
        let sample = delayBased.lastSample
        return CongestionControlStats(
            targetBitsPerSecond: targetBitsPerSecond, delayBasedBitsPerSecond: Int(delayBased.bitrate),
            lossBasedBitsPerSecond: Int(lossBased.bitrate), acknowledgedBitsPerSecond: acknowledged.bitsPerSecond.map { Int($0) },
            ceilingBitsPerSecond: ceiling.map { Int($0) },
            pacingBitsPerSecond: Int(configuration.pacingFactor * Double(targetBitsPerSecond)),
            delayTrend: sample?.trend ?? 0, modifiedDelayTrend: delayBased.detector.modifiedTrend,
            delayThresholdMillis: delayBased.detector.threshold, usage: delayBased.usage,
            rateControlState: delayBased.rateControl.state,
            linkCapacityBitsPerSecond: delayBased.rateControl.linkCapacity.hasEstimate
                ? Int(delayBased.rateControl.linkCapacity.estimate) : nil,
            lossFraction: lossBased.lossFraction, roundTripMillis: roundTripMicros.map { Double($0) / 1000 },
            bytesInFlight: adapter.history.bytesInFlight, feedbackPackets: adapter.counters.feedbackPackets,
            feedbackPacketsMissed: adapter.counters.feedbackPacketsMissed, unknownPackets: adapter.counters.unknownPackets,
            probeClustersRequested: probeClustersRequested, probeResults: probeResults,
            lastProbeBitsPerSecond: lastProbeResult.map { Int($0) },
            applicationLimited: applicationLimited.isApplicationLimited, alrProbes: probeController.alrProbes)
    }

    /// Tells the probe controller whether the sender is application-limited: by the ALR detector, or (with
    /// ``Configuration/capsProbesWhenApplicationLimited``) acknowledging under ``applicationLimitedFraction``
    /// of the target — the view under which a short probe's result would be capped.
    private mutating func markApplicationLimited() {
        var limited = applicationLimited.isApplicationLimited
        if configuration.capsProbesWhenApplicationLimited, let used = acknowledged.bitsPerSecond,
           used < Self.applicationLimitedFraction * Double(targetBitsPerSecond) { limited = true }
        probeController.applicationLimited = limited
    }

    @discardableResult
    private mutating func recomputeTarget() -> Double {
        var limit = delayBased.bitrate
        if let ceiling { limit = min(limit, ceiling) }
        lossBased.cap(at: limit)
        let target = min(limit, lossBased.bitrate)
        targetBitsPerSecond = Int(min(max(target, Double(configuration.minBitsPerSecond)), Double(configuration.maxBitsPerSecond)))
        applicationLimited.setTarget(bitsPerSecond: targetBitsPerSecond)
        return Double(targetBitsPerSecond)
    }

    private mutating func update(changed: Bool, probes: [ProbeCluster]) -> CongestionUpdate {
        for cluster in probes { clusters[cluster.id] = cluster }
        probeClustersRequested += probes.count
        if clusters.count > 16, let oldest = clusters.keys.min() { clusters[oldest] = nil }
        return CongestionUpdate(targetBitsPerSecond: targetBitsPerSecond, targetChanged: changed, probes: probes)
    }
}

/// What the session should do after a controller call.
public struct CongestionUpdate: Sendable, Equatable {
    /// The target for the encoder and the pacer (``PacerBudget/setTarget(bitsPerSecond:)``), bits/s.
    public var targetBitsPerSecond: Int
    /// Whether the target differs from the one before this call.
    public var targetChanged: Bool
    /// Probe clusters to hand to ``PacerBudget/startProbes(_:)``.
    public var probes: [ProbeCluster]
}

extension SendSideCongestionController.Configuration {
    /// The RTP session's screen sender: ``ProbeController/Configuration/screenSender`` probing, and probes
    /// capped while application-limited (``capsProbesWhenApplicationLimited``). Measured with Chromium behind
    /// tbf at 1 Mbit/s (`burst 15kb`): without the cap a periodic probe read 1.35 Mbit/s while the encoder
    /// sent about 500 kbit/s, and the target stayed there.
    public static var screenSender: Self {
        var configuration = Self(probing: .screenSender)
        configuration.capsProbesWhenApplicationLimited = true
        return configuration
    }
}
