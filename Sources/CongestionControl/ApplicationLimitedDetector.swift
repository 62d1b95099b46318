/// Tells when the sender is application-limited — it sends well below the target because the encoder has
/// no more to give, not because the link is full (libwebrtc's `AlrDetector`, "application-limited region").
///
/// A budget that fills at ``Configuration/usageRatio`` (65 %) × the target and empties by the bytes the
/// application sent (media and retransmissions, not probe padding), clamped to ±``Configuration/windowMicros``
/// (500 ms) of that rate. The sender enters ALR when the budget is above ``Configuration/startLevel`` (80 %)
/// of its size — it sent less than about half its target for a while — and leaves it when the budget falls
/// below ``Configuration/stopLevel`` (50 %). Sans-I/O: times are the caller's monotonic µs.
public struct ApplicationLimitedDetector: Sendable {
    /// The detector's thresholds (libwebrtc's defaults).
    public struct Configuration: Sendable, Equatable {
        /// The share of the target the budget fills at, 0…1.
        public var usageRatio = 0.65
        /// Budget level (a share of its size, 0…1) above which the application-limited region starts.
        public var startLevel = 0.8
        /// Budget level (0…1) below which it ends.
        public var stopLevel = 0.5
        /// The budget's size, µs at the budget's rate.
        public var windowMicros: Int64 = 500_000

        /// libwebrtc's thresholds: 65 %, 80 %, 50 %, 500 ms.
        public init() {}
    }

    /// The thresholds it runs with.
    public let configuration: Configuration
    /// Bytes the sender may still send within the budget (negative: it sent more).
    private var budgetBytes: Double = 0
    private var rateBitsPerSecond: Double
    private var lastMicros: Int64?
    /// When the current application-limited period began, µs; nil while not application-limited.
    public private(set) var startMicros: Int64?

    /// A detector for a target of `targetBitsPerSecond` (bits per second; negative counts as 0), budget empty,
    /// not application-limited.
    public init(configuration: Configuration = .init(), targetBitsPerSecond: Int) {
        self.configuration = configuration
        rateBitsPerSecond = configuration.usageRatio * Double(max(targetBitsPerSecond, 0))
    }

    /// True inside an application-limited region (between `startLevel` and `stopLevel` crossings).
    public var isApplicationLimited: Bool { startMicros != nil }

    /// The budget level, −1…1 of its size.
    public var level: Double {
        let size = maxBudgetBytes
        return size > 0 ? budgetBytes / size : 0
    }

    /// A new target, bits/s: the budget fills at ``Configuration/usageRatio`` of it from now on.
    public mutating func setTarget(bitsPerSecond: Int) {
        rateBitsPerSecond = configuration.usageRatio * Double(max(bitsPerSecond, 0))
        budgetBytes = min(max(budgetBytes, -maxBudgetBytes), maxBudgetBytes)
    }

    /// The application sent `bytes` at `now`.
    public mutating func onBytesSent(_ bytes: Int, atMicros now: Int64) {
        advance(to: now)
        budgetBytes = max(budgetBytes - Double(bytes), -maxBudgetBytes)
        evaluate(now)
    }

    /// Time passed with nothing sent (call it from the controller's tick, so silence counts too).
    public mutating func onTick(atMicros now: Int64) {
        advance(to: now)
        evaluate(now)
    }

    private var maxBudgetBytes: Double { rateBitsPerSecond * Double(configuration.windowMicros) / 8_000_000 }

    private mutating func advance(to now: Int64) {
        defer { lastMicros = max(lastMicros ?? now, now) }
        guard let lastMicros, now > lastMicros else { return }
        budgetBytes = min(budgetBytes + rateBitsPerSecond * Double(now - lastMicros) / 8_000_000, maxBudgetBytes)
    }

    private mutating func evaluate(_ now: Int64) {
        if startMicros == nil, level > configuration.startLevel {
            startMicros = now
        } else if startMicros != nil, level < configuration.stopLevel {
            startMicros = nil
        }
    }
}
