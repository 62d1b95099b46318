import Foundation
import FrameWire
import Media
import VideoSource
import XCTest

@testable import VideoSource

/// JPEGs a newer frame will replace before the encoder takes one are not decoded (``DecodeDeferral``; issue 15).
final class DecodeDeferralTests: VideoSourceTestCase {
    /// The rule, on an injected clock: frames every 10 ms, decodes of 3 ms, 2 ms of margin — deferred only when
    /// the encoder is free more than 15 ms from now.
    func testAFrameIsDeferredOnlyWhenTheNextOneWillBeReadyFirst() {
        var deferral = DecodeDeferral()
        XCTAssertFalse(deferral.shouldDefer(nowMicros: 0, encoderFreeAt: 100_000), "nothing known yet")
        for frame in 0..<10 { deferral.noteArrival(nowMicros: UInt64(frame) * 10_000) }
        deferral.noteDecode(micros: 3_000)
        XCTAssertEqual(deferral.intervalMicros, 10_000)
        XCTAssertEqual(deferral.decodeMicros, 3_000)
        let now: UInt64 = 90_000
        XCTAssertFalse(deferral.shouldDefer(nowMicros: now, encoderFreeAt: nil), "the encoder waits for a frame")
        XCTAssertFalse(deferral.shouldDefer(nowMicros: now, encoderFreeAt: now - 1), "free already")
        XCTAssertFalse(deferral.shouldDefer(nowMicros: now, encoderFreeAt: now + 15_000), "exactly the next frame's time")
        XCTAssertTrue(deferral.shouldDefer(nowMicros: now, encoderFreeAt: now + 15_001))
        // A pause of a damage-driven sender is not its interval; a slower decode moves the line.
        deferral.noteArrival(nowMicros: now + 2_000_000)
        XCTAssertEqual(deferral.intervalMicros, 10_000)
        deferral.noteDecode(micros: 11_000)
        XCTAssertEqual(deferral.decodeMicros, 4_000, "moving average, 1/8 of the new sample")
        XCTAssertFalse(deferral.shouldDefer(nowMicros: now, encoderFreeAt: now + 16_000))
        XCTAssertTrue(deferral.shouldDefer(nowMicros: now, encoderFreeAt: now + 16_001))
    }

    /// A sender at about 100 frames a second into an encoder capped at 10: most JPEGs are never decoded, every
    /// frame is accounted for (decoded, or skipped as stale), and the last picture sent is the last one encoded
    /// (a deferred frame nothing replaced is decoded by the encoder thread, never lost).
    func testJPEGsTheEncoderWillNotTakeAreNotDecodedAndTheLastPictureIsKept() throws {
        let configuration = VideoSourceConfiguration(socketPath: socketPath, maxFramesPerSecond: 10)
        let source = try VideoSource(configuration: configuration, logger: logger())
        let sink = CollectingSink()
        source.addSink(sink)
        try source.start()
        let sender = try sender()
        let count = 60
        for variant in 0..<count {
            try sender.send(try message(makeDesktop(width: 320, height: 240, variant: variant)))
            usleep(10_000)
        }
        XCTAssertTrue(sender.flush(timeout: .seconds(2)))
        XCTAssertTrue(waitUntil(timeout: 3) { source.stats.received == count })
        // The last frame waits (deferred or not) for the next slot: at most 100 ms.
        XCTAssertTrue(waitUntil(timeout: 3) { source.stats.queueDepth == 0 })
        usleep(200_000)
        source.stop()
        sender.close()
        let stats = source.stats
        XCTAssertGreaterThan(stats.deferred, count / 2, "deferred: \(stats.deferred)")
        XCTAssertGreaterThan(stats.decodesSkipped, count / 2, "skipped: \(stats.decodesSkipped)")
        XCTAssertEqual(stats.decoded + stats.decodesSkipped, count, "each frame decoded once or never")
        XCTAssertLessThanOrEqual(stats.decodesSkipped, stats.dropped(.stale))
        XCTAssertEqual(stats.dropped(.decodeError), 0)
        XCTAssertLessThan(stats.decoded, count / 2, "decoded: \(stats.decoded)")

        // The last encoded picture is the last one sent: nearer to it than to the one before.
        let decoder = try VP8Decoder()
        var picture = I420Buffer()
        for frame in sink.frames { try decoder.decode(frame.bytes, into: &picture) }
        func distance(_ reference: I420Buffer) -> Int { zip(picture.y, reference.y).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) } }
        var last = makeDesktop(width: 320, height: 240, variant: count - 1)
        try last.convertToLimitedRange()
        var before = makeDesktop(width: 320, height: 240, variant: count - 2)
        try before.convertToLimitedRange()
        XCTAssertLessThan(distance(last), distance(before))
    }
}
