@testable import Media
@testable import VideoSource
import Dispatch
import ScreencastSupport
import XCTest

/// Where capturers and the encoder thread meet: the active source, the one-frame slot (latest wins), the
/// coalesced requests, and the wake-ups — driven here without an encoder thread.
final class SourceHubTests: XCTestCase {
    private func hub() -> (SourceHub, StatsRecorder) {
        let stats = StatsRecorder(fallback: nil, startedAt: 0)
        return (SourceHub(stats: stats, pool: FramePool()), stats)
    }

    private func frame(_ stamp: UInt64, level: UInt8 = 0) -> VideoFrame {
        var picture = I420Buffer(width: 16, height: 16, colorSpace: .bt601Limited)
        picture.bytes.withUnsafeMutableBufferPointer { $0.update(repeating: level) }
        return VideoFrame(picture: picture, captureTimestampMicros: stamp)
    }

    private func snapshot(_ stats: StatsRecorder, _ hub: SourceHub) -> VideoSourceStats {
        stats.snapshot(now: 1, queueDepth: hub.queueDepth)
    }

    func testOnlyTheActiveSourcesFramesAreTakenAndEachSwitchIsANewGeneration() {
        let (hub, stats) = hub()
        hub.submit(frame(1), from: .screen)
        XCTAssertNil(hub.takePending(), "no source is active yet")
        XCTAssertEqual(snapshot(stats, hub).dropped(.inactive), 1)
        XCTAssertTrue(hub.activate(.testPattern))
        XCTAssertFalse(hub.activate(.testPattern), "already active")
        hub.submit(frame(2), from: .screen)
        hub.submit(frame(3), from: .testPattern)
        let first = hub.takePending()
        XCTAssertEqual(first?.frame.captureTimestampMicros, 3)
        XCTAssertEqual(first?.kind, .testPattern)
        XCTAssertTrue(hub.activate(.screen))
        hub.submit(frame(4), from: .screen)
        let second = hub.takePending()
        XCTAssertEqual(second?.kind, .screen)
        XCTAssertEqual(second.map(\.generation), first.map { $0.generation + 1 }, "a switch starts a generation")
        XCTAssertEqual(hub.active, .screen)
        let s = snapshot(stats, hub)
        XCTAssertEqual(s.dropped(.inactive), 2)
        XCTAssertEqual(s.submitted, 2)
        XCTAssertEqual(s.source, .screen)
    }

    func testTheLatestFrameWinsAndTheOneItReplacesIsCountedStale() {
        let (hub, stats) = hub()
        hub.activate(.screen)
        for stamp in 1...5 { hub.submit(frame(UInt64(stamp)), from: .screen) }
        XCTAssertEqual(hub.queueDepth, 1, "one slot")
        XCTAssertEqual(hub.takePending()?.frame.captureTimestampMicros, 5)
        XCTAssertNil(hub.takePending())
        XCTAssertEqual(hub.queueDepth, 0)
        let s = snapshot(stats, hub)
        XCTAssertEqual(s.dropped(.stale), 4)
        XCTAssertEqual(s.submitted, 5)
    }

    func testRequestsAreCoalescedAndTakenOnce() {
        let (hub, stats) = hub()
        hub.requestKeyframe()
        hub.requestKeyframe()
        hub.requestBitrate(800)
        hub.requestBitrate(nil)
        hub.requestDroppableCadence(3)
        let requests = hub.takeRequests()
        XCTAssertTrue(requests.keyframeRequested)
        XCTAssertEqual(requests.bitrateChange, .some(nil), "the last bitrate request: back to the default")
        XCTAssertEqual(requests.cadenceChange, .some(3))
        XCTAssertFalse(requests.hasPending)
        XCTAssertFalse(requests.stopping)
        let again = hub.takeRequests()
        XCTAssertFalse(again.keyframeRequested)
        XCTAssertNil(again.bitrateChange)
        XCTAssertNil(again.cadenceChange)
        let s = snapshot(stats, hub)
        XCTAssertEqual(s.keyframeRequests, 2)
        XCTAssertEqual(s.keyframeRequestsCoalesced, 1)
    }

    func testAfterStopNothingIsAcceptedAndTheEncoderIsTold() {
        let (hub, stats) = hub()
        hub.activate(.file)
        hub.submit(frame(1), from: .file)
        hub.stop()
        hub.submit(frame(2), from: .file)
        XCTAssertTrue(hub.takeRequests().stopping)
        XCTAssertEqual(hub.takePending()?.frame.captureTimestampMicros, 1, "what waited is still encoded")
        XCTAssertEqual(snapshot(stats, hub).dropped(.inactive), 1, "refused after stop")
        hub.submitForeign(frame(3), kind: .file)
        XCTAssertNil(hub.takeForeign(), "no foreign picture after stop either")
    }

    func testAForeignPictureReplacesTheOneWaitingAndIsTakenOnce() {
        let (hub, stats) = hub()
        hub.submitForeign(frame(1), kind: .screen)
        hub.submitForeign(frame(2), kind: .screen)
        XCTAssertEqual(hub.takeForeign()?.frame.captureTimestampMicros, 2)
        XCTAssertNil(hub.takeForeign())
        XCTAssertEqual(snapshot(stats, hub).dropped(.stale), 1)
    }

    func testAWaitEndsAtASubmitAndOneSignalServesManyFrames() {
        let (hub, _) = hub()
        hub.activate(.screen)
        hub.wait(micros: 1)  // the activation's own wake-up
        let start = MonotonicClock.nowMicros()
        let late = frame(1)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { hub.submit(late, from: .screen) }
        hub.wait(micros: 10_000_000)
        let waited = MonotonicClock.nowMicros() - start
        XCTAssertGreaterThanOrEqual(waited, 40_000)
        XCTAssertLessThan(waited, 5_000_000, "woken by the submit, not the 10 s limit")
        _ = hub.takePending()
        // Frames arriving while the encoder works (between a wake-up and its next wait) add no signals: the
        // encoder finds them by `takeRequests().hasPending` before it waits again, and a wait then runs its time.
        for stamp in 2...20 { hub.submit(frame(UInt64(stamp)), from: .screen) }
        XCTAssertTrue(hub.takeRequests().hasPending)
        XCTAssertEqual(hub.takePending()?.frame.captureTimestampMicros, 20)
        let t = MonotonicClock.nowMicros()
        hub.wait(micros: 100_000)
        XCTAssertGreaterThanOrEqual(MonotonicClock.nowMicros() - t, 90_000, "no signals were stacked up by frames 2...20")
        hub.submit(frame(21), from: .screen)
        let u = MonotonicClock.nowMicros()
        hub.wait(micros: 5_000_000)
        XCTAssertLessThan(MonotonicClock.nowMicros() - u, 1_000_000, "after a wait, the next frame signals again")
    }
}
