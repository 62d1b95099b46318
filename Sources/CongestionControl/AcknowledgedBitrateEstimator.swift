/// The rate at which the receiver got our packets, from their arrival times in TWCC feedback (libwebrtc's
/// `AcknowledgedBitrateEstimator` over its `BitrateEstimator`): the throughput the AIMD controller backs off
/// to, and a stats figure.
///
/// Bytes are summed over windows of arrival time — ``initialWindowMicros`` (500 ms) until the first
/// estimate, then ``windowMicros`` (150 ms); each window's rate is a sample. Samples are merged in a Bayesian
/// way: a sample's variance grows with its distance from the estimate (uncertainty = 10 × |estimate −
/// sample| / estimate, squared), the estimate's variance grows by 5 per sample (rates drift), so outliers
/// move it little and steady changes move it fast. A gap longer than a window drops the partial sum.
public struct AcknowledgedBitrateEstimator: Sendable {
    public static let initialWindowMicros: Int64 = 500_000
    public static let windowMicros: Int64 = 150_000
    static let uncertaintyScale = 10.0
    static let initialVariance = 50.0
    static let variancePerSample = 5.0

    /// kbit/s.
    private var estimateKbps: Double?
    private var variance = initialVariance
    private var windowSum = 0
    private var windowElapsed: Int64 = 0
    private var lastArrival: Int64?

    public init() {}

    /// The estimate, bits/s, or nil before the first window closed.
    public var bitsPerSecond: Double? { estimateKbps.map { $0 * 1000 } }

    /// Adds the received packets of one feedback (any order; they are taken by arrival time).
    public mutating func update(_ received: [PacketResult]) {
        // Sorted here: an arrival before the one just added would restart the window (``add(arrivalMicros:bytes:)``
        // reads it as reordered feedback), and a feedback's results come in sequence order.
        let arrivals = received.compactMap { result in result.arrivalMicros.map { ($0, result.sent.sizeBytes) } }
        for (arrival, bytes) in arrivals.sorted(by: { $0.0 < $1.0 }) { add(arrivalMicros: arrival, bytes: bytes) }
    }

    /// Adds one received packet.
    public mutating func add(arrivalMicros: Int64, bytes: Int) {
        let window = estimateKbps == nil ? Self.initialWindowMicros : Self.windowMicros
        guard let sample = windowSample(arrivalMicros: arrivalMicros, bytes: bytes, window: window) else { return }
        guard let estimate = estimateKbps else {
            estimateKbps = sample
            return
        }
        let uncertainty = Self.uncertaintyScale * abs(estimate - sample) / max(estimate, 1e-9)
        let sampleVariance = uncertainty * uncertainty
        let predicted = variance + Self.variancePerSample
        estimateKbps = (sampleVariance * estimate + predicted * sample) / (sampleVariance + predicted)
        variance = sampleVariance * predicted / (sampleVariance + predicted)
    }

    /// Lets the next samples move the estimate faster (after a probe, when the rate is expected to jump).
    public mutating func expectFastRateChange() { variance += 200 }

    /// The window's rate, kbit/s, when `arrivalMicros` closes it; the packet then opens the next window.
    private mutating func windowSample(arrivalMicros: Int64, bytes: Int, window: Int64) -> Double? {
        if let last = lastArrival {
            if arrivalMicros < last {
                // Time went backwards (reordered feedback): start over.
                windowSum = 0
                windowElapsed = 0
            } else {
                windowElapsed += arrivalMicros - last
                if arrivalMicros - last > window {
                    windowSum = 0
                    windowElapsed %= window
                }
            }
        }
        lastArrival = arrivalMicros
        var sample: Double?
        if windowElapsed >= window {
            sample = Double(windowSum) * 8 / Double(window / 1000)
            windowElapsed -= window
            windowSum = 0
        }
        windowSum += bytes
        return sample
    }
}
