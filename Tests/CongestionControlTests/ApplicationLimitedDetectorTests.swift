import CongestionControl
import XCTest

/// ``ApplicationLimitedDetector`` against the budget's closed form (libwebrtc's `AlrDetector` over its
/// `IntervalBudget`): the budget fills at r = 0.65 × target / 8 bytes per second up to S = r × 0.5 s, empties
/// by the bytes sent down to −S; the sender is application-limited from the moment the level (budget / S)
/// exceeds 0.8 until it falls below 0.5. A sender of s bit/s with s/8 < r therefore gains r − s/8 bytes per
/// second of budget, and enters ALR after 0.8 S / (r − s/8) seconds from an empty budget.
final class ApplicationLimitedDetectorTests: XCTestCase {
    /// Sends `bytes` every `interval` µs from `start` for `count` packets; returns the time it entered or left
    /// ALR (whichever changed first), if it did.
    private func send(_ detector: inout ApplicationLimitedDetector, bytes: Int, every interval: Int64, count: Int,
                      from start: Int64 = 0) -> Int64? {
        let before = detector.isApplicationLimited
        var changed: Int64?
        for index in 0..<count {
            let now = start + Int64(index) * interval
            detector.onBytesSent(bytes, atMicros: now)
            if changed == nil, detector.isApplicationLimited != before { changed = now }
        }
        return changed
    }

    /// The entry time follows 0.8 S / (r − s/8), to the packet: with 100-byte packets every 10 ms (80 kbit/s)
    /// against targets of 300 k, 1 M and 3 M the budget after the send at t is (r − 10 000) t − 100 bytes.
    func testEntryTimeFollowsTheBudgetsGrowth() {
        for target in [300_000, 1_000_000, 3_000_000] {
            var detector = ApplicationLimitedDetector(targetBitsPerSecond: target)
            let rate = 0.65 * Double(target) / 8
            let size = rate * 0.5
            let entered = send(&detector, bytes: 100, every: 10_000, count: 300)
            // The first send time t (a multiple of 10 ms) with (r − 10 000 B/s) t − 100 > 0.8 S.
            let seconds = (0.8 * size + 100) / (rate - 10_000)
            let expected = Int64((seconds * 100).rounded(.down) + 1) * 10_000
            XCTAssertEqual(entered, expected, "target \(target)")
            XCTAssertEqual(detector.startMicros, expected)
        }
    }

    /// Sending at the usage ratio (65 % of the target) or more never enters ALR: the budget never fills.
    func testSendingAtTheUsageRatioIsNotApplicationLimited() {
        var detector = ApplicationLimitedDetector(targetBitsPerSecond: 1_000_000)
        // 81 250 B/s = 812.5 B every 10 ms.
        for index in 0..<1000 {
            detector.onBytesSent(index % 2 == 0 ? 812 : 813, atMicros: Int64(index) * 10_000)
            XCTAssertFalse(detector.isApplicationLimited)
        }
        XCTAssertLessThan(detector.level, 0.1)
    }

    /// Hysteresis: between the stop level (0.5) and the start level (0.8) the state stays what it was, in
    /// both directions; the crossings are strict (exactly 0.8 does not start, exactly 0.5 does not stop).
    func testHysteresisAndStrictCrossings() {
        // Target 800 kbit/s: r = 65 000 B/s, S = 32 500 B; 1 ms of silence adds 65 B (0.2 % of S).
        var detector = ApplicationLimitedDetector(targetBitsPerSecond: 800_000)
        detector.onTick(atMicros: 0)
        detector.onTick(atMicros: 400_000)  // level 0.8 exactly
        XCTAssertEqual(detector.level, 0.8, accuracy: 1e-12)
        XCTAssertFalse(detector.isApplicationLimited, "0.8 is not above 0.8")
        detector.onTick(atMicros: 400_001)
        XCTAssertTrue(detector.isApplicationLimited)
        // Down to 0.6 (0.2 × S sent at once; the 1 µs added 0.065 B): still limited.
        detector.onBytesSent(Int(0.2 * 32_500), atMicros: 400_001)
        XCTAssertTrue(detector.isApplicationLimited)
        XCTAssertEqual(detector.level, 0.6, accuracy: 1e-5)
        // Exactly 0.5: still limited; just below: not.
        detector.onBytesSent(3250, atMicros: 400_001)
        XCTAssertEqual(detector.level, 0.5, accuracy: 1e-5)
        XCTAssertEqual(detector.level > 0.5, true, "0.065 B above")
        XCTAssertTrue(detector.isApplicationLimited)
        detector.onBytesSent(1, atMicros: 400_001)
        XCTAssertFalse(detector.isApplicationLimited)
        XCTAssertNil(detector.startMicros)
        // Back up to 0.7 by 100 ms of silence (6500 B): not limited (0.7 < 0.8).
        detector.onTick(atMicros: 400_001 + 100_000)
        XCTAssertEqual(detector.level, 0.7, accuracy: 1e-3)
        XCTAssertFalse(detector.isApplicationLimited)
    }

    /// Time running backwards adds nothing and does not move the clock back: the next forward step counts
    /// from the latest time seen.
    func testTimeGoingBackwardsAddsNothing() {
        var detector = ApplicationLimitedDetector(targetBitsPerSecond: 800_000)  // 65 B per ms
        detector.onTick(atMicros: 100_000)
        detector.onTick(atMicros: 200_000)
        XCTAssertEqual(detector.level, 0.2, accuracy: 1e-12)
        detector.onBytesSent(650, atMicros: 150_000)  // sent "earlier": bytes count, no refill
        XCTAssertEqual(detector.level, 0.18, accuracy: 1e-12)
        detector.onTick(atMicros: 210_000)  // 10 ms after the latest (200 ms), not 60 after 150 ms
        XCTAssertEqual(detector.level, 0.2, accuracy: 1e-12)
    }

    /// A new target rescales the budget's size; the bytes in it stay (clamped to the new size), so the level
    /// moves — and the state is re-evaluated at the next event, not at the change.
    func testANewTargetRescalesTheLevel() {
        var detector = ApplicationLimitedDetector(targetBitsPerSecond: 800_000)
        detector.onTick(atMicros: 0)
        detector.onTick(atMicros: 450_000)  // 29 250 B: level 0.9
        XCTAssertTrue(detector.isApplicationLimited)
        detector.setTarget(bitsPerSecond: 2_000_000)  // S = 81 250 B: level 0.36
        XCTAssertEqual(detector.level, 29_250 / 81_250, accuracy: 1e-12)
        XCTAssertTrue(detector.isApplicationLimited, "not re-evaluated yet")
        detector.onTick(atMicros: 450_000)
        XCTAssertFalse(detector.isApplicationLimited, "0.36 < 0.5")
        detector.setTarget(bitsPerSecond: 100_000)  // S = 4062.5 B: clamped, level 1
        XCTAssertEqual(detector.level, 1, accuracy: 1e-12)
        detector.onTick(atMicros: 450_000)
        XCTAssertTrue(detector.isApplicationLimited)
        XCTAssertEqual(detector.startMicros, 450_000)
        detector.setTarget(bitsPerSecond: -5)
        XCTAssertEqual(detector.level, 0, "no target: no budget")
    }

    /// A custom configuration: its thresholds and window are the ones used.
    func testCustomConfiguration() {
        var configuration = ApplicationLimitedDetector.Configuration()
        configuration.usageRatio = 0.5
        configuration.startLevel = 0.6
        configuration.stopLevel = 0.2
        configuration.windowMicros = 1_000_000
        // Target 800 kbit/s: r = 50 000 B/s, S = 50 000 B. Silence: level 0.6 after 600 ms.
        var detector = ApplicationLimitedDetector(configuration: configuration, targetBitsPerSecond: 800_000)
        detector.onTick(atMicros: 0)
        detector.onTick(atMicros: 600_000)
        XCTAssertFalse(detector.isApplicationLimited)
        detector.onTick(atMicros: 600_100)
        XCTAssertTrue(detector.isApplicationLimited)
        detector.onBytesSent(20_000, atMicros: 600_100)  // level 0.2 + 0.0001
        XCTAssertTrue(detector.isApplicationLimited)
        detector.onBytesSent(10, atMicros: 600_100)
        XCTAssertFalse(detector.isApplicationLimited)
    }
}
