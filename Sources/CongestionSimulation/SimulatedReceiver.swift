import RTP

/// The receiving side of a simulated call: reads the transport-wide sequence number out of each RTP packet,
/// records its arrival in a ``TransportFeedbackGenerator``, and hands out the feedback as serialized RTCP
/// when it is due — with the one-way delay of the newest packet it covers, from which the simulation
/// derives the RTT an RTCP receiver report would give.
struct SimulatedReceiver: Sendable {
    private(set) var generator: TransportFeedbackGenerator
    private var newestOneWayMicros: Int64?
    private(set) var bytesReceived = 0
    private(set) var packetsReceived = 0

    init(intervalMicros: Int64) {
        generator = TransportFeedbackGenerator(configuration: .init(
            senderSSRC: 0x5C5C_0002, mediaSSRC: SimulatedSender.ssrc, intervalMicros: intervalMicros))
    }

    mutating func receive(_ delivery: BottleneckLink.Delivery) throws(RTPError) {
        let packet = try RTPPacket(parsing: delivery.bytes)
        guard let sequence = try TransportWideSequenceNumber.read(from: packet, id: SimulatedSender.extensionID) else {
            throw .malformed(.headerExtension, "simulated packet without a transport-wide sequence number")
        }
        generator.record(sequenceNumber: sequence, arrivalMicros: delivery.arrivalMicros)
        bytesReceived += delivery.bytes.count
        packetsReceived += 1
        if let sent = SimulatedSender.sendTime(of: packet) { newestOneWayMicros = delivery.arrivalMicros - sent }
    }

    /// The feedback due at `now` as one compound RTCP packet, and the one-way delay of the newest packet
    /// it reports; nil when none is due.
    mutating func feedback(atMicros now: Int64) throws(RTPError) -> (compound: [UInt8], oneWayMicros: Int64?)? {
        let packets = generator.feedback(nowMicros: now)
        guard !packets.isEmpty else { return nil }
        var compound: [UInt8] = []
        for packet in packets { try packet.serialize(into: &compound) }
        defer { newestOneWayMicros = nil }
        return (compound, newestOneWayMicros)
    }
}
