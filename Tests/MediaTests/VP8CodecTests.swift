import Media
import TestSupport
import XCTest

/// libvpx VP8 encode → decode round trips, keyframe control, run-time bitrate, resize and refinement.
final class VP8CodecTests: XCTestCase {
    private func frame(_ picture: I420Buffer, at micros: UInt64) -> VideoFrame {
        VideoFrame(picture: picture, captureTimestampMicros: micros)
    }

    func testFirstFrameIsAKeyframeAndTheRoundTripKeepsSizeAndQuality() throws {
        let (width, height) = (320, 240)
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(width: width, height: height, bitrateKbps: 800))
        let decoder = try VP8Decoder()
        var decoded = I420Buffer()
        var last: Double = 0
        for index in 0..<10 {
            let picture = makeScreenPicture(width: width, height: height, phase: index)
            let encoded = try XCTUnwrap(try encoder.encode(frame(picture, at: 1_000_000 + UInt64(index) * 33_333)))
            XCTAssertEqual(encoded.isKeyframe, index == 0, "frame \(index)")
            XCTAssertEqual([encoded.width, encoded.height], [width, height])
            XCTAssertTrue((0...63).contains(encoded.quantizer), "q \(encoded.quantizer)")
            XCTAssertTrue(try decoder.decode(encoded.bytes, into: &decoded))
            XCTAssertEqual([decoded.width, decoded.height], [width, height])
            last = lumaPSNR(decoded, picture)
        }
        XCTAssertGreaterThanOrEqual(last, 30, "PSNR of the last frame")
    }

    func testForcedKeyframesAndOnlyThoseAreKeyframes() throws {
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(width: 160, height: 96, bitrateKbps: 300))
        var keys: [Int] = []
        for index in 0..<12 {
            let picture = makeScreenPicture(width: 160, height: 96, phase: index)
            let out = try encoder.encode(frame(picture, at: UInt64(index) * 33_333), forceKeyframe: index == 5 || index == 9)
            if try XCTUnwrap(out).isKeyframe { keys.append(index) }
        }
        XCTAssertEqual(keys, [0, 5, 9])
    }

    func testBitrateChangesAtRunTimeWithoutANewKeyframe() throws {
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(width: 320, height: 240, bitrateKbps: 1000))
        let decoder = try VP8Decoder()
        var decoded = I420Buffer()
        var sizesHigh = 0
        var sizesLow = 0
        for index in 0..<40 {
            if index == 20 { try encoder.setBitrate(kbps: 150) }
            let picture = makeScreenPicture(width: 320, height: 240, phase: index)
            let out = try XCTUnwrap(try encoder.encode(frame(picture, at: UInt64(index) * 33_333)))
            XCTAssertEqual(out.isKeyframe, index == 0, "frame \(index)")
            try decoder.decode(out.bytes, into: &decoded)
            if (5..<20).contains(index) { sizesHigh += out.bytes.count }
            if (25..<40).contains(index) { sizesLow += out.bytes.count }
        }
        XCTAssertEqual(encoder.settings.bitrateKbps, 150)
        XCTAssertLessThan(sizesLow, sizesHigh, "less data after lowering the bitrate")
        XCTAssertThrowsError(try encoder.setBitrate(kbps: 0))
    }

    func testAnotherSizeReconfiguresAndStartsWithAKeyframe() throws {
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(width: 320, height: 240, bitrateKbps: 600))
        let decoder = try VP8Decoder()
        var decoded = I420Buffer()
        let sizes = [(320, 240), (320, 240), (641, 361), (641, 361), (240, 320), (240, 320)]
        for (index, size) in sizes.enumerated() {
            let picture = makeScreenPicture(width: size.0, height: size.1, phase: index)
            let out = try XCTUnwrap(try encoder.encode(frame(picture, at: UInt64(index) * 40_000)))
            XCTAssertEqual(out.isKeyframe, index % 2 == 0, "frame \(index) \(size)")
            XCTAssertEqual([out.width, out.height], [size.0, size.1])
            try decoder.decode(out.bytes, into: &decoded)
            XCTAssertEqual([decoded.width, decoded.height], [size.0, size.1])
        }
        XCTAssertEqual([encoder.settings.width, encoder.settings.height], [240, 320])
    }

    /// The idle refinement mechanism: the same picture re-encoded under falling quantizer ceilings.
    func testReencodingAStaticPictureUnderFallingCeilingsRefinesIt() throws {
        let (width, height) = (640, 360)
        // A low bitrate, so the first keyframe is coarse.
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(width: width, height: height, bitrateKbps: 150))
        let decoder = try VP8Decoder()
        var decoded = I420Buffer()
        let picture = makeScreenPicture(width: width, height: height, phase: 3)
        var time: UInt64 = 5_000_000
        var qualities: [Double] = []
        var quantizers: [Int] = []
        for ceiling in [nil, 40, 32, 24, 18, 14, 12] as [Int?] {
            let out = try XCTUnwrap(try encoder.encode(frame(picture, at: time), quantizerCeiling: ceiling))
            try decoder.decode(out.bytes, into: &decoded)
            qualities.append(lumaPSNR(decoded, picture))
            quantizers.append(out.quantizer)
            time += 150_000
        }
        print("refinement PSNR \(qualities.map { String(format: "%.1f", $0) }) q \(quantizers)")
        XCTAssertGreaterThan(qualities.last!, qualities.first! + 3, "refinement raises the quality")
        XCTAssertGreaterThanOrEqual(qualities.last!, 35)
        XCTAssertLessThan(quantizers.last!, quantizers.first!, "a lower quantizer")
    }

    func testSettingsOutOfRangeAreRefused() {
        let good = VP8EncoderSettings(width: 64, height: 64, bitrateKbps: 300)
        for change in [
            { (s: inout VP8EncoderSettings) in s.cpuUsed = 4 },
            { $0.cpuUsed = 0 },
            { $0.minQuantizer = 40; $0.maxQuantizer = 20 },
            { $0.maxQuantizer = 64 },
            { $0.width = 0 },
            { $0.bitrateKbps = 0 },
            { $0.threads = 0 },
        ] {
            var bad = good
            change(&bad)
            XCTAssertThrowsError(try VP8Encoder(settings: bad)) { error in
                guard case MediaError.invalidArgument = error else { return XCTFail("\(error)") }
            }
        }
    }

    func testDefaultBitrateFollowsTheFormulaAndClamps() {
        XCTAssertEqual(VP8EncoderSettings.defaultBitrateKbps(width: 1280, height: 720, framesPerSecond: 30), 2212)
        XCTAssertEqual(VP8EncoderSettings.defaultBitrateKbps(width: 1920, height: 1080, framesPerSecond: 30), 4977)
        XCTAssertEqual(VP8EncoderSettings.defaultBitrateKbps(width: 160, height: 120, framesPerSecond: 30), 150)
        XCTAssertEqual(VP8EncoderSettings.defaultBitrateKbps(width: 3840, height: 2160, framesPerSecond: 60), 8000)
    }

    func testCorruptDataIsADecoderError() throws {
        let decoder = try VP8Decoder()
        var picture = I420Buffer()
        XCTAssertThrowsError(try decoder.decode([], into: &picture))
        XCTAssertThrowsError(try decoder.decode([0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0xff], into: &picture))
    }

    func testRTPTimestampIsTheCaptureTimeOnA90kHzClock() {
        XCTAssertEqual(EncodedFrame.rtpTimestamp(captureMicros: 0), 0)
        XCTAssertEqual(EncodedFrame.rtpTimestamp(captureMicros: 1_000_000), 90_000)
        XCTAssertEqual(EncodedFrame.rtpTimestamp(captureMicros: 33_333), 2_999)
        // Wraps modulo 2^32: 2^32 ticks are 47 721.858 844 4 s.
        XCTAssertEqual(EncodedFrame.rtpTimestamp(captureMicros: 47_721_858_845), 0)
        let frame = EncodedFrame(bytes: [1], isKeyframe: true, captureTimestampMicros: 2_000_000, width: 1, height: 1)
        XCTAssertEqual(frame.rtpTimestamp, 180_000)
    }

    /// Prints the encode speed at 720p and 1080p (moving content, one thread, cpu-used -6); asserts only a
    /// generous ceiling so a busy machine does not fail it.
    func testEncodeSpeed() throws {
        for (width, height) in [(1280, 720), (1920, 1080)] {
            let pictures = (0..<4).map { makeScreenPicture(width: width, height: height, phase: $0 * 5) }
            let bitrate = VP8EncoderSettings.defaultBitrateKbps(width: width, height: height, framesPerSecond: 30)
            let encoder = try VP8Encoder(settings: VP8EncoderSettings(width: width, height: height, bitrateKbps: bitrate))
            var times: [Double] = []
            for index in 0..<16 {
                let start = DispatchTime.now().uptimeNanoseconds
                _ = try encoder.encode(frame(pictures[index % 4], at: UInt64(index) * 33_333))
                times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            }
            let steady = times.dropFirst().sorted()
            let median = steady[steady.count / 2]
            print("VP8 encode \(width)x\(height) @\(bitrate) kbps: keyframe \(String(format: "%.1f", times[0])) ms, "
                  + "moving median \(String(format: "%.1f", median)) ms, max \(String(format: "%.1f", steady.last!)) ms")
            XCTAssertLessThan(median, 500)
        }
    }
}
