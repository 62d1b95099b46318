import Media
import TestSupport
import XCTest

/// libvpx's rate-control knobs (`VP8RateControl`) on a real encoder: the keyframe cap, run-time changes,
/// the quantizer range and the ranges refused.
final class VP8RateControlTests: XCTestCase {
    /// Keyframes of a detailed 1280×720 screen forced once a second into a 10 fps stream at `kbps`, bytes.
    private func keyframeSizes(kbps: Int, rateControl: VP8RateControl, maxQuantizer: Int) throws -> [Int] {
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(
            width: 1280, height: 720, bitrateKbps: kbps, maxQuantizer: maxQuantizer, rateControl: rateControl))
        var sizes: [Int] = []
        for index in 0..<40 {
            let picture = makeScreenPicture(width: 1280, height: 720, phase: index)
            let frame = try encoder.encode(VideoFrame(picture: picture, captureTimestampMicros: UInt64(index) * 100_000),
                                           forceKeyframe: index % 10 == 0)
            if let frame, frame.isKeyframe { sizes.append(frame.bytes.count) }
        }
        return sizes
    }

    func testTheScreenSettingsMakeKeyframesSmaller() throws {
        // This synthetic picture changes everywhere every frame: even at q 63 its keyframes exceed half a
        // second of 1 Mbit/s (the cap holds on real screens: VideoSourceTests/RateControlTests); what is
        // checked here is that the screen settings (cap, q up to 63) shrink every keyframe after the first.
        let capped = try keyframeSizes(kbps: 1000, rateControl: .screen(framesPerSecond: 10), maxQuantizer: 63)
        let before = try keyframeSizes(kbps: 1000, rateControl: .unconstrained, maxQuantizer: 56)
        XCTAssertEqual(capped.count, 4, "every forced keyframe is encoded")
        XCTAssertEqual(before.count, 4)
        for (a, b) in zip(capped, before) { XCTAssertLessThan(a, b, "capped \(capped), before \(before)") }
    }

    func testTheKnobsChangeAtRunTimeAndBadOnesAreRefused() throws {
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(width: 320, height: 240, bitrateKbps: 300))
        try encoder.setRateControl(.screen(framesPerSecond: 5))
        XCTAssertEqual(encoder.settings.rateControl, .screen(framesPerSecond: 5))
        XCTAssertEqual(VP8RateControl.screen(framesPerSecond: 5).maxIntraBitratePercent, 250)  // 0.5 s × 5 fps
        XCTAssertEqual(VP8RateControl.screen(framesPerSecond: 0.5).maxIntraBitratePercent, 100)
        try encoder.setQuantizerRange(min: 30, max: 63)
        let frame = try XCTUnwrap(try encoder.encode(VideoFrame(picture: makeScreenPicture(width: 320, height: 240), captureTimestampMicros: 0),
                                                     quantizerCeiling: 12))
        XCTAssertGreaterThanOrEqual(frame.quantizer, 30, "the floor holds under a lower refinement ceiling")
        var bad = VP8RateControl.screen(framesPerSecond: 30)
        bad.dropFrameThreshold = 101
        XCTAssertThrowsError(try encoder.setRateControl(bad))
        bad = .screen(framesPerSecond: 30)
        bad.initialBufferMillis = bad.bufferMillis + 1
        XCTAssertThrowsError(try encoder.setRateControl(bad))
        XCTAssertThrowsError(try encoder.setQuantizerRange(min: 40, max: 30))
        XCTAssertEqual(encoder.settings.rateControl, .screen(framesPerSecond: 5), "a refused change leaves the knobs")
        XCTAssertEqual([encoder.settings.minQuantizer, encoder.settings.maxQuantizer], [30, 63])
    }
}
