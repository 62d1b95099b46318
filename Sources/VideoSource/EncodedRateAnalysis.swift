/// What an encoder emitted against its target: the mean rate, the worst sliding window, and the bytes of
/// each kind of frame (from `EncoderReplay.Result`). Rates in kbps (1000 bits per second).
package struct EncodedRateAnalysis: Sendable, Equatable {
    /// Mean rate over the whole run, every frame counted.
    package var meanKbps: Double
    /// The highest rate over any `windowMicros` window that starts at a frame, excluding the first
    /// keyframe (which fills the buffer libvpx starts with).
    package var worstWindowKbps: Double
    /// The window, µs.
    package var windowMicros: UInt64
    /// Bytes by kind of frame.
    package var bytesByKind: [EncoderReplay.Kind: Int]
    /// Frames by kind.
    package var framesByKind: [EncoderReplay.Kind: Int]
    /// Keyframes encoded.
    package var keyframes: Int
    /// The largest keyframe after the first one, bytes (0 when there is none).
    package var largestLaterKeyframeBytes: Int
    /// The first keyframe's bytes.
    package var firstKeyframeBytes: Int
    /// New frames encoded per second of replay.
    package var newFramesPerSecond: Double

    /// Analyses `result` over windows of `windowMicros` (default 2 s). Windows run from each frame's time;
    /// windows that would run past the end are left out.
    package init(_ result: EncoderReplay.Result, windowMicros: UInt64 = 2_000_000) {
        let records = result.records
        let seconds = Double(max(1, result.durationMicros)) / 1e6
        meanKbps = Double(records.reduce(0) { $0 + $1.bytes }) * 8 / 1000 / seconds
        self.windowMicros = windowMicros
        var bytesByKind: [EncoderReplay.Kind: Int] = [:]
        var framesByKind: [EncoderReplay.Kind: Int] = [:]
        for record in records {
            bytesByKind[record.kind, default: 0] += record.bytes
            framesByKind[record.kind, default: 0] += 1
        }
        self.bytesByKind = bytesByKind
        self.framesByKind = framesByKind
        let keyframeRecords = records.filter(\.isKeyframe)
        keyframes = keyframeRecords.count
        firstKeyframeBytes = keyframeRecords.first?.bytes ?? 0
        largestLaterKeyframeBytes = keyframeRecords.dropFirst().map(\.bytes).max() ?? 0
        newFramesPerSecond = Double(framesByKind[.newFrame] ?? 0) / seconds

        // Sliding window sum (two pointers); the first keyframe is left out.
        let firstKeyIndex = records.firstIndex(where: \.isKeyframe)
        var worst = 0
        var sum = 0
        var tail = 0
        let usable = records.enumerated().filter { $0.offset != firstKeyIndex }.map(\.element)
        for head in usable.indices {
            let windowEnd = usable[head].atMicros + windowMicros
            guard windowEnd <= result.durationMicros else { break }
            while tail < usable.count, usable[tail].atMicros < windowEnd {
                sum += usable[tail].bytes
                tail += 1
            }
            worst = max(worst, sum)
            sum -= usable[head].bytes
        }
        worstWindowKbps = Double(worst) * 8 / 1000 / (Double(windowMicros) / 1e6)
    }
}
