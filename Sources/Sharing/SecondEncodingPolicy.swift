public import Media

/// Which of the call's two encodings a viewer is served from.
public enum EncodingChoice: String, Sendable, Equatable, CustomStringConvertible {
    /// The shared main encoder (its rate follows the viewers that are not far below the others).
    case main
    /// The second, lower-rate encoding (``VideoSource/SecondEncoding``), for viewers far below the others.
    case low

    public var description: String { rawValue }
}

/// One viewer's estimate as ``SecondEncodingPolicy`` reads it (from ``BitrateFollower/peerEstimates``).
public struct PeerEstimate: Sendable, Equatable {
    /// The estimate, kbps.
    public var kbps: Int
    /// True for our GCC target (transport-wide CC), false for a REMB: only a GCC viewer is sent less than
    /// the encoder makes, so only it can be moved to the low encoding.
    public var isCongestionControl: Bool
    /// No feedback for ``BitrateFollower/silenceLimitMicros``: its estimate says nothing now.
    public var silent: Bool

    public init(kbps: Int, isCongestionControl: Bool, silent: Bool = false) {
        self.kbps = kbps
        self.isCongestionControl = isCongestionControl
        self.silent = silent
    }
}

/// Decides, sans-I/O, when the second encoding runs, at what rate and size, and which viewers it serves
/// (issue 12, "the rate policy for screens"): a viewer far below the others gets a lower-rate encoding of the
/// same source instead of a thinned main one.
///
/// - **The reference** is the highest estimate, but no more than the main encoder's ceiling (`--bitrate` or
///   the size's default): an estimate above what the main encoder ever makes says nothing of what a viewer
///   needs to take it (else a viewer on the low encoding, sending only its own low rate, would have to reach
///   an unreachable estimate to come back).
/// - **Down**: a GCC viewer whose estimate stays below ``Settings/outlierRatio`` × the reference for
///   ``Settings/downHoldMicros`` moves to the low encoding (a viewer ramping up after it joined does not).
/// - **Up**: a viewer on the low encoding whose estimate stays at or above ``Settings/upRatio`` × the reference
///   for ``Settings/upHoldMicros`` moves back (the gap between the two ratios is the hysteresis: no flapping
///   at the line); also at once when its estimate is gone.
/// - **The encoder** starts as soon as a movable outlier exists (so it is warm when the first viewer moves)
///   and stops once neither an outlier nor a viewer on it has been left for ``Settings/stopHoldMicros``.
/// - **Its rate** is the lowest estimate among its viewers (before any has moved: the lowest outlier's) ×
///   ``Settings/rateShare`` (RTP, SRTP and RTX overhead and keyframe bursts ride on top), at least
///   ``Settings/minimumKbps``; changes under ``Settings/minimumChange`` are skipped.
/// - **Its size**: half width and height when the main picture at full size would get fewer than
///   ``Settings/halfBelowFramesPerSecond`` at that rate (``Settings/bitsPerPixel`` per pixel per frame, the
///   screen rate policy's model), full size again above ``Settings/fullAboveFramesPerSecond``; never halved
///   below ``Settings/minimumHalfWidth`` pixels wide (text stays readable).
///
/// The owner feeds it the estimates (kbps, CLOCK_MONOTONIC µs) on every change and on a timer, applies the
/// actions in order, and moves each viewer's frames at the next keyframe of the encoding it moves to
/// (``EncodingSwitch``).
public struct SecondEncodingPolicy: Sendable, Equatable {
    /// The thresholds.
    public struct Settings: Sendable, Equatable {
        /// A viewer whose estimate is below this × the reference (the highest estimate, capped at the main
        /// encoder's ceiling) is far below the others.
        public var outlierRatio = 0.5
        /// A viewer on the second encoding at or above this × the reference may move back.
        public var upRatio = 0.7
        /// How long a viewer stays far below before it moves down, µs.
        public var downHoldMicros: UInt64 = 2_000_000
        /// How long a viewer stays above ``upRatio`` before it moves back, µs.
        public var upHoldMicros: UInt64 = 4_000_000
        /// How long the second encoder runs on with nobody needing it, µs.
        public var stopHoldMicros: UInt64 = 5_000_000
        /// The second encoder's target, × the lowest estimate among its viewers.
        public var rateShare = 0.85
        /// The second encoder's lowest target, kbps.
        public var minimumKbps = 100
        /// Relative change of the target below which no new rate is asked for (0.05 = 5 %).
        public var minimumChange = 0.05
        /// What one pixel of a frame is assumed to cost, bits, when judging the frame rate a size would get.
        public var bitsPerPixel = 0.05
        /// Half width and height when full size would get fewer frames per second than this at the target.
        public var halfBelowFramesPerSecond = 12.0
        /// Full size again when it would get more frames per second than this.
        public var fullAboveFramesPerSecond = 20.0
        /// Never halve below this width, pixels.
        public var minimumHalfWidth = 320

        public init() {}
    }

    /// What the owner does.
    public enum Action: Sendable, Equatable {
        /// Start the second encoder at `kbps`, pictures divided by `divisor` (1 or 2).
        case start(kbps: Int, divisor: Int)
        /// Stop it (no viewer is on it).
        case stop
        /// Change its target, kbps.
        case setBitrate(kbps: Int)
        /// Change its divisor (the next picture is a keyframe at the new size).
        case setDivisor(Int)
        /// Move `peer` to `to` (at that encoding's next keyframe), for `reason`; the estimates it was decided on, kbps.
        case move(peer: String, to: EncodingChoice, reason: String, kbps: Int, highestKbps: Int)
    }

    /// The second encoder as decided.
    public enum EncoderState: Sendable, Equatable {
        case off
        case running(kbps: Int, divisor: Int)
    }

    public let settings: Settings
    public private(set) var encoder: EncoderState = .off
    /// The viewers on the low encoding (every other viewer is on the main one).
    public private(set) var lowViewers: Set<String> = []
    /// Moves decided so far, and encoder starts.
    public private(set) var moves = 0
    public private(set) var starts = 0
    private var outlierSince: [String: UInt64] = [:]
    private var recoveredSince: [String: UInt64] = [:]
    private var idleSince: UInt64?

    public init(settings: Settings = .init()) {
        self.settings = settings
    }

    /// The viewer left: forgotten now (``update(estimates:movable:pictureSize:ceilingKbps:nowMicros:)`` would
    /// forget it at its next call too; a call that has ended makes none).
    public mutating func remove(peer: String) {
        lowViewers.remove(peer)
        outlierSince[peer] = nil
        recoveredSince[peer] = nil
    }

    /// Whether the policy holds anything of `peer` (assigned to the low encoding, or timing a move).
    public func tracks(peer: String) -> Bool {
        lowViewers.contains(peer) || outlierSince[peer] != nil || recoveredSince[peer] != nil
    }

    /// The encoding `peer` is assigned to.
    public func assignment(of peer: String) -> EncodingChoice { lowViewers.contains(peer) ? .low : .main }

    /// The decisions at `nowMicros` for `estimates` (every viewer and consumer with one; silent ones marked),
    /// of which only `movable` (our viewers, not an SFU leg) may be moved, the main encoder's picture size (nil
    /// before the first frame: full size assumed to fit) and its ceiling, kbps (nil: none).
    public mutating func update(
        estimates: [String: PeerEstimate], movable: Set<String>, pictureSize: PictureSize?, ceilingKbps: Int? = nil,
        nowMicros now: UInt64
    ) -> [Action] {
        var actions: [Action] = []
        let highest = estimates.values.filter { !$0.silent }.map(\.kbps).max().map { min($0, ceilingKbps ?? .max) }
        func isOutlier(_ e: PeerEstimate) -> Bool {
            guard let highest, e.isCongestionControl, !e.silent else { return false }
            return Double(e.kbps) < settings.outlierRatio * Double(highest)
        }
        // Viewers gone: forgotten (their moves need no undoing).
        lowViewers.formIntersection(movable)
        outlierSince = outlierSince.filter { movable.contains($0.key) }
        recoveredSince = recoveredSince.filter { movable.contains($0.key) }

        var outliers: [String] = []
        for peer in movable.sorted() {
            let estimate = estimates[peer]
            if lowViewers.contains(peer) {
                guard let estimate, let highest else {
                    lowViewers.remove(peer)
                    recoveredSince[peer] = nil
                    actions.append(.move(peer: peer, to: .main, reason: "no estimate", kbps: estimate?.kbps ?? 0, highestKbps: highest ?? 0))
                    continue
                }
                if !estimate.silent, Double(estimate.kbps) >= settings.upRatio * Double(highest) {
                    let since = recoveredSince[peer] ?? now
                    recoveredSince[peer] = since
                    if now >= since &+ settings.upHoldMicros {
                        lowViewers.remove(peer)
                        recoveredSince[peer] = nil
                        actions.append(.move(peer: peer, to: .main, reason: "estimate near the others again", kbps: estimate.kbps, highestKbps: highest))
                    }
                } else {
                    recoveredSince[peer] = nil
                }
            } else if let estimate, isOutlier(estimate) {
                outliers.append(peer)
                let since = outlierSince[peer] ?? now
                outlierSince[peer] = since
                if now >= since &+ settings.downHoldMicros {
                    outlierSince[peer] = nil
                    lowViewers.insert(peer)
                    actions.append(.move(peer: peer, to: .low, reason: "estimate far below the others", kbps: estimate.kbps, highestKbps: highest ?? 0))
                }
            } else {
                outlierSince[peer] = nil
            }
        }
        moves += actions.count

        // The encoder: for the viewers on it, else for the outliers about to move.
        let sizing = lowViewers.isEmpty ? outliers : Array(lowViewers)
        let lowest = sizing.compactMap { estimates[$0]?.kbps }.min()
        if let lowest {
            idleSince = nil
            let kbps = max(settings.minimumKbps, Int((Double(lowest) * settings.rateShare).rounded()))
            switch encoder {
            case .off:
                let divisor = Self.divisor(kbps: kbps, size: pictureSize, current: nil, settings: settings)
                encoder = .running(kbps: kbps, divisor: divisor)
                starts += 1
                // Before the moves: the encoder exists when their keyframe is asked of it.
                actions.insert(.start(kbps: kbps, divisor: divisor), at: 0)
            case .running(let old, let oldDivisor):
                var applied = old
                if kbps != old, abs(Double(kbps - old)) / Double(max(1, old)) >= settings.minimumChange || kbps == settings.minimumKbps {
                    applied = kbps
                    actions.append(.setBitrate(kbps: kbps))
                }
                let divisor = Self.divisor(kbps: applied, size: pictureSize, current: oldDivisor, settings: settings)
                if divisor != oldDivisor { actions.append(.setDivisor(divisor)) }
                encoder = .running(kbps: applied, divisor: divisor)
            }
        } else if case .running = encoder {
            let since = idleSince ?? now
            idleSince = since
            if now >= since &+ settings.stopHoldMicros {
                encoder = .off
                idleSince = nil
                actions.append(.stop)
            }
        }
        return actions
    }

    /// The divisor for `kbps` and the main picture `size`, with hysteresis around `current` (nil: no hysteresis).
    public static func divisor(kbps: Int, size: PictureSize?, current: Int?, settings: Settings) -> Int {
        guard let size, size.width / 2 >= settings.minimumHalfWidth else { return 1 }
        let fullFramesPerSecond = Double(kbps) * 1000 / (Double(max(1, size.pixels)) * settings.bitsPerPixel)
        if fullFramesPerSecond < settings.halfBelowFramesPerSecond { return 2 }
        if fullFramesPerSecond > settings.fullAboveFramesPerSecond { return 1 }
        return current ?? 2
    }
}
