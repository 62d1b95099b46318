/// Decides the shared encoder's bitrate from the viewers' REMB estimates (draft-alvestrand-rmcat-remb):
/// one encoder feeds every viewer, so it follows the lowest estimate, clamped to the configured range.
///
/// Sans-I/O: the owner reports estimates and departures; each call says whether to change the encoder's
/// target and to what (`nil`: back to the configured or size-dependent default). Changes smaller than
/// ``minimumChange`` (relative) are not worth a reconfiguration and are skipped.
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
    private var estimates: [String: Int] = [:]
    /// What was last decided (`useDefault` at the start).
    public private(set) var applied: Decision = .useDefault

    public init(minimumKbps: Int = 150, minimumChange: Double = 0.05) {
        self.minimumKbps = max(1, minimumKbps)
        self.minimumChange = max(0, minimumChange)
    }

    /// The lowest estimate now, kbps (nil without estimates).
    public var lowestEstimateKbps: Int? { estimates.values.min() }

    /// A viewer's new estimate (bits per second). `ceilingKbps` is the top of the range: the configured
    /// bitrate, or the default for the current picture size.
    public mutating func update(peer: String, bitsPerSecond: UInt64, ceilingKbps: Int) -> Decision? {
        estimates[peer] = Int(clamping: bitsPerSecond / 1000)
        return decide(ceilingKbps: ceilingKbps)
    }

    /// A viewer left (its estimate no longer counts).
    public mutating func remove(peer: String, ceilingKbps: Int) -> Decision? {
        guard estimates.removeValue(forKey: peer) != nil else { return nil }
        return decide(ceilingKbps: ceilingKbps)
    }

    /// The decision for the estimates now, or nil when it would not change what was applied.
    public mutating func decide(ceilingKbps: Int) -> Decision? {
        let ceiling = max(minimumKbps, ceilingKbps)
        let wanted: Decision
        if let lowest = lowestEstimateKbps, lowest < ceiling {
            wanted = .set(max(minimumKbps, lowest))
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
