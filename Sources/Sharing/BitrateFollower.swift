/// Decides the shared encoder's bitrate from the viewers' estimates — REMB (draft-alvestrand-rmcat-remb) or
/// our own GCC target per peer (transport-wide CC): one encoder feeds every viewer, so it follows the lowest
/// estimate, clamped to the configured range. One slow viewer must not drag the rest down: a viewer with a
/// GCC target below ``outlierRatio`` × the highest estimate is left out (its sender chain thins frames to
/// what its estimate carries). A REMB-only viewer always counts: nothing would thin its frames. Once a
/// peer has a GCC target, its REMB (only a ceiling of that target) is ignored here.
///
/// A viewer whose feedback stopped (a browser closed without `pagehide` keeps its peer until ICE consent
/// fails, 10–20 s later) no longer counts once nothing was heard from it for ``silenceLimitMicros``: its last
/// estimate would hold the encoder down for everyone. Feedback heard again (``heard(peer:nowMicros:ceilingKbps:)``
/// or a new estimate) makes it count again.
///
/// Ceilings (``setCeiling(_:bitsPerSecond:ceilingKbps:)``: an SFU's REMB, Janus's fixed room cap) bound the
/// decision whatever the estimates say and are not estimates themselves: no viewer is an outlier against a
/// cap, and a cap below the configured rate is applied even without estimates.
///
/// Sans-I/O: the owner reports estimates, feedback, the time (CLOCK_MONOTONIC µs) and departures; each call
/// says whether to change the encoder's target and to what (`nil`: back to the configured or size-dependent
/// default). Changes smaller than ``minimumChange`` (relative) are not worth a reconfiguration and are skipped.
public struct BitrateFollower: Sendable, Equatable {
    /// What to tell the encoder.
    public enum Decision: Sendable, Equatable {
        /// `setBitrate(kbps: k)`.
        case set(Int)
        /// `setBitrate(kbps: nil)`: the configured bitrate, or the default for the picture size.
        case useDefault
    }

    /// The lowest target, kbps.
    public let minimumKbps: Int
    /// Relative change below which the target is left as it is.
    public let minimumChange: Double
    /// A GCC viewer below this fraction of the highest estimate does not lower the encoder (0: every viewer counts).
    public let outlierRatio: Double
    /// Where an estimate comes from.
    public enum Source: Sendable, Equatable {
        /// The receiver's REMB: frames are not thinned for it.
        case remb
        /// Our congestion controller's target for the peer: its sender chain thins frames to it.
        case congestionControl
    }
    /// Feedback silence after which a viewer's estimate stops counting, µs (3 s: Chromium sends transport-cc
    /// feedback every ~50–100 ms and a receiver report every second; aiortc a receiver report every 0.5–1.5 s).
    public let silenceLimitMicros: UInt64
    /// The default ``silenceLimitMicros``.
    public static let defaultSilenceLimitMicros: UInt64 = 3_000_000
    private struct Estimate: Sendable, Equatable {
        var kbps: Int
        var source: Source
        /// When feedback was last heard from the viewer, µs.
        var heardMicros: UInt64
        /// Nothing heard for ``silenceLimitMicros``: not counted.
        var silent = false
    }
    private var estimates: [String: Estimate] = [:]
    private var ceilings: [String: Int] = [:]
    /// Viewers served by the second encoding (``SecondEncodingPolicy``): their estimates set neither the main
    /// encoder's rate nor make them outliers of it (they are not sent its frames).
    public private(set) var servedElsewhere: Set<String> = []
    /// What was last decided (`useDefault` at the start).
    public private(set) var applied: Decision = .useDefault

    public init(
        minimumKbps: Int = 150, minimumChange: Double = 0.05, outlierRatio: Double = 0.5,
        silenceLimitMicros: UInt64 = BitrateFollower.defaultSilenceLimitMicros
    ) {
        self.minimumKbps = max(1, minimumKbps)
        self.minimumChange = max(0, minimumChange)
        self.outlierRatio = min(max(0, outlierRatio), 1)
        self.silenceLimitMicros = max(1, silenceLimitMicros)
    }

    private var counted: [String: Estimate] { estimates.filter { !$0.value.silent } }

    /// The lowest estimate that counts now, kbps (nil without estimates): GCC viewers far below the highest,
    /// silent viewers and viewers served by the second encoding are left out.
    public var lowestEstimateKbps: Int? {
        let counted = counted
        guard let highest = counted.values.map(\.kbps).max() else { return nil }
        let floor = outlierRatio * Double(highest)
        return counted.filter { !servedElsewhere.contains($0.key) && ($0.value.source == .remb || Double($0.value.kbps) >= floor) }
            .values.map(\.kbps).min()
    }

    /// The viewers whose GCC target is too far below the others to count (their frames are thinned), except
    /// those served by the second encoding.
    public var outliers: [String] {
        let counted = counted
        guard let highest = counted.values.map(\.kbps).max() else { return [] }
        return counted.filter {
            !servedElsewhere.contains($0.key) && $0.value.source == .congestionControl && Double($0.value.kbps) < outlierRatio * Double(highest)
        }.keys.sorted()
    }

    /// Every estimate known, kbps, with its kind and whether its viewer is silent (for ``SecondEncodingPolicy``).
    public var peerEstimates: [String: PeerEstimate] {
        estimates.mapValues { PeerEstimate(kbps: $0.kbps, isCongestionControl: $0.source == .congestionControl, silent: $0.silent) }
    }

    /// Sets the viewers served by the second encoding; the decision when that changed what counts.
    public mutating func setServedElsewhere(_ peers: Set<String>, ceilingKbps: Int) -> Decision? {
        guard peers != servedElsewhere else { return nil }
        servedElsewhere = peers
        return decide(ceilingKbps: ceilingKbps)
    }

    /// The highest estimate that counts now (silent viewers left out), kbps; nil without estimates.
    public var highestEstimateKbps: Int? { counted.values.map(\.kbps).max() }

    /// The lowest of the ``outliers``' GCC targets, kbps; nil without outliers (what the droppable cadence
    /// is sized for: ``DroppableCadencePolicy``).
    public var lowestOutlierKbps: Int? {
        let counted = counted
        guard let highest = counted.values.map(\.kbps).max() else { return nil }
        return counted.filter {
            !servedElsewhere.contains($0.key) && $0.value.source == .congestionControl && Double($0.value.kbps) < outlierRatio * Double(highest)
        }.values.map(\.kbps).min()
    }

    /// The viewers with an estimate whose feedback stopped ``silenceLimitMicros`` ago or more (not counted).
    public var silentPeers: [String] { estimates.filter(\.value.silent).keys.sorted() }

    /// A viewer's new estimate (bits per second) from `source`, at `nowMicros`. `ceilingKbps` is the top of
    /// the range: the configured bitrate, or the default for the current picture size. A REMB from a peer
    /// that has a GCC target only counts as feedback heard. A REMB is feedback heard; a GCC target is not
    /// (a silent viewer's target still moves, and it stays silent). The same holds for another consumer of
    /// the encoder (the SFU leg): its owner reports feedback heard, and a leg whose SFU died goes silent.
    public mutating func update(
        peer: String, bitsPerSecond: UInt64, ceilingKbps: Int, source: Source = .remb, nowMicros: UInt64 = 0
    ) -> Decision? {
        if source == .remb, estimates[peer]?.source == .congestionControl {
            return heard(peer: peer, nowMicros: nowMicros, ceilingKbps: ceilingKbps)
        }
        // A REMB is the viewer speaking; our own GCC target is not (it moves on timers, with no feedback
        // too), so it keeps the time the viewer was last heard and whether it is silent.
        var estimate = Estimate(
            kbps: Int(clamping: bitsPerSecond / 1000), source: source, heardMicros: nowMicros)
        if source == .congestionControl, let known = estimates[peer] {
            estimate.heardMicros = known.heardMicros
            estimate.silent = known.silent
        }
        estimates[peer] = estimate
        return decide(ceilingKbps: ceilingKbps)
    }

    /// Feedback (any RTCP) came from `peer` at `nowMicros`: a silent viewer counts again.
    public mutating func heard(peer: String, nowMicros: UInt64, ceilingKbps: Int) -> Decision? {
        guard var estimate = estimates[peer] else { return nil }
        estimate.heardMicros = max(estimate.heardMicros, nowMicros)
        let wasSilent = estimate.silent
        estimate.silent = false
        estimates[peer] = estimate
        return wasSilent ? decide(ceilingKbps: ceilingKbps) : nil
    }

    /// Marks the viewers not heard from since `nowMicros - silenceLimitMicros` as silent; the decision when
    /// that changed what counts.
    public mutating func checkSilence(nowMicros: UInt64, ceilingKbps: Int) -> Decision? {
        var changed = false
        for (peer, estimate) in estimates
        where !estimate.silent && nowMicros >= estimate.heardMicros + silenceLimitMicros {
            estimates[peer]?.silent = true
            changed = true
        }
        return changed ? decide(ceilingKbps: ceilingKbps) : nil
    }

    /// The lowest ceiling set, kbps (nil: none).
    public var lowestCeilingKbps: Int? { ceilings.values.min() }

    /// Sets (or, with nil, removes) the hard ceiling named `id`, bits per second: the encoder's target never
    /// goes above the lowest ceiling (nor below ``minimumKbps``).
    public mutating func setCeiling(_ id: String, bitsPerSecond: UInt64?, ceilingKbps: Int) -> Decision? {
        ceilings[id] = bitsPerSecond.map { Int(clamping: $0 / 1000) }
        return decide(ceilingKbps: ceilingKbps)
    }

    /// A viewer left (its estimate no longer counts).
    public mutating func remove(peer: String, ceilingKbps: Int) -> Decision? {
        servedElsewhere.remove(peer)
        guard estimates.removeValue(forKey: peer) != nil else { return nil }
        return decide(ceilingKbps: ceilingKbps)
    }

    /// The decision for the estimates now, or nil when it would not change what was applied.
    public mutating func decide(ceilingKbps: Int) -> Decision? {
        let cap = lowestCeilingKbps
        let ceiling = max(minimumKbps, min(ceilingKbps, cap ?? .max))
        let wanted: Decision
        if let lowest = lowestEstimateKbps, lowest < ceiling {
            wanted = .set(max(minimumKbps, lowest))
        } else if let cap, cap < ceilingKbps {
            wanted = .set(ceiling)
        } else {
            wanted = .useDefault
        }
        switch (applied, wanted) {
        case (.useDefault, .useDefault): return nil
        case (.set(let old), .set(let new)):
            let change = abs(Double(new - old)) / Double(max(1, old))
            if change < minimumChange, new != minimumKbps { return nil }
            if new == old { return nil }
        default: break
        }
        applied = wanted
        return wanted
    }
}
