import Media
import ScreencastSupport
import VideoSource

/// What the call's encoder loop really emits against its target (`EncoderReplay`: real libvpx, virtual
/// time): each dump looped for `seconds`, at each target, with new frames, refinements, repeats and
/// keyframes all counted. Prints one table (not timed: the numbers are bytes, not speed).
enum RateControlStage {
    static let targets = [2000, 1000, 500, 300]

    struct Row {
        var content: String
        var targetKbps: Int
        /// Keyframe requests per second during the run (0: none; 10: a PLI storm).
        var requestsPerSecond: Int
        var analysis: EncodedRateAnalysis
        var stats: VideoSourceStats
    }

    static func measure(dumps: [(name: String, path: String)], size: PictureSize?, seconds: Double) throws -> [Row] {
        var rows: [Row] = []
        for dump in dumps {
            let pictures = try EncoderReplay.pictures(fromDump: dump.path, scaledTo: size)
            for target in targets {
                for rate in [0, 10] {
                    let configuration = VideoSourceConfiguration(socketPath: nil, bitrateKbps: target)
                    let requests = rate == 0 ? [] : stride(from: 500_000, to: Int(seconds * 1e6), by: 1_000_000 / rate)
                        .map { (atMicros: UInt64($0), event: EncoderReplay.Event.keyframeRequest) }
                    let result = EncoderReplay.run(pictures: pictures, seconds: seconds, configuration: configuration, events: requests)
                    rows.append(Row(content: dump.name, targetKbps: target, requestsPerSecond: rate,
                                    analysis: EncodedRateAnalysis(result), stats: result.stats))
                }
            }
        }
        return rows
    }

    /// A Markdown table, one line per (content, target).
    static func table(_ rows: [Row], size: String, seconds: Double) -> String {
        var lines = [
            "rate control, \(size), \(Int(seconds)) s per run (the worst 2-s window leaves out the first keyframe)",
            "| content | target kbps | keyframe requests/s | mean kbps | worst 2 s kbps | worst/target | new fps | refinements | repeats | keyframes | first keyframe KB | later keyframe max KB | bytes new/refine/repeat/requested-keyframe % |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for row in rows {
            let a = row.analysis
            let total = Double(max(1, a.bytesByKind.values.reduce(0, +)))
            func share(_ kind: EncoderReplay.Kind) -> String { String(Int((Double(a.bytesByKind[kind] ?? 0) / total * 100).rounded())) }
            func f(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
            lines.append("| \(row.content) | \(row.targetKbps) | \(row.requestsPerSecond) | \(f(a.meanKbps)) | \(f(a.worstWindowKbps)) | \(f(a.worstWindowKbps / Double(row.targetKbps), 2)) | \(f(a.newFramesPerSecond, 1)) | \(a.framesByKind[.refinement] ?? 0) | \(a.framesByKind[.repeatFrame] ?? 0) | \(a.keyframes) | \(f(Double(a.firstKeyframeBytes) / 1000, 1)) | \(f(Double(a.largestLaterKeyframeBytes) / 1000, 1)) | \(share(.newFrame))/\(share(.refinement))/\(share(.repeatFrame))/\(share(.keyframeRequest)) |")
        }
        return lines.joined(separator: "\n")
    }
}
