import AudioSource
import COpus
import Foundation
import OpusCodec
import XCTest

/// The Opus encoder through libopus's own decoder: a tone's frequency and level survive, packets are whole and
/// stamped on the sample clock, DTX shrinks silence, the settings reach libopus.
final class OpusEncoderTests: XCTestCase {
    /// `count` 10-ms frames of a sine (`hz`, RMS `dbfs`) on both channels, from sample 0, captured from 1 s on.
    private func tone(hz: Double, dbfs: Double, count: Int, startSample: UInt64 = 0) -> [AudioFrame] {
        let amplitude = pow(10, dbfs / 20) * 2.0.squareRoot() * 32768
        return (0..<count).map { i in
            let first = startSample + UInt64(i * AudioFrame.samplesPerChannel)
            var samples = [Int16](repeating: 0, count: 960)
            for n in 0..<AudioFrame.samplesPerChannel {
                let v = Int16((amplitude * sin(2 * .pi * hz * Double(first + UInt64(n)) / 48_000)).rounded())
                samples[2 * n] = v
                samples[2 * n + 1] = v
            }
            return AudioFrame(samples: samples, sampleTime: first, captureMicros: 1_000_000 + first * 1_000 / 48, origin: .tone)
        }
    }

    /// Decodes every packet with `opus_decode`; returns the left channel.
    private func decode(_ packets: [EncodedAudioFrame]) throws -> [Double] {
        var error: Int32 = 0
        let decoder = try XCTUnwrap(opus_decoder_create(48_000, 2, &error))
        defer { opus_decoder_destroy(decoder) }
        var out = [Int16](repeating: 0, count: 5760 * 2)
        var left: [Double] = []
        for p in packets {
            let n = p.data.withUnsafeBufferPointer { opus_decode(decoder, $0.baseAddress, Int32($0.count), &out, 5760, 0) }
            XCTAssertEqual(Int(n), p.durationSamples, "a packet decodes to its duration")
            for i in 0..<Int(max(n, 0)) { left.append(Double(out[2 * i])) }
        }
        return left
    }

    /// Frequency by interpolated zero crossings (rising), Hz; level as RMS dBFS.
    private func measure(_ x: [Double]) -> (hz: Double, dbfs: Double) {
        var crossings: [Double] = []
        for i in 1..<x.count where x[i - 1] < 0 && x[i] >= 0 {
            crossings.append(Double(i - 1) + -x[i - 1] / (x[i] - x[i - 1]))
        }
        let hz = Double(crossings.count - 1) / ((crossings.last! - crossings.first!) / 48_000)
        let rms = (x.reduce(0) { $0 + $1 * $1 } / Double(x.count)).squareRoot() / 32768
        return (hz, 20 * log10(rms))
    }

    func testToneSurvivesTwentyMillisecondPackets() throws {
        let encoder = try OpusEncoder()
        var packets: [EncodedAudioFrame] = []
        for frame in tone(hz: 1000, dbfs: -20, count: 100) { packets += try encoder.encode(frame) }
        XCTAssertEqual(packets.count, 50)
        XCTAssertEqual(packets.map(\.sampleTime), (0..<50).map { UInt64($0 * 960) }, "each packet starts at its first frame's sample")
        XCTAssertEqual(Set(packets.map(\.durationSamples)), [960])
        XCTAssertEqual(packets[1].captureMicros, 1_020_000)
        XCTAssertFalse(packets.contains { $0.isSilence })
        let (hz, dbfs) = measure(Array(try decode(packets).dropFirst(4800)))  // past the first 100 ms
        XCTAssertEqual(hz, 1000, accuracy: 1)
        XCTAssertEqual(dbfs, -20, accuracy: 0.5)
        // VBR around the target: 96 kbps is 240 bytes a 20-ms packet (a pure tone is cheap: not above, not near 0).
        let kbps = Double(packets.dropFirst(5).reduce(0) { $0 + $1.data.count }) * 8 / (Double(packets.count - 5) * 0.02) / 1000
        XCTAssertLessThanOrEqual(kbps, 96 * 1.25)
        XCTAssertGreaterThanOrEqual(kbps, 96 * 0.4)
    }

    func testTenMillisecondPacketsAndAnotherTone() throws {
        let encoder = try OpusEncoder(settings: OpusSettings(bitrateKbps: 64, frameDuration: .ms10))
        var packets: [EncodedAudioFrame] = []
        for frame in tone(hz: 440, dbfs: -12, count: 100) { packets += try encoder.encode(frame) }
        XCTAssertEqual(packets.count, 100)
        XCTAssertEqual(packets.map(\.sampleTime), (0..<100).map { UInt64($0 * 480) })
        let (hz, dbfs) = measure(Array(try decode(packets).dropFirst(4800)))
        XCTAssertEqual(hz, 440, accuracy: 1)
        XCTAssertEqual(dbfs, -12, accuracy: 0.5)
    }

    func testDTXMakesSilenceTiny() throws {
        let silence = (0..<200).map {
            AudioFrame(samples: [Int16](repeating: 0, count: 960), sampleTime: UInt64($0 * 480), captureMicros: 0, origin: .silence)
        }
        let dtx = try OpusEncoder()
        let packets = try silence.flatMap { try dtx.encode($0) }
        let tiny = packets.filter(\.isSilence)
        XCTAssertGreaterThanOrEqual(tiny.count, 80, "2 s of silence: nearly every packet is a DTX packet")
        XCTAssertTrue(tiny.allSatisfy { $0.data.count <= 2 })
        let plain = try OpusEncoder(settings: OpusSettings(dtx: false))
        XCTAssertFalse(try silence.flatMap { try plain.encode($0) }.contains(where: \.isSilence))
    }

    func testSettingsReachLibopusAndRangesAreChecked() throws {
        let encoder = try OpusEncoder()
        let effective = try encoder.effectiveSettings()
        XCTAssertEqual(effective.bitrateBps, 96_000)
        XCTAssertTrue(effective.dtx)
        XCTAssertTrue(effective.inbandFEC)
        XCTAssertFalse(try OpusEncoder(settings: OpusSettings(dtx: false, inbandFEC: false)).effectiveSettings().inbandFEC)
        XCTAssertThrowsError(try OpusEncoder(settings: OpusSettings(bitrateKbps: 5))) {
            XCTAssertEqual($0 as? OpusError, .settingOutOfRange(name: "bitrate (kbps)", value: 5, range: 6...510))
        }
        XCTAssertThrowsError(try OpusEncoder(settings: OpusSettings(bitrateKbps: 511)))
        XCTAssertThrowsError(try OpusEncoder(settings: OpusSettings(expectedLossPercent: 101)))
        XCTAssertNoThrow(try OpusEncoder(settings: OpusSettings(bitrateKbps: 6)))
        XCTAssertNoThrow(try OpusEncoder(settings: OpusSettings(bitrateKbps: 510)))
    }

    func testGapDropsTheLoneHalfAndOpusHeadIsRFC7845() throws {
        let encoder = try OpusEncoder()
        let frames = tone(hz: 1000, dbfs: -20, count: 4)
        XCTAssertTrue(try encoder.encode(frames[0]).isEmpty)
        // frames[1] lost: frames[2] starts a new packet, frames[3] completes it.
        XCTAssertTrue(try encoder.encode(frames[2]).isEmpty)
        XCTAssertEqual(try encoder.encode(frames[3]).map(\.sampleTime), [960])
        let head = encoder.extradata
        XCTAssertEqual(head.count, 19)
        XCTAssertEqual(Array(head[0..<8]), Array("OpusHead".utf8))
        XCTAssertEqual(head[8], 1)
        XCTAssertEqual(head[9], 2)
        XCTAssertEqual(Int(head[10]) | Int(head[11]) << 8, encoder.lookahead)
        XCTAssertGreaterThan(encoder.lookahead, 0)
        XCTAssertEqual(Array(head[12..<16]), [0x80, 0xBB, 0, 0], "48000 little-endian")
    }
}
