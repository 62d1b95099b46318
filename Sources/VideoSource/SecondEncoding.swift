import Dispatch
import Media
public import ScreencastSupport
import Synchronization

/// A second, lower-rate VP8 encoding of the shared source, for viewers far below the others (issue 12): it
/// gets every new picture the main encoder takes (the same I420 frames, the same capture times), scales them
/// down by ``divisor`` (libyuv box filter, even sides) and encodes them on a thread of its own with a libvpx
/// encoder of its own, under the same screen rate policy as the main one (frame rate first, down to
/// `minFramesPerSecond`; idle refinement of a still screen; keyframe spacing), at its own target.
///
/// ```
///   main encoder thread ── new picture (planes shared, no copy) ──▶ FrameTap ──▶ hub.submitForeign
///   second thread ("vp8-second"): scale into its pool's buffer ──▶ EncoderLoop (1 libvpx thread) ──▶ its sinks
/// ```
///
/// The main encoder's path gains one lock and a wake-up per picture; scaling and encoding happen here. The
/// foreign picture is copied out of the main encoder's buffer as soon as this thread wakes (before the main
/// encoder recycles that buffer), so steady streaming allocates nothing on either side. Frames are
/// ``Media/EncodedFrame``s as the main encoder's, at the scaled size; their capture times are the source's
/// (a requested keyframe of a still picture gets the time it is made, as on the main encoder).
///
/// Made stopped; ``start()`` attaches it to the source, ``stop()`` detaches it, encodes what waits and ends the
/// thread (its sinks get no `finish()`: they belong to the viewers, which outlive it). One at a time per source.
public final class SecondEncoding: Sendable {
    private let source: VideoSource
    private let hub: SourceHub
    private let sinks = SinkRegistry()
    private let loop: EncoderLoop
    private let scale: DerivedScale
    private let logger: Logger
    private let done = Mutex<DispatchSemaphore?>(nil)

    /// - Parameters:
    ///   - source: the shared source whose new pictures it encodes.
    ///   - bitrateKbps: its target, kbps (1…1 000 000).
    ///   - divisor: width and height are divided by this (1: the main encoding's size, 2: half).
    ///   - logger: its log (named `second-encoder` by the caller).
    public init(source: VideoSource, bitrateKbps: Int, divisor: Int, logger: Logger) {
        self.source = source
        self.logger = logger
        var configuration = source.configuration
        configuration.bitrateKbps = max(1, min(1_000_000, bitrateKbps))
        configuration.encoderThreads = 1
        configuration.socketPath = nil
        configuration.fallback = .none
        scale = DerivedScale(divisor: divisor)
        hub = SourceHub(stats: StatsRecorder(fallback: nil, startedAt: source.clock.nowMicros()), pool: FramePool(capacity: 3))
        loop = EncoderLoop(hub: hub, sinks: sinks, configuration: configuration, clock: source.clock, logger: logger, derived: scale)
    }

    deinit { stop() }

    /// Adds a consumer of this encoding's frames (called on its thread, in encode order).
    @discardableResult
    public func addSink(_ sink: any VideoSink) -> SinkToken { sinks.add(sink) }

    /// Starts the thread and attaches to the source: from its next new picture on, frames come. Idempotent.
    public func start() {
        let started = done.withLock { d -> Bool in
            guard d == nil else { return false }
            d = BackgroundThread.start(name: "vp8-second") { [loop] in loop.run() }
            return true
        }
        if started { source.frameTap.attach(hub) }
    }

    /// Detaches from the source, encodes the picture still waiting and ends the thread; returns when it has.
    /// Its sinks are let go of without `finish()`. Idempotent.
    public func stop() {
        guard let semaphore = done.withLock({ d -> DispatchSemaphore? in
            defer { d = nil }
            return d
        }) else { return }
        source.frameTap.attach(nil)
        hub.stop()
        semaphore.wait()
        _ = sinks.removeAll()
    }

    /// Asks this encoding for a keyframe (coalesced and spaced as the main encoder's).
    public func requestKeyframe() { hub.requestKeyframe() }

    /// Changes its target, kbps.
    public func setBitrate(kbps: Int) { hub.requestBitrate(max(1, min(1_000_000, kbps))) }

    /// Width and height are divided by `divisor` (≥ 1) from the next picture on (a new size: a keyframe).
    public func setDivisor(_ divisor: Int) { scale.divisor = divisor }

    /// The divisor in force.
    public var divisor: Int { scale.divisor }

    /// Its counters and rates now (the fields a ``VideoSourceStats`` has for an encoder: frames, keyframes,
    /// fps, kbps, size, target, frame-rate cap, encode times).
    public var stats: VideoSourceStats {
        var stats = hub.stats.snapshot(now: source.clock.nowMicros(), queueDepth: hub.queueDepth)
        let bitrate = loop.currentBitrate.load(ordering: .relaxed)
        if bitrate > 0 { stats.bitrateKbps = bitrate }
        return stats
    }
}
