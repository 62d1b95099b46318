internal import CPulse
import Foundation
import ScreencastSupport
import Synchronization

/// What `--audio` captures.
public enum SoundSource: String, Sendable, Equatable, CaseIterable {
    /// What the screen plays: the monitor of the default sink.
    case system
    /// The default source (a microphone).
    case mic
    /// Both, mixed (sample by sample, clipped).
    case both
}

/// One 10 ms fragment of captured sound: s16le, interleaved, and the CLOCK_MONOTONIC µs at which its first
/// sample was played (recorded), not when it was read.
public struct SoundFragment: Sendable, Equatable {
    public var samples: [Int16]
    public var rate: Int
    public var channels: Int
    public var timestampMicros: UInt64
    public var sequence: UInt64

    /// Samples per channel.
    public var frames: Int { samples.count / max(1, channels) }
    public var durationMicros: UInt64 { UInt64(frames) * 1_000_000 / UInt64(rate) }
}

/// Why sound could not start.
public enum SoundCaptureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No PulseAudio (or pipewire-pulse) server answered.
    case noServer(String)
    /// The server has no device of that name.
    case noSuchDevice(String, reason: String)
    /// Anything else libpulse reported when opening the stream.
    case failed(String)

    public var description: String {
        switch self {
        case .noServer(let reason): "no sound server: \(reason)"
        case .noSuchDevice(let name, let reason): "no sound device '\(name)': \(reason)"
        case .failed(let reason): "sound capture failed: \(reason)"
        }
    }
}

/// The one owner of a libpulse record stream (`pa_simple`), freed in `deinit`. Used by one thread at a time.
final class PulseRecordStream {
    private let handle: OpaquePointer
    let device: String?

    /// Opens a 48 kHz s16le record stream of `channels` channels with `fragmentBytes` fragments.
    init(device: String?, channels: Int, rate: Int, fragmentBytes: Int, streamName: String) throws(SoundCaptureError) {
        var error: Int32 = 0
        let opened: OpaquePointer? = device.withOptionalCString { devicePointer in
            cpulse_open_record(nil, "screencast-agent", streamName, devicePointer, UInt32(rate), UInt8(channels),
                               UInt32(fragmentBytes), &error)
        }
        guard let opened else {
            let reason = String(cString: cpulse_strerror(error))
            if error == cpulse_error_no_entity() { throw .noSuchDevice(device ?? "default", reason: reason) }
            if error == cpulse_error_connection_refused() { throw .noServer(reason) }
            throw .failed(reason)
        }
        handle = opened
        self.device = device
    }

    deinit { cpulse_free(handle) }

    /// Blocks until `buffer` is full. Throws libpulse's reason (the server went away, …).
    func read(into buffer: inout [Int16]) throws(SoundCaptureError) {
        var error: Int32 = 0
        let result = buffer.withUnsafeMutableBytes { cpulse_read(handle, $0.baseAddress, $0.count, &error) }
        if result < 0 { throw .failed(String(cString: cpulse_strerror(error))) }
    }

    /// `pa_stream_get_latency` in µs: how long ago the next sample to be read was recorded; nil when unknown.
    func latencyMicros() -> UInt64? {
        var error: Int32 = 0
        let latency = cpulse_latency_usec(handle, &error)
        return latency == UInt64.max ? nil : latency
    }
}

/// Captures sound from PulseAudio (or pipewire-pulse) on a thread of its own: 48 kHz, stereo, s16le, 10 ms
/// fragments, each stamped with the CLOCK_MONOTONIC time its first sample was played.
///
/// Timestamps (``SoundClock``): after the first blocking read, `now − latency` (pa_stream_get_latency) is when
/// the next sample to be read was recorded, so the fragment just read began one fragment earlier; from there
/// the stamps count samples (exactly 10 ms apart), corrected against the read times at most once per 0.5 s.
/// So they are monotonic, 10 ms apart (± ``maxSlewMicros`` at a correction), and when the sound was played.
///
/// A server that goes away mid-share is retried every second (logged); the caller's pictures go on.
public final class SoundCapture: Sendable {
    public static let rate = 48000
    public static let channels = 2
    /// Samples per channel in a fragment: 10 ms.
    public static let fragmentFrames = 480
    /// The most the stamps move at one correction (every ``SoundClock/window`` fragments), µs.
    public static let maxSlewMicros: Int64 = 100
    /// Further apart than this, a stamp jumps to the estimate, µs.
    public static let reanchorMicros: Int64 = 20_000

    public struct Stats: Sendable, Equatable {
        public var fragments = 0
        public var reconnects = 0
        public var reanchors = 0
        public var lastLatencyMicros: UInt64 = 0
    }

    private let source: SoundSource
    private let device: String?
    private let logger: Logger
    private let onFragment: @Sendable (SoundFragment) -> Void
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let counters = Mutex(Stats())

    /// Opens the stream(s) now, so a missing server or device is reported before the share starts; the
    /// reading starts with ``start()``.
    /// - Parameters:
    ///   - device: a source name (`--audio-device`) instead of the default one; for `system` a sink's monitor
    ///     is named `SINK.monitor`.
    public init(source: SoundSource, device: String?, logger: Logger,
                onFragment: @escaping @Sendable (SoundFragment) -> Void) throws(SoundCaptureError) {
        self.source = source
        self.device = device
        self.logger = logger
        self.onFragment = onFragment
        // Fail early (no server, no device); the reader threads open their own streams.
        for name in Self.devices(source, device) {
            _ = try PulseRecordStream(device: name, channels: Self.channels, rate: Self.rate,
                                      fragmentBytes: Self.fragmentFrames * Self.channels * 2, streamName: "probe")
        }
    }

    /// The libpulse device names to record from for `source`.
    static func devices(_ source: SoundSource, _ device: String?) -> [String?] {
        switch source {
        case .system: [device ?? "@DEFAULT_MONITOR@"]
        case .mic: [device]
        case .both: ["@DEFAULT_MONITOR@", nil]
        }
    }

    public var stats: Stats { counters.withLock { $0 } }

    /// Starts the reader thread(s).
    public func start() {
        let names = Self.devices(source, device)
        if names.count == 1 {
            let name = names[0]
            Thread.detachNewThread { [self] in
                readLoop(device: name, label: source.rawValue) { [self] fragment in deliver(fragment) }
                done.signal()
            }
        } else {
            let mixer = SoundMixer()
            for (index, name) in names.enumerated() {
                Thread.detachNewThread { [self] in
                    readLoop(device: name, label: index == 0 ? "system" : "mic") { [self] fragment in
                        if let mixed = mixer.add(fragment, input: index) { deliver(mixed) }
                    }
                    done.signal()
                }
            }
        }
    }

    /// How long ``stop()`` waits for a reader thread, s: a sound server that stopped answering leaves
    /// `pa_simple_read` blocked with no timeout, and the agent must still end at its `--duration` or a signal.
    public static let stopWaitSeconds = 1.0

    /// Stops reading; returns once the reader thread(s) ended (within one fragment, or a reconnect wait), or
    /// after ``stopWaitSeconds`` for a reader blocked in a sound server that does not answer (that thread is
    /// left to end with the process; it delivers nothing more).
    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let deadline = DispatchTime.now() + Self.stopWaitSeconds
        for _ in Self.devices(source, device) where done.wait(timeout: deadline) == .timedOut {
            logger.warning("sound server not answering: its reader is left behind", ["waited.s": Self.stopWaitSeconds])
            break
        }
    }

    private var isStopping: Bool { stopping.load(ordering: .acquiring) }

    private func deliver(_ fragment: SoundFragment) {
        guard !isStopping else { return }  // a reader left behind by stop() hands on nothing more
        var numbered = fragment
        numbered.sequence = counters.withLock { stats in
            stats.fragments += 1
            return UInt64(stats.fragments - 1)
        }
        onFragment(numbered)
    }

    /// Opens, reads fragments until stopped, reopens every second after a failure.
    private func readLoop(device: String?, label: String, _ emit: (SoundFragment) -> Void) {
        BackgroundThread.nameCurrentThread("sound-\(label)")
        var failures = 0
        while !isStopping {
            let stream: PulseRecordStream
            do throws(SoundCaptureError) {
                stream = try PulseRecordStream(device: device, channels: Self.channels, rate: Self.rate,
                                               fragmentBytes: Self.fragmentFrames * Self.channels * 2, streamName: label)
            } catch {
                if failures == 0 { logger.warning("sound server unavailable; retrying every second", ["source": label, "error": error]) }
                failures += 1
                for _ in 0..<10 where !isStopping { usleep(100_000) }
                continue
            }
            if failures > 0 {
                logger.info("sound back", ["source": label, "after_tries": failures])
                counters.withLock { $0.reconnects += 1 }
            }
            failures = 0
            var clock = SoundClock(rate: Self.rate)
            var buffer = [Int16](repeating: 0, count: Self.fragmentFrames * Self.channels)
            while !isStopping {
                do throws(SoundCaptureError) {
                    try stream.read(into: &buffer)
                } catch {
                    logger.warning("sound stream lost; retrying every second", ["source": label, "error": error])
                    failures = 1
                    break
                }
                let now = MonotonicClock.nowMicros()
                let latency = stream.latencyMicros() ?? 0
                let (stamp, reanchored) = clock.stamp(readAt: now, latencyMicros: latency, frames: Self.fragmentFrames)
                if logger.threshold <= .debug {
                    logger.debug("sound fragment", ["source": label, "read_us": now, "latency_us": latency, "stamp_us": stamp])
                }
                counters.withLock {
                    $0.lastLatencyMicros = latency
                    if reanchored { $0.reanchors += 1 }
                }
                emit(SoundFragment(samples: buffer, rate: Self.rate, channels: Self.channels, timestampMicros: stamp, sequence: 0))
            }
        }
    }
}

/// The timestamps of one stream's fragments (see ``SoundCapture``). Pure, for tests.
///
/// The first fragment is placed at `read time − latency − its duration`, with the latency libpulse reports
/// then (fresh at the stream's start). After that the stamps count samples, exactly one fragment apart, and
/// are checked against the read times once per window of ``window`` fragments: the smallest lateness of a read
/// in the window (scheduling only ever delays a read, so the smallest is the truth) moves the stamps by at
/// most ``maxSlewMicros`` (the device's clock against CLOCK_MONOTONIC), or, above ``reanchorMicros``, jumps
/// them forward by it (samples were lost: an overrun, a stall of the server). They never go backwards.
/// libpulse's later latency readings are not used: measured on this machine (null sink's monitor,
/// pa_simple), they are interpolated from a stale timing update and fall by 10 ms a read from 265 ms to 0 while the reads stay
/// 10 ms apart.
public struct SoundClock: Sendable {
    public let rate: Int
    /// Fragments between corrections.
    public static let window = 50
    private var next: UInt64?
    private var offset: UInt64 = 0
    private var remainder: UInt64 = 0
    private var smallestLateness: Int64 = .max
    private var inWindow = 0

    public init(rate: Int) { self.rate = rate }

    /// The stamp of a fragment of `frames` samples per channel read at `now` (the stream's latency then);
    /// and whether the stamps jumped forward here.
    public mutating func stamp(readAt now: UInt64, latencyMicros: UInt64, frames: Int) -> (UInt64, Bool) {
        let duration = UInt64(frames) * 1_000_000 / UInt64(rate)
        var reanchored = false
        let stamp: UInt64
        if let predicted = next {
            let lateness = Int64(bitPattern: now &- offset &- duration &- predicted)
            smallestLateness = min(smallestLateness, lateness)
            inWindow += 1
            var corrected = predicted
            if inWindow >= Self.window {
                if smallestLateness > SoundCapture.reanchorMicros {
                    corrected = predicted + UInt64(smallestLateness)
                    reanchored = true
                } else {
                    let slew = max(-SoundCapture.maxSlewMicros, min(SoundCapture.maxSlewMicros, smallestLateness))
                    corrected = UInt64(Int64(predicted) + slew)
                }
                smallestLateness = .max
                inWindow = 0
            }
            stamp = corrected
        } else {
            offset = latencyMicros
            stamp = now >= latencyMicros + duration ? now - latencyMicros - duration : 0
        }
        let total = UInt64(frames) * 1_000_000 + remainder
        remainder = total % UInt64(rate)
        next = stamp + total / UInt64(rate)
        return (stamp, reanchored)
    }
}

/// Mixes two streams (`both`): fragments wait per input until the other input has one, then are summed
/// sample by sample (clipped) and stamped with the first input's (system's) timestamp. An input more than
/// ``maxWaiting`` fragments ahead (the other one stalled) goes out alone, so sound never stops for one
/// quiet device.
final class SoundMixer: Sendable {
    static let maxWaiting = 10
    private let queues = Mutex<[[SoundFragment]]>([[], []])

    func add(_ fragment: SoundFragment, input: Int) -> SoundFragment? {
        queues.withLock { queues in
            queues[input].append(fragment)
            let other = 1 - input
            if !queues[other].isEmpty {
                let a = queues[0].removeFirst()
                let b = queues[1].removeFirst()
                var mixed = a
                for index in mixed.samples.indices where index < b.samples.count {
                    mixed.samples[index] = Int16(clamping: Int(a.samples[index]) + Int(b.samples[index]))
                }
                return mixed
            }
            if queues[input].count > Self.maxWaiting { return queues[input].removeFirst() }
            return nil
        }
    }
}

extension Optional where Wrapped == String {
    /// Calls `body` with a C string of the value, or NULL.
    func withOptionalCString<R>(_ body: (UnsafePointer<CChar>?) -> R) -> R {
        switch self {
        case .some(let text): text.withCString { body($0) }
        case .none: body(nil)
        }
    }
}
