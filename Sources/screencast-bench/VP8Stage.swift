import Media
import ScreencastSupport

/// VP8 encoding (libvpx real time, the call's settings) of recorded screen content: each dump's frames
/// are decoded to I420, converted to limited range and encoded in order with their capture timestamps, skipping frames identical to
/// the previous one (keepalives; the call drops those as `unchanged`). Only the encode calls are timed.
enum VP8Stage {
    /// One measurement per dump: mean ms per encoded frame over each run (a fresh encoder per run), with
    /// the last run's per-frame p50/p95/max, encode CPU per second of content and the resulting bitrate.
    /// `cpuUsed`: libvpx's speed (`VP8E_SET_CPUUSED`, -16…-1); nil keeps the call's default.
    static func measure(runs: Int, dumps: [(String, DumpFrames)], maxFrames: Int, cpuUsed: Int? = nil) throws -> [Measurement] {
        let decoder = try JPEGDecoder()
        var results: [Measurement] = []
        for (name, dump) in dumps {
            let entries = Array(dump.entries.prefix(maxFrames))
            var means: [Double] = []
            var last: (times: [Double], bytes: Int, frames: Int, keyframes: Int) = ([], 0, 0, 0)
            var size = (0, 0)
            var encoderMiB = 0.0
            for run in 0..<runs {
                var encoder: VP8Encoder?
                var picture = I420Buffer()
                var previous: [UInt8] = []
                var times: [Double] = []
                var bytes = 0, keyframes = 0
                for entry in entries where entry.jpeg != previous {
                    previous = entry.jpeg
                    _ = try decoder.decodeI420(entry.jpeg, into: &picture)
                    try picture.convertToLimitedRange()  // as the call does before VP8 (not timed here: stage "range")
                    if encoder == nil {
                        size = (picture.width, picture.height)
                        if run == 0 { encoderMiB = -residentMiB() }
                        var settings = VP8EncoderSettings(
                            width: picture.width, height: picture.height,
                            bitrateKbps: VP8EncoderSettings.defaultBitrateKbps(width: picture.width, height: picture.height, framesPerSecond: 30))
                        if let cpuUsed { settings.cpuUsed = cpuUsed }
                        encoder = try VP8Encoder(settings: settings)
                    }
                    let frame = VideoFrame(picture: picture, captureTimestampMicros: entry.timestampMicros)
                    let start = MonotonicClock.nowMicros()
                    let output = try encoder!.encode(frame)
                    times.append(Double(MonotonicClock.nowMicros() - start) / 1e3)
                    bytes += output?.bytes.count ?? 0
                    if output?.isKeyframe == true { keyframes += 1 }
                }
                if run == 0 { encoderMiB += residentMiB() }
                means.append(times.reduce(0, +) / Double(max(1, times.count)))
                last = (times, bytes, times.count, keyframes)
            }
            let seconds = max(1e-3, Double((entries.last?.timestampMicros ?? 0) - (entries.first?.timestampMicros ?? 0)) / 1e6)
            results.append(Measurement(
                stage: "VP8 encode \(name)" + (cpuUsed.map { " cpu-used \($0)" } ?? ""), unit: "ms/frame", values: means,
                detail: [
                    ("size", .string("\(size.0)x\(size.1)")), ("frames", .number(last.frames)), ("keyframes", .number(last.keyframes)),
                    ("contentSeconds", .double(seconds)),
                    ("p50Ms", .double(Statistics.percentile(last.times, 50))), ("p95Ms", .double(Statistics.percentile(last.times, 95))),
                    ("maxMs", .double(last.times.max() ?? 0)),
                    ("cpuMsPerContentSecond", .double(last.times.reduce(0, +) / seconds)),
                    ("kbps", .double(Double(last.bytes) * 8 / 1000 / seconds)),
                    // Resident memory the first run's encoder added (its buffers and what it touched), MiB.
                    ("encoderRssMiB", .double((encoderMiB * 10).rounded() / 10)),
                ]))
        }
        return results
    }

    /// Re-encoding an unchanged picture (what the call does once a second on a still screen), ms per frame.
    static func unchanged(runs: Int) throws -> [Measurement] {
        try JPEGStages.sizes.map { label, width, height in
            let picture = SyntheticPictures.i420(width: width, height: height, colorSpace: .bt601Limited)
            let encoder = try VP8Encoder(settings: VP8EncoderSettings(
                width: width, height: height, bitrateKbps: VP8EncoderSettings.defaultBitrateKbps(width: width, height: height, framesPerSecond: 30)))
            var timestamp: UInt64 = 0
            for _ in 0..<10 {  // past the keyframe and the first refinements of rate control
                _ = try encoder.encode(VideoFrame(picture: picture, captureTimestampMicros: timestamp))
                timestamp += 33_333
            }
            let seconds = try time(runs) {
                _ = try encoder.encode(VideoFrame(picture: picture, captureTimestampMicros: timestamp))
                timestamp += 1_000_000
            }
            return Measurement(stage: "VP8 encode unchanged picture \(label)", unit: "ms", values: seconds.map { $0 * 1e3 })
        }
    }
}
