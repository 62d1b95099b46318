import Glibc

/// Sound measured: frequency by zero crossings, level as RMS dBFS.
public enum SoundMeasure {
    /// Channel `channel`'s frequency in Hz from its upward zero crossings (first to last crossing).
    public static func frequency(_ samples: [Int16], channels: Int, channel: Int = 0, rate: Int) -> Double {
        var crossings: [Double] = []
        var previous = Int(samples[channel])
        var index = channel + channels
        var frame = 1
        while index < samples.count {
            let value = Int(samples[index])
            if previous < 0, value >= 0 {
                crossings.append(Double(frame - 1) + Double(-previous) / Double(value - previous))
            }
            previous = value
            index += channels
            frame += 1
        }
        guard crossings.count >= 2 else { return 0 }
        return Double(crossings.count - 1) / ((crossings.last! - crossings.first!) / Double(rate))
    }

    public static func rmsDBFS(_ samples: [Int16]) -> Double {
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return 20 * log10((sum / Double(max(1, samples.count))).squareRoot() / 32768)
    }
}
