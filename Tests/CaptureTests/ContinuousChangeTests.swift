import Capture
import Foundation
import XCTest
import XTestSupport

/// A screen that never stops changing must never look still: a full-screen terminal scrolling a line
/// every 10 ms gives change frames at the capture rate, with no paint-over (which would mean the capture
/// saw a second without damage) and no gap near one.
///
/// The fault this guards against: a change the server reports between the `DamageSubtract` before a grab
/// and the grab itself is in the grab's pixels, but it leaves the DAMAGE object's region non-empty, so the
/// next change inside the same bounding box raises no event; a capture that took that first event as "in
/// the last frame already" saw nothing until the paint-over 1 s later (11 such 1-s gaps a minute on the
/// soak's 1080p terminal).
final class ContinuousChangeTests: XServerTestCase {
    override var screenSize: (width: Int, height: Int) { (1920, 1080) }

    func testAScrollingTerminalNeverLooksStill() throws {
        try server.spawn("xterm", ["-geometry", "318x82+0+0", "-fn", "fixed", "-e", "/bin/sh", "-c",
                                   "i=0; while :; do i=$((i+1)); echo \"$i the quick brown fox jumps over the lazy dog $i $i $i\"; sleep 0.01; done"])
        let (capture, collector) = try startCapture(configuration { $0.maxFramesPerSecond = 30 })
        _ = collector.wait(count: 30, timeout: 10)
        let before = collector.all.count
        Thread.sleep(forTimeInterval: 12)
        capture.stop()
        XCTAssertEqual(capture.wait(timeout: 5), .stopped)
        let frames = Array(collector.all.dropFirst(before))
        let times = frames.map(\.timestampMicros)
        let gaps = zip(times, times.dropFirst()).map { Double($1 - $0) / 1000 }
        let longest = gaps.max() ?? .infinity
        let kinds = Dictionary(grouping: frames, by: \.kind).mapValues(\.count)
        let context = "\(frames.count) frames in 12 s, \(kinds), longest gap \(Int(longest)) ms, gaps over 200 ms: \(gaps.filter { $0 > 200 }.map(Int.init))"
        XCTAssertEqual(kinds[.paintOver] ?? 0, 0, context)
        XCTAssertEqual(kinds[.keepalive] ?? 0, 0, context)
        // Xvfb and xterm share two cores with the test: a slow frame, never a still second.
        XCTAssertLessThan(longest, 400, context)
        XCTAssertGreaterThan(frames.count, 12 * 10, context)
    }
}
