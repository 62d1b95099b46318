import H264
import Media
import Streaming
import VideoSource
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
}
