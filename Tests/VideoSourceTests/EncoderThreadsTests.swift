import VideoSource
import XCTest

/// "One thread unless cores are idle" (issue 4): the default libvpx thread count.
final class EncoderThreadsTests: XCTestCase {
    func testOneThreadUnlessCoresAreIdle() {
        XCTAssertEqual(EncoderThreads.automatic(cores: 1, loadAverage: 0), 1)
        XCTAssertEqual(EncoderThreads.automatic(cores: 2, loadAverage: 0), 1, "2 cores: never a second thread")
        XCTAssertEqual(EncoderThreads.automatic(cores: 4, loadAverage: 0), 2)
        XCTAssertEqual(EncoderThreads.automatic(cores: 4, loadAverage: 1.5), 1, "busy cores: one thread")
        XCTAssertEqual(EncoderThreads.automatic(cores: 8, loadAverage: 0), 4)
        XCTAssertEqual(EncoderThreads.automatic(cores: 64, loadAverage: 2), 4, "never more than 4")
        XCTAssertEqual(EncoderThreads.automatic(cores: 8, loadAverage: 7), 1)
    }
}
