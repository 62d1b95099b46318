import Dispatch
import DTLS
import PeerConnection
import Publishing
import Foundation
import FrameCrypto
import Media
import ScreencastSupport
import Sharing
import Signaling
import Synchronization
import VideoSource

/// `screencast-call`: the call process. Parses options, runs the shared video source until a signal or
/// (with --exit-when-source-ends) the end of the first source, then flushes and exits.
enum CallTool {
    static func main() -> Int32 {
        let words = Array(CommandLine.arguments.dropFirst())
        if words.contains("--version") {
            print("screencast-call \(ScreencastVersion.string)")
            return ExitCode.success
        }
        if words.contains("--help") || words.contains("-h") {
            print(CallOptions.usage)
            return ExitCode.success
        }
        let options: CallOptions
        do {
            options = try CallOptions(words)
        } catch {
            FileHandle.standardError.write(Data("screencast-call: \(error.reason)\nTry 'screencast-call --help'.\n".utf8))
            return ExitCode.usage
        }
        // The passphrase, before anything starts: a refused key file is the invocation's fault (64).
        var passphrase: String?
        if let e2ee = options.e2ee {
            do {
                passphrase = try E2EEKeyFile(path: e2ee.keyFile).read()
            } catch {
                let usage = error.isUsageFault
                FileHandle.standardError.write(Data(
                    "screencast-call: --e2ee-key-file: \(error)\n\(usage ? "Try 'screencast-call --help'.\n" : "")".utf8))
                return usage ? ExitCode.usage : ExitCode.failure
            }
        }
        let logger = Logger(component: "call", threshold: options.logLevel)
        do {
            return try CallRun(options: options, logger: logger, passphrase: passphrase).run()
        } catch {
            // Once, as the final word (no log line repeating it).
            FileHandle.standardError.write(Data("screencast-call: \(error)\n".utf8))
            return ExitCode.failure
        }
    }
}

/// One run: the source, its sinks, the stats timer and the wait for the end.
struct CallRun {
    let options: CallOptions
    let logger: Logger
    /// The e2ee passphrase read from `--e2ee-key-file` (nil: no end-to-end encryption).
    let passphrase: String?

    func run() throws -> Int32 {
        let finished = DispatchSemaphore(value: 0)
        let reason = Mutex<String?>(nil)
        let end: @Sendable (String) -> Void = { why in
            let first = reason.withLock { r -> Bool in
                guard r == nil else { return false }
                r = why
                return true
            }
            if first { finished.signal() }
        }
        // With e2ee, SIGHUP rotates the key (of the sink made below; one arriving before it exists is logged).
        let encryption = Mutex<EncryptingSink?>(nil)
        // The second encoding's frames are encrypted by a sink of their own, under the same key and index.
        let lowEncryption = Mutex<EncryptingSink?>(nil)
        let rotate = options.e2ee.map { rotator($0) }
        let signals = ShutdownSignals(signals: CallSignals.handled) { number in
            if number == SIGHUP, let rotate { return rotate(encryption.withLock { $0 }, lowEncryption.withLock { $0 }) }
            end(number == SIGINT ? "SIGINT" : number == SIGHUP ? "SIGHUP" : "SIGTERM")
        }
        defer { withExtendedLifetime(signals) {} }

        let source = try VideoSource(configuration: options.source, logger: logger) { event in
            if case .sourceEnded = event { end("source ended") }
        }
        var recorder: IVFRecorder?
        if let path = options.recordIVF {
            let ivf = try IVFRecorder(path: path, framesPerSecond: options.source.maxFramesPerSecond, logger: logger.named("ivf"))
            source.addSink(ivf)
            recorder = ivf
        }
        // Issue 12: viewers far below the others get a second, lower-rate encoding of the same pictures.
        var secondEncoder: SecondEncoderFactory?
        if options.secondEncoding {
            let secondLogger = logger.named("second-encoder")
            secondEncoder = { kbps, divisor, sink in
                let encoding = SecondEncoding(source: source, bitrateKbps: kbps, divisor: divisor, logger: secondLogger)
                encoding.addSink(lowEncryption.withLock { $0 } ?? sink)
                encoding.start()
                return encoding
            }
        }
        var sharing = SharingConfiguration(
            ice: options.ice, maxViewers: options.maxViewers, minimumBitrateKbps: options.minimumBitrateKbps,
            configuredBitrateKbps: options.source.bitrateKbps, maxFramesPerSecond: options.source.maxFramesPerSecond,
            fixedDroppablePeriod: options.droppablePeriod)
        sharing.consentLimitMicros = UInt64(options.consentTimeoutSeconds) * 1_000_000
        let viewers = try ViewerHub(
            configuration: sharing, encoder: source, secondEncoder: secondEncoder, logger: logger.named("viewers"))
        let sfu = try options.sfu.map { transport in
            var ice = options.ice
            ice.role = .controlling
            var configuration = PeerConnection.Configuration(ice: ice, certificate: try DTLSCertificate.shared())
            configuration.offersTransportWideCC = true
            configuration.consentLimitMicros = UInt64(options.consentTimeoutSeconds) * 1_000_000
            return SFUPublisher(
                transport: transport, configuration: configuration,
                logger: logger.named("sfu"),
                hooks: .init(
                    requestKeyframe: { source.requestKeyframe() },
                    // The SFU leg's cap and congestion target bound the one shared encoder, as a viewer's do.
                    bitrateCeiling: { viewers.consumerEstimate("sfu", bitsPerSecond: $0, source: .remb) },
                    targetBitrate: { viewers.consumerEstimate("sfu", bitsPerSecond: $0, source: .congestionControl) },
                    feedbackHeard: { viewers.consumerHeard("sfu") }))
        }
        // With e2ee the SFU leg gets the encrypted frames, as the viewers do.
        let e2ee = try startEncryption(before: viewers, and: sfu.map { [$0] } ?? [], source: source)
        if let e2ee {
            source.addSink(e2ee)
            encryption.withLock { $0 = e2ee }
            let low = try startEncryption(of: viewers)
            lowEncryption.withLock { $0 = low }
        } else {
            source.addSink(viewers)
            if let sfu { source.addSink(sfu) }
        }
        try source.start()
        sfu?.start()
        let server: SignalingServer?
        do {
            server = try startServer(viewers: viewers, source: source, e2ee: e2ee, sfu: sfu)
        } catch {
            sfu?.stop()
            source.stop()
            throw error
        }

        let reporter = StatsReporter(
            source: source, logger: logger.named("stats"), file: options.statsFile, viewers: { viewers.viewerCount },
            sfu: { sfu.map { "\($0.stats.state.rawValue)/\($0.stats.reconnects)" } ?? "-" })
        let timer = reporter.schedule(every: options.statsIntervalSeconds)
        finished.wait()
        timer?.cancel()
        logger.info("stopping", ["reason": reason.withLock { $0 } ?? "-"])
        server?.stop()
        viewers.closeAll(reason: "the call is stopping")
        sfu?.stop()
        source.stop()
        // ICE agents close off the peers' queues: let them release their sockets and TURN allocations.
        if !PeerConnection.waitForClosingAgents(until: .now() + .seconds(2)) {
            logger.warning("ICE agents still closing at exit", [:])
        }
        reporter.report(final: true)
        // A recording that lost frames (a full disk) is a failed run, even though the call went on.
        if let recorder, let failure = recorder.failure {
            logger.error("the recording is incomplete", ["path": recorder.path, "error": failure, "frames": recorder.framesWritten])
            return ExitCode.failure
        }
        return ExitCode.success
    }

    /// The viewer page, WHEP and /stats (none with `--http off`). A bind failure is fatal, on the default
    /// address as on one given with `--http`: a user who starts a call expects its page.
    private func startServer(viewers: ViewerHub, source: VideoSource, e2ee: EncryptingSink?, sfu: SFUPublisher?) throws -> SignalingServer? {
        guard let endpoint = options.http else { return nil }
        var configuration = SignalingConfiguration(
            endpoint: endpoint, token: options.token.flatMap(BearerToken.init), sourceFramesPerSecond: options.source.maxFramesPerSecond)
        configuration.e2eeSalt = e2ee == nil ? nil : options.e2ee?.salt
        // The test pattern changes every frame: a low rate there is load, not a still screen.
        if case .testPattern = options.source.fallback { configuration.sourceSendsOnlyChanges = false }
        let identity = options.https ? try ShareLinks.makeIdentity() : nil
        configuration.serverOptions.tls = identity
        let about = CallStats.About(maxViewers: options.maxViewers)
        let stats: @Sendable () -> JSONValue = { CallStats.json(source: source, viewers: viewers, e2ee: e2ee, about: about, sfu: sfu) }
        let text: @Sendable () -> String = {
            CallStats.text(CallStats.json(source: source, viewers: viewers, e2ee: e2ee, about: about, sfu: sfu))
        }
        do {
            let server = try SignalingServer(
                configuration: configuration, sessions: viewers, stats: stats, statsText: text, logger: logger.named("http"))
            // In share mode the page's address is the one viewers use (the first printed link), not loopback.
            let hosts = options.share ? ShareLinks.reachableHosts(boundTo: server.configuration.endpoint.host) : []
            let base = hosts.first.map { "\(server.scheme)://\($0):\(server.port)" } ?? server.baseURL
            about.viewerURL.withLock { $0 = base + "/" }
            logger.info("viewer page", ["url": server.viewerURL(token: options.token), "whep": server.baseURL + "/whep"])
            if let identity { logger.info("https certificate", ["sha256": identity.fingerprint]) }
            if options.share { printShareBanner(server: server, hosts: hosts, identity: identity) }
            return server
        } catch {
            throw CallStartError.httpUnavailable(
                endpoint: endpoint.description, explicit: options.httpExplicit, https: options.https, share: options.share, cause: "\(error)")
        }
    }
}

extension CallRun {
    /// `--share`: the links for other machines (token included), a QR code of the first, the fingerprint.
    private func printShareBanner(server: SignalingServer, hosts: [String], identity: TLSIdentity?) {
        var text = ShareLinks.banner(
            scheme: server.scheme, hosts: hosts, port: server.port, token: options.token, fingerprint: identity?.fingerprint)
        if options.e2ee != nil {
            text += "  End-to-end encrypted: a link alone shows nothing. Send the passphrase apart from it; viewers type it\n"
                + "  in the page, or add #key=PASSPHRASE to the link.\n"
        }
        if let first = hosts.first, let code = ShareLinks.qrCode(
            "\(server.scheme)://\(first):\(server.port)/" + (options.token.map { "?token=" + SignalingServer.percentEncoded($0) } ?? "")) {
            text += code
        }
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}

extension CallRun {
    /// With `--e2ee-key-file`: the sink that encrypts each frame once for `viewers` (the IVF recorder, added
    /// to the source directly, keeps the clear frames). Nil without.
    private func startEncryption(before viewers: ViewerHub, and others: [any VideoSink] = [], source: VideoSource) throws -> EncryptingSink? {
        guard let settings = options.e2ee, let passphrase else { return nil }
        let key = try FrameKey.derive(passphrase: passphrase, salt: settings.salt)
        let sink = try EncryptingSink(key: key, keyIndex: settings.keyIndex, sinks: [viewers] + others, encoder: source, logger: logger.named("e2ee"))
        logger.info("end-to-end encryption on", [
            "key.index": settings.keyIndex, "salt": settings.salt == FrameKey.defaultSalt ? "default" : "custom", "file": settings.keyFile,
        ])
        return sink
    }

    /// With `--e2ee-key-file`: the sink that encrypts the second encoding's frames for `viewers`, with the same
    /// key and key index as the main one (rotated with it). Nil without.
    private func startEncryption(of viewers: ViewerHub) throws -> EncryptingSink? {
        guard let settings = options.e2ee, let passphrase else { return nil }
        let key = try FrameKey.derive(passphrase: passphrase, salt: settings.salt)
        return try EncryptingSink(key: key, keyIndex: settings.keyIndex, sinks: [viewers.secondEncodingSink],
                                  encoder: viewers.secondEncodingKeyframes, logger: logger.named("e2ee-second"))
    }

    /// What SIGHUP does with e2ee on: on a queue of its own (PBKDF2 takes tens of milliseconds; the signal
    /// thread stays free), read the key file again and rotate to the next key index. A refused file is
    /// logged and the current key kept: the call never falls back to clear frames.
    private func rotator(_ settings: E2EEOptions) -> @Sendable (EncryptingSink?, EncryptingSink?) -> Void {
        let queue = DispatchQueue(label: "screencast.e2ee-rotation")
        let logger = logger.named("e2ee")
        return { sink, lowSink in
            queue.async {
                guard let sink else { return logger.warning("SIGHUP before encryption started: no key rotated") }
                do {
                    let passphrase = try E2EEKeyFile(path: settings.keyFile).read()
                    let key = try FrameKey.derive(passphrase: passphrase, salt: settings.salt)
                    let index = try sink.rotate(to: key)
                    // Rotated together, both sinks reach the same next index.
                    if let lowSink { try lowSink.rotate(to: key) }
                    logger.info("e2ee key file read again: rotating at the next keyframe", ["key.index": index])
                } catch {
                    logger.error("e2ee key not rotated: the current key stays", ["error": error])
                }
            }
        }
    }
}

/// The signals the call handles: SIGINT and SIGTERM stop it; SIGHUP rotates the e2ee key (or stops it).
enum CallSignals {
    static let handled = [SIGINT, SIGTERM, SIGHUP]
}

/// Why the call could not start serving.
enum CallStartError: Error, CustomStringConvertible {
    /// The page's address (`--http`, or the default) could not be bound; `https` with `--https` or `--share`,
    /// `share` with `--share` (whose page must stay reachable from other machines: no loopback, no `off`).
    case httpUnavailable(endpoint: String, explicit: Bool, https: Bool, share: Bool, cause: String)

    var description: String {
        switch self {
        case .httpUnavailable(let endpoint, let explicit, let https, let share, let cause):
            let which = explicit ? "--http \(endpoint)" : "the default \(https ? "HTTPS" : "HTTP") address \(endpoint)"
            let instead = share
                ? "pass --http 0.0.0.0:PORT (0 picks a free port)"
                : https ? "pass --http 127.0.0.1:PORT (0 picks a free port)" : "pass --http 127.0.0.1:PORT (0 picks a free port) or --http off"
            return "cannot serve the viewer page on \(which): \(cause); \(instead)"
        }
    }
}

/// Allocator settings of the call process.
enum CallMemory {
    /// Blocks at least this large are mmapped by glibc (`M_MMAP_THRESHOLD`), bytes; well above an RTP packet
    /// (~1.2 kB) and an encoded frame (tens of kB), below a 1080p JPEG body (~0.9 MB).
    static let mmapThresholdBytes = 256 * 1024
}

ShutdownSignals.blockEarly(CallSignals.handled)  // before any thread exists: these are then never lost or fatal
// Set before any thread exists. Blocks of 256 KiB and more (JPEG bodies of ~0.9 MB, I420 pictures of 3 MB,
// libvpx's frame buffers) get pages of their own and give them back when freed. glibc's default threshold
// instead moves up to the largest such block freed, after which those blocks come from the heaps and
// leave high-water marks there. Measured at 1080p scrolling with one viewer: RSS 1–2 MiB lower after a
// minute, and over 10 minutes 122.5 → 127.2 MiB with the default against 121.6 → 121.0 and 120.8 → 124.9
// MiB with this (so steps of ~3 MiB still happen, from elsewhere). The price is the page faults of mapping
// each JPEG body afresh: ~6200 a second at 30 fps, ~2 % of a core of system time.
GlibcMalloc.setMmapThreshold(bytes: CallMemory.mmapThresholdBytes)
exit(CallTool.main())
