import CongestionControl
import RTP

/// The sending side of a simulated call: an encoder that holds the rate it is given (frames at
/// ``Configuration/framesPerSecond``, sizes around target / fps, seeded jitter, a keyframe at the start),
/// a packetizer into RTP packets carrying the transport-wide sequence number extension, a pacer queue
/// drained by ``PacerBudget``, and the ``SendSideCongestionController`` — wired as the RTP session will wire
/// them. It produces real RTP bytes; the receiver reads the sequence numbers back out of them.
public struct SimulatedSender: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var controller: SendSideCongestionController.Configuration
        public var pacer: PacerBudget.Configuration
        /// The most the encoder produces, bits/s, whatever the target.
        public var maxMediaBitsPerSecond: Int
        public var framesPerSecond: Int
        /// RTP payload bytes per packet at most.
        public var maxPayloadBytes: Int
        /// The first frame's size as a multiple of an ordinary one.
        public var keyframeScale: Double
        /// The encoder skips a frame while the pacer queue holds more than this much time at the target, µs.
        public var maxQueueMicros: Int64
        public var seed: UInt64

        public init(controller: SendSideCongestionController.Configuration, pacer: PacerBudget.Configuration = .init(),
                    maxMediaBitsPerSecond: Int = 3_000_000, framesPerSecond: Int = 30, maxPayloadBytes: Int = 1180,
                    keyframeScale: Double = 4, maxQueueMicros: Int64 = 500_000, seed: UInt64 = 7) {
            self.controller = controller
            self.pacer = pacer
            self.maxMediaBitsPerSecond = maxMediaBitsPerSecond
            self.framesPerSecond = framesPerSecond
            self.maxPayloadBytes = maxPayloadBytes
            self.keyframeScale = keyframeScale
            self.maxQueueMicros = maxQueueMicros
            self.seed = seed
        }
    }

    /// One packet on its way to the link, with what the controller and a recording need.
    public struct Sent: Sendable {
        public var bytes: [UInt8]
        public var sequenceNumber: UInt16
        public var sendMicros: Int64
        public var probeClusterID: Int?
    }

    public static let extensionID: UInt8 = 3
    static let ssrc: UInt32 = 0x5C5C_0001

    public let configuration: Configuration
    public private(set) var controller: SendSideCongestionController
    public private(set) var pacer: PacerBudget
    private var sequencer = TransportWideSequencer(first: 1)
    private var queue: [(size: Int, keyframe: Bool, marker: Bool)] = []
    private var queueHead = 0
    private var queuedBytes = 0
    private var nextFrameMicros: Int64
    private var frames = 0
    private var rtpSequence: UInt16 = 0
    private var random: SplitMix64
    /// Frames the encoder skipped because the pacer queue was full.
    public private(set) var framesSkipped = 0
    /// Media payload bytes produced (for the encoder's own rate).
    public private(set) var mediaBytesProduced = 0

    public init(configuration: Configuration, startMicros: Int64) throws(CongestionControlError) {
        self.configuration = configuration
        controller = try SendSideCongestionController(configuration: configuration.controller)
        pacer = PacerBudget(configuration: configuration.pacer, targetBitsPerSecond: configuration.controller.startBitsPerSecond)
        nextFrameMicros = startMicros
        random = SplitMix64(seed: configuration.seed)
        apply(controller.start(atMicros: startMicros))
    }

    /// The encoder's rate now: the target, capped at the media maximum.
    public var encoderBitsPerSecond: Int { min(controller.targetBitsPerSecond, configuration.maxMediaBitsPerSecond) }

    mutating func apply(_ update: CongestionUpdate) {
        pacer.setTarget(bitsPerSecond: update.targetBitsPerSecond)
        if !update.probes.isEmpty { pacer.startProbes(update.probes) }
    }

    mutating func onFeedback(_ compound: [UInt8], atMicros now: Int64) throws(RTPError) {
        for feedback in try RTCPTransportFeedback.packets(inCompound: compound) {
            apply(controller.onTransportFeedback(feedback, atMicros: now))
        }
    }

    mutating func onRoundTripTime(micros: Int64) { controller.onRoundTripTime(micros: micros) }

    mutating func onTick(atMicros now: Int64) { apply(controller.onTick(atMicros: now)) }

    /// Encodes the frames due by `now` and sends what the pacer allows; returns the packets sent.
    mutating func run(until now: Int64) throws(RTPError) -> [Sent] {
        while nextFrameMicros <= now {
            encodeFrame()
            nextFrameMicros += 1_000_000 / Int64(configuration.framesPerSecond)
        }
        var sent: [Sent] = []
        while pacer.nextSendMicros(atMicros: now) <= now {
            if queueHead < queue.count {
                let packet = queue[queueHead]
                queueHead += 1
                queuedBytes -= packet.size
                sent.append(try send(payloadBytes: packet.size, marker: packet.marker, keyframe: packet.keyframe, now: now))
            } else if pacer.probePaddingBytes(atMicros: now) > 0 {
                sent.append(try send(payloadBytes: configuration.pacer.paddingPacketBytes, marker: false, keyframe: false, now: now))
            } else {
                break
            }
        }
        if queueHead > 256, queueHead * 2 > queue.count {
            queue.removeFirst(queueHead)
            queueHead = 0
        }
        return sent
    }

    private mutating func encodeFrame() {
        let rate = Double(encoderBitsPerSecond)
        let backlogMicros = Double(queuedBytes) * 8 * 1_000_000 / max(rate, 1)
        if frames > 0, backlogMicros > Double(configuration.maxQueueMicros) {
            framesSkipped += 1
            return
        }
        let keyframe = frames == 0
        var size = rate / 8 / Double(configuration.framesPerSecond) * Double.random(in: 0.8...1.2, using: &random)
        if keyframe { size *= configuration.keyframeScale }
        frames += 1
        var left = max(Int(size), 100)
        mediaBytesProduced += left
        while left > 0 {
            let chunk = min(left, configuration.maxPayloadBytes)
            left -= chunk
            queue.append((chunk, keyframe, left == 0))
            queuedBytes += chunk
        }
    }

    private mutating func send(payloadBytes: Int, marker: Bool, keyframe: Bool, now: Int64) throws(RTPError) -> Sent {
        let sequence = sequencer.next()
        rtpSequence &+= 1
        // The payload starts with the send time (so the receiver can measure one-way delay); the rest is zeros.
        var payload = [UInt8](repeating: 0, count: max(payloadBytes, 8))
        for index in 0..<8 { payload[index] = UInt8(truncatingIfNeeded: UInt64(bitPattern: now) >> (56 - 8 * index)) }
        let header = try RTPHeaderExtension(elements: [TransportWideSequenceNumber.element(id: Self.extensionID, sequenceNumber: sequence)])
        let packet = RTPPacket(marker: marker, payloadType: 96, sequenceNumber: rtpSequence,
                               timestamp: UInt32(truncatingIfNeeded: now * 90 / 1000), ssrc: Self.ssrc,
                               headerExtension: header, payload: payload[...])
        let bytes = try packet.serialized()
        let cluster = pacer.onPacketSent(sizeBytes: bytes.count, atMicros: now, keyframe: keyframe)
        controller.onPacketSent(sequenceNumber: sequence, sizeBytes: bytes.count, atMicros: now, probeClusterID: cluster)
        return Sent(bytes: bytes, sequenceNumber: sequence, sendMicros: now, probeClusterID: cluster)
    }

    /// The send time written into a packet's payload by this sender.
    static func sendTime(of packet: RTPPacket) -> Int64? {
        guard packet.payload.count >= 8 else { return nil }
        var value: UInt64 = 0
        for byte in packet.payload.prefix(8) { value = value << 8 | UInt64(byte) }
        return Int64(bitPattern: value)
    }
}
