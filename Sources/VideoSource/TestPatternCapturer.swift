import Media
import ScreencastSupport
import Synchronization

/// Feeds the test pattern (`TestPatternPainter`) into the hub at a fixed rate while its source is active,
/// on a thread of its own. Frames are painted into pooled buffers and stamped with the clock's time.
/// The frame counter keeps counting across pauses (so a viewer sees the pattern resume, not restart).
final class TestPatternCapturer: Sendable {
    private let hub: SourceHub
    private let clock: any VideoClock
    private let settings: TestPatternSettings
    private let gate = ActivityGate()
    private let stopSignal = StopSignal()
    private let done = Mutex<DispatchSemaphoreBox?>(nil)

    init(hub: SourceHub, clock: any VideoClock, settings: TestPatternSettings) {
        self.hub = hub
        self.clock = clock
        self.settings = settings
    }

    func start() {
        let semaphore = BackgroundThread.start(name: "test-pattern") { [self] in run() }
        done.withLock { $0 = DispatchSemaphoreBox(semaphore) }
    }

    /// Produce frames (true) or pause (false).
    func setActive(_ active: Bool) { gate.set(active) }

    func stop() {
        stopSignal.stop()
        done.withLock { $0.take() }?.semaphore.wait()
    }

    private func run() {
        let painter = TestPatternPainter(width: settings.width, height: settings.height)
        let interval = UInt64((1_000_000 / settings.framesPerSecond).rounded())
        var frameNumber = 0
        var due = clock.nowMicros()
        while gate.waitUntilActive(or: stopSignal) {
            let now = clock.nowMicros()
            if now < due {
                if stopSignal.sleep(micros: min(due - now, 100_000)) { break }
                continue
            }
            // After a pause (or a slow frame), start afresh instead of catching up with a burst.
            due = now - due > interval ? now + interval : due + interval
            var picture = hub.pool.take(width: settings.width, height: settings.height)
            painter.paint(frameNumber: frameNumber, timestampMicros: now, into: &picture)
            frameNumber += 1
            hub.submit(VideoFrame(picture: picture, captureTimestampMicros: now), from: .testPattern)
        }
    }
}
