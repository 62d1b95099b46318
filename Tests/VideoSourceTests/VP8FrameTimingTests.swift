import Foundation
import Media
import TestSupport
@testable import VideoSource
import XCTest

/// libvpx reads the frame rate from the timestamps it is given (pts and duration, timebase 1/1 000 000 here).
/// A frame's duration was the gap since the frame before: one late frame (a busy encoder thread: a 66.7 ms
/// gap among 33.3 ms ones) then ended exactly when the next did, and libvpx's rate control went on dropping
/// most frames for seconds (the call's 320×240 test pattern at 184 kbit/s: 81–117 drops, the SFU leg's
/// subscriber decoding 2–18 frames in 4 s; reproduced offline from the call's own capture times, 2026-12-05).
/// The duration is now the nominal frame interval (`VP8Encoder.nominalFrameDurationMicros`): libvpx then
/// measures each frame's real spacing from successive ends.
final class VP8FrameTimingTests: XCTestCase {
    /// Encodes `count` frames of the test pattern 33.3 ms apart, with one gap of `gapMicros` before frame
    /// `gapAt`, at the call's rate control for 30 fps; returns the frames libvpx dropped.
    private func drops(count: Int, gapAt: Int, gapMicros: UInt64) throws -> [Int] {
        let painter = TestPatternPainter(width: 320, height: 240)
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(
            width: 320, height: 240, bitrateKbps: 184, rateControl: .screen(framesPerSecond: 30)))
        var picture = I420Buffer(width: 320, height: 240, colorSpace: .bt601Limited)
        var capture: UInt64 = 2_374_843_850
        var dropped: [Int] = []
        for index in 0..<count {
            capture += index == gapAt ? gapMicros : 33_333
            painter.paint(frameNumber: index, timestampMicros: capture, into: &picture)
            let frame = try encoder.encode(VideoFrame(picture: picture, captureTimestampMicros: capture), forceKeyframe: index == 0)
            if frame == nil { dropped.append(index) }
        }
        return dropped
    }

    /// The case the call met, replayed: its encoder's input times and forced keyframes as it logged them
    /// (`Tests/Fixtures/encoder-timing/sfu-republish.txt`, 437 frames; frame 301 came 66 ms after 300).
    /// With the gap as the duration libvpx dropped 81 of them from frame 325 on; none now.
    func testTheCallsRecordedTimingDropsNothing() throws {
        let text = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/encoder-timing/sfu-republish.txt"), encoding: .utf8)
        let frames = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line -> (UInt64, Bool) in
            let fields = line.split(separator: " ")
            return (UInt64(fields[0]) ?? 0, fields.count > 1 && fields[1] == "1")
        }
        XCTAssertEqual(frames.count, 437)
        let painter = TestPatternPainter(width: 320, height: 240)
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(
            width: 320, height: 240, bitrateKbps: 184, rateControl: .screen(framesPerSecond: 30)))
        var picture = I420Buffer(width: 320, height: 240, colorSpace: .bt601Limited)
        var dropped: [Int] = []
        for (index, (capture, keyframe)) in frames.enumerated() {
            painter.paint(frameNumber: index, timestampMicros: capture, into: &picture)
            if try encoder.encode(VideoFrame(picture: picture, captureTimestampMicros: capture), forceKeyframe: keyframe) == nil {
                dropped.append(index)
            }
        }
        XCTAssertEqual(dropped, [], "frames libvpx dropped")
    }

    /// One frame late by a frame interval in a steady stream: none dropped.
    func testOneLateFrameDropsNothing() throws {
        XCTAssertEqual(try drops(count: 450, gapAt: 301, gapMicros: 66_667), [], "frames libvpx dropped after one late frame")
    }

    /// Late frames of every size (a frame interval and a half to a whole second): still none dropped.
    func testLateFramesOfAnySizeDropNothing() throws {
        for gap: UInt64 in [50_000, 66_667, 100_000, 250_000, 1_000_000] {
            XCTAssertEqual(try drops(count: 360, gapAt: 200, gapMicros: gap), [], "a gap of \(gap / 1000) ms")
        }
    }
}
