/// Whether the screen capturer decodes a JPEG frame as it arrives or leaves it to the encoder thread
/// (issue 15: on the JPEG wire at 60 fps the call decoded every picture while the encoder took two in three;
/// the rest were decoded only to be dropped as stale, 4–8 ms of a core each at 1080p).
///
/// A frame is *deferred* — handed to the hub undecoded, decoded by the encoder thread only if it is taken —
/// when the next frame, arriving at the sender's usual interval and decoded at the usual cost, would still be
/// ready before the encoder takes a frame: this one would be replaced unseen. Otherwise it is decoded at once,
/// on the reader thread, while the encoder works on the frame before (the two overlap on two cores). A
/// deferred frame that is taken after all (the sender paused, or came late) is decoded on the encoder thread:
/// the cost of a wrong guess is one decode's latency on that frame, never a lost picture.
///
/// Sans-I/O: times are the caller's clock (µs); the capturer feeds it arrivals and decode durations.
struct DecodeDeferral: Sendable, Equatable {
    /// Weight of the newest sample in the moving averages (1/8, as RFC 6298 smooths RTT).
    static let smoothing = 0.125
    /// Arrival gaps above this (µs) are pauses of a damage-driven sender, not its frame interval: not averaged.
    static let longestIntervalMicros: Double = 100_000
    /// Slack (µs) the next frame must leave before the encoder is free for this one to be deferred.
    static let marginMicros: Double = 2_000

    /// Moving average of the gaps between frames, µs (nil before two frames).
    private(set) var intervalMicros: Double?
    /// Moving average of a JPEG decode on either thread, µs (nil before the first).
    private(set) var decodeMicros: Double?
    private var lastArrival: UInt64?

    /// A frame arrived at `now`.
    mutating func noteArrival(nowMicros now: UInt64) {
        defer { lastArrival = now }
        guard let last = lastArrival, now > last else { return }
        let gap = Double(now - last)
        guard gap <= Self.longestIntervalMicros else { return }
        intervalMicros = Self.smooth(intervalMicros, gap)
    }

    /// A decode took `micros`.
    mutating func noteDecode(micros: UInt64) { decodeMicros = Self.smooth(decodeMicros, Double(micros)) }

    /// Whether a frame that arrived at `now` should be left undecoded: the encoder will take a new frame no
    /// earlier than `encoderFreeAt` (nil: it is waiting for one now), and the next frame is expected to be
    /// decoded before that.
    func shouldDefer(nowMicros now: UInt64, encoderFreeAt: UInt64?) -> Bool {
        guard let free = encoderFreeAt, free > now, let interval = intervalMicros, let decode = decodeMicros else { return false }
        return interval + decode + Self.marginMicros < Double(free - now)
    }

    private static func smooth(_ average: Double?, _ sample: Double) -> Double {
        guard let average else { return sample }
        return average + smoothing * (sample - average)
    }
}
