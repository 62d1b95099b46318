import Foundation
import Glibc
import Media
import PipeWireCursor
import ScreencastSupport

/// The `portal-capture` thread's work: the scheduler (rate limit, paint-over, keepalive) over the staged
/// picture, and the encode. Not thread-safe: made and run on that thread only.
final class PortalCaptureLoop {
    private let configuration: CaptureConfiguration
    private let staging: PortalStaging
    private let logger: Logger
    private let bodies: FrameBodyMaker
    private var scheduler: CaptureScheduler
    private var work: [UInt8] = []
    private var changes = DamageAccumulator()
    private var area = CaptureRect(x: 0, y: 0, width: 0, height: 0)
    private var frameSize = (width: 0, height: 0)
    private var lastFrame: CapturedFrame?
    private var nextIndex: UInt64 = 0
    private var havePicture = false
    /// Where the pointer (cursor mode METADATA) was drawn into `work`, to be restored from the clean picture.
    private var drawnPointer: CaptureRect?
    private var stats = CaptureStats()

    init(configuration: CaptureConfiguration, staging: PortalStaging, logger: Logger) throws(CaptureError) {
        self.configuration = configuration
        self.staging = staging
        self.logger = logger
        bodies = try FrameBodyMaker(configuration: configuration)
        // The producer already paces the stream to the frame rate negotiated (PipeWire's max framerate = --fps):
        // a second limiter at the same rate here, out of phase with it, held pictures up to a whole interval
        // (capture -> received p50 20 ms at 30 fps). Half the interval only absorbs the producer's jitter.
        scheduler = CaptureScheduler(configuration: configuration, intervalShare: 0.5)
        stats.method = "portal"
    }

    /// How a run ended: for good, or with the PipeWire daemon gone (the share may be asked for again).
    enum Exit: Equatable {
        case outcome(ScreenCapture.Outcome)
        case pipeWireLost(String)
    }

    /// Captures until `stop`, the stream's end, the PipeWire daemon's loss or a failure; returns how it ended.
    /// Called again after a loss, it goes on where it was (frame index, last frame, size).
    func run(
        stop: WakeSignal, readerPresent: () -> Bool = { true }, deliver: (CapturedFrame) -> Void,
        publish: (CaptureStats) -> Void
    ) -> Exit {
        var hold = ReaderHold()
        while !stop.isRequested {
            let (fresh, end, lost) = staging.poll()
            if let end { return .outcome(end) }
            if let lost { return .pipeWireLost(lost) }
            if fresh {
                havePicture = true
                scheduler.markDirty()
            }
            if hold.skipsTurn(
                readerPresent: readerPresent(), stats: &stats, scheduler: &scheduler,
                sleep: { sleep(micros: $0, stop: stop) }, resume: { changes.invalidate() }) { continue }
            let now = MonotonicClock.nowMicros()
            let action: CaptureScheduler.Action = havePicture ? scheduler.next(now: now) : .wait(until: now + 1_000_000)
            do throws(CaptureError) {
                switch action {
                case .capture:
                    scheduler.willCapture(now: now)
                    deliver(try produce(.change))
                case .paintOver:
                    deliver(try produce(.paintOver))
                    scheduler.didPaintOver(now: now)
                case .keepalive:
                    if let frame = repeatLast(now: now) { deliver(frame) }
                    scheduler.didKeepalive(now: now)
                case .wait(let until):
                    sleep(micros: until > now ? until - now : 0, stop: stop)
                    continue
                }
            } catch {
                return .outcome(.failed(error))
            }
            publish(stats)
        }
        return .outcome(.stopped)
    }

    private func produce(_ kind: CapturedFrame.Kind) throws(CaptureError) -> CapturedFrame {
        let started = MonotonicClock.nowMicros()
        let taken = staging.take(into: &work, restoring: drawnPointer)
        let picture = CaptureRect(x: 0, y: 0, width: taken.width, height: taken.height)
        if picture != area {
            let first = area.isEmpty
            area = picture
            frameSize = configuration.outputSize.frameSize(width: picture.width, height: picture.height)
            stats.area = area
            (stats.frameWidth, stats.frameHeight) = frameSize
            changes.invalidate()
            logger.info(first ? "capture area" : "capture area changed", [
                "what": "portal monitor", "area": area, "frame": "\(frameSize.width)x\(frameSize.height)",
            ])
        }
        if let rects = taken.changed {
            for rect in rects { changes.add(rect, area: area) }
        } else {
            changes.invalidate()
        }
        drawnPointer = nil
        if let pointer = taken.pointer, let b = pointer.bounds {
            let bounds = CaptureRect(x: b.x, y: b.y, width: b.width, height: b.height)
            let (width, height) = (area.width, area.height)
            work.withUnsafeMutableBytes { frame in
                pointer.pixels.withUnsafeBufferPointer { cursor in
                    CursorOverlay.blend(cursor, width: b.width, at: bounds, into: frame.baseAddress!, width: width,
                                        height: height, stride: width * 4, showing: area)
                }
            }
            let drawn = bounds.intersection(area)
            if !drawn.isEmpty {
                drawnPointer = drawn
                changes.add(drawn, area: area)
            }
        }
        var damage = changes.take(area: area, frameWidth: frameSize.width, frameHeight: frameSize.height)
        if kind == .paintOver { damage = nil }
        let grabbed = MonotonicClock.nowMicros()
        let (width, height, size) = (area.width, area.height, frameSize)
        let result = work.withUnsafeBytes { bytes -> Result<FrameBodyMaker.Body, CaptureError> in
            let pixels = BGRXPixels(base: bytes, width: width, height: height, stride: width * 4)
            do throws(CaptureError) {
                return .success(try bodies.make(pixels, frameWidth: size.width, frameHeight: size.height, kind: kind,
                                                damage: damage, last: lastFrame))
            } catch {
                return .failure(error)
            }
        }
        let made = try result.get()
        let encoded = MonotonicClock.nowMicros()
        var frame = CapturedFrame(
            body: made.bytes, format: configuration.format, width: frameSize.width, height: frameSize.height,
            timestampMicros: kind == .paintOver ? grabbed : taken.receivedMicros, index: nextIndex, kind: kind,
            quality: made.quality, subsampling: made.subsampling, area: area,
            grabMicros: grabbed - started, encodeMicros: encoded - grabbed)
        frame.shared = made.shared
        frame.damage = damage
        nextIndex += 1
        lastFrame = frame
        stats.countProduced(frame, paintOver: kind == .paintOver, bytes: made.bytes.count)
        return frame
    }

    private func repeatLast(now: UInt64) -> CapturedFrame? {
        guard let frame = lastFrame?.keepalive(now: now, index: nextIndex) else { return nil }
        nextIndex += 1
        stats.countKeepalive(bytes: frame.body.count)
        return frame
    }

    private func sleep(micros: UInt64, stop: WakeSignal) {
        var fds = [
            pollfd(fd: staging.pollDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stop.pollDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        _ = Glibc.poll(&fds, 2, Int32(min((micros + 999) / 1000, 1000)))
    }
}
