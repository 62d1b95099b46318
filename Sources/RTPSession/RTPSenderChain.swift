public import CongestionControl
public import RTP

/// One peer's outgoing VP8 stream as plain RTP/RTCP, sans-I/O: the sender features in a fixed order
/// around the pacer (pion's interceptor chain, as one value), each present when the answer negotiated it.
///
/// ```
///   send(frame) ─▶ KeyframeLobby ─▶ OutgoingVideoStream ─▶ PacerQueue ─▶ SendLatency
///   release(now) ◀── pacer (retransmissions first, at the paced rate) ── NACKResponder (history), playout delay,
///                    TransportWideCongestionControl.willSend (TWCC number) ──▶ RTP bytes
///   receiveRTCP ─▶ each packet: SenderReports (RTT, loss) ─▶ NACKResponder (RTX) ─▶ KeyframeRequests (PLI/FIR)
///                               ─▶ REMBReader ─▶ TransportWideCongestionControl (RTT, REMB ceiling) ─▶ BYE
///              └─▶ transport-cc feedback (RTPFB FMT 15), parsed only with congestion control ─▶ its controller
///   handleTimer ─▶ SenderReports (SR + SDES every second) ─▶ congestion control's tick ─▶ lobby (ask again)
///   each returns a SenderOutcome: keyframe wanted, REMB estimate, target rate, RTCP to send, goodbye
/// ```
///
/// - The owner (``PeerConnection``'s state machine) protects what ``release(nowMicros:reserving:)`` gives
///   with SRTP and sends it; it calls the chain again by ``nextDeadlineMicros(nowMicros:)``.
/// - The features are fields, not a list: they feed each other (the link the Sender Reports measured reaches
///   NACK and congestion control in the same compound; the target paces the chain, bounds repair and sizes
///   the probes; the playout delay goes on before the TWCC number so the controller counts the final size),
///   and `/stats` reads each one's counters by name. What was negotiated decides which are there:
///   ``nack`` (`nack`), ``congestion`` (`transport-wide-cc`), the playout delay (its extension).
/// - ``congestion``'s ``SenderOutcome/targetBitrate`` drives the pacer (``Configuration/pacingFactor`` × target).
/// - With ``Configuration/playoutDelayExtensionID`` every media packet leaves with the playout delay
///   MIN = MAX = 0 (``RTP/PlayoutDelay``), added before the TWCC number.
/// - Everything random is in ``Configuration``; the same inputs always give the same bytes.
public struct RTPSenderChain: Sendable {
    public struct Statistics: Sendable, Equatable {
        /// RTCP compounds that did not parse, plus feedback that was not for us or not negotiated.
        public var rtcpIgnored = 0
        /// Keyframes asked of the encoder (new viewer, PLI/FIR, pacer overflow, lobby retries).
        public var keyframeRequests = 0
        /// Packets the pacer let go that could not be serialized (none expected: the chain writes its header
        /// extensions in the one-byte form, RFC 8285 §4.2; counted and left out, never trapped on).
        public var unsendablePackets = 0
        /// Reference delta frames dropped because the pacer held more than ``Configuration/referenceQueueMicros``
        /// of the estimate (the last resort: the lobby then waits for a keyframe, asked of the shared encoder).
        public var framesThinned = 0
        /// Droppable (non-reference) frames left out because the pacer held more than
        /// ``Configuration/thinningQueueMicros`` of the estimate (no keyframe asked; sequence numbers and
        /// PictureIDs stay contiguous).
        public var framesThinnedDroppable = 0
        /// Reference delta frames queued while over ``Configuration/thinningQueueMicros`` (within the hard bound).
        public var referenceFramesOverBudget = 0
        /// Keyframe requests held back while droppable frames come and the pacer still held more than
        /// ``Configuration/thinningQueueMicros`` of the target (a keyframe then would only queue behind it, and
        /// every viewer of the shared encoder pays for it); asked again a retry interval later.
        public var keyframeRequestsDeferred = 0
        /// Probe clusters sent to their minimum, and those dropped unfinished after ``RTPSenderChain/probeTimeoutMicros``.
        public var probeClustersSent = 0
        public var probeClustersExpired = 0
        /// Probe padding: RTX copies of recent packets sent because no media was waiting, and their bytes.
        public var probePaddingPackets = 0
        public var probePaddingBytes = 0
        /// Media packets whose header extension could not take the playout delay (not the one-byte form).
        public var packetsWithoutPlayoutDelay = 0

        public init() {}
    }

    /// A packet the pacer let go: plain RTP bytes with room reserved for the SRTP trailer.
    public struct OutgoingPacket: Sendable, Equatable {
        public var bytes: [UInt8]
        public var kind: PacketKind
        /// For a frame's last media packet: the frame's capture time and its capture → sent latency, µs.
        public var frameLatency: (captureMicros: UInt64, latencyMicros: UInt64)?

        public static func == (a: OutgoingPacket, b: OutgoingPacket) -> Bool {
            a.bytes == b.bytes && a.kind == b.kind && a.frameLatency?.captureMicros == b.frameLatency?.captureMicros
                && a.frameLatency?.latencyMicros == b.frameLatency?.latencyMicros
        }
    }

    public let configuration: Configuration
    public internal(set) var statistics = Statistics()
    public private(set) var lobby: KeyframeLobby
    public private(set) var stream: OutgoingVideoStream
    /// Nil when NACK was not negotiated (NACKs are then ignored).
    public internal(set) var nack: NACKResponder?
    public private(set) var reports: SenderReports
    public private(set) var keyframes: KeyframeRequests
    public private(set) var remb: REMBReader
    public private(set) var latency = SendLatency()
    public internal(set) var pacer: PacerQueue
    /// Transport-wide congestion control (numbering, feedback, GCC) when negotiated.
    public internal(set) var congestion: TransportWideCongestionControl?
    /// Paces the congestion controller's probe clusters at their own rate (media first, RTX padding when no
    /// media waits: none without RTX); idle without congestion control.
    public internal(set) var probing = PacerBudget(configuration: .init(burstMicros: 1_000), targetBitsPerSecond: 1)
    /// A probe cluster not sent to its minimum this long after it was asked for is dropped, µs (the
    /// controller stops waiting for its result after as long).
    public static let probeTimeoutMicros: Int64 = 1_000_000
    /// Reference frames get the hard bound (``Configuration/referenceQueueMicros``) while a droppable frame
    /// arrived within this long, µs (2 s: the cadence sends one at least every 6 new frames; an idle screen
    /// sends refinements and repeats, all reference frames, and little else).
    public static let cadenceMemoryMicros: UInt64 = 2_000_000
    /// When the last droppable frame arrived, µs.
    var lastDroppableMicros: UInt64?
    private var sendsMedia = false
    /// The target last set (``setTargetBitrate(_:nowMicros:)``), bits per second; nil before.
    public private(set) var targetBitsPerSecond: UInt64?
    /// The playout-delay element (MIN = MAX = 0) written on every media packet, when negotiated.
    private var playoutDelay: RTPHeaderExtensionElement?

    /// - Throws: ``RTPSessionError/invalidConfiguration(_:)`` when the packet size leaves no room for VP8
    ///   data, the payload type is above 127, or the Sender Report interval is 0.
    public init(configuration: Configuration) throws(RTPSessionError) {
        self.configuration = configuration
        stream = try OutgoingVideoStream(
            ssrc: configuration.ssrc, payloadType: configuration.payloadType, timestampOffset: configuration.timestampOffset,
            initialSequenceNumber: configuration.initialSequenceNumber, initialPictureID: configuration.initialPictureID,
            maxPacketSize: configuration.maxPacketSize)
        if configuration.feedback.nack {
            nack = NACKResponder(configuration: .init(
                ssrc: configuration.ssrc, rtx: configuration.rtx, initialRTXSequenceNumber: configuration.initialRTXSequenceNumber,
                historyMinimumMilliseconds: configuration.historyMinimumMilliseconds, historyPackets: configuration.historyPackets,
                historyBytes: configuration.historyBytes, duplicatesAboveLoss: configuration.duplicateRetransmissionsAboveLoss))
        }
        reports = try SenderReports(
            ssrc: configuration.ssrc, cname: configuration.cname, intervalMicros: configuration.senderReportIntervalMicros,
            rtpClock: RTPTimestampMapper(clockRate: 90_000, offset: configuration.timestampOffset, originMicroseconds: 0))
        keyframes = KeyframeRequests(ssrc: configuration.ssrc)
        remb = REMBReader(ssrc: configuration.ssrc)
        lobby = KeyframeLobby(retryIntervalMicros: configuration.keyframeRetryMicros)
        pacer = PacerQueue(configuration: configuration.pacer)
        if let twcc = configuration.transportWideCC { congestion = try TransportWideCongestionControl(configuration: twcc) }
        if let id = configuration.playoutDelayExtensionID {
            guard (1...14).contains(id) else { throw .invalidConfiguration("playout-delay extension ID \(id) is not within 1…14") }
            playoutDelay = PlayoutDelay.element(id: id, limits: .immediate)
        }
    }

    // MARK: Events

    /// The transport is up (DTLS done, SRTP keyed): Sender Reports start; a stream that sends media waits in
    /// the lobby for a keyframe, asked for now.
    public mutating func start(nowMicros now: UInt64, sendsMedia: Bool) -> SenderOutcome {
        var outcome = SenderOutcome()
        self.sendsMedia = sendsMedia
        reports.start(nowMicros: now)
        if congestion != nil, let target = congestion?.start(nowMicros: now) {
            outcome.targetBitrate = target
            setTargetBitrate(target, nowMicros: now)
        }
        if sendsMedia {
            lobby.enter(nowMicros: now)
            outcome.requestKeyframe(.newViewer)
        }
        finish(&outcome, now)
        return outcome
    }

    /// The transport's path changed (an ICE restart connected a new pair): congestion control starts again
    /// from its start rate with its start probes (``TransportWideCongestionControl/routeChanged(nowMicros:)``),
    /// the pacer following; the outcome carries the new target. Nothing happens without congestion control.
    public mutating func routeChanged(nowMicros now: UInt64) -> SenderOutcome {
        var outcome = SenderOutcome()
        if let target = congestion?.routeChanged(nowMicros: now) {
            outcome.targetBitrate = target
            setTargetBitrate(target, nowMicros: now)
        }
        finish(&outcome, now)
        return outcome
    }

    /// Takes one encoded frame: dropped before ``start(nowMicros:sendsMedia:)`` and until the lobby's
    /// keyframe; else packetized, kept for NACKs and queued in the pacer. A pacer that overflows is emptied
    /// and the lobby waits for a keyframe again.
    ///
    /// Thinning (with congestion control, the lobby open, delta frames only; what the pacer holds besides
    /// keyframe packets, in µs of the target rate):
    /// - over ``Configuration/thinningQueueMicros``: a droppable frame (``OutgoingVideoFrame/isDroppable``) is
    ///   never packetized (``Statistics/framesThinnedDroppable``); nothing refers to it, so the receiver needs
    ///   no keyframe, and sequence numbers and PictureIDs continue without a gap;
    /// - a reference frame is queued up to ``Configuration/referenceQueueMicros``
    ///   (``Statistics/referenceFramesOverBudget``) while droppable frames come (one arrived within
    ///   ``cadenceMemoryMicros``: the shared encoder's cadence is on, and thinning them is what keeps the
    ///   queue short); past it, or past the budget when no droppable frame comes (a stream with nothing to
    ///   thin cleanly keeps today's 1 s), it is dropped and the lobby waits for a keyframe
    ///   (``Statistics/framesThinned``, keyframe reason `thinned`): the last resort.
    ///
    /// A keyframe, and a delta frame larger than ``Configuration/largeFrameMicros`` of the target, leave at
    /// ``Configuration/keyframePacingFactor`` × the target (the estimate) while the target is the path's
    /// (``targetIsPathLimited``), the rest at the pacing factor's 2.5 ×.
    /// - Throws: ``RTPSessionError/unsendableFrame(_:)`` for an empty or too large frame (nothing is queued).
    public mutating func send(_ frame: OutgoingVideoFrame, nowMicros now: UInt64) throws(RTPSessionError) -> SenderOutcome {
        var outcome = SenderOutcome()
        guard sendsMedia else { return outcome }
        if frame.isDroppable { lastDroppableMicros = now }
        if !frame.isKeyframe, lobby.isOpen, let held = queuedDeltaMicros, held > Double(configuration.thinningQueueMicros) {
            if frame.isDroppable {
                // Referenced by nothing: leave it out, never a growing queue, and no keyframe.
                statistics.framesThinnedDroppable += 1
                finish(&outcome, now)
                return outcome
            }
            let cadence = cadenceIsOn(nowMicros: now)
            let bound = cadence ? max(configuration.referenceQueueMicros, configuration.thinningQueueMicros) : configuration.thinningQueueMicros
            if held > Double(bound) {
                // Even reference frames exceed what the estimate carries: drop, and resume at the next keyframe.
                // With the cadence on (a slow viewer beside faster ones), the keyframe is asked for once the queue
                // has drained (``handleTimer(nowMicros:ntp:)``), not now: it would queue behind 2 s of frames.
                statistics.framesThinned += 1
                if lobby.reset(nowMicros: now) {
                    if cadence { statistics.keyframeRequestsDeferred += 1 } else { outcome.requestKeyframe(.thinned) }
                }
                finish(&outcome, now)
                return outcome
            }
            statistics.referenceFramesOverBudget += 1
        }
        guard lobby.admit(isKeyframe: frame.isKeyframe, nowMicros: now) else { return outcome }
        if frame.isKeyframe, let wait = lobby.lastWaitMicros, stream.statistics.keyframesSent == 0 {
            outcome.firstKeyframeWaitMicros = wait
        }
        let packetized = try stream.packetize(frame, nowMicros: now)
        let slow = (frame.isKeyframe || isLargeFrame(bytes: frame.bytes.count)) && targetIsPathLimited
        if pacer.enqueue(media: packetized.packets, keyframe: frame.isKeyframe, slow: slow) {
            latency.packetized(packetized)
        } else {
            outcome.pacerOverflowed = true
            if lobby.reset(nowMicros: now) { outcome.requestKeyframe(.pacerOverflow) }
        }
        finish(&outcome, now)
        return outcome
    }

    /// Reads the peer's RTCP (one unprotected compound) at `now` (monotonic µs) and wall-clock `arrival`:
    /// every feature sees every packet, in order. Retransmissions go into the pacer, ahead of media.
    public mutating func receiveRTCP(_ compound: [UInt8], nowMicros now: UInt64, arrival: NTPTimestamp) -> SenderOutcome {
        let packets: [RTCPPacket]
        do {
            packets = try RTCPPacket.parseCompound(compound)
        } catch {
            statistics.rtcpIgnored += 1
            return SenderOutcome()
        }
        return receive(packets, compound: compound, nowMicros: now, arrival: arrival)
    }

    /// ``receiveRTCP(_:nowMicros:arrival:)`` for packets already parsed; `compound` is their bytes, where
    /// ``congestion``'s transport-cc feedback is read from (RTCPPacket does not carry it).
    public mutating func receive(
        _ packets: [RTCPPacket], compound: [UInt8]? = nil, nowMicros now: UInt64, arrival: NTPTimestamp
    ) -> SenderOutcome {
        var context = FeedbackContext(nowMicros: now, arrival: arrival, link: reports.statistics.link)
        for packet in packets {
            reports.receive(packet, context: &context)
            if nack != nil {
                nack!.receive(packet, context: &context)
            } else if case .nack = packet {
                context.ignored += 1
            }
            keyframes.receive(packet, context: &context)
            remb.receive(packet, context: &context)
            congestion?.receive(packet, context: &context)
            if case .goodbye = packet { context.outcome.goodbye = true }
        }
        if congestion != nil, let compound {
            do {
                for feedback in try RTCPTransportFeedback.packets(inCompound: compound) {
                    congestion?.receive(transportFeedback: feedback, context: &context)
                }
            } catch {
                context.ignored += 1  // a malformed transport-cc packet; the compound's others have acted
            }
        }
        statistics.rtcpIgnored += context.ignored
        for packet in context.retransmissions { _ = pacer.enqueue(retransmission: packet) }
        if let target = context.outcome.targetBitrate { setTargetBitrate(target, nowMicros: now) }
        // Without congestion control the receiver's REMB bounds repair (with it, the target does).
        if congestion == nil, let remb = context.outcome.estimatedBitrate { nack?.setRetransmissionRate(bitsPerSecond: remb) }
        finish(&context.outcome, now)
        return context.outcome
    }

    /// Runs what is due by `now`: the Sender Report (at wall-clock `ntp`), congestion control's tick, the
    /// lobby's next keyframe request.
    public mutating func handleTimer(nowMicros now: UInt64, ntp: NTPTimestamp) -> SenderOutcome {
        var context = TimerContext(nowMicros: now, ntp: ntp, stream: stream.statistics)
        reports.handleTimer(context: &context)
        congestion?.handleTimer(context: &context)
        if lobby.keyframeRequestDue(nowMicros: now) {
            if cadenceIsOn(nowMicros: now), let queued = queuedMicros, queued > Double(configuration.thinningQueueMicros) {
                statistics.keyframeRequestsDeferred += 1
                lobby.markRequested(nowMicros: now)  // look again a retry interval later
            } else {
                context.outcome.requestKeyframe(.stillWaiting)
            }
        }
        if let target = context.outcome.targetBitrate { setTargetBitrate(target, nowMicros: now) }
        finish(&context.outcome, now)
        return context.outcome
    }

    /// The packets whose turn has come by `now`, in sending order, serialized with `reserving` bytes of
    /// spare capacity (the SRTP trailer), each numbered by ``congestion`` as it leaves (when negotiated).
    /// While a probe cluster is active its packets go first, at the cluster's rate.
    public mutating func release(nowMicros now: UInt64, reserving trailer: Int = 0) -> [OutgoingPacket] {
        var out: [OutgoingPacket] = []
        if probing.activeProbeCluster != nil {
            releaseProbe(nowMicros: now, reserving: trailer, into: &out)
            // A cluster under way paces everything at its rate; the media pacer resumes when it is done.
            if probing.activeProbeCluster != nil { return out }
        }
        let released = pacer.release(nowMicros: now)
        guard !released.isEmpty else { return out }
        out.reserveCapacity(out.count + released.count)
        for packet in released { emit(packet, probeClusterID: nil, nowMicros: now, reserving: trailer, into: &out) }
        return out
    }

    /// Numbers, serializes and measures one packet leaving now.
    mutating func emit(
        _ packet: PacerQueue.Packet, probeClusterID: Int?, nowMicros now: UInt64, reserving trailer: Int, into out: inout [OutgoingPacket]
    ) {
        var packet = packet
        // Held for NACKs from the moment it leaves (without the extensions added below: a retransmission gets its own).
        if packet.kind == .media { nack?.sent(packet.rtp, nowMicros: now) }
        if let playoutDelay, packet.kind == .media {
            // Before the TWCC number, so congestion control counts the packet's final size.
            do { packet.rtp.headerExtension = try RTPHeaderExtension.appendingOneByte(playoutDelay, to: packet.rtp.headerExtension) } catch {
                statistics.packetsWithoutPlayoutDelay += 1
            }
        }
        congestion?.willSend(&packet.rtp, kind: packet.kind, nowMicros: now, probeClusterID: probeClusterID)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(packet.rtp.serializedSize + trailer)
        do { try packet.rtp.serialize(into: &bytes) } catch {
            statistics.unsendablePackets += 1
            return
        }
        let measured = packet.kind == .media ? latency.sent(packet.rtp, sentMicros: now) : nil
        out.append(OutgoingPacket(bytes: bytes, kind: packet.kind, frameLatency: measured))
    }

    /// Paces at ``Configuration/pacingFactor`` × `bitsPerSecond` from `now` (a congestion controller's
    /// target; the pacer keeps its 100 kbit/s floor), keyframe packets at ``Configuration/keyframePacingFactor``
    /// × `bitsPerSecond`: a keyframe, the largest burst a screen makes, never leaves faster than the estimate.
    /// Retransmissions are bounded to `bitsPerSecond` (``NACKResponder/setRetransmissionRate(bitsPerSecond:)``).
    public mutating func setTargetBitrate(_ bitsPerSecond: UInt64, nowMicros now: UInt64) {
        targetBitsPerSecond = bitsPerSecond
        nack?.setRetransmissionRate(bitsPerSecond: bitsPerSecond)
        func scaled(_ factor: Double) -> Int { Int(min(Double(bitsPerSecond) * factor, Double(Int.max / 2))) }
        pacer.setRate(bitsPerSecond: scaled(configuration.pacingFactor), keyframeBitsPerSecond: scaled(configuration.keyframePacingFactor), nowMicros: now)
    }

    /// An SFU's cap on this peer (a ceiling for congestion control beside REMB), bits per second; nil
    /// removes it. Returns the new target when it changed (the pacer already follows it).
    public mutating func setCap(bitsPerSecond: UInt64?, nowMicros now: UInt64) -> UInt64? {
        guard congestion != nil, let target = congestion!.setCap(bitsPerSecond: bitsPerSecond, nowMicros: now) else { return nil }
        setTargetBitrate(target, nowMicros: now)
        return target
    }

    /// The earliest of: the pacer's next packet, the next Sender Report, the lobby's next keyframe request,
    /// congestion control's next tick; nil when nothing is scheduled.
    public func nextDeadlineMicros(nowMicros now: UInt64) -> UInt64? {
        let features = RTPSenderChain.earlier(reports.nextDeadlineMicros, congestion?.nextDeadlineMicros)
        // While a probe cluster is under way it paces everything (the media pacer waits for it).
        let sending = probing.activeProbeCluster != nil ? probeDeadlineMicros(nowMicros: now) : pacer.nextSendMicros(nowMicros: now)
        return RTPSenderChain.earlier(RTPSenderChain.earlier(sending, lobby.nextRequestMicros), features)
    }

    /// The earlier of two optional times, without an array (this runs on every pacer tick).
    public static func earlier(_ a: UInt64?, _ b: UInt64?) -> UInt64? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    /// The peer is gone: drops what waits in the pacer and stops reporting.
    public mutating func stop() {
        pacer.removeAll()
        probing.cancelProbes()
        reports.stop()
        sendsMedia = false
    }

    /// Takes the controller's new probe clusters (a stream without media sends none). A keyframe request
    /// marks the lobby (it asks again only after its retry interval) and is counted.
    private mutating func finish(_ outcome: inout SenderOutcome, _ now: UInt64) {
        if congestion != nil, let probes = congestion?.takeProbes(), !probes.isEmpty, sendsMedia { probing.startProbes(probes) }
        guard outcome.keyframeRequest != nil else { return }
        statistics.keyframeRequests += 1
        lobby.markRequested(nowMicros: now)
    }
}
