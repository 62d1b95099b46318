import AudioSource
import Foundation
import OpusCodec

/// The call's Opus encoding (OpusCodec, libopus): what encoding the shared sound costs, once for every viewer.
/// Ten seconds of "music" (three sines of changing pitch and a little noise, stereo with the channels apart, at
/// about -14 dBFS) in 10-ms AudioFrames through the call's settings (96 kbps stereo, 20-ms packets, DTX, FEC):
/// µs per 20-ms packet, the share of one core that is (issue 28 asks ≤ 3 % for the whole audio path), and the
/// bitrate it made.
enum OpusStage {
    static func measure(runs: Int) throws -> [Measurement] {
        let frames = music(seconds: 10)
        var perPacket: [Double] = []
        var kbps = 0.0
        for _ in 0..<max(1, runs) {
            let encoder = try OpusEncoder()
            var bytes = 0
            var packets = 0
            let started = DispatchTime.now().uptimeNanoseconds
            for frame in frames {
                for packet in try encoder.encode(frame) {
                    bytes += packet.data.count
                    packets += 1
                }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            perPacket.append(seconds / Double(max(1, packets)) * 1e6)
            kbps = Double(bytes) * 8 / 10 / 1000
        }
        let median = Statistics.median(perPacket)
        return [Measurement(
            stage: "Opus encode 20 ms stereo 96 kbps (music)", unit: "µs", values: perPacket,
            detail: [("corePercent", .double(median / 20_000 * 100)), ("kbps", .double(kbps))])]
    }

    /// `seconds` of 10-ms frames: three sines gliding in pitch and noise, left and right different.
    static func music(seconds: Int) -> [AudioFrame] {
        var generator = SystemRandomNumberGenerator()
        return (0..<seconds * 100).map { index in
            var samples = [Int16](repeating: 0, count: 960)
            for n in 0..<480 {
                let t = Double(index * 480 + n) / 48_000
                let glide = 1 + 0.1 * sin(2 * .pi * 0.25 * t)
                let left = 0.12 * sin(2 * .pi * 220 * glide * t) + 0.08 * sin(2 * .pi * 660 * t) + 0.05 * sin(2 * .pi * 1_760 * glide * t)
                let right = 0.12 * sin(2 * .pi * 330 * glide * t) + 0.08 * sin(2 * .pi * 990 * t) + 0.05 * sin(2 * .pi * 2_640 * t)
                let noise = Double.random(in: -0.01...0.01, using: &generator)
                samples[2 * n] = Int16((left + noise) * 32_767)
                samples[2 * n + 1] = Int16((right + noise) * 32_767)
            }
            return AudioFrame(samples: samples, sampleTime: UInt64(index * 480), captureMicros: UInt64(index) * 10_000, origin: .tone)
        }
    }
}
