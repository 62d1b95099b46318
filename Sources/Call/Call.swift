public import AudioSource
import Dispatch
import Foundation
import PeerConnection
public import ScreencastSupport
import Sharing
import Signaling
import Streaming
import Synchronization
public import VideoSource

/// One screen-sharing call: its tracks (the shared video source today), each track's encodings (the one VP8
/// encoder), and the outputs that consume them (WHEP viewers, an SFU leg, an IVF recorder; more added while it
/// runs), with end-to-end encryption and its key rotation, the HTTP server (viewer page, WHEP, `/stats`) and
/// the periodic stats line.
///
/// ```
///  capturers ─▶ video track (VideoSource) ─▶ VP8 encoding, made once ─┬─▶ clear: recorders
///                                                                    └─▶ [E2EE] ─▶ viewers, SFU leg, …
///  HTTP server: viewer page, WHEP ─▶ viewers; /stats ◀─ every part's counters
/// ```
///
/// An output says what it consumes (``CallOutput/consumes``): the call delivers that encoding to it, encrypted
/// when it asks and the call encrypts. One output failing (a full disk under a recording, an SFU that is away)
/// never stops the others. Lifecycle: `init` builds everything and starts nothing but timers; ``start()``
/// starts the source, the outputs and the server; ``stop(reason:)`` takes it all down in order and reports the
/// outputs whose work is incomplete. ``waitForStopRequest()`` blocks until something asks it to stop (a
/// signal through ``requestStop(reason:)``, or the source's end with `endWhenSourceEnds`).
public final class Call: Sendable {
    enum Phase { case idle, running, stopped }

    private struct Running {
        var phase = Phase.idle
        var server: SignalingServer?
        var timer: (any DispatchSourceTimer)?
        var reporter: StatsReporter?
    }

    /// One output and where its inlets are attached.
    struct Entry: Sendable {
        let id: OutputID
        let output: any CallOutput
        let attachment: VideoEncoding.Attachment
        /// Its audio inlet's place in that audio encoding's fan-out (nil: pictures only).
        let audioAttachment: (codec: AudioCodec, id: Int)?
    }

    /// What it was made from.
    public let configuration: CallConfiguration
    /// The WHEP viewers: always there (they also keep the rate policy across every output of the encoding).
    public let viewers: ViewersOutput
    let logger: Logger
    private let clock: any VideoClock
    private let announce: @Sendable (String) -> Void
    let video: VideoEncoding
    /// The H.264 encoding, made once when the first output consuming it is made (nil before).
    let h264: Mutex<H264Encoding?>
    /// The call's one audio source: the agent's sound while it sends some, else silence or the test tone
    /// (``CallConfiguration/audio``); started and stopped with the video source.
    public let audio: SharedAudioSource
    /// The audio encodings, each made once when the first output consuming it is added.
    let audioEncodings: AudioEncodings
    let rotation: KeyRotation?
    let about: CallStats.About
    let stopRequest: StopRequest
    /// The outputs in the order they were added (the viewers among them), and the next id.
    let outputs: Mutex<(next: Int, list: [Entry])>
    private let running = Mutex(Running())

    /// Builds the call: the video source (a file source reads its dump here), the encryption, the viewers, the
    /// recorder and the SFU leg of the configuration. Nothing runs before ``start()``.
    /// - Parameters:
    ///   - logger: the call's logger (`call`); each part logs under a name of its own (`viewers`, `sfu`, …).
    ///   - clock: capture timestamps, keyframe spacing and the uptime read it.
    ///   - announce: where share mode prints its links (standard output by default).
    /// - Throws: ``CallError/source(_:)``, ``CallError/output(name:_:)``, ``CallError/certificate(_:)``,
    ///   ``CallError/encryption(_:)``.
    public init(
        configuration: CallConfiguration, logger: Logger, clock: any VideoClock = SystemVideoClock(),
        announce: @escaping @Sendable (String) -> Void = { FileHandle.standardOutput.write(Data($0.utf8)) }
    ) throws(CallError) {
        var configuration = configuration
        // A host with loopback only (a container, a namespace, a laptop with networking off): libnice would gather
        // nothing and answer every offer with 500; use 127.0.0.1, and say so now rather than at each viewer.
        if configuration.ice.fallBackToLoopbackIfAlone() {
            logger.warning("no network address but loopback: ICE offers 127.0.0.1, so only viewers on this machine can watch")
        }
        if configuration.share, configuration.token == nil {
            if let state = configuration.shareState {
                let (token, kept) = state.token(fresh: configuration.newShareToken, logger: logger)
                configuration.token = token
                logger.info(kept ? "share token kept from the last run (--new-token makes a new one)" : "share token made", ["folder": state.folder])
            } else {
                configuration.token = ShareLinks.freshToken()
            }
        }
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        self.announce = announce
        let stopRequest = StopRequest()
        self.stopRequest = stopRequest
        let audio: SharedAudioSource
        do {
            audio = try SharedAudioSource(configuration: configuration.audio, logger: logger.named("audio"), clock: { clock.nowMicros() })
        } catch {
            throw .audio("\(error)")
        }
        self.audio = audio
        let source: VideoSource
        do {
            source = try VideoSource(
                configuration: configuration.source, clock: clock, logger: logger,
                onEvent: { event in if case .sourceEnded = event { stopRequest.request("source ended") } },
                onSound: { header, body in audio.push(header, body: body) })
        } catch {
            throw .source(error)
        }
        let recorder = try configuration.recordIVF.map { path throws(CallError) in 
            try RecorderOutput(path: path, framesPerSecond: configuration.source.maxFramesPerSecond, logger: logger)
        }
        let rotation = configuration.e2ee.map { KeyRotation(settings: $0, logger: logger.named("e2ee")) }
        self.rotation = rotation
        let video = try VideoEncoding(source: source, rotation: rotation, logger: logger)
        self.video = video
        let viewers = try ViewersOutput(
            sharing: Self.sharing(configuration), source: source, secondEncoding: configuration.secondEncoding, rotation: rotation,
            logger: logger)
        self.viewers = viewers
        let sfu = try configuration.sfu.map { transport throws(CallError) in
            try SFUOutput(
                transport: transport, ice: configuration.ice, consentTimeoutSeconds: configuration.consentTimeoutSeconds,
                context: Self.context(video: video, hub: viewers.hub, consumer: "sfu"), logger: logger.named("sfu"))
        }
        var streams: [StreamOutput] = []
        let h264: H264Encoding? = configuration.streaming.needsH264
            ? H264Encoding(source: source, clock: clock, bitsPerSecond: configuration.streaming.bitsPerSecond, logger: logger.named("h264"))
            : nil
        self.h264 = Mutex(h264)
        if let encoding = h264 {
            for (index, url) in configuration.streaming.rtmp.enumerated() {
                let name = "rtmp-\(index + 1)"
                streams.append(StreamOutput(
                    name: name, target: .rtmp(url, retries: configuration.streaming.retries),
                    context: Self.context(h264: encoding, consumer: name), targetBitsPerSecond: { encoding.targetBitsPerSecond },
                    encoderFramesPerSecond: { encoding.encodedFramesPerSecond },
                    limitBitrate: { [weak encoding] fraction in encoding?.limit(consumer: name, fraction: fraction) }, logger: logger.named(name)))
            }
            if let path = configuration.streaming.recordMP4 {
                streams.append(StreamOutput(
                    name: "mp4", target: .mp4(path: path), context: Self.context(h264: encoding, consumer: "mp4"),
                    targetBitsPerSecond: { encoding.targetBitsPerSecond }, encoderFramesPerSecond: { encoding.encodedFramesPerSecond },
                    logger: logger.named("mp4")))
            }
        }
        about = CallStats.About(maxViewers: configuration.maxViewers, clock: clock)
        // Recorder first: it sees each frame before the network does, as it always has.
        var initial: [any CallOutput] = []
        if let recorder { initial.append(recorder) }
        if let path = configuration.streaming.recordWebM {
            initial.append(StreamOutput(
                name: "webm", target: .webm(path: path), context: Self.context(video: video, hub: viewers.hub, consumer: "webm"),
                targetBitsPerSecond: { source.stats.bitrateKbps * 1000 }, logger: logger.named("webm")))
        }
        initial.append(viewers)
        if let sfu { initial.append(sfu) }
        let audioEncodings = AudioEncodings(source: audio, configuration: configuration, logger: logger)
        self.audioEncodings = audioEncodings
        var entries: [Entry] = []
        for (index, output) in initial.enumerated() {
            guard case .video(let sink) = output.inlet else { continue }
            let sound = try audioEncodings.attach(output)
            entries.append(Entry(
                id: OutputID(value: index + 1), output: output, attachment: video.attach(sink, protection: output.protection),
                audioAttachment: sound))
        }
        if let encoding = h264 {
            for output in streams {
                let id = OutputID(value: entries.count + 1)
                let sound = try audioEncodings.attach(output)
                entries.append(Entry(
                    id: id, output: output, attachment: .init(protection: .clear, id: encoding.fanOut.add(output), codec: .h264),
                    audioAttachment: sound))
            }
        }
        outputs = Mutex((entries.count + 1, entries))
    }

    /// How viewers are served, from the call's configuration.
    private static func sharing(_ configuration: CallConfiguration) -> SharingConfiguration {
        var sharing = SharingConfiguration(
            ice: configuration.ice, maxViewers: configuration.maxViewers, minimumBitrateKbps: configuration.minimumBitrateKbps,
            configuredBitrateKbps: configuration.source.bitrateKbps, maxFramesPerSecond: configuration.source.maxFramesPerSecond,
            fixedDroppablePeriod: configuration.droppablePeriod)
        sharing.consentLimitMicros = UInt64(configuration.consentTimeoutSeconds) * 1_000_000
        // The sound goes to viewers in Opus; with E2EE on, encrypted like the pictures (EncryptingAudioSink).
        sharing.sendsAudio = true
        return sharing
    }

    /// Starts the source (its encoder thread, capturers, the agent socket), then every output, then the HTTP
    /// server and the stats timer. On a failure, what had started is stopped again.
    /// - Throws: ``CallError/alreadyStarted``, ``CallError/source(_:)`` (the socket in use, …),
    ///   ``CallError/httpUnavailable(endpoint:explicit:https:share:cause:)``, ``CallError/certificate(_:)``.
    public func start() throws(CallError) {
        try running.withLock { (r: inout Running) throws(CallError) in
            guard r.phase == .idle else { throw .alreadyStarted }
            r.phase = .running
        }
        do {
            try video.source.start()
        } catch {
            running.withLock { $0.phase = .stopped }
            throw .source(error)
        }
        audio.start()
        h264.withLock { $0 }?.start()
        let list = outputs.withLock { $0.list }
        for entry in list { entry.output.start() }
        let server: SignalingServer?
        do {
            server = try CallServer.start(
                configuration, viewers: viewers.hub, encrypted: video.encryption != nil, about: about,
                stats: { [weak self] in self?.statsJSON ?? .null }, metrics: { [weak self] in self?.metricsText ?? "" },
                pause: { [weak self] on in (on ? self?.pause() : self?.resume()) ?? false }, sharerState: { [weak self] in self?.sharerState ?? .ended },
                logger: logger, announce: announce)
        } catch {
            for entry in list where !(entry.output is ViewersOutput) { entry.output.stop() }
            video.source.stop()
            audio.stop()
            h264.withLock { $0 }?.stop()
            running.withLock { $0.phase = .stopped }
            throw error
        }
        let reporter = StatsReporter(
            source: video.source, logger: logger.named("stats"), file: configuration.statsFile,
            viewers: { [hub = viewers.hub] in hub.viewerCount }, sfu: { [weak self] in self?.sfuSummary ?? "-" },
            streams: { [weak self] final in self?.logStreamStats(final: final) })
        let seconds = configuration.statsIntervalSeconds
        running.withLock { r in
            r.server = server
            r.timer = reporter.schedule(every: seconds)  // made here: the timer is not Sendable, and never leaves the lock
            r.reporter = reporter
        }
    }

    /// Asks the call to stop, with a reason for the log (the first one given wins); returns at once. Safe from
    /// any thread, a signal handler's included. ``waitForStopRequest()`` returns.
    public func requestStop(reason: String) { stopRequest.request(reason) }

    /// Blocks until a stop is requested; returns the first reason (`SIGTERM`, `source ended`, …).
    public func waitForStopRequest() -> String { stopRequest.wait() }

    /// As ``waitForStopRequest()``, at most `seconds`; nil when no stop was requested by then.
    public func waitForStopRequest(seconds: Double) -> String? { stopRequest.wait(seconds: seconds) }

    /// Stops everything in order: the stats timer, the HTTP server, every output (viewers closed, the SFU
    /// leg ended), then the source (its last frame is encoded and delivered, and every inlet finishes: the
    /// recording's file is closed); waits up to 2 s for ICE agents to close; writes the final stats line. Idempotent.
    /// - Parameter reason: logged with `stopping` unless a stop was requested before (that reason wins).
    /// - Returns: the outputs whose work is incomplete (each has logged why); empty when all is whole.
    @discardableResult
    public func stop(reason: String = "stopped") -> CallOutcome {
        stopRequest.request(reason)
        let (wasRunning, server, reporter) = running.withLock { r -> (Bool, SignalingServer?, StatsReporter?) in
            defer { r.phase = .stopped }
            r.timer?.cancel()
            r.timer = nil
            return (r.phase == .running, r.server, r.reporter)
        }
        guard wasRunning else { return CallOutcome(incomplete: []) }
        logger.info("stopping", ["reason": stopRequest.current ?? "-"])
        server?.stop()
        let list = outputs.withLock { $0.list }
        for entry in list { entry.output.stop() }
        video.source.stop()
        audio.stop()  // every audio encoding finishes, and with it every audio inlet
        h264.withLock { $0 }?.stop()  // after the source: its last picture is encoded, then every H.264 inlet finishes
        // ICE agents close off the peers' queues: let them release their sockets and TURN allocations.
        if !PeerConnection.waitForClosingAgents(until: .now() + .seconds(2)) {
            logger.warning("ICE agents still closing at exit", [:])
        }
        reporter?.report(final: true)
        return CallOutcome(incomplete: list.compactMap { entry in entry.output.checkComplete().map { (entry.output.name, $0) } })
    }

    // MARK: End-to-end encryption

    /// Whether frames are end-to-end encrypted (then ``rotateKey()`` applies).
    public var encrypts: Bool { rotation != nil }

    /// Reads the key file again and schedules its key under the next key index, for every encoding together;
    /// each switches at its next keyframe (asked for now). Blocks for the key derivation (tens of ms).
    /// - Returns: the new key index.
    /// - Throws: ``CallError/notEncrypting``, ``CallError/keyFile(_:)`` (the current key stays), ``CallError/encryption(_:)``.
    @discardableResult
    public func rotateKey() throws(CallError) -> Int {
        guard let rotation else { throw .notEncrypting }
        return try rotation.rotate()
    }

    /// ``rotateKey()`` on a queue of its own, its outcome logged (`e2ee`); returns at once (SIGHUP). Nothing
    /// without encryption.
    public func requestKeyRotation() { rotation?.requestRotation() }

    // MARK: Serving

    /// The viewer page's URL without the token (the first share link in share mode), nil before the server listens.
    public var viewerURL: String? { about.viewerURL.withLock { $0 } }

    /// `scheme://host:port` of the HTTP server (its bound port when 0 was asked), nil without one.
    public var serverBaseURL: String? { running.withLock { $0.server?.baseURL } }

    /// A stats line per RTMP destination and MP4 recording (each under its own name).
    private func logStreamStats(final: Bool) {
        for case let stream as StreamOutput in outputs.withLock({ $0.list }).map(\.output) { stream.writer.logStats(final: final) }
    }

    /// Where the call is in its life.
    var runningPhase: Phase { running.withLock { $0.phase } }

    /// The SFU leg's state and reconnects for the stats line (`published/0`; `-` without a leg).
    private var sfuSummary: String {
        outputs.withLock { $0.list }.lazy.compactMap { $0.output as? SFUOutput }.first?.summary ?? "-"
    }
}

/// What a stopped call leaves: the outputs whose work is incomplete.
public struct CallOutcome: Sendable {
    /// Each incomplete output's name and why (`ivf`, "No space left on device").
    public let incomplete: [(output: String, reason: String)]

    /// True when every output's work is whole.
    public var isComplete: Bool { incomplete.isEmpty }
}
