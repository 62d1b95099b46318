import Foundation
import ScreencastSupport

/// One measured figure: one value per measured run, reported as the median with min–max. `detail` carries
/// extra numbers of the last run (per-frame percentiles, sizes) for the JSON output.
struct Measurement {
    var stage: String
    var unit: String
    var values: [Double]
    var detail: [(String, JSONValue)] = []

    var median: Double { Statistics.median(values) }

    var json: JSONValue {
        .object([("stage", .string(stage)), ("unit", .string(unit)), ("median", .double(median)),
                 ("min", .double(values.min() ?? 0)), ("max", .double(values.max() ?? 0)), ("runs", .number(values.count))]
                + detail)
    }

    var line: String {
        stage.padding(toLength: max(46, stage.count), withPad: " ", startingAt: 0)
            + String(format: " %10.3f ", median) + unit.padding(toLength: max(9, unit.count), withPad: " ", startingAt: 0)
            + String(format: " (min %.3f, max %.3f, %d runs)", values.min() ?? 0, values.max() ?? 0, values.count)
    }
}

enum Statistics {
    /// The middle value (the mean of the two middle ones for an even count); 0 for none.
    static func median(_ values: [Double]) -> Double { percentile(values, 50) }

    /// Linear-interpolated percentile `p` (0…100) of `values`; 0 for none.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = p / 100 * Double(sorted.count - 1)
        let low = Int(rank.rounded(.down)), high = Int(rank.rounded(.up))
        return sorted[low] + (sorted[high] - sorted[low]) * (rank - Double(low))
    }
}

/// Runs `body` `runs` times after one warm-up and returns the seconds each run took (wall clock; the stages
/// are single-threaded and CPU-bound, so this is their CPU time on an idle machine).
func time(_ runs: Int, _ body: () throws -> Void) rethrows -> [Double] {
    try body()
    return try (0..<runs).map { _ in
        let start = MonotonicClock.nowMicros()
        try body()
        return Double(MonotonicClock.nowMicros() - start) / 1e6
    }
}

/// Times `body` repeatedly for at least `minimumSeconds` (and `minimumCalls` calls) and returns seconds per
/// call: one measured run of a fast operation.
func timePerCall(minimumSeconds: Double = 0.25, minimumCalls: Int = 3, _ body: () throws -> Void) rethrows -> Double {
    let start = MonotonicClock.nowMicros()
    var calls = 0
    var elapsed = 0.0
    repeat {
        try body()
        calls += 1
        elapsed = Double(MonotonicClock.nowMicros() - start) / 1e6
    } while elapsed < minimumSeconds || calls < minimumCalls
    return elapsed / Double(calls)
}

/// This process's resident set (VmRSS), MiB; 0 when /proc cannot be read.
func residentMiB() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kib = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    else { return 0 }
    return kib / 1024
}
