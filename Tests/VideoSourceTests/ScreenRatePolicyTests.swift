@testable import VideoSource
import XCTest

/// The screen rate policy's decisions on target sequences, with virtual time.
final class ScreenRatePolicyTests: XCTestCase {
    private let pixels = 1280 * 720
    private func policy() -> ScreenRatePolicy {
        ScreenRatePolicy(limits: ScreenRatePolicy.Limits(maxFramesPerSecond: 30, minQuantizer: 12, maxQuantizer: 56))
    }

    func testTheIdealKeepsTheFrameRateUntilTheTargetNeedsLess() {
        let p = policy()
        XCTAssertEqual(p.ideal(targetKbps: 4000, pixels: pixels), .init(framesPerSecond: 30, minQuantizer: 12, maxQuantizer: 56))
        XCTAssertEqual(p.ideal(targetKbps: 1000, pixels: pixels), .init(framesPerSecond: 21, minQuantizer: 12, maxQuantizer: 63))
        XCTAssertEqual(p.ideal(targetKbps: 300, pixels: pixels), .init(framesPerSecond: 6, minQuantizer: 12, maxQuantizer: 63))
        // 5 fps needs 230 kbps at 0.05 bits per pixel; half of that raises the floor half way to 40.
        XCTAssertEqual(p.ideal(targetKbps: 230, pixels: pixels).minQuantizer, 12)
        XCTAssertEqual(p.ideal(targetKbps: 115, pixels: pixels), .init(framesPerSecond: 5, minQuantizer: 26, maxQuantizer: 63))
        XCTAssertEqual(p.ideal(targetKbps: 1, pixels: pixels).minQuantizer, 40)
    }

    func testAFallingTargetLowersTheFrameRateFirstThenRaisesTheFloor() {
        var p = policy()
        var decisions: [ScreenRatePolicy.Decision] = []
        var now: UInt64 = 0
        for kbps in [3000, 2000, 1500, 1000, 700, 500, 400, 300, 250, 200, 150, 100, 60] {
            decisions.append(p.update(targetKbps: kbps, pixels: pixels, now: now))
            now += 500_000
        }
        let fps = decisions.map(\.framesPerSecond)
        let floors = decisions.map(\.minQuantizer)
        XCTAssertEqual(fps, [30, 30, 30, 21, 15, 10, 8, 6, 5, 5, 5, 5, 5])
        XCTAssertEqual(floors, [12, 12, 12, 12, 12, 12, 12, 12, 12, 16, 22, 28, 33])
        // The floor rises only once the frame rate is at its lowest.
        for d in decisions where d.minQuantizer > 12 { XCTAssertEqual(d.framesPerSecond, 5) }
        XCTAssertEqual(decisions.map(\.maxQuantizer), [56, 56, 56] + Array(repeating: 63, count: 10))
    }

    func testRecoveryWaitsForTheHoldAndRestoresTheFrameRateBeforeTheFloor() {
        var p = policy()
        XCTAssertEqual(p.update(targetKbps: 60, pixels: pixels, now: 0), .init(framesPerSecond: 5, minQuantizer: 33, maxQuantizer: 63))
        // The target jumps back: nothing changes for 2 s.
        XCTAssertEqual(p.update(targetKbps: 3000, pixels: pixels, now: 100_000).framesPerSecond, 5)
        XCTAssertEqual(p.update(targetKbps: 3000, pixels: pixels, now: 2_000_000).framesPerSecond, 5)
        // Then the frame rate comes back, the floor still raised …
        XCTAssertEqual(p.update(targetKbps: 3000, pixels: pixels, now: 2_100_000), .init(framesPerSecond: 30, minQuantizer: 33, maxQuantizer: 63))
        XCTAssertEqual(p.update(targetKbps: 3000, pixels: pixels, now: 4_000_000).minQuantizer, 33)
        // … and another hold later the floor and the configured range.
        XCTAssertEqual(p.update(targetKbps: 3000, pixels: pixels, now: 4_100_000), .init(framesPerSecond: 30, minQuantizer: 12, maxQuantizer: 56))
    }

    func testADipDuringTheHoldRestartsIt() {
        var p = policy()
        _ = p.update(targetKbps: 300, pixels: pixels, now: 0)
        _ = p.update(targetKbps: 3000, pixels: pixels, now: 1_000_000)
        _ = p.update(targetKbps: 300, pixels: pixels, now: 2_500_000)  // allowed nothing better: the hold restarts
        XCTAssertEqual(p.update(targetKbps: 3000, pixels: pixels, now: 3_000_000).framesPerSecond, 6)
        XCTAssertEqual(p.update(targetKbps: 3000, pixels: pixels, now: 4_900_000).framesPerSecond, 6)
        XCTAssertEqual(p.update(targetKbps: 3000, pixels: pixels, now: 5_000_000).framesPerSecond, 30)
    }

    func testALowerConfiguredMaximumAndMinimumAreKept() {
        var p = ScreenRatePolicy(limits: .init(maxFramesPerSecond: 4, minFramesPerSecond: 5, minQuantizer: 20, maxQuantizer: 50))
        XCTAssertEqual(p.update(targetKbps: 5000, pixels: pixels, now: 0), .init(framesPerSecond: 4, minQuantizer: 20, maxQuantizer: 50))
        XCTAssertEqual(p.update(targetKbps: 100, pixels: pixels, now: 1).framesPerSecond, 4)
    }
}

/// The byte budget (token bucket at the target).
final class ByteBudgetTests: XCTestCase {
    func testItFillsAtTheRateUpToItsBurst() {
        var budget = ByteBudget(rateKbps: 800, burstMicros: 250_000)  // 200 000 bits = 25 000 bytes
        XCTAssertEqual(budget.capacityBits, 200_000)
        budget.refill(now: 0)
        budget.spend(bytes: 25_000, now: 0)
        XCTAssertEqual(budget.balance(at: 0), 0)
        XCTAssertFalse(budget.hasBytes(now: 0))
        XCTAssertEqual(budget.balance(at: 100_000), 80_000)  // 800 kbps × 0.1 s
        XCTAssertEqual(budget.balance(at: 10_000_000), 200_000)  // never above the burst
        budget.spend(bytes: 50_000, now: 0)  // a frame is never cut: debt
        XCTAssertEqual(budget.balance(at: 0), -400_000)
        XCTAssertEqual(budget.time(holding: 1, after: 0), 500_002)
    }

    func testARateChangeKeepsDebtAndClampsCredit() {
        var budget = ByteBudget(rateKbps: 1000, burstMicros: 250_000)
        budget.setRate(kbps: 100, now: 0)
        XCTAssertEqual(budget.balance(at: 0), 25_000)
        budget.spend(bytes: 10_000, now: 0)
        budget.setRate(kbps: 2000, now: 0)
        XCTAssertEqual(budget.balance(at: 0), -55_000)
    }
}
