/// The packets recently sent on one SSRC, kept for retransmission when a receiver NACKs them
/// (RFC 4585 §6.2.1; resent as RTX per RFC 4588, or as they were).
///
/// A ring buffer indexed by sequence number (its capacity a power of two dividing 65536, so slot =
/// sequence number mod capacity survives the 16-bit wrap). It is bounded twice: by packet count (the
/// ring) and by bytes (the oldest packets are evicted first). The defaults — 2048 packets, 4 MiB — hold
/// over a second of a 10 Mbit/s stream of 1200-byte packets, more than the one second the design asks for.
///
/// Packets are stored as the serialized plain RTP bytes (before SRTP), shared with the caller's array
/// without copying.
public struct RTPPacketHistory: Sendable {
    private struct Entry: Sendable {
        var sequenceNumber: UInt16
        var packet: [UInt8]
        var sentMilliseconds: UInt64
        var lastResentMilliseconds: UInt64?
    }

    public let ssrc: UInt32
    /// Most packets kept (a power of two, 16…32768).
    public let capacity: Int
    /// Most bytes kept (sum of packet sizes).
    public let maxBytes: Int

    private var slots: [Entry?]
    private var oldest: UInt16 = 0
    private var newest: UInt16 = 0
    /// Packets held.
    public private(set) var count = 0
    /// Bytes held.
    public private(set) var bytes = 0

    /// - Parameters:
    ///   - ssrc: the stream's SSRC; packets of another SSRC are refused.
    ///   - capacity: packets kept, rounded up to a power of two in 16…32768 (default 2048).
    ///   - maxBytes: bytes kept (default 4 MiB).
    public init(ssrc: UInt32, capacity: Int = 2048, maxBytes: Int = 4 << 20) {
        var size = 16
        while size < min(max(capacity, 16), 32768) { size <<= 1 }
        self.ssrc = ssrc
        self.capacity = size
        self.maxBytes = max(1, maxBytes)
        slots = Array(repeating: nil, count: size)
    }

    /// The sequence numbers held span `oldestSequenceNumber` through `newestSequenceNumber`; nil when empty.
    public var oldestSequenceNumber: UInt16? { count == 0 ? nil : oldest }
    public var newestSequenceNumber: UInt16? { count == 0 ? nil : newest }

    /// Stores a packet just sent. Packets are expected in sending order; a gap is allowed, an older
    /// sequence number replaces its slot only if that slot still holds the same number.
    /// - Parameters:
    ///   - packet: the serialized RTP packet (plain, before SRTP).
    ///   - sentMilliseconds: send time on a monotonic millisecond clock (injected).
    public mutating func insert(_ packet: [UInt8], sentMilliseconds: UInt64) throws(RTPError) {
        guard packet.count >= RTPPacket.fixedHeaderSize else {
            throw .truncated(.rtpHeader, needed: RTPPacket.fixedHeaderSize, available: packet.count)
        }
        let header = packet[...]
        let packetSSRC = header.u32(8)
        guard packetSSRC == ssrc else { throw .wrongSSRC(expected: ssrc, found: packetSSRC) }
        let sequence = header.u16(2)
        let entry = Entry(sequenceNumber: sequence, packet: packet, sentMilliseconds: sentMilliseconds)
        let slot = index(sequence)
        if count == 0 {
            oldest = sequence
            newest = sequence
        } else {
            let ahead = SequenceNumber.distance(from: newest, to: sequence)
            if ahead <= 0 {
                if let old = slots[slot], old.sequenceNumber == sequence {
                    bytes += packet.count - old.packet.count
                    slots[slot] = entry
                    evictForBytes()
                }
                return
            }
            if ahead >= capacity {
                removeAll()
                oldest = sequence
            }
            newest = sequence
            while SequenceNumber.distance(from: oldest, to: newest) >= capacity { evictOldest() }
        }
        slots[slot] = entry
        count += 1
        bytes += packet.count
        evictForBytes()
    }

    /// The stored packet with this sequence number, or nil when it was never stored or already evicted.
    public func packet(sequenceNumber: UInt16) -> [UInt8]? {
        guard count > 0, let entry = slots[index(sequenceNumber)], entry.sequenceNumber == sequenceNumber else {
            return nil
        }
        return entry.packet
    }

    /// The packet to resend for a NACKed sequence number, or nil when it is gone or was already resent less
    /// than `minimumIntervalMilliseconds` ago (typically the RTT, so one loss is not repaired twice). Records
    /// the resend time.
    public mutating func retransmission(
        of sequenceNumber: UInt16, nowMilliseconds: UInt64, minimumIntervalMilliseconds: UInt64
    ) -> [UInt8]? {
        let slot = index(sequenceNumber)
        guard count > 0, var entry = slots[slot], entry.sequenceNumber == sequenceNumber else { return nil }
        if let last = entry.lastResentMilliseconds, nowMilliseconds < last + minimumIntervalMilliseconds {
            return nil
        }
        entry.lastResentMilliseconds = nowMilliseconds
        slots[slot] = entry
        return entry.packet
    }

    /// When the packet was first sent (ms), if held.
    public func sentMilliseconds(of sequenceNumber: UInt16) -> UInt64? {
        guard count > 0, let entry = slots[index(sequenceNumber)], entry.sequenceNumber == sequenceNumber else {
            return nil
        }
        return entry.sentMilliseconds
    }

    public mutating func removeAll() {
        for slot in slots.indices { slots[slot] = nil }
        count = 0
        bytes = 0
    }

    // MARK: - Eviction

    @inline(__always)
    private func index(_ sequence: UInt16) -> Int { Int(sequence) & (capacity - 1) }

    /// Removes the packet at `oldest` (if held) and moves `oldest` forward by one.
    private mutating func evictOldest() {
        let slot = index(oldest)
        if let entry = slots[slot], entry.sequenceNumber == oldest {
            slots[slot] = nil
            count -= 1
            bytes -= entry.packet.count
        }
        oldest &+= 1
    }

    private mutating func evictForBytes() {
        while bytes > maxBytes, count > 1 {
            evictOldest()
            // Skip to the next held packet so `oldest` names one.
            while count > 0, slots[index(oldest)]?.sequenceNumber != oldest { oldest &+= 1 }
        }
    }
}
