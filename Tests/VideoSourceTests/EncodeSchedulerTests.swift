@testable import VideoSource
import XCTest

/// The encode timeline, driven with virtual time (no threads, no clock).
final class EncodeSchedulerTests: XCTestCase {
    typealias Event = (time: UInt64, action: EncodeScheduler.Action)

    private func policy(
        maxFPS: Double = 30, spacing: UInt64 = 300_000, interval: UInt64? = nil, refinement: IdleRefinementPolicy = .standard
    ) -> EncodeScheduler.Policy {
        EncodeScheduler.Policy(
            minFrameIntervalMicros: UInt64((1e6 / maxFPS).rounded()), keyframeSpacingMicros: spacing,
            keyframeIntervalMicros: interval, refinement: refinement)
    }

    /// Runs the scheduler as the encoder loop does, jumping virtual time to the next event.
    private func simulate(
        _ policy: EncodeScheduler.Policy, until end: UInt64, frames: [UInt64], keyframeRequests: [UInt64] = []
    ) -> [Event] {
        var scheduler = EncodeScheduler(policy: policy)
        var now: UInt64 = 0
        var pending = false
        var hasPicture = false
        var (fi, ki) = (0, 0)
        var events: [Event] = []
        while now <= end {
            while fi < frames.count, frames[fi] <= now { pending = true; fi += 1 }
            while ki < keyframeRequests.count, keyframeRequests[ki] <= now { scheduler.requestKeyframe(); ki += 1 }
            let action = scheduler.next(now: now, hasNewFrame: pending, hasPicture: hasPicture)
            switch action {
            case .encodeNew(let keyframe):
                pending = false
                hasPicture = true
                scheduler.didEncode(at: now, keyframe: keyframe, reason: .newFrame)
                events.append((now, action))
            case .reencode(let keyframe, _, let reason):
                scheduler.didEncode(at: now, keyframe: keyframe, reason: reason)
                events.append((now, action))
            case .wait(let until):
                var next = min(until ?? .max, end + 1)
                if fi < frames.count { next = min(next, frames[fi]) }
                if ki < keyframeRequests.count { next = min(next, keyframeRequests[ki]) }
                XCTAssertGreaterThan(next, now, "time must move on")
                now = max(next, now + 1)
            }
        }
        return events
    }

    private func isKeyframe(_ action: EncodeScheduler.Action) -> Bool {
        switch action {
        case .encodeNew(let keyframe), .reencode(let keyframe, _, _): keyframe
        case .wait: false
        }
    }

    /// Refinement off: a new frame libvpx dropped is encoded again one frame interval after the drop (under
    /// the byte budget), once; with refinement on, the refinement does that and no extra encode is owed.
    func testADroppedNewFrameIsOwedOnlyWhenNoRefinementWillReencodeIt() {
        var scheduler = EncodeScheduler(policy: policy(maxFPS: 10, refinement: .off))
        XCTAssertEqual(scheduler.next(now: 0, hasNewFrame: true, hasPicture: false), .encodeNew(keyframe: true))
        scheduler.didEncode(at: 0, keyframe: true, reason: .newFrame)
        XCTAssertEqual(scheduler.next(now: 100_000, hasNewFrame: true, hasPicture: true), .encodeNew(keyframe: false))
        scheduler.didEncode(at: 100_000, keyframe: false, reason: .newFrame)
        scheduler.newFrameWasDropped()
        XCTAssertEqual(scheduler.next(now: 150_000, hasNewFrame: false, hasPicture: true), .wait(until: 200_000))
        XCTAssertEqual(scheduler.next(now: 200_000, hasNewFrame: false, hasPicture: true, idleAllowedAt: 260_000),
                       .wait(until: 260_000), "the byte budget first")
        XCTAssertEqual(scheduler.next(now: 260_000, hasNewFrame: false, hasPicture: true, idleAllowedAt: 260_000),
                       .reencode(keyframe: false, quantizerCeiling: nil, reason: .repeatFrame))
        scheduler.didEncode(at: 260_000, keyframe: false, reason: .repeatFrame)
        XCTAssertEqual(scheduler.next(now: 10_000_000, hasNewFrame: false, hasPicture: true), .wait(until: nil),
                       "owed once; refinement off has no repeats")

        var refined = EncodeScheduler(policy: policy(maxFPS: 10))
        refined.didEncode(at: 0, keyframe: true, reason: .newFrame)
        refined.newFrameWasDropped()
        XCTAssertEqual(refined.next(now: 100_000, hasNewFrame: false, hasPicture: true),
                       .wait(until: IdleRefinementPolicy.standard.firstDelayMicros), "the first refinement re-encodes it")
    }

    func testANonReferenceNewFrameIsOwedAReferenceRepeatWhenNoRefinementFollows() {
        // The droppable cadence: a viewer thinned to reference frames must get the screen's last change.
        var scheduler = EncodeScheduler(policy: policy(maxFPS: 10, refinement: .off))
        scheduler.didEncode(at: 0, keyframe: true, reason: .newFrame)
        scheduler.didEncode(at: 100_000, keyframe: false, reason: .newFrame)
        scheduler.newFrameWasNotReferenced()
        XCTAssertEqual(scheduler.next(now: 150_000, hasNewFrame: false, hasPicture: true), .wait(until: 200_000))
        XCTAssertEqual(scheduler.next(now: 200_000, hasNewFrame: false, hasPicture: true),
                       .reencode(keyframe: false, quantizerCeiling: nil, reason: .repeatFrame))
        XCTAssertEqual(scheduler.next(now: 200_000, hasNewFrame: true, hasPicture: true), .encodeNew(keyframe: false),
                       "a new frame first")
        scheduler.didEncode(at: 200_000, keyframe: false, reason: .repeatFrame)
        XCTAssertEqual(scheduler.next(now: 10_000_000, hasNewFrame: false, hasPicture: true), .wait(until: nil), "owed once")

        var refined = EncodeScheduler(policy: policy(maxFPS: 10))
        refined.didEncode(at: 0, keyframe: true, reason: .newFrame)
        refined.newFrameWasNotReferenced()
        XCTAssertEqual(refined.next(now: 100_000, hasNewFrame: false, hasPicture: true),
                       .wait(until: IdleRefinementPolicy.standard.firstDelayMicros), "the first refinement re-encodes it")
    }

    func testAStaticPictureIsRefinedThenRepeatedOnceASecond() {
        let events = simulate(policy(), until: 10_000_000, frames: [0])
        XCTAssertEqual(events.first?.action, .encodeNew(keyframe: true))
        let refinements = events.compactMap { event -> (UInt64, Int?)? in
            if case .reencode(false, let ceiling, .refinement) = event.action { return (event.time, ceiling) }
            return nil
        }
        XCTAssertEqual(refinements.map(\.0), [200_000, 350_000, 500_000, 650_000, 800_000, 950_000])
        XCTAssertEqual(refinements.map(\.1), [40, 32, 24, 18, 14, 12], "falling quantizer ceilings: rising quality")
        let repeats = events.compactMap { event -> (UInt64, Int?)? in
            if case .reencode(false, let ceiling, .repeatFrame) = event.action { return (event.time, ceiling) }
            return nil
        }
        XCTAssertEqual(repeats.map(\.0), stride(from: 1_950_000, through: 9_950_000, by: 1_000_000).map { UInt64($0) })
        XCTAssertTrue(repeats.allSatisfy { $0.1 == 12 }, "repeats keep the best quality")
        XCTAssertEqual(events.count, 1 + 6 + 9)
    }

    func testANewFrameRestartsRefinement() {
        let events = simulate(policy(), until: 3_000_000, frames: [0, 420_000])
        let times = events.map(\.time)
        // 0 new, refinements at 200k and 350k, 420k new, refinements from 620k every 150k, a repeat 1 s on.
        XCTAssertEqual(times, [0, 200_000, 350_000, 420_000, 620_000, 770_000, 920_000, 1_070_000, 1_220_000, 1_370_000, 2_370_000])
        XCTAssertEqual(events[3].action, .encodeNew(keyframe: false))
        XCTAssertEqual(events[4].action, .reencode(keyframe: false, quantizerCeiling: 40, reason: .refinement(0)))
    }

    func testRefinementOffEncodesAStaticPictureOnce() {
        XCTAssertEqual(simulate(policy(refinement: .off), until: 5_000_000, frames: [0]).count, 1)
    }

    /// A source faster than the cap is held to the cap on average: gaps never under three quarters of the
    /// interval (a frame may come `earlyShare` before its slot), 30 of 100 frames in a second.
    func testMaxFPSSpacesNewFrames() {
        let frames = (0..<100).map { UInt64($0) * 10_000 }  // 100 fps for 1 s
        let events = simulate(policy(maxFPS: 30, refinement: .off), until: 1_000_000, frames: frames)
        let gaps = zip(events.dropFirst(), events).map { $0.time - $1.time }
        XCTAssertTrue(gaps.allSatisfy { $0 >= 25_000 }, "\(gaps)")
        XCTAssertEqual(events.count, 30, accuracy: 1)
        // Over two seconds the slots keep the rate exactly: no credit builds up from early frames.
        let long = simulate(policy(maxFPS: 30, refinement: .off), until: 2_000_000, frames: (0..<200).map { UInt64($0) * 10_000 })
        XCTAssertEqual(long.count, 60, accuracy: 1)
    }

    /// A source ticking at the cap's own rate with ±3 ms of jitter (the agent at 30 fps, the call at
    /// --max-fps 30): every frame is encoded the moment it arrives. With a hard minimum gap a frame 1 ms
    /// early waited until the next was due and was replaced by it (stale) — half the frames, seen as 25 fps
    /// with frames waiting up to a whole interval.
    func testAJitteryFrameAtTheCapsRateIsNotHeldBack() {
        let jitter: [Int64] = [0, 3_000, -3_000, 2_000, -1_000, -3_000, 3_000, 0, -2_000, 1_000]
        let frames = (0..<90).map { UInt64(Int64($0) * 33_333 + 5_000 + jitter[$0 % jitter.count]) }
        let events = simulate(policy(maxFPS: 30, refinement: .off), until: 3_000_000, frames: frames)
        XCTAssertEqual(events.map(\.time), frames, "each frame encoded when it came")
    }

    func testKeyframeRequestsAreCoalescedAndSpaced() {
        let frames = (0..<60).map { UInt64($0) * 33_334 }  // 30 fps for 2 s
        let requests: [UInt64] = [1_000_000, 1_010_000, 1_050_000, 1_100_000, 1_200_000, 1_290_000]
        let events = simulate(policy(refinement: .off), until: 2_000_000, frames: frames, keyframeRequests: requests)
        let keyframes = events.filter { isKeyframe($0.action) }.map(\.time)
        // The first frame; the first frame after the first request; one more ≥ 300 ms later for the rest.
        XCTAssertEqual(keyframes.count, 3, "\(keyframes)")
        XCTAssertEqual(keyframes[0], 0)
        XCTAssertGreaterThanOrEqual(keyframes[1], 1_000_000)
        XCTAssertLessThan(keyframes[1], 1_040_000)
        XCTAssertGreaterThanOrEqual(keyframes[2] - keyframes[1], 300_000)
        XCTAssertLessThan(keyframes[2] - keyframes[1], 340_000)
    }

    func testAKeyframeRequestOnAStaticPictureReencodesItAtTheBestQualitySoFar() {
        let events = simulate(policy(), until: 3_000_000, frames: [0], keyframeRequests: [100_000, 720_000, 730_000])
        let keyframes = events.filter { isKeyframe($0.action) }
        // 0: first frame. 100k: too close to it, so at 300k (after the refinement at 200k). 720k: the last
        // keyframe 420k ago: at once; 730k waits for the spacing and becomes one more at 1020k (the
        // refinements at 800k and 950k come too soon to be it and stay deltas).
        XCTAssertEqual(keyframes.map(\.time), [0, 300_000, 720_000, 1_020_000])
        XCTAssertEqual(keyframes[1].action, .reencode(keyframe: true, quantizerCeiling: 40, reason: .keyframeRequest))
        XCTAssertEqual(keyframes[2].action, .reencode(keyframe: true, quantizerCeiling: 18, reason: .keyframeRequest))
    }

    func testKeyframeIntervalAddsPeriodicKeyframes() {
        let frames = (0..<150).map { UInt64($0) * 33_334 }  // 30 fps for 5 s
        let events = simulate(policy(interval: 2_000_000, refinement: .off), until: 5_000_000, frames: frames)
        let keyframes = events.filter { isKeyframe($0.action) }.map(\.time)
        XCTAssertEqual(keyframes.count, 3, "\(keyframes)")
        XCTAssertGreaterThanOrEqual(keyframes[1], 2_000_000)
        XCTAssertLessThan(keyframes[1], 2_040_000)
        XCTAssertGreaterThanOrEqual(keyframes[2] - keyframes[1], 2_000_000)
    }

    func testIdleReencodesWaitForTheBudgetButRequestedKeyframesDoNot() {
        var scheduler = EncodeScheduler(policy: policy())
        scheduler.didEncode(at: 0, keyframe: true, reason: .newFrame)
        // The first refinement is due at 200 ms; the budget holds bytes again only at 700 ms.
        XCTAssertEqual(scheduler.next(now: 200_000, hasNewFrame: false, hasPicture: true, idleAllowedAt: 700_000), .wait(until: 700_000))
        XCTAssertEqual(scheduler.next(now: 700_000, hasNewFrame: false, hasPicture: true, idleAllowedAt: 700_000),
                       .reencode(keyframe: false, quantizerCeiling: 40, reason: .refinement(0)))
        // A requested keyframe is not held back by the budget (it is spaced instead).
        XCTAssertTrue(scheduler.requestKeyframe())
        XCTAssertFalse(scheduler.requestKeyframe(), "a request while one is pending adds nothing")
        XCTAssertEqual(scheduler.next(now: 1_000_000, hasNewFrame: false, hasPicture: true, idleAllowedAt: 5_000_000),
                       .reencode(keyframe: true, quantizerCeiling: nil, reason: .keyframeRequest))
        // New frames are not gated either (libvpx's rate control drops them if need be).
        XCTAssertEqual(scheduler.next(now: 1_000_000, hasNewFrame: true, hasPicture: true, idleAllowedAt: 5_000_000),
                       .encodeNew(keyframe: true))
    }

    func testTheFrameCapAndKeyframeSpacingChangeAtRunTime() {
        var scheduler = EncodeScheduler(policy: policy())
        scheduler.didEncode(at: 0, keyframe: true, reason: .newFrame)
        XCTAssertEqual(scheduler.next(now: 40_000, hasNewFrame: true, hasPicture: true), .encodeNew(keyframe: false))
        scheduler.setMinFrameInterval(micros: 200_000)  // the rate policy's 5 fps
        // The slot of the frame at 40 ms was 40 ms; the next is due 200 ms later, 50 ms early allowed.
        XCTAssertEqual(scheduler.next(now: 40_000, hasNewFrame: true, hasPicture: true), .wait(until: 150_000))
        scheduler.setKeyframeSpacing(micros: 2_000_000)
        scheduler.requestKeyframe()
        XCTAssertFalse(scheduler.keyframeDue(at: 1_500_000))
        XCTAssertTrue(scheduler.keyframeDue(at: 2_000_000))
    }
}
