import XCTest

@testable import Capture

/// The pacing state machine, driven by hand with a fake clock (µs).
final class CaptureSchedulerTests: XCTestCase {
    /// 30 fps, keepalive 2 s, paint-over after 1 s.
    private func scheduler(paintOver: UInt64? = 1_000_000) -> CaptureScheduler {
        CaptureScheduler(minimumIntervalMicros: 33_333, keepaliveMicros: 2_000_000, paintOverDelayMicros: paintOver)
    }

    func testTheFirstFrameIsCapturedAtOnce() {
        XCTAssertEqual(scheduler().next(now: 5_000_000), .capture)
    }

    func testNothingHappensWithoutDamageUntilPaintOverThenOnlyKeepalives() {
        var s = scheduler()
        s.willCapture(now: 0)
        XCTAssertEqual(s.next(now: 10), .wait(until: 1_000_000))
        XCTAssertEqual(s.next(now: 999_999), .wait(until: 1_000_000))
        XCTAssertEqual(s.next(now: 1_000_000), .paintOver)
        s.didPaintOver(now: 1_000_000)
        // The paint-over counts as a delivery: the keepalive is 2 s after it, and there is no second paint-over.
        XCTAssertEqual(s.next(now: 1_000_001), .wait(until: 3_000_000))
        XCTAssertEqual(s.next(now: 3_000_000), .keepalive)
        s.didKeepalive(now: 3_000_000)
        XCTAssertEqual(s.next(now: 3_000_001), .wait(until: 5_000_000))
        XCTAssertEqual(s.next(now: 5_000_000), .keepalive)
    }

    func testDamageIsCapturedNoFasterThanTheFrameRate() {
        var s = scheduler()
        s.willCapture(now: 0)
        s.markDirty()
        XCTAssertEqual(s.next(now: 10_000), .wait(until: 33_333))
        s.markDirty()  // more damage before the frame is due changes nothing
        XCTAssertEqual(s.next(now: 20_000), .wait(until: 33_333))
        XCTAssertEqual(s.next(now: 33_333), .capture)
        s.willCapture(now: 33_333)
        XCTAssertEqual(s.next(now: 40_000), .wait(until: 1_033_333))
    }

    func testNewDamageCancelsThePaintOverUntilTheScreenSettlesAgain() {
        var s = scheduler()
        s.willCapture(now: 0)
        s.didPaintOver(now: 1_000_000)
        s.markDirty()
        XCTAssertEqual(s.next(now: 1_500_000), .capture)
        s.willCapture(now: 1_500_000)
        XCTAssertEqual(s.next(now: 2_000_000), .wait(until: 2_500_000))
        XCTAssertEqual(s.next(now: 2_500_000), .paintOver)
    }

    func testWithoutPaintOverOnlyKeepalivesFollow() {
        var s = scheduler(paintOver: nil)
        s.willCapture(now: 0)
        XCTAssertEqual(s.next(now: 1), .wait(until: 2_000_000))
        XCTAssertEqual(s.next(now: 2_000_000), .keepalive)
    }

    func testPaintOverWaitsForTheFrameInterval() {
        var s = CaptureScheduler(minimumIntervalMicros: 500_000, keepaliveMicros: 2_000_000, paintOverDelayMicros: 0)
        s.willCapture(now: 0)
        XCTAssertEqual(s.next(now: 1), .wait(until: 500_000))
        XCTAssertEqual(s.next(now: 500_000), .paintOver)
    }

    /// While the monitor is gone: damage and the paint-over wait, keepalives go on; nothing before a first frame.
    func testWhileHeldOnlyKeepalivesFollow() {
        var s = scheduler()
        XCTAssertEqual(s.nextWhileHeld(now: 0), .wait(until: UInt64.max), "no frame to repeat yet")
        s.willCapture(now: 0)
        s.markDirty()
        XCTAssertEqual(s.next(now: 40_000), .capture)
        XCTAssertEqual(s.nextWhileHeld(now: 40_000), .wait(until: 2_000_000), "damage waits")
        XCTAssertEqual(s.nextWhileHeld(now: 1_500_000), .wait(until: 2_000_000), "so does the paint-over")
        XCTAssertEqual(s.nextWhileHeld(now: 2_000_000), .keepalive)
        s.didKeepalive(now: 2_000_000)
        XCTAssertEqual(s.nextWhileHeld(now: 2_000_001), .wait(until: 4_000_000))
        XCTAssertEqual(s.next(now: 2_000_001), .capture, "the damage is still there when the monitor is back")
    }
}

/// Parsing and size arithmetic of the capture options.
final class CaptureOptionTests: XCTestCase {
    func testRegionParsing() {
        XCTAssertEqual(CaptureRect(parsing: "10,20,300,200"), CaptureRect(x: 10, y: 20, width: 300, height: 200))
        // The X11 geometry form, as --list-monitors and the logs print it, round-trips through description.
        XCTAssertEqual(CaptureRect(parsing: "300x200+10+20"), CaptureRect(x: 10, y: 20, width: 300, height: 200))
        let rect = CaptureRect(x: 0, y: 1080, width: 1920, height: 1080)
        XCTAssertEqual(CaptureRect(parsing: rect.description), rect)
        for bad in ["", "1,2,3", "1,2,3,4,5", "1,2,0,4", "-1,2,3,4", "1, 2,3,4", "a,b,c,d", "1,2,3,99999", "1,,3,4",
                    "300x200", "300x200+10", "300x200+10+20+5", "300x200-10+20", "300x0+1+2", "x200+1+2", "300x200+1+",
                    "300X200+1+2", "3x2x1+1+2", "300x200+1+99999", "000000000000000000300x200+1+2"] {
            XCTAssertNil(CaptureRect(parsing: bad), bad)
        }
    }

    func testMonitorSelectorParsing() {
        XCTAssertEqual(MonitorSelector(parsing: "0"), .index(0))
        XCTAssertEqual(MonitorSelector(parsing: "12"), .index(12))
        XCTAssertEqual(MonitorSelector(parsing: "DP-1"), .name("DP-1"))
        XCTAssertEqual(MonitorSelector(parsing: "1a"), .name("1a"))
    }

    func testOutputSizes() {
        XCTAssertEqual(OutputSize.scale(0.5).frameSize(width: 1920, height: 1080).width, 960)
        XCTAssertEqual(OutputSize.scale(0.5).frameSize(width: 1366, height: 768).width, 683)
        XCTAssertEqual(OutputSize.scale(0.5).frameSize(width: 1, height: 1).height, 1)
        let fit = OutputSize.fit(width: 1280, height: 720).frameSize(width: 1920, height: 1200)
        XCTAssertEqual([fit.width, fit.height], [1152, 720])
        let small = OutputSize.fit(width: 1280, height: 720).frameSize(width: 640, height: 480)
        XCTAssertEqual([small.width, small.height], [640, 480], "never enlarged")
        XCTAssertEqual(OutputSize.parseSize("1280x720")?.width, 1280)
        XCTAssertNil(OutputSize.parseSize("1280"))
        XCTAssertNil(OutputSize.parseSize("0x10"))
        XCTAssertNil(OutputSize.parseSize("x10"))
    }

    func testIntersection() {
        let a = CaptureRect(x: 0, y: 0, width: 100, height: 100)
        XCTAssertEqual(a.intersection(CaptureRect(x: 50, y: 60, width: 100, height: 100)), CaptureRect(x: 50, y: 60, width: 50, height: 40))
        XCTAssertFalse(a.intersects(CaptureRect(x: 100, y: 0, width: 10, height: 10)))
    }

    func testValidation() {
        var configuration = CaptureConfiguration()
        XCTAssertNoThrow(try configuration.validate())
        configuration.quality = 0
        XCTAssertThrowsError(try configuration.validate())
        configuration = CaptureConfiguration()
        configuration.outputSize = .scale(1.5)
        XCTAssertThrowsError(try configuration.validate())
    }

    func testPaintOverOnlyWhenItImproves() {
        var configuration = CaptureConfiguration()
        XCTAssertNotNil(configuration.effectivePaintOver)
        configuration.quality = 95
        configuration.subsampling = .yuv444
        XCTAssertNil(configuration.effectivePaintOver, "already as good as the paint-over")
    }
}
