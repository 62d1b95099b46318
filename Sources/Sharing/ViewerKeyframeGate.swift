/// Bounds the keyframes each viewer may ask of the shared encoder (sans-I/O: the owner passes the time,
/// CLOCK_MONOTONIC µs, and forwards the requests admitted). A keyframe from the shared encoder is paid for
/// by every viewer — a 1080p screen's keyframe is tens of times an interframe — so one viewer's requests
/// must not set everybody's keyframe rate.
///
/// Each viewer has a spacing: the least time between two of its requests passed on.
/// - It starts at ``baseSpacingMicros`` (1 s: a viewer that lost a frame gets a keyframe at once, its retry
///   after its lobby's second).
/// - A keyframe that did not help grows it ×``growth`` up to ``maximumSpacingMicros``: the viewer asked again
///   within ``settleMicros`` of the last request passed, or kept asking after that while its requests were
///   held (requests held within ``settleMicros`` are the viewer waiting for the keyframe: no evidence). A
///   viewer that cannot decode whatever it is sent (an end-to-end encrypted call watched without the key or
///   with a wrong one; a broken decoder) asks about once a second for ever: without the bound, every viewer
///   got a keyframe a second (issue 34: the encoded rate went from ~140 to ~410 kbit/s for everyone).
/// - A request after a quiet time (none held, none within ``settleMicros``) is a new loss that the last
///   keyframe did not cause: the spacing falls back to the base.
/// - A viewer among ``BitrateFollower/outliers`` (thinned: a keyframe sized for the fast viewers is seconds
///   of its estimate) is spaced at least ``outlierSpacingMicros``.
///
/// Held requests are not queued: the viewer asks again (its lobby every second, Chromium on each decode
/// failure), so a request is only ever later, never lost. A viewer that can decode again (the page was given
/// the key) says so (``restart(peer:nowMicros:)``, the page's `POST` on its WHEP session): it gets a keyframe at
/// once and the base spacing, at most once per ``restartSpacingMicros`` (a key typed in waited up to 17 s).
///
/// The gate keeps every viewer's ``KeyframeSpacing`` by id; ``ViewerHub`` keeps each in its viewer's record.
public struct ViewerKeyframeGate: Sendable, Equatable {
    /// The spacing every viewer starts with, and falls back to after a quiet time, µs (1 s).
    public static let baseSpacingMicros: UInt64 = 1_000_000
    /// The spacing of a thinned viewer (``BitrateFollower/outliers``), at least, µs (4 s).
    public static let outlierSpacingMicros: UInt64 = 4_000_000
    /// The largest spacing, µs (16 s): a keyless viewer costs everybody one keyframe per 16 s.
    public static let maximumSpacingMicros: UInt64 = 16_000_000
    /// A request this soon after the last one passed says that keyframe did not help, µs (2 s: a keyframe
    /// reaches a viewer and is decoded well within it, even paced at 300 kbit/s).
    public static let settleMicros: UInt64 = 2_000_000
    /// How much an unhelpful keyframe multiplies the spacing: 1 → 4 → 16 s.
    public static let growth: UInt64 = 4

    /// The least time between two restarts of one viewer honoured, µs (10 s): a page that says "I can decode
    /// now" in a loop gets a keyframe per 10 s, not one a second.
    public static let restartSpacingMicros: UInt64 = 10_000_000

    /// Requests held back so far, of every viewer.
    public private(set) var held = 0
    /// Requests held back so far, of viewers while they were outliers.
    public private(set) var heldFromOutliers = 0
    private var viewers: [String: KeyframeSpacing] = [:]

    public init() {}

    /// Whether `peer`'s keyframe request at `nowMicros` goes to the encoder.
    public mutating func admit(peer: String, isOutlier: Bool, nowMicros: UInt64) -> Bool {
        let passed = KeyframeSpacing.admit(&viewers[peer], isOutlier: isOutlier, nowMicros: nowMicros)
        if !passed {
            held += 1
            if isOutlier { heldFromOutliers += 1 }
        }
        return passed
    }

    /// `peer` can decode again (a key entered): true when a keyframe should be requested for it now (its spacing
    /// is back at the base); false within ``restartSpacingMicros`` of its last restart honoured.
    public mutating func restart(peer: String, nowMicros: UInt64) -> Bool {
        let passed = KeyframeSpacing.restart(&viewers[peer], nowMicros: nowMicros)
        if !passed { held += 1 }
        return passed
    }

    /// `peer`'s current spacing, µs (nil: it has asked for nothing yet).
    public func spacingMicros(of peer: String) -> UInt64? { viewers[peer]?.spacingMicros }

    /// The viewer left.
    public mutating func remove(peer: String) { viewers[peer] = nil }
}

/// One viewer's keyframe-request spacing under the rules of ``ViewerKeyframeGate`` (sans-I/O; times are
/// CLOCK_MONOTONIC µs). Nil before the viewer's first request: the static methods take it `inout` so the first
/// request or restart makes it.
public struct KeyframeSpacing: Sendable, Equatable {
    /// When the last request passed, µs.
    var lastPassed: UInt64
    /// When the last restart was honoured, µs.
    var lastRestart: UInt64?
    /// The least time between two of its requests passed on now, µs.
    public private(set) var spacingMicros: UInt64
    /// A request was held since `lastPassed`, ``ViewerKeyframeGate/settleMicros`` or more after it: the viewer
    /// kept asking after the keyframe had time to arrive (requests before that are the viewer waiting for it).
    var keptAsking = false

    /// Whether a request at `nowMicros` goes to the encoder (the first one always does).
    public static func admit(_ spacing: inout KeyframeSpacing?, isOutlier: Bool, nowMicros: UInt64) -> Bool {
        typealias Gate = ViewerKeyframeGate
        let floor = isOutlier ? Gate.outlierSpacingMicros : Gate.baseSpacingMicros
        guard var viewer = spacing else {
            spacing = KeyframeSpacing(lastPassed: nowMicros, spacingMicros: floor)
            return true
        }
        let elapsed = nowMicros >= viewer.lastPassed ? nowMicros - viewer.lastPassed : 0
        if elapsed < max(viewer.spacingMicros, floor) {
            if elapsed >= Gate.settleMicros { viewer.keptAsking = true }
            spacing = viewer
            return false
        }
        let unhelped = viewer.keptAsking || elapsed < Gate.settleMicros
        viewer.spacingMicros = unhelped ? min(Gate.maximumSpacingMicros, viewer.spacingMicros * Gate.growth) : Gate.baseSpacingMicros
        viewer.spacingMicros = max(viewer.spacingMicros, floor)
        viewer.lastPassed = nowMicros
        viewer.keptAsking = false
        spacing = viewer
        return true
    }

    /// The viewer can decode again: true when a keyframe should be requested now (the spacing back at the
    /// base); false within ``ViewerKeyframeGate/restartSpacingMicros`` of the last restart honoured.
    public static func restart(_ spacing: inout KeyframeSpacing?, nowMicros: UInt64) -> Bool {
        var viewer = spacing ?? KeyframeSpacing(lastPassed: nowMicros, spacingMicros: ViewerKeyframeGate.baseSpacingMicros)
        if let last = viewer.lastRestart, nowMicros < last || nowMicros - last < ViewerKeyframeGate.restartSpacingMicros {
            return false
        }
        viewer.lastRestart = nowMicros
        viewer.lastPassed = nowMicros
        viewer.spacingMicros = ViewerKeyframeGate.baseSpacingMicros
        viewer.keptAsking = false
        spacing = viewer
        return true
    }
}
