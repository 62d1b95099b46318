import Dispatch
public import DTLS
import Glibc
public import ICE
import RTP
public import RTPSession
public import ScreencastSupport
public import SDP
public import SRTP
import Synchronization

/// The system's wall clock (CLOCK_REALTIME), for the NTP timestamps of Sender Reports.
public struct SystemWallClock: WallClock {
    public init() {}
    public func unixMicroseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
    }
}

/// One viewer's WebRTC connection, answering its offer: ICE (libnice) → DTLS (OpenSSL) → SRTP (libsrtp)
/// carrying our VP8 stream, with RTCP feedback coming back. The thin I/O shell around the sans-I/O parts
/// (``RTPSenderChain`` — lobby, packetizer, NACK/RTX, reports, REMB, PLI/FIR, pacer — and ``DTLSEndpoint``):
///
/// ```
///   HTTP thread: answering(offer:) ── parse, gather, answer, remote credentials/candidates ──▶ answer SDP
///
///   ICE thread ── datagram ──┐                        ┌── dtls ──▶ DTLSEndpoint ── keys ──▶ SRTP sender/receiver
///   ICE thread ── event ─────┤                        ├── rtcp ──▶ SRTCP unprotect ──▶ RTPSenderChain.receiveRTCP
///   encoder ── send(frame) ──┼──▶ serial queue ──────▶├── frame ─▶ RTPSenderChain.send ─▶ release ─▶ SRTP ─▶ ICE send
///   timer ───────────────────┘   (all state here)     └── timer ─▶ DTLS retransmit, pacer, SR every 1 s, lobby
/// ```
///
/// - State lives on one serial dispatch queue; the ICE agent's GLib thread and the encoder thread only
///   post to it. Events go to `onEvent` on that queue: do not call back into ``snapshot()`` from there.
/// - A peer that fails (ICE expired, DTLS failure or fingerprint mismatch, handshake timeout, close_notify,
///   RTCP BYE) closes itself and reports ``Event/closed(reason:failed:)`` once.
public final class PeerConnection: @unchecked Sendable {
    // @unchecked Sendable: the `let`s are immutable or thread-safe (ICEAgent); every `var` is touched
    // only on `queue`.

    /// What every peer of a call shares: ICE settings, the DTLS certificate, pacing and timers.
    public struct Configuration: Sendable {
        /// The ICE agent's settings (the role is set to `controlled` when answering).
        public var ice: ICEAgent.Configuration
        /// Our DTLS certificate; its SHA-256 fingerprint goes into the answer (RFC 8122 §5).
        public var certificate: DTLSCertificate
        /// The send pacing (token bucket) of each peer.
        public var pacer: PacerQueue.Configuration
        /// How often a viewer waiting for its first keyframe asks again.
        public var keyframeRetryMicros: UInt64
        /// RTCP Sender Report interval, µs (RFC 3550 §6.2; 1 s by default).
        public var senderReportIntervalMicros: UInt64
        /// A DTLS handshake not done this long after the answer ends the peer.
        public var dtlsHandshakeTimeoutMicros: UInt64
        /// The wall clock for Sender Reports' NTP timestamps (injected in tests).
        public var wallClock: any WallClock

        public init(
            ice: ICEAgent.Configuration, certificate: DTLSCertificate, pacer: PacerQueue.Configuration = .init(),
            keyframeRetryMicros: UInt64 = 1_000_000, senderReportIntervalMicros: UInt64 = 1_000_000,
            dtlsHandshakeTimeoutMicros: UInt64 = 20_000_000, wallClock: any WallClock = SystemWallClock()
        ) {
            self.ice = ice
            self.certificate = certificate
            self.pacer = pacer
            self.keyframeRetryMicros = keyframeRetryMicros
            self.senderReportIntervalMicros = senderReportIntervalMicros
            self.dtlsHandshakeTimeoutMicros = dtlsHandshakeTimeoutMicros
            self.wallClock = wallClock
        }
    }

    /// Where the connection is.
    public enum State: String, Sendable, Equatable {
        /// ICE and DTLS in progress.
        case connecting
        /// DTLS done, SRTP keyed: media flows (after the lobby's keyframe).
        case connected
        /// Ended by ``close(reason:)`` or by the peer.
        case closed
        /// Ended by a failure (ICE, DTLS, timeout).
        case failed
    }

    /// What a peer reports to its owner (on the peer's queue).
    public enum Event: Sendable, Equatable {
        /// DTLS finished; media starts with the next keyframe.
        case connected
        /// The peer needs a keyframe: it just joined (the lobby), it sent PLI or FIR, or it fell behind.
        case keyframeNeeded(reason: String)
        /// The peer's REMB estimate, bits per second.
        case estimatedBitrate(UInt64)
        /// The peer is gone; nothing follows.
        case closed(reason: String, failed: Bool)
    }

    /// The WHEP session id (URL-safe random).
    public let id: String
    /// The SDP answer (candidates included, `a=end-of-candidates`).
    public let answer: String
    /// What the offer and our answer agreed: payload types, feedback, RTX, DTLS role.
    public let negotiated: NegotiatedVideo
    /// Our side: SSRCs, ICE credentials, fingerprint, CNAME.
    public let local: LocalMediaParameters

    private let agent: ICEAgent
    private let queue: DispatchQueue
    private let logger: Logger
    private let configuration: Configuration
    private let onEvent: @Sendable (Event) -> Void
    private let createdMicros: UInt64

    // Queue-confined state.
    private let dtls: DTLSEndpoint
    private var rtp: RTPSenderChain
    private var srtpSender: SRTPSender?
    private var srtpReceiver: SRTPReceiver?
    private var state: State = .connecting
    private var endReason: String?
    private var timer: (any DispatchSourceTimer)?
    private var connectedMicros: UInt64?
    private var iceState: ICEAgent.State = .new
    private var selectedPair: ICEAgent.CandidatePair?
    private var counters = Counters()

    struct Counters {
        var datagramsReceived = 0
        var dtlsDatagrams = 0
        var rtcpPackets = 0
        var ignoredDatagrams = 0
        var srtpErrors = 0
        var datagramsSent = 0
        var bytesSent = 0
        var sendsDropped = 0
    }

    // MARK: Answering

    /// Answers a viewer's offer: parses it, gathers our candidates (blocks for the few ms that takes),
    /// builds the answer, and starts ICE and DTLS. Media starts once DTLS completes.
    ///
    /// - Throws: ``PeerConnectionError`` peer errors for an offer that is malformed or unanswerable (no VP8, no
    ///   rtcp-mux, no fingerprint, bad ICE credentials), or our own (gathering, libnice, OpenSSL).
    public static func answering(
        offer text: String, id: String, configuration: Configuration, logger: Logger,
        onEvent: @escaping @Sendable (Event) -> Void
    ) throws(PeerConnectionError) -> PeerConnection {
        let offer = try sdp { () throws(SDPError) in try SDPParser().parse(text) }
        var random = SystemRandomNumberGenerator()
        // Refuse what cannot be answered before any socket is opened.
        let trial = LocalMediaParameters(
            iceUfrag: "trial", icePwd: String(repeating: "x", count: 22), fingerprint: configuration.certificate.fingerprint,
            videoSSRC: 1, rtxSSRC: 2, cname: "trial", sessionID: 1)
        _ = try sdp { () throws(SDPError) in try VideoAnswerBuilder.answer(offer, local: trial) }

        var iceConfiguration = configuration.ice
        iceConfiguration.role = .controlled
        let relay = PeerConnectionRelay()
        let agent = try ice { () throws(ICEError) in
            try ICEAgent(
                configuration: iceConfiguration, logger: logger.named("ice"),
                onEvent: { event in relay.iceEvent(event) }, onDatagram: { datagram in relay.datagram(datagram) })
        }
        do throws(PeerConnectionError) {
            let candidates = try ice { () throws(ICEError) in try agent.gatherCandidates() }
            let videoSSRC = UInt32.random(in: 1...UInt32.max, using: &random)
            var rtxSSRC = UInt32.random(in: 1...UInt32.max, using: &random)
            while rtxSSRC == videoSSRC { rtxSSRC = UInt32.random(in: 1...UInt32.max, using: &random) }
            let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
            let cname = String((0..<16).map { _ in alphabet.randomElement(using: &random)! })
            let local = LocalMediaParameters(
                iceUfrag: agent.localCredentials.ufrag, icePwd: agent.localCredentials.password,
                fingerprint: configuration.certificate.fingerprint, candidates: candidates, candidatesComplete: true,
                videoSSRC: videoSSRC, rtxSSRC: rtxSSRC, cname: cname,
                sessionID: UInt64.random(in: 1...UInt64(Int64.max), using: &random))
            let (answer, negotiated) = try sdp { () throws(SDPError) in try VideoAnswerBuilder.answer(offer, local: local) }

            var dtlsConfiguration = DTLSConfiguration(negotiated: negotiated, certificate: configuration.certificate)
            dtlsConfiguration.handshakeTimeoutMicros = configuration.dtlsHandshakeTimeoutMicros
            let dtls: DTLSEndpoint
            do { dtls = try DTLSEndpoint(configuration: dtlsConfiguration) } catch { throw .dtls(error) }
            var senderConfiguration = RTPSenderChain.Configuration(negotiated: negotiated, local: local, using: &random)
            senderConfiguration.pacer = configuration.pacer
            senderConfiguration.keyframeRetryMicros = configuration.keyframeRetryMicros
            senderConfiguration.senderReportIntervalMicros = configuration.senderReportIntervalMicros
            let rtp: RTPSenderChain
            do { rtp = try RTPSenderChain(configuration: senderConfiguration) } catch {
                throw PeerConnectionError.invalidConfiguration("RTP sender: \(error)")
            }
            let peer = PeerConnection(
                id: id, answer: answer.serialized(), negotiated: negotiated, local: local, agent: agent, dtls: dtls, rtp: rtp,
                configuration: configuration, logger: logger, onEvent: onEvent)
            relay.set(peer)

            try ice { () throws(ICEError) in
                try agent.setRemoteCredentials(.init(ufrag: negotiated.remote.iceUfrag, password: negotiated.remote.icePwd))
            }
            var usable = 0
            for candidate in negotiated.remote.candidates {
                if (try? agent.addRemoteCandidate(candidate.description)) == true { usable += 1 }
            }
            if negotiated.remote.candidatesComplete, usable > 0 { agent.remoteCandidatesComplete() }
            peer.start()
            logger.info("peer answered", [
                "peer": id, "candidates.local": candidates.count, "candidates.remote": negotiated.remote.candidates.count,
                "candidates.usable": usable, "dtls": negotiated.dtlsRole == .server ? "server" : "client",
                "rtx": negotiated.rtxPayloadType != nil, "direction": negotiated.direction.rawValue,
                "ssrc": local.videoSSRC,
            ])
            return peer
        } catch {
            agent.close()
            throw error
        }
    }

    private init(
        id: String, answer: String, negotiated: NegotiatedVideo, local: LocalMediaParameters, agent: ICEAgent, dtls: DTLSEndpoint,
        rtp: RTPSenderChain, configuration: Configuration, logger: Logger, onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.id = id
        self.answer = answer
        self.negotiated = negotiated
        self.local = local
        self.agent = agent
        self.dtls = dtls
        self.rtp = rtp
        self.configuration = configuration
        self.logger = logger
        self.onEvent = onEvent
        queue = DispatchQueue(label: "screencast.peer.\(id.prefix(8))", target: Self.queueTarget)
        createdMicros = MonotonicClock.nowMicros()
    }

    /// Where every peer's serial queue runs: a global queue, whose worker threads are shared and about as
    /// many as the cores. A serial queue made without a target runs on libdispatch's "overcommit" pool
    /// instead, which starts a thread whenever a queue has work and no thread is idle: a frame fanned out to
    /// 16 peers (each sending under libnice's agent lock) kept 60–150 threads alive, each with a stack and
    /// a glibc malloc arena of its own to leave freed packets in. Measured with 16 light viewers at 1080p30:
    /// 76 → 24 threads, call RSS 155 → 142 MiB, CPU unchanged.
    private static let queueTarget = DispatchQueue.global(qos: .userInitiated)

    deinit {
        timer?.cancel()
        agent.close()
    }

    // MARK: Owner's interface (any thread)

    /// Sends an encoded frame (dropped before the peer is connected and until its first keyframe).
    public func send(_ frame: OutgoingVideoFrame) {
        queue.async { self.sendFrame(frame) }
    }

    /// Applies a trickle-ICE fragment (RFC 8840, `application/trickle-ice-sdpfrag`): its `a=candidate`
    /// lines and `a=end-of-candidates`. An `a=ice-ufrag` other than the offer's asks for an ICE restart,
    /// which is refused.
    /// - Throws: ``PeerConnectionError/sdp(_:)`` with ``SDPError/badAttribute(line:name:reason:)`` (a peer
    ///   error: 400) for a malformed candidate or an ICE restart; nothing is applied then.
    public func applyTrickle(fragment: String) throws(PeerConnectionError) {
        var candidates: [String] = []
        var complete = false
        for (index, raw) in fragment.split(whereSeparator: \.isNewline).enumerated() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line.hasPrefix("a=ice-ufrag:") {
                let ufrag = String(line.dropFirst("a=ice-ufrag:".count))
                guard ufrag == negotiated.remote.iceUfrag else {
                    throw .sdp(.badAttribute(line: index + 1, name: "ice-ufrag", reason: "ICE restart is not supported"))
                }
            } else if line.hasPrefix("a=candidate:") {
                let value = String(line.dropFirst(2))
                do {
                    _ = try ICECandidate(parsing: value)
                } catch {
                    throw .sdp(.badAttribute(line: index + 1, name: "candidate", reason: "\(error)"))
                }
                candidates.append(value)
            } else if line == "a=end-of-candidates" {
                complete = true
            }
        }
        if !candidates.isEmpty { _ = try ice { () throws(ICEError) in try agent.addRemoteCandidates(candidates) } }
        if complete { agent.remoteCandidatesComplete() }
    }

    /// Ends the connection (close_notify to the peer, ICE closed). ``Event/closed(reason:failed:)`` follows
    /// unless it had already ended. Idempotent; returns at once.
    public func close(reason: String = "closed") {
        queue.async { self.end(reason, failed: false) }
    }

    /// A consistent view of the peer now (waits for the peer's queue; never call it from `onEvent`).
    public func snapshot() -> Snapshot {
        queue.sync { makeSnapshot() }
    }

    // MARK: Queue-confined handling

    private func start() {
        queue.async {
            let now = MonotonicClock.nowMicros()
            let timer = DispatchSource.makeTimerSource(queue: self.queue)
            timer.setEventHandler { [weak self] in self?.onTimer() }
            self.timer = timer
            timer.schedule(deadline: .now() + .seconds(1))
            timer.resume()
            guard self.stepDTLS({ try self.dtls.start(nowMicros: now) }) else { return }
            self.rearm(now)
        }
    }

    fileprivate func received(_ datagram: [UInt8]) {
        queue.async { self.handleDatagram(datagram) }
    }

    fileprivate func iceEvent(_ event: ICEAgent.Event) {
        queue.async { self.handleICEEvent(event) }
    }

    private var isEnded: Bool { state == .closed || state == .failed }

    private func handleICEEvent(_ event: ICEAgent.Event) {
        guard !isEnded else { return }
        switch event {
        case .stateChanged(let newState):
            iceState = newState
            logger.debug("ice state", ["peer": id, "state": newState.rawValue])
        case .selectedPairChanged(let pair):
            selectedPair = pair
            logger.info("ice pair selected", [
                "peer": id, "local": "\(pair.local.address):\(pair.local.port)",
                "remote": "\(pair.remote.address):\(pair.remote.port)", "type": pair.remote.kind.token,
            ])
        case .expired(let expiry):
            end("ICE \(expiry.rawValue)", failed: true)
        case .localCandidate, .gatheringDone, .remoteCandidateLearned: break
        }
    }

    private func handleDatagram(_ datagram: [UInt8]) {
        guard !isEnded else { return }
        counters.datagramsReceived += 1
        let now = MonotonicClock.nowMicros()
        switch DatagramKind.classify(datagram) {
        case .dtls:
            counters.dtlsDatagrams += 1
            guard stepDTLS({ try dtls.receive(datagram, nowMicros: now) }) else { return }
            checkDTLS(now)
        case .rtcp:
            handleRTCP(datagram, now)
        case .rtp, .stun, .zrtp, .turnChannel, .unknown:
            counters.ignoredDatagrams += 1
        }
        rearm(now)
    }

    /// After DTLS input: key SRTP once connected; end on close_notify or failure.
    private func checkDTLS(_ now: UInt64) {
        switch dtls.state {
        case .connected(let keys) where srtpSender == nil:
            let peerRole: DTLSRole = negotiated.dtlsRole == .server ? .client : .server
            do {
                srtpSender = try SRTPSender(key: keys.writeKey(of: negotiated.dtlsRole))
                srtpReceiver = try SRTPReceiver(key: keys.writeKey(of: peerRole))
            } catch {
                end("SRTP: \(error)", failed: true)
                return
            }
            state = .connected
            connectedMicros = now
            logger.info("peer connected", [
                "peer": id, "srtp": keys.profile.description, "after.ms": (now - createdMicros) / 1000,
                "pair": selectedPair.map { "\($0.remote.address):\($0.remote.port)" } ?? "-",
            ])
            onEvent(.connected)
            apply(rtp.start(nowMicros: now, sendsMedia: negotiated.direction == .sendonly), now)
        case .closed(byPeer: true):
            end("DTLS close_notify from the peer", failed: false)
        case .failed(let error):
            end("DTLS: \(error)", failed: true)
        default: break
        }
    }

    private func handleRTCP(_ datagram: [UInt8], _ now: UInt64) {
        guard let receiver = srtpReceiver else {
            counters.ignoredDatagrams += 1
            return
        }
        var packet = datagram
        do {
            try receiver.unprotectRTCP(&packet)
        } catch {
            counters.srtpErrors += 1
            return
        }
        counters.rtcpPackets += 1
        apply(rtp.receiveRTCP(packet, nowMicros: now, arrival: configuration.wallClock.ntpNow()), now)
        pump(now)
    }

    /// Carries out what the sender chain asked for: RTCP to send, a keyframe, the REMB estimate, goodbye.
    private func apply(_ outcome: SenderOutcome, _ now: UInt64) {
        if let sender = srtpSender {
            for var packet in outcome.rtcp {
                do {
                    try sender.protectRTCP(&packet)
                    transmit(packet)
                } catch {
                    counters.srtpErrors += 1
                }
            }
        }
        if outcome.pacerOverflowed {
            logger.warning("pacer overflow: waiting for a keyframe", ["peer": id, "queued": rtp.pacer.queuedBytes])
        }
        if let reason = outcome.keyframeRequest { onEvent(.keyframeNeeded(reason: reason.rawValue)) }
        if let bitrate = outcome.estimatedBitrate { onEvent(.estimatedBitrate(bitrate)) }
        if outcome.goodbye { end("RTCP BYE from the peer", failed: false) }
    }

    private func sendFrame(_ frame: OutgoingVideoFrame) {
        guard state == .connected, negotiated.direction == .sendonly, srtpSender != nil else { return }
        let now = MonotonicClock.nowMicros()
        do {
            let outcome = try rtp.send(frame, nowMicros: now)
            if let wait = outcome.firstKeyframeWaitMicros {
                logger.info("first keyframe to peer", ["peer": id, "waited.ms": wait / 1000, "bytes": frame.bytes.count])
            }
            apply(outcome, now)
        } catch {
            logger.warning("frame not sent", ["peer": id, "error": error])
            return
        }
        pump(now)
        rearm(now)
    }

    /// Sends what the pacer releases now.
    private func pump(_ now: UInt64) {
        guard let sender = srtpSender else { return }
        for packet in rtp.release(nowMicros: now, reserving: sender.profile.rtpOverhead) {
            var buffer = packet.bytes
            do {
                try sender.protectRTP(&buffer)
            } catch {
                counters.srtpErrors += 1
                continue
            }
            transmit(buffer)
            // A frame's last packet left: its capture → sent latency (`/stats`; a debug line per frame).
            if let (capture, latency) = packet.frameLatency, logger.threshold <= .debug {
                logger.debug("frame sent", ["peer": id, "capture_us": capture, "sent_us": capture + latency, "latency_us": latency])
            }
        }
    }

    private func transmit(_ datagram: [UInt8]) {
        switch agent.send(datagram) {
        case .sent, .queued:
            counters.datagramsSent += 1
            counters.bytesSent += datagram.count
        case .dropped:
            counters.sendsDropped += 1
        }
    }

    /// Runs one DTLS step (start, a datagram, a timeout) and sends what it produced; a failed step (its
    /// alert flushed too) ends the peer. Returns false when it failed.
    private func stepDTLS(_ step: () throws -> Void) -> Bool {
        do {
            try step()
        } catch {
            flushDTLS()
            end("DTLS: \(error)", failed: true)
            return false
        }
        flushDTLS()
        return true
    }

    private func flushDTLS() {
        for datagram in dtls.takeDatagrams() { transmit(datagram) }
    }

    private func onTimer() {
        guard !isEnded else { return }
        let now = MonotonicClock.nowMicros()
        if let due = dtls.nextTimeout, now >= due {
            guard stepDTLS({ try dtls.handleTimeout(nowMicros: now) }) else { return }
            checkDTLS(now)
            guard !isEnded else { return }
        }
        pump(now)
        if srtpSender != nil { apply(rtp.handleTimer(nowMicros: now, ntp: configuration.wallClock.ntpNow()), now) }
        guard !isEnded else { return }
        rearm(now)
    }

    /// Points the timer at the earliest of: DTLS retransmission, the pacer's next packet, the next SR,
    /// the lobby's next keyframe request; at most a second away.
    private func rearm(_ now: UInt64) {
        guard let timer, !isEnded else { return }
        var deadline = now + 1_000_000
        for candidate in [dtls.nextTimeout, rtp.nextDeadlineMicros(nowMicros: now)] {
            if let candidate { deadline = min(deadline, candidate) }
        }
        let delay = deadline > now ? deadline - now : 0
        timer.schedule(deadline: .now() + .microseconds(Int(delay)), leeway: .microseconds(200))
    }

    private func end(_ reason: String, failed: Bool) {
        guard !isEnded else { return }
        state = failed ? .failed : .closed
        endReason = reason
        dtls.close()
        flushDTLS()
        timer?.cancel()
        rtp.stop()
        agent.close()
        logger.log(failed ? .warning : .info, "peer ended", [
            "peer": id, "reason": reason, "frames": rtp.stream.statistics.framesSent, "bytes": counters.bytesSent,
        ])
        onEvent(.closed(reason: reason, failed: failed))
    }

    private func makeSnapshot() -> Snapshot {
        let now = MonotonicClock.nowMicros()
        return Snapshot(
            id: id, state: state, endReason: endReason, iceState: iceState, selectedPair: selectedPair, dtlsRole: negotiated.dtlsRole,
            srtpProfile: srtpSender?.profile, sender: rtp.report, datagramsReceived: counters.datagramsReceived,
            rtcpPackets: counters.rtcpPackets, ignoredDatagrams: counters.ignoredDatagrams, srtpErrors: counters.srtpErrors,
            datagramsSent: counters.datagramsSent, bytesSent: counters.bytesSent, sendsDropped: counters.sendsDropped,
            ageSeconds: Double(now - createdMicros) / 1_000_000, connectMillis: connectedMicros.map { Double($0 - createdMicros) / 1000 })
    }
}

/// Runs one SDP step, its error carried as ``PeerConnectionError/sdp(_:)``.
private func sdp<T>(_ body: () throws(SDPError) -> T) throws(PeerConnectionError) -> T {
    do { return try body() } catch { throw .sdp(error) }
}

/// Runs one ICE step, its error carried as ``PeerConnectionError/ice(_:)``.
private func ice<T>(_ body: () throws(ICEError) -> T) throws(PeerConnectionError) -> T {
    do { return try body() } catch { throw .ice(error) }
}

/// Carries the ICE agent's callbacks to the peer connection, which does not exist yet when the agent is
/// made, without the agent keeping the peer alive.
private final class PeerConnectionRelay: Sendable {
    private struct Target: Sendable { weak var peer: PeerConnection? }
    private let target = Mutex(Target())

    func set(_ peer: PeerConnection) { target.withLock { $0.peer = peer } }
    func datagram(_ datagram: [UInt8]) { target.withLock { $0.peer }?.received(datagram) }
    func iceEvent(_ event: ICEAgent.Event) { target.withLock { $0.peer }?.iceEvent(event) }
}
