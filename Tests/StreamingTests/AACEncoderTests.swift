import AAC
import AudioSource
import Glibc
import TestSupport
import XCTest

/// FFmpeg's native AAC-LC encoder as the call drives it: 10-ms frames in, 1024-sample access units out on the
/// source's sample clock, the AudioSpecificConfig as extradata; what libavcodec's own decoder reads back is the
/// tone that went in (frequency and level, channel by channel).
final class AACEncoderTests: XCTestCase {
    /// `count` 10-ms frames: left a `left` Hz sine, right a `right` Hz sine, both at `dbfs` RMS; 10 ms of capture
    /// time each from `micros`.
    private func tone(left: Double, right: Double, dbfs: Double, count: Int, firstSample: UInt64 = 0, micros: UInt64 = 5_000_000) -> [AudioFrame] {
        let amplitude = pow(10, dbfs / 20) * 2.0.squareRoot() * 32768
        return (0..<count).map { k in
            var samples = [Int16](repeating: 0, count: 960)
            for i in 0..<480 {
                let t = Double(Int(firstSample) + k * 480 + i) / 48_000
                samples[2 * i] = Int16((amplitude * sin(2 * .pi * left * t)).rounded())
                samples[2 * i + 1] = Int16((amplitude * sin(2 * .pi * right * t)).rounded())
            }
            return AudioFrame(samples: samples, sampleTime: firstSample + UInt64(k * 480), captureMicros: micros + UInt64(k) * 10_000, origin: .tone)
        }
    }

    func testToneSurvivesEncodeAndDecodeOnTheSampleClock() throws {
        let encoder = try AACEncoder()
        XCTAssertEqual(Array(encoder.extradata.prefix(2)), [0x11, 0x90], "AudioSpecificConfig: AAC-LC (2), 48 kHz (index 3), 2 channels")
        XCTAssertEqual(Array(encoder.extradata.dropFirst(2)), [0x56, 0xE5, 0x00], "then the sync extension 0x2B7 saying: no SBR")
        XCTAssertEqual(encoder.primingSamples, 1024)
        var units: [EncodedAudioFrame] = []
        for frame in tone(left: 1000, right: 440, dbfs: -20, count: 200) { units += try encoder.encode(frame) }
        // 2 s = 96 000 samples = 93.75 AAC frames in; the priming packet is left out, one frame stays inside.
        XCTAssertEqual(units.count, 91, "\(units.count) units")
        XCTAssertEqual(units.map(\.sampleTime), (0..<units.count).map { UInt64($0 * 1024) }, "consecutive on the sample clock from 0")
        XCTAssertTrue(units.allSatisfy { $0.codec == .aac && $0.durationSamples == 1024 && !$0.data.isEmpty })
        XCTAssertEqual(units[10].captureMicros, 5_000_000 + 10_240 * 1_000_000 / 48_000, "capture time follows the sample clock")
        let kbps = Double(units.reduce(0) { $0 + $1.data.count }) * 8 / (Double(units.count) * 1024 / 48_000) / 1000
        XCTAssertEqual(kbps, 128, accuracy: 20, "near the 128 kbit/s target")

        let decoder = try AACDecoder(extradata: encoder.extradata)
        var pcm: [Int16] = []
        for unit in units { pcm += try decoder.decode(unit.data) }
        XCTAssertEqual(pcm.count, units.count * 1024 * 2)
        let steady = Array(pcm[(4096 * 2)...])
        XCTAssertEqual(SoundMeasure.frequency(steady, channels: 2, channel: 0, rate: 48_000), 1000, accuracy: 0.5)
        XCTAssertEqual(SoundMeasure.frequency(steady, channels: 2, channel: 1, rate: 48_000), 440, accuracy: 0.5)
        let left = stride(from: 0, to: steady.count, by: 2).map { steady[$0] }
        let right = stride(from: 1, to: steady.count, by: 2).map { steady[$0] }
        XCTAssertEqual(SoundMeasure.rmsDBFS(left), -20, accuracy: 0.3)
        XCTAssertEqual(SoundMeasure.rmsDBFS(right), -20, accuracy: 0.3)
        // Aligned in time: a unit's samples decode at its sampleTime, so decoded sample n is input sample n.
        let input = tone(left: 1000, right: 440, dbfs: -20, count: 200).flatMap(\.samples)
        var error = 0.0
        var power = 0.0
        for n in 20_000..<40_000 {
            let d = Double(pcm[2 * n]) - Double(input[2 * n])
            error += d * d
            power += Double(input[2 * n]) * Double(input[2 * n])
        }
        XCTAssertGreaterThan(10 * log10(power / error), 20, "SNR against the input at the stated times, dB")
    }

    func testAGapInTheSampleClockStartsTheBufferingOverAndBadBitratesAreRefused() throws {
        let encoder = try AACEncoder()
        var units: [EncodedAudioFrame] = []
        for frame in tone(left: 1000, right: 1000, dbfs: -20, count: 10) { units += try encoder.encode(frame) }
        for frame in tone(left: 1000, right: 1000, dbfs: -20, count: 10, firstSample: 48_000) { units += try encoder.encode(frame) }
        XCTAssertEqual(units.map(\.sampleTime), [0, 1024, 2048, 3072, 48_000, 49_024],
                       "the 4 whole frames of the first 100 ms (the last one let out by the next input), then the new time's")
        XCTAssertTrue(zip(units, units.dropFirst()).allSatisfy { $0.sampleTime < $1.sampleTime }, "strictly increasing")
        XCTAssertThrowsError(try AACEncoder(bitsPerSecond: 8_000)) { XCTAssertTrue("\($0)".contains("16000-512000")) }
        XCTAssertThrowsError(try AACEncoder(bitsPerSecond: 600_000))
    }
}
