import RTP

/// One RTP packet as sent on the transport, by its transport-wide sequence number.
public struct SentPacket: Sendable, Equatable {
    /// The transport-wide sequence number, unwrapped to 64 bits (first packet's number as is).
    public var sequenceNumber: Int64
    /// When it left the pacer, µs of the sender's monotonic clock.
    public var sendTimeMicros: Int64
    /// Bytes on the wire as the congestion controller counts them (the RTP packet; add transport overhead
    /// consistently if you want it counted).
    public var sizeBytes: Int
    /// The probe cluster the packet was sent for (``ProbeCluster/id``), or nil for ordinary media.
    public var probeClusterID: Int?

    public init(sequenceNumber: Int64, sendTimeMicros: Int64, sizeBytes: Int, probeClusterID: Int? = nil) {
        self.sequenceNumber = sequenceNumber
        self.sendTimeMicros = sendTimeMicros
        self.sizeBytes = sizeBytes
        self.probeClusterID = probeClusterID
    }
}

/// The packets sent and not yet acknowledged, by transport-wide sequence number (libwebrtc's
/// `TransportFeedbackAdapter` history): a ring of ``capacity`` slots indexed by the unwrapped number, so
/// recording and lookup allocate nothing. A packet stays until feedback says it arrived, or until
/// ``capacity`` newer packets replace it; one reported lost stays, since a later feedback may still report
/// it received (a receiver re-reports late arrivals).
struct SentPacketHistory: Sendable {
    enum Outcome: Sendable, Equatable {
        case unacknowledged
        case reportedLost
        case received
    }

    private struct Slot: Sendable {
        var packet: SentPacket
        var outcome: Outcome
    }

    /// Slots kept (a power of two): 16384 packets, over 50 s of a 3 Mbit/s stream of 1200-byte packets.
    static let defaultCapacity = 1 << 14

    let capacity: Int
    private var slots: [Slot?]
    private var unwrapper = SequenceNumberUnwrapper()
    /// Bytes sent and not yet reported (received or lost).
    private(set) var bytesInFlight = 0

    init(capacity: Int = defaultCapacity) {
        var size = 16
        while size < capacity { size <<= 1 }
        self.capacity = size
        slots = Array(repeating: nil, count: size)
    }

    /// Records a packet sent with 16-bit transport-wide `sequenceNumber`; returns it with the unwrapped number.
    @discardableResult
    mutating func record(sequenceNumber: UInt16, sendTimeMicros: Int64, sizeBytes: Int, probeClusterID: Int?) -> SentPacket {
        let extended = unwrapper.unwrap(sequenceNumber)
        let packet = SentPacket(sequenceNumber: extended, sendTimeMicros: sendTimeMicros, sizeBytes: sizeBytes,
                                probeClusterID: probeClusterID)
        let index = slotIndex(extended)
        if let old = slots[index], old.outcome == .unacknowledged { bytesInFlight -= old.packet.sizeBytes }
        slots[index] = Slot(packet: packet, outcome: .unacknowledged)
        bytesInFlight += sizeBytes
        return packet
    }

    /// Counts nothing as in flight any more: what went down an old path is not coming back (a route
    /// change). The packets stay, marked lost, so late feedback still finds them. One pass over the slots.
    mutating func forgetInFlight() {
        for index in slots.indices where slots[index]?.outcome == .unacknowledged { slots[index]?.outcome = .reportedLost }
        bytesInFlight = 0
    }

    /// The unwrapped number a 16-bit number from feedback stands for (nearest the newest sent).
    func unwrap(_ sequenceNumber: UInt16) -> Int64 { unwrapper.peek(sequenceNumber) }

    /// The packet with unwrapped number `sequenceNumber` and what feedback said of it so far, or nil when it
    /// was never recorded or has been replaced.
    func lookup(_ sequenceNumber: Int64) -> (packet: SentPacket, outcome: Outcome)? {
        guard let slot = slots[slotIndex(sequenceNumber)], slot.packet.sequenceNumber == sequenceNumber else { return nil }
        return (slot.packet, slot.outcome)
    }

    /// Records what feedback said of a packet found with ``lookup(_:)``.
    mutating func mark(_ sequenceNumber: Int64, _ outcome: Outcome) {
        let index = slotIndex(sequenceNumber)
        guard var slot = slots[index], slot.packet.sequenceNumber == sequenceNumber else { return }
        if slot.outcome == .unacknowledged, outcome != .unacknowledged { bytesInFlight -= slot.packet.sizeBytes }
        slot.outcome = outcome
        slots[index] = slot
    }

    private func slotIndex(_ sequenceNumber: Int64) -> Int { Int(truncatingIfNeeded: sequenceNumber) & (capacity - 1) }
}
