public import CongestionControl
public import RTP

/// Transport-wide congestion control for one peer (draft-holmer-rmcat-transport-wide-cc-extensions-01 with
/// sender-side GCC, draft-ietf-rmcat-gcc-02): numbers every RTP packet as it leaves the pacer and reads the
/// peer's TWCC feedback into one ``CongestionControl/SendSideCongestionController``.
///
/// ```
///   pacer release ─▶ willSend: one-byte extension <id> = next transport-wide number (media and RTX, one counter)
///                              controller.onPacketSent(number, bytes, now)
///   RTCP RR/SR  ─▶ RTT (the Sender Reports feature measured it) ─▶ controller.onRoundTripTime
///   REMB / SFU cap ─▶ controller.setCeiling                    TWCC feedback ─▶ controller.onTransportFeedback
///   timer (every tickIntervalMicros) ─▶ controller.onTick      each changed target ─▶ outcome.targetBitrate
/// ```
///
/// Times are the chain's monotonic µs (an injected clock in tests). Probe clusters the controller asks for
/// (at start, after recovery, periodically while below the maximum) wait in ``takeProbes()`` for the chain,
/// which sends them at their rate (``RTPSenderChain`` with a ``CongestionControl/PacerBudget``) and reports
/// each packet's cluster in ``willSend(_:kind:nowMicros:probeClusterID:)``.
public struct TransportWideCongestionControl: RTPSenderFeature {
    public struct Configuration: Sendable, Equatable {
        /// The negotiated one-byte extension ID, 1…14 (RFC 8285 §4.2).
        public var extensionID: UInt8
        /// The first transport-wide sequence number.
        public var initialSequenceNumber: UInt16
        /// The estimator's limits and start rate, bits per second, and its probing (``CongestionControl/SendSideCongestionController/Configuration/screenSender`` by default).
        public var controller: SendSideCongestionController.Configuration
        /// How often the controller's timers run, µs (25–100 ms; 50 ms by default).
        public var tickIntervalMicros: UInt64

        public init(
            extensionID: UInt8, initialSequenceNumber: UInt16 = 1,
            controller: SendSideCongestionController.Configuration = .screenSender, tickIntervalMicros: UInt64 = 50_000
        ) {
            self.extensionID = extensionID
            self.initialSequenceNumber = initialSequenceNumber
            self.controller = controller
            self.tickIntervalMicros = tickIntervalMicros
        }
    }

    public struct Statistics: Sendable, Equatable {
        /// RTP packets given a transport-wide number (media and retransmissions).
        public var packetsNumbered = 0
        /// TWCC feedback packets read (they are transport-wide: any media SSRC counts).
        public var feedbackPackets = 0
        /// Probe clusters the controller asked for (handed to the chain by ``TransportWideCongestionControl/takeProbes()``).
        public var probeClustersRequested = 0
        /// Packets sent as part of a probe cluster (media or padding).
        public var probePackets = 0
        /// Packets whose header extension could not carry the number (another extension in the two-byte form).
        public var unnumberedPackets = 0

        public init() {}
    }

    public let configuration: Configuration
    public private(set) var statistics = Statistics()
    public private(set) var controller: SendSideCongestionController
    private var sequencer: TransportWideSequencer
    private var nextTickMicros: UInt64?
    private var lastRoundTripMillis: Double?
    private var lastCeiling: UInt64?
    /// The ceiling from REMB and the one set by the owner (an SFU's cap); the lower one applies.
    private var rembCeiling: UInt64?
    private var capCeiling: UInt64?
    /// Clusters asked for and not yet taken by the chain.
    private var pendingProbes: [ProbeCluster] = []

    /// - Throws: ``RTPSessionError/invalidConfiguration(_:)`` for an ID outside 1…14, a tick interval of 0, or
    ///   limits the controller refuses.
    public init(configuration: Configuration) throws(RTPSessionError) {
        guard (1...14).contains(configuration.extensionID) else {
            throw .invalidConfiguration("transport-wide-cc extension ID \(configuration.extensionID) is not within 1…14")
        }
        guard configuration.tickIntervalMicros > 0 else { throw .invalidConfiguration("congestion tick interval is 0") }
        do { controller = try SendSideCongestionController(configuration: configuration.controller) } catch {
            throw .invalidConfiguration("congestion control: \(error)")
        }
        self.configuration = configuration
        sequencer = TransportWideSequencer(first: configuration.initialSequenceNumber)
    }

    /// The controller's state and the pacing rate, for `/stats`.
    public var stats: CongestionControlStats { controller.stats }

    /// Starts the controller at `now`: returns its start target, bits per second.
    public mutating func start(nowMicros now: UInt64) -> UInt64 {
        let update = controller.start(atMicros: Int64(now))
        collect(update.probes)
        nextTickMicros = now &+ configuration.tickIntervalMicros
        return UInt64(update.targetBitsPerSecond)
    }

    /// The transport's path changed (an ICE restart connected): the controller starts again
    /// (``CongestionControl/SendSideCongestionController/onRouteChange(atMicros:)``) and its start probes
    /// wait in ``takeProbes()``. Returns the new target, bits per second.
    public mutating func routeChanged(nowMicros now: UInt64) -> UInt64 {
        let update = controller.onRouteChange(atMicros: Int64(now))
        collect(update.probes)
        return UInt64(update.targetBitsPerSecond)
    }

    /// The probe clusters asked for since the last call, oldest first.
    public mutating func takeProbes() -> [ProbeCluster] {
        defer { pendingProbes.removeAll() }
        return pendingProbes
    }

    public mutating func willSend(_ packet: inout RTPPacket, kind: PacketKind, nowMicros now: UInt64) {
        willSend(&packet, kind: kind, nowMicros: now, probeClusterID: nil)
    }

    /// Numbers `packet` and records it as sent, as part of probe cluster `probeClusterID` if not nil (the
    /// controller's probe estimator then measures the cluster from its feedback).
    public mutating func willSend(_ packet: inout RTPPacket, kind: PacketKind, nowMicros now: UInt64, probeClusterID: Int?) {
        let number = sequencer.next()
        let id = configuration.extensionID
        if packet.headerExtension == nil {
            // The usual case, without parsing: one element (ID, L = 1, the number) and a padding byte (RFC 8285 §4.2).
            packet.headerExtension = RTPHeaderExtension(
                profile: RTPHeaderExtension.oneByteProfile, data: [id << 4 | 1, UInt8(number >> 8), UInt8(truncatingIfNeeded: number), 0][...])
        } else { do {
            let element = TransportWideSequenceNumber.element(id: id, sequenceNumber: number)
            if let block = packet.headerExtension, block.isOneByte, try block.element(id: id) == nil {
                // Another one-byte element is there (the playout delay): added after it, one allocation.
                packet.headerExtension = try RTPHeaderExtension.appendingOneByte(element, to: block)
            } else {
                var elements = try packet.headerExtension?.elements() ?? []
                elements.removeAll { $0.id == configuration.extensionID }
                elements.append(element)
                packet.headerExtension = try RTPHeaderExtension(elements: elements)
            }
        } catch {
            statistics.unnumberedPackets += 1
            return
        } }
        statistics.packetsNumbered += 1
        if probeClusterID != nil { statistics.probePackets += 1 }
        controller.onPacketSent(sequenceNumber: number, sizeBytes: packet.serializedSize, atMicros: Int64(now), probeClusterID: probeClusterID)
    }

    /// RTT from a Receiver/Sender Report block (measured by ``SenderReports`` before this feature sees the
    /// packet) and REMB (read by ``REMBReader``) as a ceiling.
    public mutating func receive(_ packet: RTCPPacket, context: inout FeedbackContext) {
        if let rtt = context.link.roundTripMillis, rtt != lastRoundTripMillis {
            lastRoundTripMillis = rtt
            controller.onRoundTripTime(micros: Int64((rtt * 1000).rounded()))
        }
        if case .estimatedBitrate = packet, let remb = context.outcome.estimatedBitrate {
            rembCeiling = remb
            applyCeiling(&context.outcome, context.nowMicros)
        }
    }

    /// One TWCC feedback packet (RTPFB FMT 15) from the peer.
    public mutating func receive(transportFeedback feedback: RTCPTransportFeedback, context: inout FeedbackContext) {
        statistics.feedbackPackets += 1
        let update = controller.onTransportFeedback(feedback, atMicros: Int64(context.nowMicros))
        apply(update, &context.outcome)
    }

    /// An SFU's cap (or any ceiling the owner knows), bits per second; nil removes it. REMB stays a ceiling too.
    public mutating func setCap(bitsPerSecond: UInt64?, nowMicros now: UInt64) -> UInt64? {
        capCeiling = bitsPerSecond
        var outcome = SenderOutcome()
        applyCeiling(&outcome, now)
        return outcome.targetBitrate
    }

    public mutating func handleTimer(context: inout TimerContext) {
        guard let due = nextTickMicros, context.nowMicros >= due else { return }
        nextTickMicros = context.nowMicros &+ configuration.tickIntervalMicros
        apply(controller.onTick(atMicros: Int64(context.nowMicros)), &context.outcome)
    }

    public var nextDeadlineMicros: UInt64? { nextTickMicros }

    private mutating func applyCeiling(_ outcome: inout SenderOutcome, _ now: UInt64) {
        let ceiling = [rembCeiling, capCeiling].compactMap { $0 }.min()
        guard ceiling != lastCeiling else { return }
        lastCeiling = ceiling
        apply(controller.setCeiling(bitsPerSecond: ceiling.map { Int(min($0, UInt64(Int.max))) }, atMicros: Int64(now)), &outcome)
    }

    private mutating func collect(_ probes: [ProbeCluster]) {
        statistics.probeClustersRequested += probes.count
        pendingProbes += probes
        // A chain that never takes them (no media) must not let them pile up.
        if pendingProbes.count > 8 { pendingProbes.removeFirst(pendingProbes.count - 8) }
    }

    private mutating func apply(_ update: CongestionUpdate, _ outcome: inout SenderOutcome) {
        collect(update.probes)
        if update.targetChanged { outcome.targetBitrate = UInt64(update.targetBitsPerSecond) }
    }
}
