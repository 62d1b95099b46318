import H264
import Media
import Streaming
import VideoSource
import TestSupport
import XCTest

/// libx264 as the call sets it up: a keyframe first with SPS and PPS in front, no B-frames (frames come out as
/// they go in, with their own timestamps), forced IDRs.
final class H264EncoderTests: XCTestCase {
    func testKeyframesCarrySequenceHeadersAndFramesComeOutInOrder() throws {
        let encoder = try H264Encoder(settings: H264Settings(width: 160, height: 96, framesPerSecond: 30))
        let painter = TestPatternPainter(width: 160, height: 96)
        var picture = I420Buffer()
        var cadence = KeyframeCadence(intervalFrames: 60)
        var keys: [Int] = []
        for n in 0..<70 {
            let micros = 1_000_000 + UInt64(n) * 33_333
            painter.paint(frameNumber: n, timestampMicros: micros, into: &picture)
            let frame = try XCTUnwrap(try encoder.encode(VideoFrame(picture: picture, captureTimestampMicros: micros),
                                                         forceKeyframe: cadence.next(atMicros: micros) || n == 45))
            XCTAssertEqual(frame.captureTimestampMicros, micros, "no delay, no reordering")
            if frame.isKeyframe {
                keys.append(n)
                XCTAssertNotNil(AnnexB.parameterSets(frame.bytes), "SPS and PPS before every keyframe")
            }
        }
        XCTAssertEqual(keys, [0, 45, 60], "the cadence's and the forced one, no scene-cut keyframes")
        XCTAssertThrowsError(try H264Encoder(settings: H264Settings(width: 15, height: 96, framesPerSecond: 30)))
    }

    /// The adaptive bitrate's lever: a new target takes hold without a keyframe, and the bytes follow it
    /// (noise pictures, which spend whatever they are given).
    func testANewTargetTakesHoldWithoutAKeyframe() throws {
        let encoder = try H264Encoder(settings: H264Settings(width: 160, height: 120, framesPerSecond: 30, bitsPerSecond: 1_600_000))
        var generator = SeededGenerator(seed: 29)
        let pictures = try (0..<3).map { _ in
            try I420Buffer(width: 160, height: 120, bytes: (0..<(160 * 120 * 3 / 2)).map { _ in UInt8.random(in: 16...235, using: &generator) },
                           colorSpace: .bt601Limited)
        }
        func second(from n: Int) throws -> (bytes: Int, keys: Int) {
            var bytes = 0
            var keys = 0
            for k in n..<(n + 30) {
                let picture = pictures[k % 3]
                let frame = try XCTUnwrap(try encoder.encode(VideoFrame(picture: picture, captureTimestampMicros: UInt64(k) * 33_333), forceKeyframe: k == 0))
                bytes += frame.bytes.count
                if frame.isKeyframe { keys += 1 }
            }
            return (bytes, keys)
        }
        _ = try second(from: 0)
        let full = try second(from: 30)
        try encoder.setBitrate(400_000)
        XCTAssertEqual(encoder.bitsPerSecond, 400_000)
        _ = try second(from: 60)  // the one-second VBV drains
        let quarter = try second(from: 90)
        XCTAssertEqual(Double(full.bytes) * 8, 1_600_000, accuracy: 400_000)
        XCTAssertEqual(Double(quarter.bytes) * 8, 400_000, accuracy: 150_000)
        XCTAssertEqual(quarter.keys, 0, "no keyframe for a new target")
        XCTAssertThrowsError(try encoder.setBitrate(50_000))
    }
}
