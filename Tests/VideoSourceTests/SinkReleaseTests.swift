import Foundation
import Media
import ScreencastSupport
import VideoSource
import XCTest

/// A sink that holds its source (as the viewers do: they ask it for keyframes and bitrates) must not keep
/// the source alive once it has stopped: `stop()` finishes the sinks and lets go of them. (Found by
/// LeakSanitizer: every screencast-call run left its VideoSource, capturers and ViewerHub in that cycle.)
final class SinkReleaseTests: XCTestCase {
    /// Holds the source strongly, as `ViewerHub` holds its `SharedEncoderControl`.
    private final class OwningSink: VideoSink {
        let source: VideoSource
        init(_ source: VideoSource) { self.source = source }
        func consume(_ frame: EncodedFrame) {}
        func finish() {}
    }

    func testAStoppedSourceIsFreedThoughASinkHoldsIt() throws {
        weak var freed: VideoSource?
        do {
            let source = try VideoSource(
                configuration: VideoSourceConfiguration(
                    socketPath: nil, fallback: .testPattern(TestPatternSettings(width: 64, height: 48, framesPerSecond: 30))),
                logger: Logger(component: "test", threshold: .error))
            freed = source
            source.addSink(OwningSink(source))
            try source.start()
            usleep(100_000)
            source.stop()
        }
        XCTAssertNil(freed, "the source and the sink holding it stayed alive in a cycle after stop()")
    }
}
