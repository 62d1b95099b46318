import Call
import Foundation
import ScreencastSupport
import Signaling
import TestSupport
import VideoSource
import XCTest

/// ``Call/pause()`` and ``Call/resume()`` (`screencast-call pause`/`resume`): while paused no new picture is taken
/// (the test pattern's frames are dropped, counted as inactive) and the pages are told "paused"; after, pictures
/// flow again and the share is live.
final class CallPauseTests: CallTestCase {
    func testPauseStopsNewPicturesAndResumeTakesThemAgain() throws {
        var configuration = CallConfiguration(source: VideoSourceConfiguration(
            socketPath: nil, fallback: .testPattern(TestPatternSettings(width: 160, height: 96, framesPerSecond: 30)), maxFramesPerSecond: 30))
        configuration.http = nil
        configuration.statsIntervalSeconds = 0
        let call = try Call(configuration: configuration, logger: Logger(component: "call", threshold: .error), announce: { _ in })
        try call.start()
        defer { call.stop() }
        func captured() -> Double {
            for line in call.metricsText.split(separator: "\n") where line.hasPrefix("screencast_frames_captured_total ") {
                return Double(line.split(separator: " ")[1]) ?? -1
            }
            return -1
        }
        let deadline = Date().addingTimeInterval(5)
        while captured() < 3, Date() < deadline { usleep(20_000) }
        XCTAssertEqual(call.sharerState, .live)
        XCTAssertTrue(call.pause())
        XCTAssertFalse(call.pause(), "already paused")
        XCTAssertEqual(call.sharerState, .paused)
        usleep(50_000)
        let atPause = captured()
        usleep(400_000)  // 12 test-pattern frames at 30 fps
        XCTAssertEqual(captured(), atPause, "no picture taken while paused")
        XCTAssertTrue(call.isResponsive, "a paused call still works")
        XCTAssertTrue(call.resume())
        XCTAssertFalse(call.resume(), "not paused")
        let resumed = Date().addingTimeInterval(5)
        while captured() < atPause + 5, Date() < resumed { usleep(20_000) }
        XCTAssertGreaterThanOrEqual(captured(), atPause + 5)
        XCTAssertEqual(call.sharerState, .live)
    }
}
