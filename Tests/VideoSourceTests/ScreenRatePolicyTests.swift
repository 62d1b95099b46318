@testable import VideoSource
import Media
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

/// The low-rate policy (issue 31): below half of what 5 fps needs at full size, the picture steps down (¾, ½,
/// never below 360 lines), and back up only when the larger size carries the lowest frame rate, after a hold.
final class ScreenScalePolicyTests: XCTestCase {
    private let pixels = 1280 * 720
    private func policy(_ steps: [Double] = [1, 0.75, 0.5]) -> ScreenRatePolicy {
        var limits = ScreenRatePolicy.Limits(maxFramesPerSecond: 30, minQuantizer: 12, maxQuantizer: 56)
        limits.scaleSteps = steps
        return ScreenRatePolicy(limits: limits)
    }

    func testWithoutAHeightOrWithScalingOffThePictureKeepsItsSize() {
        var p = policy()
        XCTAssertEqual(p.update(targetKbps: 20, pixels: pixels, now: 0).scale, 1, "no height given: never scaled")
        var off = policy([1])
        let decision = off.update(targetKbps: 20, pixels: pixels, height: 720, now: 0)
        XCTAssertEqual(decision.scale, 1)
        XCTAssertEqual(decision.minQuantizer, 38, "the floor rises instead")
    }

    func testAFallingTargetLowersTheFrameRateThenTheFloorHalfWayThenTheSize() {
        var p = policy()
        var now: UInt64 = 0
        var decisions: [ScreenRatePolicy.Decision] = []
        // 5 fps at 1280x720 and 0.05 bits per pixel needs 230 kbit/s: below 115 the size steps down.
        for kbps in [1000, 300, 230, 150, 116, 114, 80, 60, 30] {
            decisions.append(p.update(targetKbps: kbps, pixels: pixels, height: 720, now: now))
            now += 500_000
        }
        XCTAssertEqual(decisions.map(\.scale), [1, 1, 1, 1, 1, 0.75, 0.75, 0.5, 0.5])
        XCTAssertEqual(decisions.map(\.framesPerSecond), [21, 6, 5, 5, 5, 5, 5, 5, 5])
        // At ¾ (129 kbit/s for 5 fps) 114 kbit/s needs a floor of 15 (at full size it had risen to 26); at ½
        // (57.6 kbit/s) 60 needs none; 30 at ½ raises it to 25.
        XCTAssertEqual(decisions.map(\.minQuantizer), [12, 12, 12, 22, 26, 15, 23, 12, 25], "a new size starts from its own ideal")
        XCTAssertTrue(decisions.allSatisfy { $0.scale == 1 || $0.maxQuantizer == 63 })
        XCTAssertEqual(decisions[5].description, "5 fps, q 15-63, scale 0.75")
    }

    func testADeepCutGoesStraightToTheSizeThatCarriesIt() {
        var p = policy()
        XCTAssertEqual(p.update(targetKbps: 60, pixels: pixels, height: 720, now: 0).scale, 0.5)
        XCTAssertEqual(p.update(targetKbps: 10, pixels: pixels, height: 720, now: 1).scale, 0.5, "never below ½ (360 lines)")
    }

    func testRecoveryStepsTheSizeUpFirstOneStepPerHold() {
        var p = policy()
        _ = p.update(targetKbps: 60, pixels: pixels, height: 720, now: 0)
        XCTAssertEqual(p.update(targetKbps: 3000, pixels: pixels, height: 720, now: 100_000).scale, 0.5, "the hold starts")
        XCTAssertEqual(p.update(targetKbps: 3000, pixels: pixels, height: 720, now: 2_000_000).scale, 0.5, "held 2 s")
        let threeQuarters = p.update(targetKbps: 3000, pixels: pixels, height: 720, now: 2_100_000)
        XCTAssertEqual(threeQuarters.scale, 0.75)
        XCTAssertEqual(threeQuarters.framesPerSecond, 30, "3 Mbit/s carries 960x540 at 30 fps")
        XCTAssertEqual(p.update(targetKbps: 3000, pixels: pixels, height: 720, now: 4_000_000).scale, 0.75, "another hold")
        let full = p.update(targetKbps: 3000, pixels: pixels, height: 720, now: 4_100_000)
        XCTAssertEqual(full, .init(framesPerSecond: 30, minQuantizer: 12, maxQuantizer: 56, scale: 1), "undegraded")
    }

    func testATargetWanderingAroundTheThresholdDoesNotFlap() {
        var p = policy()
        var scales: [Double] = []
        var now: UInt64 = 0
        for step in 0..<40 {
            let kbps = step.isMultiple(of: 2) ? 110 : 130  // around the 115 kbit/s step-down point
            scales.append(p.update(targetKbps: kbps, pixels: pixels, height: 720, now: now).scale)
            now += 1_000_000
        }
        XCTAssertEqual(Set(scales.dropFirst()), [0.75], "down once, then held: the next size up needs 230 kbit/s")
    }

    func testASmallPictureIsNeverScaledBelow360Lines() {
        var p = policy()
        XCTAssertEqual(p.scaleSteps(height: 480), [1, 0.75])
        XCTAssertEqual(p.scaleSteps(height: 360), [1])
        XCTAssertEqual(p.scaleSteps(height: 1080), [1, 0.75, 0.5])
        XCTAssertEqual(p.update(targetKbps: 10, pixels: 640 * 480, height: 480, now: 0).scale, 0.75)
        XCTAssertEqual(EncoderLoop.scaled(PictureSize(width: 1280, height: 720), by: 0.75), PictureSize(width: 960, height: 540))
        XCTAssertEqual(EncoderLoop.scaled(PictureSize(width: 1366, height: 768), by: 0.75), PictureSize(width: 1024, height: 576))
        XCTAssertEqual(EncoderLoop.scaled(PictureSize(width: 1366, height: 768), by: 0.5), PictureSize(width: 682, height: 384), "even sides")
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
