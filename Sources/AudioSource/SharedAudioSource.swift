import Dispatch
import FrameWire
public import ScreencastSupport
import Synchronization

/// The call's one audio source, beside its one video source: the agent's sound while it sends some, the idle
/// content (silence, or a test tone) otherwise, as 10-ms 48 kHz stereo ``AudioFrame``s on one continuous sample
/// clock (``AudioTimeline``), handed to every ``AudioSink`` (each audio encoding: Opus, AAC-LC).
///
/// Threads: ``push(_:body:)`` runs on the agent reader's thread and delivers the frames it completes there; a
/// ticker thread of its own (`audio-source`, every 10 ms) delivers the idle content. Delivery is serialized:
/// sinks see frames one at a time, in sample-clock order.
public final class SharedAudioSource: Sendable {
    /// The ticker's period, µs.
    static let tickMicros: UInt64 = 10_000

    /// The idle content, hold and slip (``AudioSourceConfiguration``).
    public let configuration: AudioSourceConfiguration
    private let logger: Logger
    private let clock: @Sendable () -> UInt64
    private let timeline: Mutex<AudioTimeline>
    private let sinks = Mutex<(next: Int, list: [(Int, any AudioSink)])>((0, []))
    /// Held while frames are made and handed out, so that two threads' frames never interleave or reorder.
    private let delivery = Mutex<Void>(())
    private let stopSignal = StopSignal()
    private let ticker = Mutex<DispatchSemaphore?>(nil)
    /// Whether the agent's sound was active at the last look (for the "sound started/stopped" log lines).
    private let screenWasActive = Mutex(false)
    /// Sound messages in an unsupported shape are logged once each kind.
    private let refusalsLogged = Mutex<Set<String>>([])

    /// A source that makes nothing before ``start()``.
    /// - Parameters:
    ///   - clock: now, CLOCK_MONOTONIC µs (the same clock as the agent's `Sound-Timestamp` and the pictures').
    /// - Throws: ``AudioSourceError/toneOutOfRange(frequencyHz:levelDBFS:)``.
    public init(
        configuration: AudioSourceConfiguration = AudioSourceConfiguration(), logger: Logger,
        clock: @escaping @Sendable () -> UInt64 = MonotonicClock.nowMicros
    ) throws(AudioSourceError) {
        if case .tone(let frequency, let level) = configuration.idle,
           !AudioSourceConfiguration.toneFrequencyRange.contains(frequency)
            || !AudioSourceConfiguration.toneLevelRange.contains(level) {
            throw .toneOutOfRange(frequencyHz: frequency, levelDBFS: level)
        }
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        timeline = Mutex(AudioTimeline(configuration: configuration))
    }

    /// Adds a consumer; it gets every frame made from now on.
    public func add(_ sink: any AudioSink) -> AudioSinkToken {
        sinks.withLock { s in
            s.next += 1
            s.list.append((s.next, sink))
            return AudioSinkToken(id: s.next)
        }
    }

    /// Removes a consumer (its `finish` is not called: the caller ends it).
    public func remove(_ token: AudioSinkToken) {
        sinks.withLock { $0.list.removeAll { $0.0 == token.id } }
    }

    /// Starts the ticker (the idle content). Idempotent.
    public func start() {
        ticker.withLock { t in
            guard t == nil, !stopSignal.isStopped else { return }
            t = BackgroundThread.start(name: "audio-source") { [self] in
                while !stopSignal.sleep(micros: Self.tickMicros) { tick() }
            }
        }
    }

    /// Stops the ticker and finishes every sink; later pushes make nothing.
    public func stop() {
        stopSignal.stop()
        ticker.withLock { $0 }?.wait()
        let all = sinks.withLock { s in defer { s.list.removeAll() }; return s.list.map(\.1) }
        for sink in all { sink.finish() }
    }

    /// One sound message of the agent (PCM S16LE interleaved, 48 kHz, 1 or 2 channels). A message in another
    /// shape is refused, logged once per shape and counted; the source goes on with its idle content.
    public func push(_ header: SoundHeader, body: [UInt8]) {
        guard !stopSignal.isStopped else { return }
        delivery.withLock { _ in
            let now = clock()
            let result = body.withUnsafeBytes { raw in
                timeline.withLock { t in Result { () throws(AudioSourceError) in try t.push(header, body: raw, now: now) } }
            }
            let frames: [AudioFrame]
            switch result {
            case .success(let made): frames = made
            case .failure(let error):
                let key = "\(header.rate)/\(header.channels)"
                if refusalsLogged.withLock({ $0.insert(key).inserted }) {
                    logger.warning("sound refused", ["reason": error])
                }
                return
            }
            noteScreen(active: true, source: header.source)
            deliver(frames)
        }
    }

    /// What the ticker does every 10 ms (tests call it with a manual clock and no ticker).
    func tick() {
        delivery.withLock { _ in
            let now = clock()
            let (frames, active) = timeline.withLock { t in (t.tick(now: now), t.screenIsActive(now: now)) }
            if !active { noteScreen(active: false, source: nil) }
            deliver(frames)
        }
    }

    /// The counters so far.
    public var stats: AudioSourceStats { timeline.withLock { $0.stats } }

    private func deliver(_ frames: [AudioFrame]) {
        guard !frames.isEmpty else { return }
        let all = sinks.withLock { $0.list.map(\.1) }
        for frame in frames {
            for sink in all { sink.consume(frame) }
        }
    }

    private func noteScreen(active: Bool, source: String?) {
        let changed = screenWasActive.withLock { was in
            defer { was = active }
            return was != active
        }
        guard changed else { return }
        if active {
            logger.info("the agent's sound plays", ["source": source ?? "-"])
        } else {
            logger.info("no sound from the agent: the call plays \(configuration.idle == .silence ? "silence" : "its test tone")")
        }
    }
}

/// Identifies an added ``AudioSink``.
public struct AudioSinkToken: Sendable, Hashable {
    let id: Int
}
