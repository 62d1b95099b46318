/// A request to the pacer: send at `bitsPerSecond` until at least `minPackets` packets and `minBytes`
/// bytes went out, tagging each with `id` (media first, padding when the queue is empty), so the feedback
/// shows what the path carries at that rate.
public struct ProbeCluster: Sendable, Equatable {
    /// Tags the cluster's packets in the send history (the probe estimator groups their feedback by it).
    public var id: Int
    /// The rate to send at, bits per second.
    public var bitsPerSecond: Int
    /// The cluster ends once at least this many packets and ``minBytes`` bytes went out.
    public var minPackets: Int
    /// Bytes the cluster must carry (with ``minPackets``) before it ends.
    public var minBytes: Int
    /// When it was requested, µs.
    public var createdMicros: Int64
    /// Long enough to empty a token bucket's burst (``ProbeController/Configuration/burstRobust``): its
    /// result is read from what arrives after its first 55 % of bytes (``ProbeBitrateEstimator``) and may lift an
    /// application-limited sender's estimate directly.
    public var measuresPastBurst: Bool

    /// See the properties.
    public init(id: Int, bitsPerSecond: Int, minPackets: Int, minBytes: Int, createdMicros: Int64, measuresPastBurst: Bool = false) {
        self.id = id
        self.bitsPerSecond = bitsPerSecond
        self.minPackets = minPackets
        self.minBytes = minBytes
        self.createdMicros = createdMicros
        self.measuresPastBurst = measuresPastBurst
    }
}

/// Decides when to probe (libwebrtc's `ProbeController`, draft-ietf-rmcat-gcc-02 leaves probing open):
///
/// - At start: two clusters at ``Configuration/firstScale`` (3×) and ``Configuration/secondScale`` (6×) the
///   start rate ("exponential probing", as Chromium's sender log shows); the screen sender sends one, 3×,
///   burst-robust (``Configuration/screenSender``).
/// - Further: while waiting for a result, an estimate above ``Configuration/furtherThreshold`` (0.7) × the
///   highest rate probed asks for another cluster at ``Configuration/furtherScale`` (2×) that estimate.
/// - After recovery: when the detector goes back to normal from under-use within
///   ``Configuration/dropTimeoutMicros`` (5 s) of a large drop (the estimate fell below 66 % of what it was),
///   one cluster at 85 % of the rate before the drop (at most every 5 s).
/// - Periodic: while the estimate stays below 90 % of the max, a cluster at ``Configuration/periodicScale``
///   (2×; the screen sender 1.5×, burst-robust: ``Configuration/periodicProbesMeasurePastBurst``) the estimate
///   every ``Configuration/periodicIntervalMicros`` (5 s), and not within ``Configuration/periodicQuietMicros``
///   of an over-use — libwebrtc probes like this only when the sender is application-limited; a greedy
///   screen sender needs it too to find capacity that came back, once the link stopped saying it is full.
/// - A cluster that found the link full (it arrived slower than it left) ends its chain when
///   ``Configuration/endChainWhenSaturated`` (``onSaturatedResult()``).
/// - Application-limited (ALR, libwebrtc's periodic ALR probing): while the sender sends well below its
///   target (``ApplicationLimitedDetector``), a cluster at ``Configuration/alrScale`` (2×) the estimate every
///   ``Configuration/alrIntervalMicros`` since the later of the ALR start and the last probe — the only way
///   an encoder that does not fill its target learns that the link carries more. A periodic probe that
///   falls due first then counts as one. While ``applicationLimited`` (the owner's wider view: its
///   acknowledged rate under 90 % of the target), clusters are burst-robust.
/// Clusters never exceed the max bitrate; a wait of ``Configuration/resultTimeoutMicros`` (1 s) without a
/// result ends the exponential phase.
public struct ProbeController: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// The start chain's first cluster, × the start bitrate (libwebrtc: 3).
        public var firstScale = 3.0
        /// The start chain's second cluster, × the start bitrate (libwebrtc: 6).
        public var secondScale = 6.0
        /// A further cluster, × the estimate that asked for it (libwebrtc: 2).
        public var furtherScale = 2.0
        /// A further cluster is asked for when the estimate exceeds this share of the highest rate probed
        /// (libwebrtc: 0.7).
        public var furtherThreshold = 0.7
        /// A cluster lasts at least this long at its rate, µs (libwebrtc: 15 ms).
        public var minDurationMicros: Int64 = 15_000
        /// …and holds at least this many packets (libwebrtc: 5).
        public var minPackets = 5
        /// How long a chain waits for a result before it ends, µs (libwebrtc: 1 s).
        public var resultTimeoutMicros: Int64 = 1_000_000
        /// A large drop: the estimate falls below this share of what it was (libwebrtc: 0.66).
        public var dropThreshold = 0.66
        /// 0 disables recovery probes (``screenSender`` does).
        public var dropTimeoutMicros: Int64 = 5_000_000
        /// A recovery cluster's rate, as a share of the estimate before the drop (libwebrtc: 0.85).
        public var fractionAfterDrop = 0.85
        /// The least time between two recovery clusters, µs.
        public var minRecoveryIntervalMicros: Int64 = 5_000_000
        /// 0 disables periodic probing.
        public var periodicIntervalMicros: Int64 = 5_000_000
        /// A periodic cluster, × the estimate (``screenSender``: 1.5; one counted as an ALR probe goes at
        /// ``alrScale``).
        public var periodicScale = 2.0
        /// No periodic probe within this long of an over-use, µs (0: no such wait; ``screenSender``: 5 s).
        public var periodicQuietMicros: Int64 = 0
        /// Periodic clusters are burst-robust (with ``burstRobust``) even while the sender fills its target:
        /// a short one into a full token-bucket link reads the bucket's burst, not the link (``screenSender``).
        public var periodicProbesMeasurePastBurst = false
        /// A saturated result ends the chain (``ProbeController/onSaturatedResult()``; ``screenSender``).
        public var endChainWhenSaturated = false
        /// 0 disables ALR probing (the default, as in libwebrtc without its field trial).
        public var alrIntervalMicros: Int64 = 0
        /// An ALR cluster, × the estimate (libwebrtc: 2).
        public var alrScale = 2.0
        /// Clusters asked for while ``ProbeController/applicationLimited`` last ``burstRobustDurationMicros``
        /// instead of ``minDurationMicros`` and are marked ``ProbeCluster/measuresPastBurst``. Only those: a sender that fills
        /// its target keeps a token bucket empty, and a 300 ms cluster at 2 × its rate queues 150 ms of it
        /// (read as over-use: the in-memory 1 Mbit/s call fell to 430 kbit/s).
        public var burstRobust = false
        /// 400 ms: at 2 × a 1 Mbit/s link a 15 kB token-bucket burst (tbf `burst 15kb`) is spent after
        /// 120 ms (30 kB sent); what arrives after 55 % of the cluster (``ProbeBitrateEstimator``) comes at
        /// the link's rate, and the 25 kB it queues fit tbf's 100 ms `latency` (27.5 kB). With 300 ms and
        /// the last third a Chromium run read 1.1 Mbit/s through 1 Mbit/s.
        public var burstRobustDurationMicros: Int64 = 400_000
        /// The start probes' chain is burst-robust whatever ``ProbeController/applicationLimited`` says (with
        /// ``burstRobust``): at the start nothing has been sent, so nothing says whether the sender is limited.
        public var startProbesMeasurePastBurst = false

        public init() {}

        /// For a screen sender on a real session, as the RTP session uses it: periodic probes only (they find
        /// capacity that came back: 300 kbit/s → 3 Mbit/s in about 6 s instead of AIMD's 30); no recovery probe (libwebrtc sends it only while application-limited — for a
        /// greedy sender the drop was the link's, and 85 % of the old rate into it is loss and over-use), and
        /// no periodic probe within 2.5 s of an over-use (a full link has nothing to find; a probe there lifts
        /// the estimate to the link's rate with no room for keyframes and overhead). Measured in memory
        /// (PeerConnectionTests.CongestionCallTests, a 30 kB drop-tail queue): with the defaults the 300 kbit/s
        /// step held near 130 kbit/s; with these above 200 kbit/s. The quiet time was 5 s until 2026-12-05:
        /// with Chromium behind tbf (ChromiumCongestionTests), the over-use of the 300 kbit/s queue draining
        /// after the step up to 3 Mbit/s then held the first probe until +5.7 s; at 2.5 s it came at +3.7 s
        /// (two runs of three); probes into a full link stay 5 s apart (the periodic interval).
        public static var screenSender: Configuration {
            var configuration = Configuration()
            // One start probe, at 3 × the start rate, long enough to see past a token bucket's burst (a 3.4 kB
            // cluster at 6 × 300 kbit/s fits tbf's `burst 15kb` and read 1.46 Mbit/s on a 1 Mbit/s link,
            // Chromium, measured; an application-limited screen encoder then never meets the over-use that
            // would correct it). Its chain goes on at 2 × each result, so an open path is found in about a
            // second: without it the estimate climbed from 300 kbit/s by AIMD and 5-s ALR probes, and a
            // 1080p viewer on loopback got the rate policy's 5 to 10 fps for its first 8 s (measured,
            // `tools/bench --phases g2g`, 2026-12-06).
            (configuration.firstScale, configuration.secondScale) = (3, 1)
            configuration.startProbesMeasurePastBurst = true
            configuration.dropTimeoutMicros = 0
            configuration.periodicQuietMicros = 2_500_000
            // ALR probes every 5 s (libwebrtc's interval) and clusters long enough to see past a token
            // bucket's burst: their results lift the estimate of an encoder that sends 300–550 kbit/s on a
            // 3 Mbit/s link, which the AIMD increase (≤ 1.5 × acknowledged) would take a minute to find.
            configuration.alrIntervalMicros = 5_000_000
            configuration.burstRobust = true
            // Periodic clusters too (issue 12): a 15-ms cluster at 2 × a 220 kbit/s target read 315–387 kbit/s
            // through a 300 kbit/s tbf's burst, set the target above the link, and the loss that followed held
            // the estimate at 153–197 kbit/s with 0.4–0.5 decoded fps.
            configuration.periodicProbesMeasurePastBurst = true
            // At 1.5 × the estimate, not 2 ×: 400 ms at 2 × an estimate near a full link queue 0.4 s of it (a
            // 1 Mbit/s link's 30 kB queue filled, read as over-use: the target dipped to 570–690 kbit/s every
            // 5 s in memory); at 1.5 × half that. A link that opened still shows at once (the cluster arrives
            // as fast as it left) and the chain goes on at 2 × each result.
            configuration.periodicScale = 1.5
            // …and a cluster that found the link full ends its chain: at 1.5 × a 200 kbit/s estimate on a 300
            // kbit/s link the result (≈ 270) passed the further-probe threshold (0.7 × 300), and the further
            // cluster at 2 × 270 brought 38–48 % loss.
            configuration.endChainWhenSaturated = true
            return configuration
        }
    }

    private enum Phase: Sendable, Equatable {
        case waitingForResult(minToProbeFurther: Double?)
        case complete
    }

    public let configuration: Configuration
    public private(set) var maxBitrate: Double
    private var phase = Phase.complete
    private var estimate: Double = 0
    private var nextID = 1
    private var lastProbeMicros: Int64 = .min / 2
    private var lastDropMicros: Int64?
    private var bitrateBeforeDrop: Double = 0
    private var lastRecoveryProbeMicros: Int64 = .min / 2
    private var lastOveruseMicros: Int64 = .min / 2
    /// Whether the sender sends below its target (set by its owner before each call): with
    /// ``Configuration/burstRobust`` its clusters are then long and marked ``ProbeCluster/measuresPastBurst``.
    public var applicationLimited = false
    /// Whether the last clusters asked for measure past a token bucket's burst (a further cluster of the same
    /// chain does too).
    private var chainMeasuresPastBurst = false
    /// Probes asked for while the ALR detector said application-limited (ALR probes, and periodic ones then).
    public private(set) var alrProbes = 0

    public init(configuration: Configuration = .init(), maxBitrate: Double) {
        self.configuration = configuration
        self.maxBitrate = maxBitrate
    }

    /// The exponential probes for a session starting at `startBitrate`.
    public mutating func start(startBitrate: Double, nowMicros: Int64) -> [ProbeCluster] {
        estimate = startBitrate
        return probe([configuration.firstScale * startBitrate, configuration.secondScale * startBitrate],
                     nowMicros: nowMicros, further: true, pastBurst: configuration.startProbesMeasurePastBurst)
    }

    /// Forgets the estimate, the drops, the over-use and every probe made (libwebrtc's `ProbeController::Reset`,
    /// on a new path); cluster ids and the ALR probe count go on.
    public mutating func reset() {
        var fresh = ProbeController(configuration: configuration, maxBitrate: maxBitrate)
        (fresh.nextID, fresh.alrProbes) = (nextID, alrProbes)
        self = fresh
    }

    /// A new target: maybe probe further; remember large drops.
    public mutating func onEstimate(_ bitsPerSecond: Double, nowMicros: Int64) -> [ProbeCluster] {
        var clusters: [ProbeCluster] = []
        if case .waitingForResult(let threshold?) = phase, bitsPerSecond > threshold {
            clusters = probe([configuration.furtherScale * bitsPerSecond], nowMicros: nowMicros, further: true,
                             continuingChain: true)
        }
        if bitsPerSecond < configuration.dropThreshold * estimate {
            lastDropMicros = nowMicros
            bitrateBeforeDrop = estimate
        }
        estimate = bitsPerSecond
        return clusters
    }

    /// A cluster found the link full (it arrived slower than it left): the chain ends, no further cluster
    /// (with ``Configuration/endChainWhenSaturated``; a further cluster at 2 × a full link's rate is only loss).
    public mutating func onSaturatedResult() {
        guard configuration.endChainWhenSaturated, case .waitingForResult = phase else { return }
        phase = .complete
    }

    /// The detector went from under-use back to normal.
    public mutating func onRecoveredFromOveruse(nowMicros: Int64) -> [ProbeCluster] {
        guard phase == .complete, let lastDropMicros, nowMicros - lastDropMicros < configuration.dropTimeoutMicros,
              nowMicros - lastRecoveryProbeMicros > configuration.minRecoveryIntervalMicros else { return [] }
        let suggested = configuration.fractionAfterDrop * bitrateBeforeDrop
        guard suggested * 0.95 > estimate else { return [] }
        lastRecoveryProbeMicros = nowMicros
        return probe([suggested], nowMicros: nowMicros, further: false)
    }

    /// The delay-based detector saw over-use at `nowMicros` (periodic probes wait ``Configuration/periodicQuietMicros``).
    public mutating func onOveruse(nowMicros: Int64) { lastOveruseMicros = nowMicros }

    /// Timeouts, ALR probes (when `applicationLimitedSince` is the start of an application-limited period by
    /// the ``ApplicationLimitedDetector``, µs) and periodic probes.
    public mutating func onTick(nowMicros: Int64, applicationLimitedSince: Int64? = nil) -> [ProbeCluster] {
        if case .waitingForResult = phase, nowMicros - lastProbeMicros > configuration.resultTimeoutMicros {
            phase = .complete
        }
        if phase == .complete, configuration.alrIntervalMicros > 0, let since = applicationLimitedSince, estimate > 0,
           estimate < 0.9 * maxBitrate, nowMicros - max(since, lastProbeMicros) >= configuration.alrIntervalMicros {
            let clusters = probe([configuration.alrScale * estimate], nowMicros: nowMicros, further: true)
            if !clusters.isEmpty { alrProbes += 1 }
            return clusters
        }
        guard phase == .complete, configuration.periodicIntervalMicros > 0, estimate > 0, estimate < 0.9 * maxBitrate,
              nowMicros - lastProbeMicros >= configuration.periodicIntervalMicros,
              nowMicros - lastOveruseMicros >= configuration.periodicQuietMicros else { return [] }
        // One that counts as an ALR probe (the sender is application-limited) goes at the ALR probe's scale.
        let countsAsALR = configuration.alrIntervalMicros > 0 && applicationLimitedSince != nil
        let scale = countsAsALR ? configuration.alrScale : configuration.periodicScale
        let clusters = probe([scale * estimate], nowMicros: nowMicros, further: true,
                             pastBurst: configuration.periodicProbesMeasurePastBurst)
        if countsAsALR, !clusters.isEmpty { alrProbes += 1 }
        return clusters
    }

    public mutating func setMaxBitrate(_ bitsPerSecond: Double) { maxBitrate = bitsPerSecond }

    /// Clusters at `rates`. A further cluster (`continuingChain`) measures past the burst when its chain's
    /// last one did, whatever the owner says now: the owner's application-limited view reads an acknowledged
    /// rate the chain's own padding has just inflated (2.8 Mbit/s acknowledged for an encoder sending 500
    /// kbit/s, Chromium behind tbf), and a short cluster in the chain reads the token bucket's burst, not
    /// the link — its result was then capped at the target and the chain stopped at ~1.5 Mbit/s on a 3 Mbit/s
    /// link (measured, 2026-12-05).
    private mutating func probe(
        _ rates: [Double], nowMicros: Int64, further: Bool, continuingChain: Bool = false, pastBurst forced: Bool = false
    ) -> [ProbeCluster] {
        let pastBurst = configuration.burstRobust && (forced || applicationLimited || (continuingChain && chainMeasuresPastBurst))
        var further = further
        var clusters: [ProbeCluster] = []
        for rate in rates {
            var rate = rate
            if rate >= maxBitrate {
                rate = maxBitrate
                further = false
            }
            // Nothing at or below the estimate, nor a second cluster at the same capped rate.
            guard rate > estimate, rate > Double(clusters.last?.bitsPerSecond ?? 0) else { continue }
            let duration = pastBurst ? configuration.burstRobustDurationMicros : configuration.minDurationMicros
            let bytes = Int(rate * Double(duration) / Units.microsPerSecond / 8)
            clusters.append(ProbeCluster(id: nextID, bitsPerSecond: Int(rate.rounded()), minPackets: configuration.minPackets,
                                         minBytes: bytes, createdMicros: nowMicros, measuresPastBurst: pastBurst))
            nextID += 1
        }
        guard let highest = clusters.last else { return [] }
        chainMeasuresPastBurst = pastBurst
        lastProbeMicros = nowMicros
        phase = .waitingForResult(minToProbeFurther: further ? configuration.furtherThreshold * Double(highest.bitsPerSecond) : nil)
        return clusters
    }
}
