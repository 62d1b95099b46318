import Capture
import Foundation
import XCTest
import XTestSupport

/// Only changes make frames: a static screen gives one paint-over and keepalives; a moving window gives
/// frames at its own rate.
final class DamageTests: XServerTestCase {
    func testStaticScreenSendsOnlyOnePaintOverAndKeepalives() throws {
        client.setRootBackground(TestImages.pattern(width: 320, height: 240))
        let (capture, collector) = try startCapture(configuration())
        XCTAssertTrue(Self.threadNames().contains("screen-capture"), "capture runs on its own named thread")
        Thread.sleep(forTimeInterval: 5.2)
        capture.stop()
        XCTAssertEqual(capture.wait(timeout: 5), .stopped)
        let frames = collector.all
        let kinds = frames.map(\.kind)
        XCTAssertEqual(kinds.first, .change)
        XCTAssertEqual(kinds.filter { $0 == .change }.count, 1, "\(kinds)")
        XCTAssertEqual(kinds.filter { $0 == .paintOver }.count, 1, "\(kinds)")
        XCTAssertEqual(kinds.count(where: { $0 == .keepalive }), 2, "keepalives at about 3 s and 5 s: \(kinds)")
        XCTAssertEqual(capture.stats.encodedFrames, 2, "nothing but the first frame and the paint-over was encoded")
        guard frames.count >= 3 else { return }
        let start = frames[0].timestampMicros
        let seconds = frames.map { Double($0.timestampMicros - start) / 1e6 }
        XCTAssertEqual(seconds[1], 1.0, accuracy: 0.25, "paint-over after 1 s of stillness: \(seconds)")
        XCTAssertEqual(seconds[2] - seconds[1], 2.0, accuracy: 0.25, "keepalive 2 s after the last frame: \(seconds)")
        XCTAssertEqual(frames[1].quality, 95)
        XCTAssertEqual(frames[1].subsampling, .yuv444)
        XCTAssertGreaterThan(frames[1].jpeg.count, frames[0].jpeg.count, "the paint-over is the sharper frame")
        for keepalive in frames.dropFirst(2) { XCTAssertEqual(keepalive.jpeg, frames[1].jpeg, "a keepalive repeats the last JPEG") }
        XCTAssertEqual(frames.map(\.index), (0..<UInt64(frames.count)).map { $0 }, "indices count every frame")
    }

    func testMovingWindowSendsFramesAtItsRate() throws {
        client.setRootColor(0x336699)
        let window = client.createWindow(x: 10, y: 10, width: 24, height: 24, color: 0xFFCC00)
        let (capture, collector) = try startCapture(configuration())
        collector.wait(count: 1)
        Thread.sleep(forTimeInterval: 0.2)
        let before = collector.all.count
        let moves = 30
        let started = Date()
        for step in 1...moves {  // 10 moves per second for 3 s
            client.move(window, x: 10 + step * 8, y: 10 + step * 5)
            let due = started.addingTimeInterval(Double(step) * 0.1)
            Thread.sleep(forTimeInterval: max(0, due.timeIntervalSinceNow))
        }
        Thread.sleep(forTimeInterval: 0.2)
        let changes = collector.all.dropFirst(before).filter { $0.kind == .change }.count
        capture.stop()
        XCTAssertEqual(capture.wait(timeout: 5), .stopped)
        XCTAssertTrue((moves - 4...moves + 3).contains(changes), "\(changes) change frames for \(moves) moves")
    }

    /// Xvfb's software cursor: a GetImage over the cursor while the screen changes makes the server write
    /// DAMAGE events into the middle of the image reply on the connection that owns the damage object, which
    /// garbles that connection. The GetImage path therefore reads pixels on a connection of its own.
    func testGetImagePathSurvivesChangesUnderTheCursor() throws {
        try server.run("xdotool", ["mousemove", "100", "60"])
        // xterm's scrolling text under the pointer is what triggers it (filled rectangles do not).
        try server.spawn("xterm", ["-geometry", "40x12+0+0", "-fn", "fixed", "-e", "/bin/sh", "-c",
                                   "i=0; while :; do i=$((i+1)); echo \"$i the quick brown fox\"; sleep 0.005; done"])
        let (capture, collector) = try startCapture(configuration { $0.usesSharedMemory = false; $0.drawsCursor = true })
        let frames = collector.wait(count: 30, timeout: 5)
        XCTAssertNil(capture.wait(timeout: 0), "the capture failed: \(logs.lines)")
        capture.stop()
        XCTAssertEqual(capture.wait(timeout: 5), .stopped)
        XCTAssertGreaterThanOrEqual(frames.count, 30)
        XCTAssertEqual(capture.stats.method, "get-image")
    }

    func testChangesOutsideTheRegionSendNothing() throws {
        client.setRootColor(0x336699)
        let window = client.createWindow(x: 200, y: 150, width: 24, height: 24, color: 0xFFCC00)
        let (capture, collector) = try startCapture(configuration {
            $0.target = .region(CaptureRect(x: 0, y: 0, width: 100, height: 100))
            $0.paintOver = nil
        })
        collector.wait(count: 1)
        for step in 1...15 {
            client.move(window, x: 200 + step * 4, y: 150 + step * 2)
            Thread.sleep(forTimeInterval: 0.05)
        }
        Thread.sleep(forTimeInterval: 0.2)
        capture.stop()
        XCTAssertEqual(capture.wait(timeout: 5), .stopped)
        XCTAssertEqual(collector.all.map(\.kind), [.change], "moves outside the region made frames")
        XCTAssertGreaterThan(capture.stats.damageEvents, 0, "the moves were reported as damage")
    }
}
