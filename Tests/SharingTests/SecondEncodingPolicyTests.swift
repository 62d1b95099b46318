import Media
import Sharing
import XCTest

/// The rate policy for screens across two encodings (issue 12), with an injected clock: when the second
/// encoder runs, at what rate and size, and which viewer it serves, with hysteresis.
final class SecondEncodingPolicyTests: XCTestCase {
    private let size720 = PictureSize(width: 1280, height: 720)
    private let size1080 = PictureSize(width: 1920, height: 1080)

    private func gcc(_ kbps: Int, silent: Bool = false) -> PeerEstimate { PeerEstimate(kbps: kbps, isCongestionControl: true, silent: silent) }

    func testAnOutlierStartsTheEncoderAtOnceAndMovesAfterTheHold() {
        var policy = SecondEncodingPolicy()
        let viewers: Set = ["fast", "slow"]
        XCTAssertEqual(policy.update(estimates: ["fast": gcc(3000), "slow": gcc(2000)], movable: viewers, pictureSize: size1080, nowMicros: 0), [])
        // 500 < 0.5 × 3000: the encoder starts (0.85 × 500 = 425 kbps; 1080p at 425 kbps would be 4 fps: half size).
        XCTAssertEqual(policy.update(estimates: ["fast": gcc(3000), "slow": gcc(500)], movable: viewers, pictureSize: size1080, nowMicros: 1_000_000),
                       [.start(kbps: 425, divisor: 2)])
        XCTAssertEqual(policy.assignment(of: "slow"), .main)
        XCTAssertEqual(policy.update(estimates: ["fast": gcc(3000), "slow": gcc(500)], movable: viewers, pictureSize: size1080, nowMicros: 2_999_999), [])
        XCTAssertEqual(policy.update(estimates: ["fast": gcc(3000), "slow": gcc(480)], movable: viewers, pictureSize: size1080, nowMicros: 3_000_000),
                       [.move(peer: "slow", to: .low, reason: "estimate far below the others", kbps: 480, highestKbps: 3000)])
        XCTAssertEqual(policy.assignment(of: "slow"), .low)
        XCTAssertEqual(policy.lowViewers, ["slow"])
        XCTAssertEqual(policy.encoder, .running(kbps: 425, divisor: 2), "480 × 0.85 = 408: under 5 % from 425, kept")
        XCTAssertEqual(policy.update(estimates: ["fast": gcc(3000), "slow": gcc(400)], movable: viewers, pictureSize: size1080, nowMicros: 3_500_000),
                       [.setBitrate(kbps: 340)])
    }

    func testAViewerRampingUpAfterJoiningIsNotMoved() {
        var policy = SecondEncodingPolicy()
        let viewers: Set = ["fast", "new"]
        _ = policy.update(estimates: ["fast": gcc(3000), "new": gcc(300)], movable: viewers, pictureSize: size720, nowMicros: 0)
        _ = policy.update(estimates: ["fast": gcc(3000), "new": gcc(900)], movable: viewers, pictureSize: size720, nowMicros: 1_000_000)
        // Above half the highest before the 2 s hold: it stays, and the warm encoder stops 5 s later.
        XCTAssertEqual(policy.update(estimates: ["fast": gcc(3000), "new": gcc(1600)], movable: viewers, pictureSize: size720, nowMicros: 1_900_000), [])
        XCTAssertEqual(policy.update(estimates: ["fast": gcc(3000), "new": gcc(1800)], movable: viewers, pictureSize: size720, nowMicros: 5_000_000), [])
        XCTAssertEqual(policy.assignment(of: "new"), .main)
        XCTAssertEqual(policy.update(estimates: ["fast": gcc(3000), "new": gcc(1800)], movable: viewers, pictureSize: size720, nowMicros: 6_900_000), [.stop])
        XCTAssertEqual(policy.encoder, .off)
        XCTAssertEqual(policy.starts, 1)
    }

    func testBackUpOnlyAboveTheUpperRatioForTheHoldNoFlapping() {
        var policy = SecondEncodingPolicy()
        let viewers: Set = ["fast", "slow"]
        func at(_ slow: Int, _ t: UInt64) -> [SecondEncodingPolicy.Action] {
            policy.update(estimates: ["fast": gcc(2000), "slow": gcc(slow)], movable: viewers, pictureSize: size720, nowMicros: t)
        }
        _ = at(400, 0)
        XCTAssertEqual(at(400, 2_000_000).filter { if case .move = $0 { true } else { false } }.count, 1)
        // Between the ratios (0.5 and 0.7 of 2000): it stays on the low encoding, whatever the time.
        for t in stride(from: UInt64(3_000_000), through: 20_000_000, by: 1_000_000) {
            XCTAssertFalse(at(t % 2_000_000 == 0 ? 1100 : 1300, t).contains { if case .move = $0 { true } else { false } }, "t=\(t)")
        }
        XCTAssertEqual(policy.assignment(of: "slow"), .low)
        // At or above 1400 for 4 s: back on the main encoding; then the idle encoder stops 5 s later.
        XCTAssertFalse(at(1500, 21_000_000).contains { if case .move = $0 { true } else { false } })
        XCTAssertFalse(at(1200, 22_000_000).contains { if case .move = $0 { true } else { false } }, "a dip restarts the hold")
        _ = at(1500, 23_000_000)
        XCTAssertEqual(at(1500, 27_000_000), [.move(peer: "slow", to: .main, reason: "estimate near the others again", kbps: 1500, highestKbps: 2000)])
        XCTAssertEqual(at(1500, 31_999_999), [])
        XCTAssertEqual(at(1500, 32_000_000), [.stop])
    }

    func testTheLoneViewerLeftOnTheLowEncodingGoesBackAndTheSFUIsNeverMoved() {
        var policy = SecondEncodingPolicy()
        _ = policy.update(estimates: ["fast": gcc(3000), "slow": gcc(400), "sfu": gcc(300)], movable: ["fast", "slow"], pictureSize: size720, nowMicros: 0)
        let moved = policy.update(estimates: ["fast": gcc(3000), "slow": gcc(400), "sfu": gcc(300)], movable: ["fast", "slow"], pictureSize: size720,
                                  nowMicros: 2_000_000)
        XCTAssertEqual(moved, [.move(peer: "slow", to: .low, reason: "estimate far below the others", kbps: 400, highestKbps: 3000)])
        XCTAssertEqual(policy.assignment(of: "sfu"), .main)
        // The fast viewer leaves: the slow one is the highest itself, back after the hold.
        _ = policy.update(estimates: ["slow": gcc(400)], movable: ["slow"], pictureSize: size720, nowMicros: 3_000_000)
        XCTAssertEqual(policy.update(estimates: ["slow": gcc(400)], movable: ["slow"], pictureSize: size720, nowMicros: 7_000_000),
                       [.move(peer: "slow", to: .main, reason: "estimate near the others again", kbps: 400, highestKbps: 400)])
        // A viewer that leaves while on the low encoding needs no move back.
        var other = SecondEncodingPolicy()
        _ = other.update(estimates: ["a": gcc(3000), "b": gcc(400)], movable: ["a", "b"], pictureSize: size720, nowMicros: 0)
        _ = other.update(estimates: ["a": gcc(3000), "b": gcc(400)], movable: ["a", "b"], pictureSize: size720, nowMicros: 2_000_000)
        XCTAssertEqual(other.update(estimates: ["a": gcc(3000)], movable: ["a"], pictureSize: size720, nowMicros: 2_500_000), [])
        XCTAssertEqual(other.lowViewers, [])
        XCTAssertEqual(other.update(estimates: ["a": gcc(3000)], movable: ["a"], pictureSize: size720, nowMicros: 7_500_000), [.stop])
    }

    func testAnEstimateAboveTheCeilingDoesNotKeepAViewerOnTheLowEncoding() {
        var policy = SecondEncodingPolicy()
        func at(_ slow: Int, _ t: UInt64) -> [SecondEncodingPolicy.Action] {
            policy.update(estimates: ["fast": gcc(3000), "slow": gcc(slow)], movable: ["fast", "slow"], pictureSize: size720,
                          ceilingKbps: 1500, nowMicros: t)
        }
        // 600 < 0.5 × min(3000, 1500): moved down; 900 is not an outlier of a 1500 kbit/s main encoder.
        _ = at(600, 0)
        XCTAssertEqual(at(600, 2_000_000).last, .move(peer: "slow", to: .low, reason: "estimate far below the others", kbps: 600, highestKbps: 1500))
        _ = at(1100, 3_000_000)
        XCTAssertEqual(at(1100, 7_000_000).last, .move(peer: "slow", to: .main, reason: "estimate near the others again", kbps: 1100, highestKbps: 1500),
                       "1100 >= 0.7 × 1500, though far below the fast viewer's 3000")
        XCTAssertEqual(at(900, 20_000_000).filter { if case .move = $0 { true } else { false } }, [], "900 >= 0.5 × 1500: it stays")
    }

    func testREMBAndSilentViewersAreNotMoved() {
        var policy = SecondEncodingPolicy()
        let estimates = ["fast": gcc(3000), "remb": PeerEstimate(kbps: 300, isCongestionControl: false), "gone": gcc(200, silent: true)]
        for t in stride(from: UInt64(0), through: 10_000_000, by: 1_000_000) {
            XCTAssertEqual(policy.update(estimates: estimates, movable: ["fast", "remb", "gone"], pictureSize: size720, nowMicros: t), [])
        }
    }

    func testTheSizeIsHalvedWhenFullSizeWouldBeFarBelowTwelveFramesASecond() {
        let settings = SecondEncodingPolicy.Settings()
        func divisor(_ kbps: Int, _ size: PictureSize, _ current: Int? = nil) -> Int {
            SecondEncodingPolicy.divisor(kbps: kbps, size: size, current: current, settings: settings)
        }
        // 1280×720 at 0.05 bit per pixel: 46 kbps a frame; 12 fps = 553 kbps, 20 fps = 922 kbps.
        XCTAssertEqual(divisor(425, size720), 2)
        XCTAssertEqual(divisor(600, size720), 2, "between the thresholds, fresh: half")
        XCTAssertEqual(divisor(600, size720, 1), 1, "between the thresholds: kept")
        XCTAssertEqual(divisor(950, size720, 2), 1)
        XCTAssertEqual(divisor(200, PictureSize(width: 600, height: 400)), 1, "never below 320 pixels wide")
        var policy = SecondEncodingPolicy()
        _ = policy.update(estimates: ["f": gcc(3000), "s": gcc(500)], movable: ["f", "s"], pictureSize: size720, nowMicros: 0)
        XCTAssertEqual(policy.encoder, .running(kbps: 425, divisor: 2))
        XCTAssertEqual(policy.update(estimates: ["f": gcc(4000), "s": gcc(1200)], movable: ["f", "s"], pictureSize: size720, nowMicros: 100),
                       [.setBitrate(kbps: 1020), .setDivisor(1)])
    }
}

/// One viewer's move between the encodings: make-before-break at the new encoding's keyframe, capture times
/// that never go back, keyframe requests to the right encoder.
final class EncodingSwitchTests: XCTestCase {
    func testAMoveCompletesAtTheNewEncodingsKeyframeWithoutAGap() {
        var gate = EncodingSwitch(retryMicros: 1_000_000)
        XCTAssertEqual(gate.frame(from: .main, isKeyframe: true, captureMicros: 1000), .send(captureMicros: 1000, completesMove: false))
        XCTAssertEqual(gate.frame(from: .low, isKeyframe: true, captureMicros: 1000), .drop, "not moving: the other encoding is not sent")
        XCTAssertTrue(gate.moveTo(.low, nowMicros: 5000))
        XCTAssertFalse(gate.moveTo(.low, nowMicros: 5001), "already moving there")
        XCTAssertEqual(gate.keyframeSource, .low)
        XCTAssertEqual(gate.description, "main->low")
        XCTAssertEqual(gate.frame(from: .low, isKeyframe: false, captureMicros: 40_000), .drop, "no interframe before its keyframe")
        XCTAssertEqual(gate.frame(from: .main, isKeyframe: false, captureMicros: 40_000), .send(captureMicros: 40_000, completesMove: false),
                       "the old encoding goes on meanwhile")
        // The low encoder's keyframe of the same picture: sent just after it, never with the same RTP time.
        XCTAssertEqual(gate.frame(from: .low, isKeyframe: true, captureMicros: 40_000), .send(captureMicros: 40_012, completesMove: true))
        XCTAssertEqual(gate.frame(from: .main, isKeyframe: false, captureMicros: 73_000), .drop)
        XCTAssertEqual(gate.frame(from: .low, isKeyframe: false, captureMicros: 30_000), .send(captureMicros: 40_024, completesMove: false),
                       "a late picture of the new encoding never goes back in time")
        XCTAssertEqual(gate.frame(from: .low, isKeyframe: false, captureMicros: 90_000), .send(captureMicros: 90_000, completesMove: false))
        XCTAssertEqual([gate.current.rawValue, gate.description], ["low", "low"])
        XCTAssertEqual(gate.moves, 1)
    }

    func testKeyframeRetriesAndCallingAMoveOff() {
        var gate = EncodingSwitch(retryMicros: 1_000_000)
        XCTAssertTrue(gate.moveTo(.low, nowMicros: 0))
        XCTAssertNil(gate.keyframeRetryDue(nowMicros: 999_999))
        XCTAssertEqual(gate.keyframeRetryDue(nowMicros: 1_000_000), .low)
        XCTAssertNil(gate.keyframeRetryDue(nowMicros: 1_500_000))
        XCTAssertFalse(gate.moveTo(.main, nowMicros: 1_600_000), "back to where it is: called off, nothing to ask")
        XCTAssertNil(gate.target)
        XCTAssertNil(gate.keyframeRetryDue(nowMicros: 9_000_000))
        XCTAssertEqual(gate.keyframeSource, .main)
        XCTAssertEqual(gate.frame(from: .low, isKeyframe: true, captureMicros: 5), .drop)
    }
}

/// Viewers on the second encoding no longer set the main encoder's rate, nor count as its outliers.
final class ServedElsewhereTests: XCTestCase {
    func testAViewerOnTheLowEncodingLeavesTheMainRateAndTheOutliers() {
        var follower = BitrateFollower(minimumKbps: 150)
        _ = follower.update(peer: "fast", bitsPerSecond: 3_000_000, ceilingKbps: 5000, source: .congestionControl)
        XCTAssertEqual(follower.update(peer: "mid", bitsPerSecond: 2_000_000, ceilingKbps: 5000, source: .congestionControl), .set(2000))
        _ = follower.update(peer: "slow", bitsPerSecond: 500_000, ceilingKbps: 5000, source: .congestionControl)
        XCTAssertEqual(follower.outliers, ["slow"])
        XCTAssertEqual(follower.setServedElsewhere(["slow", "mid"], ceilingKbps: 5000), .set(3000))
        XCTAssertEqual(follower.outliers, [])
        XCTAssertNil(follower.lowestOutlierKbps)
        XCTAssertEqual(follower.highestEstimateKbps, 3000)
        XCTAssertEqual(follower.peerEstimates["slow"], PeerEstimate(kbps: 500, isCongestionControl: true))
        XCTAssertNil(follower.setServedElsewhere(["slow", "mid"], ceilingKbps: 5000))
        XCTAssertEqual(follower.setServedElsewhere([], ceilingKbps: 5000), .set(2000))
        _ = follower.setServedElsewhere(["slow"], ceilingKbps: 5000)
        _ = follower.remove(peer: "slow", ceilingKbps: 5000)
        XCTAssertEqual(follower.servedElsewhere, [])
    }
}
