import Foundation
import FrameSocket
import Media
import VideoSource
import XCTest

/// Every encoded frame gets an RTP timestamp of its own (RFC 3550 §5.1: packets of one frame share a
/// timestamp, so receivers such as aiortc's jitter buffer group packets into frames by it). A picture that
/// arrives with a capture time at or before the previous frame's is moved after it by at least one 90 kHz
/// tick, not by 1 µs, which left both frames on the same RTP timestamp: the receiver glued them into one.
final class TimestampStepTests: VideoSourceTestCase {
    func testAPictureCapturedBeforeThePreviousFrameStillGetsANewRTPTimestamp() throws {
        let clock = ManualVideoClock(startMicros: 10_000_000)
        let source = try VideoSource(
            configuration: VideoSourceConfiguration(socketPath: socketPath, refinement: .off), clock: clock, logger: logger())
        let sink = CollectingSink()
        source.addSink(sink)
        try source.start()
        let sender = try sender()
        try sender.send(try message(makeDesktop(width: 64, height: 48, variant: 1), timestamp: 10_000_000))
        XCTAssertTrue(waitUntil(timeout: 3) { sink.frames.count == 1 })
        // Captured at the same µs as the first (a sender whose clock is coarse, or a frame that waited),
        // encoded 40 ms later.
        clock.advance(by: 40_000)
        try sender.send(try message(makeDesktop(width: 64, height: 48, variant: 2), timestamp: 10_000_000))
        XCTAssertTrue(waitUntil(timeout: 3) { sink.frames.count == 2 })
        sender.close()
        source.stop()
        let stamps = sink.frames.map(\.rtpTimestamp)
        XCTAssertEqual(stamps.first, 900_000)
        XCTAssertEqual(Set(stamps).count, 2, "two frames on RTP timestamp \(stamps)")
        XCTAssertEqual(stamps, stamps.sorted())
    }
}
