import Foundation
import FrameWire
import Media
import ScreencastSupport

/// `screencast-bench`: micro-benchmarks of single pipeline stages (release builds only give meaningful
/// numbers: `swift build -c release --product screencast-bench`). `tools/bench` runs it and the end-to-end
/// measurements; results are medians over repeated runs with min–max.
let usage = """
    Usage: screencast-bench [--stage NAME]... [--repeat N] [--json]

    Stages:
      parse-1080p   FrameWire decoder over a stream of 1920x1080-sized messages (GB/s), socket-style reads
      parse-tiny    FrameWire decoder over a stream of 200-byte messages (messages/s)
      jpeg-decode   JPEG (q80 4:2:0) → I420 at 1920x1080 and 3840x2160 (ms per frame)
      jpeg-encode   I420 → JPEG q80 4:2:0 at 1920x1080 and 3840x2160 (ms per frame)

    Options:
      --stage NAME  run only this stage (repeatable; default: all)
      --repeat N    measured runs per stage (default 7); the median, min and max are reported
      --json        print one JSON document instead of the table
    """

/// One measured figure: median and range over the runs.
struct Measurement {
    var stage: String
    var unit: String
    var values: [Double]
    var median: Double { values.sorted()[values.count / 2] }
    var json: JSONValue {
        .object([("stage", .string(stage)), ("unit", .string(unit)), ("median", .double(median)),
                 ("min", .double(values.min() ?? 0)), ("max", .double(values.max() ?? 0)), ("runs", .number(values.count))])
    }
    var line: String {
        String(format: "%-28@ %12.3f %-10@ (min %.3f, max %.3f, %d runs)", stage as NSString, median, unit as NSString,
               values.min() ?? 0, values.max() ?? 0, values.count)
    }
}

/// Runs `body` `runs` times after one warm-up and returns the seconds each run took.
func time(_ runs: Int, _ body: () throws -> Void) rethrows -> [Double] {
    try body()
    return try (0..<runs).map { _ in
        let start = MonotonicClock.nowMicros()
        try body()
        return Double(MonotonicClock.nowMicros() - start) / 1e6
    }
}

/// A synthetic I420 picture with gradients and edges (compresses like a desktop, not like noise).
func testPicture(width: Int, height: Int) -> I420Buffer {
    var picture = I420Buffer(width: width, height: height)
    picture.withUnsafeMutablePlanes { y, u, v in
        for row in 0..<height {
            for col in 0..<width {
                y[row * width + col] = UInt8(truncatingIfNeeded: (col / 8 + row / 8) % 2 == 0 ? col ^ row : 40)
            }
        }
        for index in 0..<u.count { u[index] = UInt8(truncatingIfNeeded: index / 7) }
        for index in 0..<v.count { v[index] = UInt8(truncatingIfNeeded: 255 - index / 11) }
    }
    return picture
}

/// Decodes `stream` as the socket reader does: reads of exactly `nextReadSize` bytes.
func parse(_ stream: [UInt8]) -> Int {
    var decoder = FrameDecoder()
    var frames = 0
    var offset = 0
    stream.withUnsafeBytes { source in
        while !decoder.isFinished {
            decoder.read({ buffer in
                let count = min(buffer.count, source.count - offset)
                if count > 0 { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + count)])) }
                offset += count
                return count
            }, emit: { if case .frame = $0 { frames += 1 } })
        }
    }
    return frames
}

func main() throws -> Int32 {
    let arguments = try CommandLineArguments(Array(CommandLine.arguments.dropFirst()), options: ["stage", "repeat"], flags: ["json", "help"])
    if arguments.has("help") { print(usage); return 0 }
    let runs = try arguments.int("repeat", in: 1...1000) ?? 7
    let all = ["parse-1080p", "parse-tiny", "jpeg-decode", "jpeg-encode"]
    let stages = arguments.strings("stage").isEmpty ? all : arguments.strings("stage")
    if let unknown = stages.first(where: { !all.contains($0) }) { throw UsageError("unknown stage '\(unknown)'") }
    var results: [Measurement] = []

    for stage in stages {
        switch stage {
        case "parse-1080p":
            // 64 messages with 300 KB bodies (a 1080p JPEG's typical size): about 19 MB per pass.
            let body = [UInt8](repeating: 0xAB, count: 300_000)
            let message = FrameEncoder.encode(header: FrameHeader(contentLength: 0, bufferWidth: 1920, bufferHeight: 1080), body: body)
            let stream = Array((0..<64).map { _ in message }.joined())
            let seconds = time(runs) { precondition(parse(stream) == 64) }
            results.append(Measurement(stage: "parse 1080p-sized frames", unit: "GB/s", values: seconds.map { Double(stream.count) / $0 / 1e9 }))
        case "parse-tiny":
            let message = FrameEncoder.encode(header: FrameHeader(contentLength: 0, bufferWidth: 16, bufferHeight: 16), body: [UInt8](repeating: 1, count: 80))
            let stream = Array((0..<100_000).map { _ in message }.joined())
            let seconds = time(runs) { precondition(parse(stream) == 100_000) }
            results.append(Measurement(stage: "parse 200-byte messages", unit: "M msg/s", values: seconds.map { 0.1 / $0 }))
        case "jpeg-decode", "jpeg-encode":
            let encoder = try JPEGEncoder()
            let decoder = try JPEGDecoder()
            for (label, width, height) in [("1080p", 1920, 1080), ("2160p", 3840, 2160)] {
                let picture = testPicture(width: width, height: height)
                var jpeg: [UInt8] = []
                try encoder.encode(picture, quality: 80, into: &jpeg)
                if stage == "jpeg-encode" {
                    let seconds = try time(runs) { try encoder.encode(picture, quality: 80, into: &jpeg) }
                    results.append(Measurement(stage: "JPEG encode q80 4:2:0 \(label)", unit: "ms", values: seconds.map { $0 * 1e3 }))
                } else {
                    var output = I420Buffer()
                    let seconds = try time(runs) { try decoder.decodeI420(jpeg, into: &output) }
                    results.append(Measurement(stage: "JPEG decode → I420 \(label)", unit: "ms", values: seconds.map { $0 * 1e3 }))
                }
            }
        default:
            break
        }
    }
    if arguments.has("json") {
        print(JSONValue.array(results.map(\.json)).serialized)
    } else {
        results.forEach { print($0.line) }
    }
    return 0
}

do {
    exit(try main())
} catch let error as UsageError {
    FileHandle.standardError.write(Data("screencast-bench: \(error.reason)\nTry 'screencast-bench --help'.\n".utf8))
    exit(ExitCode.usage)
} catch {
    FileHandle.standardError.write(Data("screencast-bench: \(error)\n".utf8))
    exit(ExitCode.failure)
}
