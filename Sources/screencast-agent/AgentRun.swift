import Capture
import FrameSocket
import Foundation
import FrameWire
import ScreencastSupport
import Synchronization

/// One run of the agent: capture → frame outputs, until a signal, the frame or time limit, or a failure;
/// with a stats line every interval and a summary at the end.
struct AgentRun {
    let options: AgentOptions
    let logger: Logger

    /// Why the run ended.
    private enum StopReason: String {
        case signal, frames, duration, failure
        /// The source was ended from outside (the portal's session closed from the desktop): exit 0.
        case sourceEnded = "source-ended"
    }

    /// Runs to the end.
    /// - Returns: the exit code (0 for a stop by signal or limit, 1 for a failure).
    /// - Throws: ``CaptureError`` from setup (display unusable, …) and ``AgentError`` (dump not writable);
    ///   the caller prints them and exits 1.
    func run() throws -> Int32 {
        let stopReason = Mutex<StopReason?>(nil)
        let captureBox = Mutex<(any FrameCapturer)?>(nil)
        let setupCancellation = CaptureCancellation()  // a signal while the portal's chooser waits
        let requestStop: @Sendable (StopReason) -> Void = { reason in
            stopReason.withLock { if $0 == nil { $0 = reason } }
            setupCancellation.cancel()
            captureBox.withLock { $0 }?.stop()
        }

        let signals = ShutdownSignals { signal in
            logger.info("stopping", ["signal": signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "\(signal)"])
            requestStop(.signal)
        }
        defer { withExtendedLifetime(signals) {} }

        // Order: the dump's folder was checked with the options (exit 64, before anything is logged); a
        // display that cannot be used fails first here (one error line, and an existing dump file of the same
        // name is left alone); then a dump file that cannot be opened after all; then the socket sender; then
        // the first frame.
        let outputsBox = Mutex<FrameOutputs?>(nil)
        let capture: any FrameCapturer
        do {
            capture = try Self.openCapture(options, logger: logger, cancellation: setupCancellation) { frame in
                outputsBox.withLock { $0 }?.handle(frame)
            }
        } catch let error as CaptureError where stopReason.withLock({ $0 }) == .signal {
            logger.info("stopped before the capture started", ["reason": error])
            return ExitCode.success
        }
        captureBox.withLock { $0 = capture }
        // Sound next: a --audio-device the server lacks is the command line's fault (exit 64) before the socket is
        // touched. Its fragments reach the outputs once they exist (it starts recording only below).
        let sound = try Self.openSound(options, logger: logger) { [source = options.audio?.rawValue] fragment in
            outputsBox.withLock { $0 }?.handleSound(fragment, source: source)
        }
        let dumpPath: String? = switch options.destination {
        case .file(let path): path
        case .socket(_, let record): record
        }
        let dump = try dumpPath.map { path throws(AgentError) in try DumpFile(path: path) }
        let sender: FrameSender? = switch options.destination {
        case .socket(let path, _): try FrameSender(path: path, logger: logger.named("frame-sender"))
        case .file: nil
        }
        defer { sender?.close() }
        let outputs = FrameOutputs(
            sender: sender, dump: dump, logger: logger, orientation: options.orientation, frameLimit: options.frameLimit,
            capture: Self.captureDescription(options), requestStop: { failed in requestStop(failed ? .failure : .frames) })
        outputsBox.withLock { $0 = outputs }
        if stopReason.withLock({ $0 }) != nil { capture.stop() }  // a signal before the box was filled
        capture.start()
        sound?.start()
        defer { sound?.stop() }

        let started = MonotonicClock.nowMicros()
        let deadline = options.durationSeconds.map { started + UInt64($0 * 1_000_000) }
        let interval = options.statsIntervalSeconds > 0 ? UInt64(options.statsIntervalSeconds * 1_000_000) : nil
        var nextStats = interval.map { started + $0 }
        var previous = StatsSample.zero
        previous.micros = started
        var outcome: ScreenCapture.Outcome?
        var readerPresent = true
        while outcome == nil {
            // No call on the socket: capture nothing (no JPEG for nobody) until one connects (issue 34).
            if outputs.hasReader != readerPresent {
                readerPresent.toggle()
                capture.setReaderPresent(readerPresent)
                if readerPresent {
                    logger.info("a call reads the frames: capturing")
                } else {
                    logger.info("no call reads the frames: capture paused until one connects")
                }
            }
            let now = MonotonicClock.nowMicros()
            if let deadline, now >= deadline { requestStop(.duration) }
            if let due = nextStats, now >= due, let interval {
                let sample = StatsSample(capture.stats, outputs, sender, at: now)
                sample.logStats(logger, since: previous)
                previous = sample
                nextStats = due + interval
            }
            let wake = [deadline, nextStats].compactMap { $0 }.min() ?? (now + 1_000_000)
            let seconds = wake > now ? Double(wake - now) / 1e6 : 0
            // Looked at every 0.1 s, so that a call that appears gets its first picture that soon.
            outcome = capture.wait(timeout: max(0.001, min(seconds, 0.1)))
        }

        sound?.stop()  // no sound after the last picture: the flush below takes what is queued
        if case .failed = outcome { stopReason.withLock { $0 = .failure } }
        if case .ended(let reason) = outcome {
            logger.info("capture ended from outside; stopping", ["reason": reason])
            stopReason.withLock { $0 = .sourceEnded }
        }
        if outputs.snapshot.failure != nil { stopReason.withLock { $0 = .failure } }
        // Finish the frame in flight if the reader takes it soon; otherwise it is dropped by close(). A short
        // run may end before the writer thread first tried the socket: let it try once, so a listening call
        // still gets the frame and a missing one is named as the reason.
        if let sender, stopReason.withLock({ $0 }) != .failure {
            sender.waitForFirstConnectAttempt(timeout: .milliseconds(500))
            if sender.stats.isConnected {
                sender.flush(timeout: .milliseconds(stopReason.withLock { $0 } == .signal ? 500 : 2_000))
            }
        }
        sender?.close()
        let end = StatsSample(capture.stats, outputs, sender, at: MonotonicClock.nowMicros())
        end.logSummary(logger, since: started, format: options.capture.format.rawValue,
                       stop: stopReason.withLock { $0 }?.rawValue ?? "unknown")
        if let sound {
            let stats = sender?.stats
            logger.info("sound summary", [
                "source": options.audio?.rawValue ?? "-", "fragments": sound.stats.fragments,
                "messages": outputs.snapshot.soundMessages, "sent": stats?.sentSoundMessages ?? 0,
                "dropped": stats?.droppedSoundMessages ?? 0, "reconnects": sound.stats.reconnects,
                "reanchors": sound.stats.reanchors, "latency_ms": String(format: "%.1f", Double(sound.stats.lastLatencyMicros) / 1000),
            ])
        }
        if let failure = outputs.snapshot.failure { throw failure }
        if case .failed(let error) = outcome { throw error }
        if let failure = outputs.snapshot.recordingFailure { throw failure }
        if let asked = options.frameLimit, let sender, end.sent == 0, stopReason.withLock({ $0 }) != .signal {
            let stats = sender.stats
            throw AgentError.nothingSent(
                asked: asked,
                reason: stats.lastConnectFailure.map { "cannot connect to the call: \($0)" }
                    ?? (stats.connects == 0 ? "no call was listening" : "the call did not take the frame in time"))
        }
        return ExitCode.success
    }
}

extension AgentRun {
    /// Opens the display and the capture area. A `--region` wholly outside the screen or a `--monitor` the
    /// display does not have, at start, is the user's fault (``AgentUsageFault``, exit 64); after a resize
    /// the same fault stays a runtime failure.
    static func openCapture(
        _ options: AgentOptions, logger: Logger, cancellation: CaptureCancellation? = nil,
        onFrame: @escaping @Sendable (CapturedFrame) -> Void
    ) throws -> any FrameCapturer {
        let configuration = options.capture
        if options.source == .portal {
            return try PortalCapture(configuration: configuration, portal: options.portal, logger: logger.named("capture"),
                                     startsAtOnce: false, cancellation: cancellation, onFrame: onFrame)
        }
        do {
            return try ScreenCapture(configuration: configuration, logger: logger.named("capture"), startsAtOnce: false, onFrame: onFrame)
        } catch .regionOutsideScreen(let region, let width, let height) {
            throw AgentUsageFault(reason: "--region \(region) lies wholly outside the \(width)x\(height) screen")
        } catch .noSuchMonitor(let name, let available) {
            throw AgentUsageFault(reason: CaptureError.noSuchMonitor(name, available: available).description)
        } catch .noSuchWindow(let what) {
            throw AgentUsageFault(reason: "--window: " + CaptureError.noSuchWindow(what).description)
        }
    }
}

extension AgentRun {
    /// The sound capture `--audio` asks for, opened now: no sound server means pictures alone (a warning);
    /// a `--audio-device` the server lacks is the command line's fault (exit 64).
    static func openSound(
        _ options: AgentOptions, logger: Logger, onFragment: @escaping @Sendable (SoundFragment) -> Void
    ) throws -> SoundCapture? {
        guard let source = options.audio else { return nil }
        do throws(SoundCaptureError) {
            let sound = try SoundCapture(source: source, device: options.audioDevice, logger: logger.named("sound"), onFragment: onFragment)
            logger.info("sound on", ["source": source.rawValue, "device": options.audioDevice ?? "default", "rate": SoundCapture.rate,
                                     "channels": SoundCapture.channels, "fragment_ms": 10])
            return sound
        } catch .noSuchDevice(let name, let reason) {
            throw AgentUsageFault(reason: "--audio-device \(name): no such PulseAudio source (\(reason)); `pactl list short sources` lists them")
        } catch {
            logger.warning("no sound: sharing the picture alone", ["source": source.rawValue, "error": error])
            return nil
        }
    }
}

extension AgentRun {
    /// What the `Capture-*` fields say of this run (Protocol/frame-wire.md §2.7): the display, what is
    /// captured, the frame rate asked for; the rectangle is added per frame.
    static func captureDescription(_ options: AgentOptions) -> CaptureDescription {
        let screenArea = switch options.capture.target {
        case .root: "screen"
        case .monitor(let selector): "monitor \(selector)"
        case .region: "region"
        }
        let area = options.capture.window.map { "window \($0)" } ?? screenArea
        if options.source == .portal {
            return CaptureDescription(display: "wayland (portal)", area: options.portal.sharesWindow ? "portal window" : "portal monitor",
                                      framesPerSecond: String(format: "%g", options.capture.maxFramesPerSecond))
        }
        return CaptureDescription(
            display: options.capture.display ?? ProcessInfo.processInfo.environment["DISPLAY"] ?? "-", area: area,
            framesPerSecond: String(format: "%g", options.capture.maxFramesPerSecond))
    }
}

/// A snapshot of every counter, for the stats line (differences between two samples) and the summary.
struct StatsSample {
    var micros: UInt64 = 0
    var frames = 0
    var encoded = 0
    var keepalives = 0
    var paintOvers = 0
    var encodeMicros: UInt64 = 0
    var jpegBytes = 0
    var sent = 0
    var dropped = 0
    var connects = 0
    var method = ""
    var frameSize = ""

    static let zero = StatsSample()

    init() {}

    init(_ capture: CaptureStats, _ outputs: FrameOutputs, _ sender: FrameSender?, at micros: UInt64) {
        self.micros = micros
        frames = capture.frames
        encoded = capture.encodedFrames
        keepalives = capture.keepaliveFrames
        paintOvers = capture.paintOverFrames
        encodeMicros = capture.encodeMicros
        jpegBytes = capture.jpegBytes
        if let sender {
            let stats = sender.stats
            sent = stats.sentFrames
            dropped = stats.droppedFrames
            connects = stats.connects
        } else {
            sent = outputs.snapshot.dumped
        }
        method = capture.method
        frameSize = "\(capture.frameWidth)x\(capture.frameHeight)"
    }

    /// Logs `stats captured sent dropped fps jpeg_ms bytes_per_frame …`: counts are totals; rates and
    /// averages cover the interval since `previous`.
    func logStats(_ logger: Logger, since previous: StatsSample) {
        let seconds = Double(micros - previous.micros) / 1e6
        let frameDelta = frames - previous.frames
        let encodedDelta = encoded - previous.encoded
        logger.info("stats", [
            "captured": encoded, "sent": sent, "dropped": dropped,
            "fps": Self.format(seconds > 0 ? Double(frameDelta) / seconds : 0),
            "jpeg_ms": Self.format(
                encodedDelta > 0 ? Double(encodeMicros - previous.encodeMicros) / 1e3 / Double(encodedDelta) : 0),
            "bytes_per_frame": frameDelta > 0 ? (jpegBytes - previous.jpegBytes) / frameDelta : 0,
            "keepalives": keepalives, "paint_overs": paintOvers, "size": frameSize,
        ])
    }

    /// Logs the `summary` line: totals and whole-run averages since `started` (µs); `format` is the wire
    /// format (`jpeg`; `i420`, where `jpeg_ms` is the conversion; `shm`, where it is the copy into shared memory).
    /// `bytes` counts the bodies of every frame made, sent or dropped (for `shm` a few bytes each: the picture
    /// stays in shared memory).
    func logSummary(_ logger: Logger, since started: UInt64, format: String, stop: String) {
        let seconds = Double(micros - started) / 1e6
        logger.info("summary", [
            "frames": frames, "captured": encoded, "paint_overs": paintOvers, "keepalives": keepalives,
            "sent": sent, "dropped": dropped, "connects": connects, "bytes": jpegBytes,
            "seconds": Self.format(seconds),
            "fps": Self.format(seconds > 0 ? Double(frames) / seconds : 0),
            "jpeg_ms": Self.format(encoded > 0 ? Double(encodeMicros) / 1e3 / Double(encoded) : 0),
            "bytes_per_frame": frames > 0 ? jpegBytes / frames : 0,
            "method": method.isEmpty ? "-" : method, "size": frameSize, "format": format, "stop": stop,
        ])
    }

    private static func format(_ value: Double) -> String { String(format: "%.1f", value) }
}
