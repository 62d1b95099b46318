/// The delay-based estimate (draft-ietf-rmcat-gcc-02 §5; libwebrtc's `DelayBasedBwe`): each feedback's
/// received packets, in arrival order, go through ``InterArrivalDelta`` (5 ms groups) →
/// ``TrendlineEstimator`` → ``OveruseDetector``; then ``AIMDRateControl`` moves the rate.
///
/// Per feedback:
/// - over-using: decrease to 0.85 × the acknowledged rate (or what a probe in this feedback found the path
///   delivering, when more), at most once per RTT (sooner if that rate fell below half the estimate); with no
///   acknowledged rate yet, halve every 200 ms;
/// - otherwise a probe result, when there is one, sets the rate (if higher); else the AIMD step.
/// A feedback more than ``streamTimeoutMicros`` (2 s) after the last restarts grouping and the trendline.
struct DelayBasedEstimator: Sendable {
    static let streamTimeoutMicros: Int64 = 2_000_000
    static let initialBackoffIntervalMicros: Int64 = 200_000

    /// What one feedback did.
    struct Result: Sendable, Equatable {
        /// The estimate moved (or was confirmed) this feedback.
        var updated = false
        /// The move came from a probe result.
        var probe = false
        /// The detector went from under-use back to normal during this feedback.
        var recoveredFromOveruse = false
        var bitrate: Double = 0
    }

    private var interArrival = InterArrivalDelta()
    private(set) var trendline = TrendlineEstimator()
    private(set) var detector = OveruseDetector()
    private(set) var rateControl: AIMDRateControl
    private(set) var lastSample: TrendlineEstimator.Sample?
    private var lastFeedbackMicros: Int64?

    init(startBitrate: Double, minBitrate: Double, maxBitrate: Double) {
        rateControl = AIMDRateControl(startBitrate: startBitrate, minBitrate: minBitrate, maxBitrate: maxBitrate)
    }

    var bitrate: Double { rateControl.bitrate }
    var usage: BandwidthUsage { detector.usage }

    mutating func setRoundTrip(micros: Int64) { rateControl.roundTripMicros = micros }

    /// A probe ran into the link and caused the over-use this feedback handled: its measurement, less the
    /// over-use back-off (``AIMDRateControl/beta``), becomes the estimate when higher. `measured` is the
    /// lower of the probe's result and what the link delivered during it (``ProbeDeliveryRate``), bits/s.
    /// Returns whether the estimate rose.
    mutating func acceptProbeThatOverused(measured: Double, nowMicros: Int64) -> Bool {
        let backedOff = AIMDRateControl.beta * measured
        guard detector.usage == .overusing, backedOff > bitrate else { return false }
        rateControl.setEstimate(backedOff, nowMicros: nowMicros, fromProbe: true)
        return true
    }

    /// - Parameter overuseThroughputFloor: when over-using, the decrease is taken from at least this rate
    ///   (bits/s): what the path delivered during a probe in this feedback (``ProbeDeliveryRate``), nil otherwise.
    mutating func onFeedback(
        _ feedback: TransportPacketsFeedback, acknowledgedBitsPerSecond: Double?, probeBitsPerSecond: Double?,
        overuseThroughputFloor: Double? = nil
    ) -> Result {
        let now = feedback.feedbackTimeMicros
        let received = feedback.receivedByArrival
        guard !received.isEmpty else { return Result(bitrate: bitrate) }
        if let last = lastFeedbackMicros, now - last > Self.streamTimeoutMicros {
            interArrival.reset()
            trendline = TrendlineEstimator()
            detector = OveruseDetector()
        }
        lastFeedbackMicros = now

        var recovered = false
        var previousUsage = detector.usage
        for result in received {
            guard let arrival = result.arrivalMicros,
                  let deltas = interArrival.add(sendMicros: result.sent.sendTimeMicros, arrivalMicros: arrival,
                                                localMicros: now, sizeBytes: result.sent.sizeBytes) else { continue }
            let sample = trendline.update(deltas: deltas, arrivalMicros: arrival)
            lastSample = sample
            detector.detect(sample, nowMillis: arrival / 1000)
            if previousUsage == .underusing, detector.usage == .normal { recovered = true }
            previousUsage = detector.usage
        }

        var result = Result()
        if detector.usage == .overusing {
            if let measured = acknowledgedBitsPerSecond {
                let acknowledged = max(measured, overuseThroughputFloor ?? 0)
                if rateControl.timeToReduceFurther(nowMicros: now, acknowledgedBitsPerSecond: acknowledged) {
                    rateControl.update(usage: .overusing, acknowledgedBitsPerSecond: acknowledged, nowMicros: now)
                    result.updated = true
                }
            } else if rateControl.lastDecreaseMicros.map({ now - $0 >= Self.initialBackoffIntervalMicros }) ?? true {
                rateControl.setEstimate(bitrate / 2, nowMicros: now)
                result.updated = true
            }
        } else if let probe = probeBitsPerSecond, probe > bitrate {
            rateControl.setEstimate(probe, nowMicros: now, fromProbe: true)
            result.updated = true
            result.probe = true
        } else {
            rateControl.update(usage: detector.usage, acknowledgedBitsPerSecond: acknowledgedBitsPerSecond, nowMicros: now)
            result.updated = true
            result.recoveredFromOveruse = recovered
        }
        result.bitrate = bitrate
        return result
    }
}
