import DataChannel
public import DTLS
public import ICE
import RTP
public import RTPSession
public import ScreencastSupport
public import SDP
public import SRTP

/// One viewer's connection as a sans-I/O state machine: events in (a datagram, an encoded frame, the
/// timer, an ICE event, close), ``Output`` out (datagrams to send, events for the owner, when to call
/// ``handleTimer(nowMicros:wallClock:)`` next). No sockets, threads or clocks: times and the wall clock's
/// NTP reading are arguments, so a test drives two ends through an in-memory link.
///
/// ```
///            start ── DTLS (client: ClientHello) ─▶ connecting ── handshake done, keys ─▶ connected
///                                                      │                                    │
///   datagram ─ RFC 7983 ─▶ DTLS ─▶ DTLSEndpoint        │   SRTP keyed from the DTLS export (RFC 5764 §4.2)
///                        └▶ RTCP ─▶ SRTCP unprotect ─▶ RTPSenderChain.receiveRTCP (NACK/RTX, PLI, REMB, …)
///   frame ─▶ RTPSenderChain.send ─▶ pacer ─▶ release ─▶ SRTP protect ─▶ datagrams
///   timer ─▶ DTLS retransmission / handshake limit, pacer, Sender Reports, lobby, consent
///   ended (closed or failed) ◀── close · ICE expired · consent expired · DTLS failure or close_notify · RTCP BYE
/// ```
///
/// Consent to send (RFC 7675) is kept here (``ConsentFreshness``): renewed by authenticated SRTCP and DTLS
/// from the peer and by ICE checks that succeed; after 30 s without one nothing more is sent
/// (``PeerConnection/Event/iceConnectionFailed`` tells the owner, who may restart ICE), and after the grace
/// period the peer ends.
///
/// Nothing unauthenticated from the network ends it: a datagram of no known kind (RFC 7983 §7), RTP (a
/// viewer sends none), DTLS records that cannot be genuine or fail OpenSSL's authentication, SRTCP that
/// libsrtp refuses (tag, replay, too short), RTCP that does not parse: each is counted in
/// ``DroppedDatagrams`` and dropped. Only authenticated input (a close_notify or fatal alert inside DTLS,
/// an RTCP BYE inside SRTCP) ends it.
///
/// It owns the DTLS endpoint and the SRTP contexts (reference types over OpenSSL and libsrtp), so it is
/// not copyable: one owner drives it, one event at a time.
public struct PeerConnectionStateMachine: ~Copyable {
    /// What one event asks the owner to do.
    public struct Output: Sendable {
        /// Datagrams for the peer, in order (DTLS, SRTP, SRTCP).
        public var datagrams: [[UInt8]] = []
        /// Events for the owner, in order.
        public var events: [PeerConnection.Event] = []
        /// When ``handleTimer(nowMicros:wallClock:)`` is next due (monotonic µs); nil once ended or with
        /// nothing scheduled.
        public var deadlineMicros: UInt64?

        public init() {}
    }

    /// Counters of what came and went, for `/stats`.
    public struct Counters: Sendable, Equatable {
        public var datagramsReceived = 0
        public var dtlsDatagrams = 0
        /// RTCP compound packets that authenticated and parsed.
        public var rtcpPackets = 0
        /// Datagrams from the peer dropped, by why.
        public var dropped = DroppedDatagrams()
        /// Our own SRTP/SRTCP protect failures (the peer's packets that fail are in ``dropped``).
        public var srtpErrors = 0
        /// Datagrams and frames not sent because consent had lapsed (RFC 7675 §5.1).
        public var heldByConsent = 0
        /// SCTP packets DTLS refused to write (our side; SCTP retransmits them).
        public var dataChannelWriteErrors = 0
        /// Datagrams handed to the owner to send, and their bytes (SRTP, SRTCP and DTLS).
        public var datagramsOut = 0
        public var bytesOut = 0

        public init() {}
    }

    enum Phase {
        case connecting
        case connected(sender: SRTPSender, receiver: SRTPReceiver)
        case ended(reason: String, failed: Bool)
    }

    /// The WHEP session id (for logs).
    public let id: String
    /// What the answer agreed.
    public let negotiated: NegotiatedVideo
    public internal(set) var counters = Counters()
    /// ICE as last reported (for `/stats`).
    public private(set) var iceState: ICEAgent.State = .new
    public private(set) var selectedPair: ICEAgent.CandidatePair?
    /// Monotonic µs when the machine was made and when DTLS finished.
    public let createdMicros: UInt64
    public internal(set) var connectedMicros: UInt64?
    /// ICE restarts and their hold on media (DTLS and SRTP stay as they are).
    public private(set) var restartGate = ICERestartGate()
    /// Consent to send (RFC 7675), from the moment DTLS finished; nil before.
    public internal(set) var consent: ConsentFreshness?
    let consentLimitMicros: UInt64
    let consentGraceMicros: UInt64
    let dtls: DTLSEndpoint
    var rtp: RTPSenderChain
    /// The Opus stream when the answer accepted audio (sent ahead of the video's pacer, same SRTP context).
    var audio: OutgoingAudioStream?
    var phase: Phase = .connecting
    let logger: Logger
    /// The data channels when the answer accepted them (``SDP/NegotiatedDataChannel``); started once DTLS is up.
    let dataChannels: DataChannelSession?

    /// - Parameters:
    ///   - negotiated: what the answer agreed (DTLS role, the peer's fingerprints, payload types, feedback).
    ///   - certificate: our DTLS identity.
    ///   - sender: the sender chain's configuration (SSRCs, random starting points, pacing, timers).
    ///   - audio: the Opus stream when the answer accepted audio (``PeerAnswer/audio``); nil: video only.
    ///   - dtlsHandshakeTimeoutMicros: a handshake not done this long after ``start(nowMicros:)`` fails.
    ///   - consentLimitMicros: consent lapses after this long without an authenticated datagram (RFC 7675 §5.1).
    ///   - consentGraceMicros: a lapse this long ends the peer (the owner's time to restart ICE).
    ///   - nowMicros: now, monotonic µs (the connection's age counts from here).
    ///   - dataChannelWake: called on usrsctp's thread when the data channels have something for
    ///     ``pollDataChannels(nowMicros:)`` (the owner schedules that call on its queue).
    /// - Throws: ``PeerConnectionError/dtls(_:)`` when OpenSSL cannot be set up,
    ///   ``PeerConnectionError/invalidConfiguration(_:)`` for a sender the chain refuses or an SCTP socket
    ///   usrsctp refuses.
    public init(
        id: String, negotiated: NegotiatedVideo, certificate: DTLSCertificate, sender: RTPSenderChain.Configuration,
        audio: OutgoingAudioStream? = nil, dtlsHandshakeTimeoutMicros: UInt64 = 20_000_000,
        consentLimitMicros: UInt64 = ConsentFreshness.rfc7675LimitMicros, consentGraceMicros: UInt64 = 5_000_000,
        logger: Logger, nowMicros now: UInt64, dataChannelWake: @escaping @Sendable () -> Void = {}
    ) throws(PeerConnectionError) {
        var dtlsConfiguration = DTLSConfiguration(negotiated: negotiated, certificate: certificate)
        dtlsConfiguration.handshakeTimeoutMicros = dtlsHandshakeTimeoutMicros
        let dtls: DTLSEndpoint
        do { dtls = try DTLSEndpoint(configuration: dtlsConfiguration) } catch { throw .dtls(error) }
        let rtp: RTPSenderChain
        do { rtp = try RTPSenderChain(configuration: sender) } catch { throw .invalidConfiguration("RTP sender: \(error)") }
        if let channel = negotiated.dataChannel {
            do {
                dataChannels = try DataChannelSession(
                    parity: negotiated.dtlsRole == .client ? .even : .odd, remoteMaxMessageSize: channel.remoteMaxMessageSize,
                    wake: dataChannelWake)
            } catch { throw .invalidConfiguration("data channels: \(error)") }
            dtls.keepsApplicationData = true
        } else {
            dataChannels = nil
        }
        self.id = id
        self.negotiated = negotiated
        self.logger = logger
        createdMicros = now
        self.dtls = dtls
        self.rtp = rtp
        self.audio = negotiated.audio == nil ? nil : audio
        self.consentLimitMicros = consentLimitMicros
        self.consentGraceMicros = consentGraceMicros
    }

    /// Where the connection is.
    public var state: PeerConnection.State {
        switch phase {
        case .connecting: .connecting
        case .connected: .connected
        case .ended(_, let failed): failed ? .failed : .closed
        }
    }

    /// Why it ended (nil while it has not).
    public var endReason: String? {
        if case .ended(let reason, _) = phase { return reason }
        return nil
    }

    /// The negotiated SRTP profile once connected.
    public var srtpProfile: SRTPProtectionProfile? { dtls.keyingMaterial?.profile }

    /// What the DTLS endpoint took and dropped, records by reason.
    public var dtlsStatistics: DTLSEndpoint.Statistics { dtls.statistics }

    /// The DTLS cipher suite, once chosen.
    public var dtlsCipherSuite: DTLSCipherSuite? { dtls.cipherSuite }

    /// The sender chain's counters.
    public var senderReport: RTPSenderChain.Report { rtp.report }

    var isEnded: Bool {
        if case .ended = phase { return true }
        return false
    }

    // MARK: Events

    /// Starts DTLS (the client sends its ClientHello; the server waits) and the handshake's time limit.
    public mutating func start(nowMicros now: UInt64) -> Output {
        var output = Output()
        stepDTLS(&output, now) { dtls throws(DTLSError) in try dtls.start(nowMicros: now) }
        return finish(output, now)
    }

    /// One datagram from the peer (after ICE), classified by its first byte (RFC 7983 §7): DTLS goes to the
    /// endpoint, SRTCP is unprotected and read by the sender chain; anything else is counted and dropped.
    /// `wallClock` is now on the wall clock (for RTT, RFC 3550 §6.4.1).
    public mutating func receive(_ datagram: [UInt8], nowMicros now: UInt64, wallClock: NTPTimestamp) -> Output {
        var output = Output()
        guard !isEnded else { return output }
        counters.datagramsReceived += 1
        switch DatagramKind.classify(datagram) {
        case .dtls:
            counters.dtlsDatagrams += 1
            let passed = dtls.statistics.recordsPassed
            if stepDTLS(&output, now, { dtls throws(DTLSError) in try dtls.receive(datagram, nowMicros: now) }) {
                if dtls.statistics.recordsPassed == passed { counters.dropped.dtls += 1 } else { renewConsent(&output, now) }
                checkDTLS(&output, now)
                receiveSCTP(&output, now)
            }
        case .rtcp:
            receiveRTCP(datagram, &output, now, wallClock)
        case .rtp: counters.dropped.rtp += 1
        case .stun: counters.dropped.stun += 1
        case .zrtp: counters.dropped.zrtp += 1
        case .turnChannel: counters.dropped.turnChannel += 1
        case .unknown: counters.dropped.unknown += 1
        }
        return finish(output, now)
    }

    /// An encoded frame for the peer: dropped unless connected (and, in the chain, until the lobby's keyframe).
    public mutating func send(_ frame: OutgoingVideoFrame, nowMicros now: UInt64) -> Output {
        var output = Output()
        guard case .connected = phase, negotiated.direction == .sendonly else { return output }
        guard consent?.phase == .fresh else {
            counters.heldByConsent += 1
            return finish(output, now)
        }
        guard restartGate.admits(keyframe: frame.isKeyframe) else { return finish(output, now) }
        do {
            let outcome = try rtp.send(frame, nowMicros: now)
            if let wait = outcome.firstKeyframeWaitMicros {
                logger.info("first keyframe to peer", ["peer": id, "waited.ms": wait / 1000, "bytes": frame.bytes.count])
            }
            apply(outcome, &output, now)
        } catch {
            logger.warning("frame not sent", ["peer": id, "error": error])
        }
        return finish(output, now)
    }

    /// An Opus packet for the peer: dropped unless connected, receiving audio and with fresh consent; sent at
    /// once (ahead of the video's pacer), numbered by transport-wide CC with the video. DTX packets are not sent.
    public mutating func sendAudio(_ frame: OutgoingAudioFrame, nowMicros now: UInt64) -> Output {
        var output = Output()
        guard case .connected(let sender, _) = phase, audio != nil, negotiated.audio?.direction == .sendonly else { return output }
        guard consent?.phase == .fresh else {
            counters.heldByConsent += 1
            return finish(output, now)
        }
        guard let packet = audio!.packetize(frame),
              var bytes = rtp.emitAudio(packet, nowMicros: now, reserving: sender.profile.rtpOverhead)
        else { return finish(output, now) }
        do {
            try sender.protectRTP(&bytes)
            output.datagrams.append(bytes)
        } catch {
            counters.srtpErrors += 1
        }
        return finish(output, now)
    }

    /// The Opus stream's counters (nil without audio).
    public var audioStatistics: OutgoingAudioStream.Statistics? { audio?.statistics }

    /// Runs what is due by `now`: DTLS retransmission and the handshake's limit, the pacer, Sender Reports
    /// (at wall-clock `wallClock`), the lobby's keyframe retries.
    public mutating func handleTimer(nowMicros now: UInt64, wallClock: NTPTimestamp) -> Output {
        var output = Output()
        guard !isEnded else { return output }
        if let due = dtls.nextTimeout, now >= due {
            guard stepDTLS(&output, now, { dtls throws(DTLSError) in try dtls.handleTimeout(nowMicros: now) }) else {
                return finish(output, now)
            }
            checkDTLS(&output, now)
        }
        if case .connected(let sender, _) = phase {
            apply(rtp.handleTimer(nowMicros: now, ntp: wallClock), &output, now)
            // The audio's report from the same `now` ↔ `wallClock` as the video's: one NTP clock for both (lip sync).
            if var report = audio?.senderReportIfDue(nowMicros: now, ntp: wallClock) {
                do {
                    try sender.protectRTCP(&report)
                    output.datagrams.append(report)
                } catch {
                    counters.srtpErrors += 1
                }
            }
        }
        return finish(output, now)
    }

    /// What the ICE agent reported: its state and selected pair (for `/stats`), or that it gave up on the
    /// peer, which ends the connection.
    public mutating func handle(_ event: ICEAgent.Event, nowMicros now: UInt64) -> Output {
        var output = Output()
        guard !isEnded else { return output }
        switch event {
        case .stateChanged(let state):
            let was = iceState
            iceState = state
            logger.debug("ice state", ["peer": id, "state": state.rawValue])
            if state == .failed, was != .failed, case .connected = phase { output.events.append(.iceConnectionFailed) }
            if state == .ready {
                renewConsent(&output, now)
                restartPathUp(&output, now)
            }
        case .selectedPairChanged(let pair):
            selectedPair = pair
            renewConsent(&output, now)
            restartPathUp(&output, now)
            logger.info("ice pair selected", [
                "peer": id, "local": "\(pair.local.address):\(pair.local.port)",
                "remote": "\(pair.remote.address):\(pair.remote.port)", "type": pair.remote.kind.token,
            ])
        case .expired(let expiry):
            end("ICE \(expiry.rawValue)", failed: true, &output)
        case .localCandidate, .gatheringDone, .remoteCandidateLearned: break
        }
        return finish(output, now)
    }

    /// An ICE restart began (``ICEAgent/restart()`` made new credentials): frames are held until the new
    /// path is up, then a keyframe goes first (``ICERestartGate``). DTLS and SRTP are kept.
    public mutating func iceRestarted(nowMicros now: UInt64) -> Output {
        guard !isEnded else { return Output() }
        restartGate.restarted()
        consent?.restarted(nowMicros: now)
        logger.info("ice restart", ["peer": id, "restart": restartGate.restarts, "ice": iceState.rawValue])
        return finish(Output(), now)
    }

    /// The restarted path works: ask for the keyframe that must go first; congestion control starts again
    /// on the new path (``RTPSenderChain/routeChanged(nowMicros:)``: an outage has driven its target to the
    /// floor, and the old path's measurements say nothing of the new one).
    private mutating func restartPathUp(_ output: inout Output, _ now: UInt64) {
        guard restartGate.pathUp() else { return }
        logger.info("ice restart connected", ["peer": id, "restart": restartGate.restarts])
        output.events.append(.keyframeNeeded(reason: "ice restart"))
        if case .connected = phase { apply(rtp.routeChanged(nowMicros: now), &output, now) }
    }

    /// Ends the connection: close_notify to the peer when DTLS is up, the pacer emptied, ``PeerConnection/Event/closed(reason:failed:)``
    /// once. Idempotent.
    public mutating func close(reason: String, failed: Bool = false, nowMicros now: UInt64) -> Output {
        var output = Output()
        end(reason, failed: failed, &output)
        return finish(output, now)
    }

}
