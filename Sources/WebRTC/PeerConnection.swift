import Dispatch
import Glibc
import RTP
public import ScreencastSupport
import Synchronization

/// One encoded VP8 frame to send to a peer (the shared encoder's output, without the `Media` types).
public struct OutgoingVideoFrame: Sendable {
    /// The VP8 frame (RFC 6386 §9.1).
    public var bytes: [UInt8]
    public var isKeyframe: Bool
    /// Capture time, CLOCK_MONOTONIC µs: the RTP timestamp derives from it, never from send time.
    public var captureMicros: UInt64

    public init(bytes: [UInt8], isKeyframe: Bool, captureMicros: UInt64) {
        self.bytes = bytes
        self.isKeyframe = isKeyframe
        self.captureMicros = captureMicros
    }
}

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
/// (``RTPSenderState``, ``PacerQueue``, ``KeyframeLobby``, ``DTLSEndpoint``):
///
/// ```
///   HTTP thread: answering(offer:) ── parse, gather, answer, remote credentials/candidates ──▶ answer SDP
///
///   ICE thread ── datagram ──┐                        ┌── dtls ──▶ DTLSEndpoint ── keys ──▶ SRTP sender/receiver
///   ICE thread ── event ─────┤                        ├── rtcp ──▶ SRTCP unprotect ──▶ RTPSenderState.handleRTCP
///   encoder ── send(frame) ──┼──▶ serial queue ──────▶├── frame ─▶ lobby ─▶ packetize ─▶ pacer ─▶ SRTP ─▶ ICE send
///   timer ───────────────────┘   (all state here)     └── timer ─▶ DTLS retransmit, pacer, SR every 1 s, lobby
/// ```
///
/// - State lives on one serial dispatch queue; the ICE agent's GLib thread and the encoder thread only
///   post to it. Events go to `onEvent` on that queue: do not call back into ``snapshot()`` from there.
/// - A peer that fails (ICE expired, DTLS failure or fingerprint mismatch, handshake timeout, close_notify,
///   RTCP BYE) closes itself and reports ``Event/closed(reason:failed:)`` once.
/// - Nothing unauthenticated from the network ends a peer: a datagram of no known kind (RFC 7983 §7), RTP
///   (a viewer sends none), DTLS records that cannot be genuine or fail OpenSSL's authentication, SRTCP that
///   libsrtp refuses (tag, replay, too short), RTCP that does not parse: each is counted in
///   ``DroppedDatagrams`` and dropped. Only authenticated input (a close_notify or fatal alert inside DTLS,
///   an RTCP BYE inside SRTCP) ends it.
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
    private var rtp: RTPSenderState
    private var pacer: PacerQueue
    private var lobby: KeyframeLobby
    private var srtpSender: SRTPSender?
    private var srtpReceiver: SRTPReceiver?
    private var state: State = .connecting
    private var endReason: String?
    private var timer: (any DispatchSourceTimer)?
    private var nextSenderReport: UInt64?
    private var connectedMicros: UInt64?
    private var iceState: ICEAgent.State = .new
    private var selectedPair: ICEAgent.CandidatePair?
    private var counters = Counters()
    private var sendLatency = SendLatency()

    struct Counters {
        var datagramsReceived = 0
        var dtlsDatagrams = 0
        var rtcpPackets = 0
        var dropped = DroppedDatagrams()
        var srtpErrors = 0
        var datagramsSent = 0
        var bytesSent = 0
        var sendsDropped = 0
        var keyframeRequests = 0
    }

    // MARK: Answering

    /// Answers a viewer's offer: parses it, gathers our candidates (blocks for the few ms that takes),
    /// builds the answer, and starts ICE and DTLS. Media starts once DTLS completes.
    ///
    /// - Throws: ``WebRTCError`` peer errors for an offer that is malformed or unanswerable (no VP8, no
    ///   rtcp-mux, no fingerprint, bad ICE credentials), or our own (gathering, libnice, OpenSSL).
    public static func answering(
        offer text: String, id: String, configuration: Configuration, logger: Logger,
        onEvent: @escaping @Sendable (Event) -> Void
    ) throws(WebRTCError) -> PeerConnection {
        let offer = try SDPParser().parse(text)
        var random = SecureRandomNumberGenerator()  // not the empty SystemRandomNumberGenerator: see its doc
        // Refuse what cannot be answered before any socket is opened.
        let trial = LocalMediaParameters(
            iceUfrag: "trial", icePwd: String(repeating: "x", count: 22), fingerprint: configuration.certificate.fingerprint,
            videoSSRC: 1, rtxSSRC: 2, cname: "trial", sessionID: 1)
        _ = try VideoAnswerBuilder.answer(offer, local: trial)

        var iceConfiguration = configuration.ice
        iceConfiguration.role = .controlled
        let relay = PeerConnectionRelay()
        let agent = try ICEAgent(
            configuration: iceConfiguration, logger: logger.named("ice"),
            onEvent: { event in relay.iceEvent(event) }, onDatagram: { datagram in relay.datagram(datagram) })
        do throws(WebRTCError) {
            let candidates = try agent.gatherCandidates()
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
            let (answer, negotiated) = try VideoAnswerBuilder.answer(offer, local: local)

            var dtlsConfiguration = DTLSConfiguration(negotiated: negotiated, certificate: configuration.certificate)
            dtlsConfiguration.handshakeTimeoutMicros = configuration.dtlsHandshakeTimeoutMicros
            let dtls = try DTLSEndpoint(configuration: dtlsConfiguration)
            let senderConfiguration = RTPSenderState.Configuration(negotiated: negotiated, local: local, using: &random)
            let rtp: RTPSenderState
            do { rtp = try RTPSenderState(configuration: senderConfiguration) } catch {
                throw WebRTCError.invalidConfiguration("RTP sender: \(error)")
            }
            let peer = PeerConnection(
                id: id, answer: answer.serialized(), negotiated: negotiated, local: local, agent: agent, dtls: dtls, rtp: rtp,
                configuration: configuration, logger: logger, onEvent: onEvent)
            relay.set(peer)

            try agent.setRemoteCredentials(.init(ufrag: negotiated.remote.iceUfrag, password: negotiated.remote.icePwd))
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
        rtp: RTPSenderState, configuration: Configuration, logger: Logger, onEvent: @escaping @Sendable (Event) -> Void
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
        pacer = PacerQueue(configuration: configuration.pacer)
        lobby = KeyframeLobby(retryIntervalMicros: configuration.keyframeRetryMicros)
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
    /// - Throws: ``WebRTCError/sdpBadAttribute(line:name:reason:)`` (a peer error: 400) for a malformed
    ///   candidate or an ICE restart; nothing is applied then.
    public func applyTrickle(fragment: String) throws(WebRTCError) {
        var candidates: [String] = []
        var complete = false
        for (index, raw) in fragment.split(whereSeparator: \.isNewline).enumerated() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line.hasPrefix("a=ice-ufrag:") {
                let ufrag = String(line.dropFirst("a=ice-ufrag:".count))
                guard ufrag == negotiated.remote.iceUfrag else {
                    throw .sdpBadAttribute(line: index + 1, name: "ice-ufrag", reason: "ICE restart is not supported")
                }
            } else if line.hasPrefix("a=candidate:") {
                let value = String(line.dropFirst(2))
                do {
                    _ = try ICECandidate(parsing: value)
                } catch {
                    throw .sdpBadAttribute(line: index + 1, name: "candidate", reason: "\(error)")
                }
                candidates.append(value)
            } else if line == "a=end-of-candidates" {
                complete = true
            }
        }
        if !candidates.isEmpty { _ = try agent.addRemoteCandidates(candidates) }
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
            let passed = dtls.statistics.recordsPassed
            guard stepDTLS({ try dtls.receive(datagram, nowMicros: now) }) else { return }
            if dtls.statistics.recordsPassed == passed { counters.dropped.dtls += 1 }
            checkDTLS(now)
        case .rtcp:
            handleRTCP(datagram, now)
        case .rtp: counters.dropped.rtp += 1
        case .stun: counters.dropped.stun += 1
        case .zrtp: counters.dropped.zrtp += 1
        case .turnChannel: counters.dropped.turnChannel += 1
        case .unknown: counters.dropped.unknown += 1
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
            if negotiated.direction == .sendonly {
                lobby.enter(nowMicros: now)
                requestKeyframe("new viewer", now)
            }
            nextSenderReport = now + configuration.senderReportIntervalMicros
        case .closed(byPeer: true):
            end("DTLS close_notify from the peer", failed: false)
        case .failed(let error):
            end("DTLS: \(error)", failed: true)
        default: break
        }
    }

    /// SRTCP from the peer: unprotected (libsrtp checks the tag and the replay window), parsed, acted on.
    /// A packet refused at any step is counted by why and dropped; it never ends the peer.
    private func handleRTCP(_ datagram: [UInt8], _ now: UInt64) {
        guard let receiver = srtpReceiver else {
            counters.dropped.rtcpBeforeKeys += 1
            return
        }
        var packet = datagram
        do {
            try receiver.unprotectRTCP(&packet)
        } catch {
            counters.dropped.countSRTCP(error)
            return
        }
        let packets: [RTCPPacket]
        do {
            packets = try RTCPPacket.parseCompound(packet)
        } catch {
            counters.dropped.rtcpMalformed += 1
            return
        }
        counters.rtcpPackets += 1
        let outcome = rtp.handle(packets, nowMicros: now, arrival: configuration.wallClock.ntpNow())
        for retransmission in outcome.retransmissions { _ = pacer.enqueue(retransmission: retransmission) }
        if !outcome.retransmissions.isEmpty { pump(now) }
        if outcome.keyframeRequested { requestKeyframe("PLI/FIR", now) }
        if let bitrate = outcome.estimatedBitrate { onEvent(.estimatedBitrate(bitrate)) }
        if outcome.goodbye { end("RTCP BYE from the peer", failed: false) }
    }

    private func sendFrame(_ frame: OutgoingVideoFrame) {
        guard state == .connected, negotiated.direction == .sendonly, srtpSender != nil else { return }
        let now = MonotonicClock.nowMicros()
        guard lobby.admit(isKeyframe: frame.isKeyframe, nowMicros: now) else { return }
        if frame.isKeyframe, let wait = lobby.lastWaitMicros, rtp.statistics.keyframesSent == 0 {
            logger.info("first keyframe to peer", ["peer": id, "waited.ms": wait / 1000, "bytes": frame.bytes.count])
        }
        let packets: [[UInt8]]
        do {
            packets = try rtp.packetize(frame: frame.bytes, isKeyframe: frame.isKeyframe, captureMicros: frame.captureMicros, nowMicros: now)
        } catch {
            logger.warning("frame not sent", ["peer": id, "error": error])
            return
        }
        if !pacer.enqueue(media: packets) {
            logger.warning("pacer overflow: waiting for a keyframe", ["peer": id, "queued": pacer.queuedBytes])
            if lobby.reset(nowMicros: now) { requestKeyframe("pacer overflow", now) }
        } else if let last = packets.last {
            sendLatency.queued(lastPacket: last, captureMicros: frame.captureMicros)
        }
        pump(now)
        rearm(now)
    }

    /// Sends what the pacer releases now.
    private func pump(_ now: UInt64) {
        guard let sender = srtpSender else { return }
        for packet in pacer.release(nowMicros: now) {
            var buffer = packet.bytes
            buffer.reserveCapacity(buffer.count + sender.profile.rtpOverhead)
            do {
                try sender.protectRTP(&buffer)
            } catch {
                counters.srtpErrors += 1
                continue
            }
            transmit(buffer)
            if packet.kind == .media, SendLatency.isLastOfFrame(packet.bytes) { frameSent(packet.bytes) }
        }
    }

    /// A frame's last packet left: its capture → sent latency (`/stats`; a debug line per frame).
    private func frameSent(_ packet: [UInt8]) {
        let sent = MonotonicClock.nowMicros()
        guard let (capture, latency) = sendLatency.sent(packet, sentMicros: sent), logger.threshold <= .debug else { return }
        logger.debug("frame sent", ["peer": id, "capture_us": capture, "sent_us": sent, "latency_us": latency])
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

    private func requestKeyframe(_ reason: String, _ now: UInt64) {
        counters.keyframeRequests += 1
        lobby.markRequested(nowMicros: now)
        onEvent(.keyframeNeeded(reason: reason))
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
        if let due = nextSenderReport, now >= due {
            nextSenderReport = now + configuration.senderReportIntervalMicros
            sendSenderReport(now)
        }
        if lobby.keyframeRequestDue(nowMicros: now) { requestKeyframe("still waiting for a keyframe", now) }
        rearm(now)
    }

    private func sendSenderReport(_ now: UInt64) {
        guard let sender = srtpSender, rtp.hasSentMedia else { return }
        do {
            var packet = try rtp.senderReport(nowMicros: now, ntp: configuration.wallClock.ntpNow())
            try sender.protectRTCP(&packet)
            transmit(packet)
        } catch {
            counters.srtpErrors += 1
        }
    }

    /// Points the timer at the earliest of: DTLS retransmission, the pacer's next packet, the next SR,
    /// the lobby's next keyframe request; at most a second away.
    private func rearm(_ now: UInt64) {
        guard let timer, !isEnded else { return }
        var deadline = now + 1_000_000
        for candidate in [dtls.nextTimeout, pacer.nextSendMicros(nowMicros: now), nextSenderReport, lobby.nextRequestMicros] {
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
        pacer.removeAll()
        agent.close()
        logger.log(failed ? .warning : .info, "peer ended", [
            "peer": id, "reason": reason, "frames": rtp.statistics.framesSent, "bytes": counters.bytesSent,
        ])
        onEvent(.closed(reason: reason, failed: failed))
    }

    // MARK: Stats

    /// Datagrams from the peer that were dropped, by why. None of them ends the peer.
    public struct DroppedDatagrams: Sendable, Equatable {
        /// Empty, or a first byte in no range of RFC 7983 §7.
        public var unknown = 0
        /// STUN-range (first byte 0–3) that the ICE agent did not take as STUN and passed up.
        public var stun = 0
        /// ZRTP (16–19): never negotiated.
        public var zrtp = 0
        /// TURN ChannelData (64–79) the ICE agent passed up.
        public var turnChannel = 0
        /// RTP (RFC 5761 §4): this peer only sends media.
        public var rtp = 0
        /// DTLS datagrams none of whose records reached OpenSSL (``DTLSEndpoint/statistics`` has the
        /// records by reason; those OpenSSL discards for their tag are not seen here).
        public var dtls = 0
        /// SRTCP before the DTLS handshake gave the keys.
        public var rtcpBeforeKeys = 0
        /// SRTCP whose authentication tag did not verify (RFC 3711 §3.4, RFC 7714 §9.2).
        public var srtcpAuthenticationFailed = 0
        /// SRTCP replayed or older than the replay window (RFC 3711 §3.3.2).
        public var srtcpReplayed = 0
        /// SRTCP too short for its header and trailer, or not RTCP (RFC 3711 §3.4).
        public var srtcpMalformed = 0
        /// SRTCP libsrtp refused for another reason (its error code).
        public var srtcpOther = 0
        /// Authenticated RTCP that does not parse as a compound packet (RFC 3550 §6.1).
        public var rtcpMalformed = 0

        public init() {}

        /// Every dropped datagram.
        public var total: Int {
            unknown + stun + zrtp + turnChannel + rtp + dtls + rtcpBeforeKeys + srtcpAuthenticationFailed
                + srtcpReplayed + srtcpMalformed + srtcpOther + rtcpMalformed
        }

        mutating func countSRTCP(_ error: WebRTCError) {
            switch error {
            case .srtp(.authenticationFailed): srtcpAuthenticationFailed += 1
            case .srtp(.replayed): srtcpReplayed += 1
            case .srtp(.malformedPacket): srtcpMalformed += 1
            default: srtcpOther += 1
            }
        }

        /// The `droppedDatagrams` object of `/stats`.
        public var json: JSONValue {
            .object([
                ("unknown", .number(unknown)), ("stun", .number(stun)), ("zrtp", .number(zrtp)),
                ("turnChannel", .number(turnChannel)), ("rtp", .number(rtp)), ("dtls", .number(dtls)),
                ("rtcpBeforeKeys", .number(rtcpBeforeKeys)), ("srtcpAuthenticationFailed", .number(srtcpAuthenticationFailed)),
                ("srtcpReplayed", .number(srtcpReplayed)), ("srtcpMalformed", .number(srtcpMalformed)),
                ("srtcpOther", .number(srtcpOther)), ("rtcpMalformed", .number(rtcpMalformed)),
            ])
        }
    }

    /// What `/stats` shows of a peer.
    public struct Snapshot: Sendable {
        public var id: String
        public var state: State
        public var endReason: String?
        public var iceState: ICEAgent.State
        public var selectedPair: ICEAgent.CandidatePair?
        public var dtlsRole: DTLSRole
        public var srtpProfile: SRTPProtectionProfile?
        public var lobby: String
        public var keyframeWaitMillis: Double?
        public var framesDroppedInLobby: Int
        public var rtp: RTPSenderState.Statistics
        public var rtx: Bool
        public var datagramsReceived: Int
        /// RTCP compound packets that authenticated and parsed.
        public var rtcpPackets: Int
        /// Datagrams from the peer dropped, by why.
        public var droppedDatagrams: DroppedDatagrams
        /// What the DTLS endpoint took and dropped, records by reason.
        public var dtls: DTLSEndpoint.Statistics
        /// The DTLS cipher suite, once chosen.
        public var dtlsCipherSuite: DTLSCipherSuite?
        /// All dropped datagrams (``DroppedDatagrams/total``).
        public var ignoredDatagrams: Int { droppedDatagrams.total }
        /// Our own SRTP/SRTCP protect failures (the peer's packets that fail are in ``droppedDatagrams``).
        public var srtpErrors: Int
        public var datagramsSent: Int
        /// Bytes handed to ICE (SRTP, SRTCP and DTLS).
        public var bytesSent: Int
        public var sendsDropped: Int
        public var keyframeRequests: Int
        public var pacerQueuedPackets: Int
        public var pacerOverflows: Int
        /// Packets and bytes held for retransmission (``RTPSenderState/historyPacketCount``).
        public var historyPackets: Int
        public var historyBytes: Int
        public var sendLatency: SendLatency
        public var ageSeconds: Double
        public var connectMillis: Double?

        /// The peer's entry in `/stats`.
        public var json: JSONValue {
            func optional(_ value: Double?) -> JSONValue { value.map { .double(($0 * 100).rounded() / 100) } ?? .null }
            let pair: JSONValue = selectedPair.map { pair in
                .object([
                    ("local", .string("\(pair.local.address):\(pair.local.port)")),
                    ("remote", .string("\(pair.remote.address):\(pair.remote.port)")),
                    ("remoteType", .string(pair.remote.kind.token)),
                ])
            } ?? .null
            let cipher: JSONValue = dtlsCipherSuite.map { .string($0.openSSLName) } ?? .null
            let recordsDropped: [(String, JSONValue)] = DTLSRecordDrop.allCases.map { reason in
                (reason.rawValue, .number(dtls.recordsDropped[reason] ?? 0))
            }
            return .object([
                ("id", .string(id)),
                ("state", .string(state.rawValue)),
                ("endReason", endReason.map { .string($0) } ?? .null),
                ("ice", .string(iceState.rawValue)),
                ("pair", pair),
                ("dtls", .string(dtlsRole == .server ? "server" : "client")),
                ("srtp", srtpProfile.map { .string($0.description) } ?? .null),
                ("lobby", .string(lobby)),
                ("keyframeWaitMs", optional(keyframeWaitMillis)),
                ("rttMs", optional(rtp.roundTripMillis)),
                ("fractionLost", optional(rtp.fractionLost)),
                ("lossEstimate", .double((rtp.lossEstimate * 1000).rounded() / 1000)),
                ("packetsLost", .number(rtp.cumulativeLost)),
                ("jitterMs", optional(rtp.jitterMillis)),
                ("nacks", .number(rtp.nacksReceived)),
                ("nackedPackets", .number(rtp.packetsNacked)),
                ("retransmitted", .number(rtp.packetsRetransmitted)),
                ("retransmitSkipped", .number(rtp.retransmissionsSkipped)),
                ("retransmitDuplicates", .number(rtp.duplicateRetransmissions)),
                ("rtx", .bool(rtx)),
                ("plis", .number(rtp.plisReceived)),
                ("firs", .number(rtp.firsReceived)),
                ("rembs", .number(rtp.rembsReceived)),
                ("rembKbps", rtp.estimatedBitrate.map { .number($0 / 1000) } ?? .null),
                ("keyframeRequests", .number(keyframeRequests)),
                ("framesSent", .number(rtp.framesSent)),
                ("keyframesSent", .number(rtp.keyframesSent)),
                ("packetsSent", .number(rtp.packetsSent)),
                ("bytesSent", .number(bytesSent)),
                ("senderReports", .number(rtp.senderReportsSent)),
                ("receiverReports", .number(rtp.receiverReports)),
                ("datagramsReceived", .number(datagramsReceived)),
                ("rtcpReceived", .number(rtcpPackets)),
                ("ignoredDatagrams", .number(ignoredDatagrams)),
                ("droppedDatagrams", droppedDatagrams.json),
                ("dtlsCipher", cipher),
                ("dtlsRecordsPassed", .number(dtls.recordsPassed)),
                ("dtlsRecordsDropped", .object(recordsDropped)),
                ("srtpErrors", .number(srtpErrors)),
                ("sendsDropped", .number(sendsDropped)),
                ("pacerQueue", .number(pacerQueuedPackets)),
                ("pacerOverflows", .number(pacerOverflows)),
                ("historyPackets", .number(historyPackets)),
                ("historyBytes", .number(historyBytes)),
                ("lobbyDropped", .number(framesDroppedInLobby)),
                ("captureToSentMs", sendLatency.json),
                ("ageS", optional(ageSeconds)),
                ("connectMs", optional(connectMillis)),
            ])
        }
    }

    private func makeSnapshot() -> Snapshot {
        let now = MonotonicClock.nowMicros()
        return Snapshot(
            id: id, state: state, endReason: endReason, iceState: iceState, selectedPair: selectedPair, dtlsRole: negotiated.dtlsRole,
            srtpProfile: srtpSender?.profile, lobby: lobby.stateName, keyframeWaitMillis: lobby.lastWaitMicros.map { Double($0) / 1000 },
            framesDroppedInLobby: lobby.framesDropped, rtp: rtp.statistics, rtx: negotiated.rtxPayloadType != nil,
            datagramsReceived: counters.datagramsReceived, rtcpPackets: counters.rtcpPackets, droppedDatagrams: counters.dropped,
            dtls: dtls.statistics, dtlsCipherSuite: dtls.cipherSuite, srtpErrors: counters.srtpErrors, datagramsSent: counters.datagramsSent, bytesSent: counters.bytesSent,
            sendsDropped: counters.sendsDropped, keyframeRequests: counters.keyframeRequests, pacerQueuedPackets: pacer.count,
            pacerOverflows: pacer.overflows, historyPackets: rtp.historyPacketCount, historyBytes: rtp.historyByteCount, sendLatency: sendLatency, ageSeconds: Double(now - createdMicros) / 1_000_000,
            connectMillis: connectedMicros.map { Double($0 - createdMicros) / 1000 })
    }
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
