/// The packets recently sent on one SSRC, kept for retransmission when a receiver NACKs them
/// (RFC 4585 §6.2.1; resent as RTX per RFC 4588, or as they were).
///
/// Kept by time, as real senders do: libwebrtc's `RtpPacketHistory` keeps a packet at least
/// max(1 s, 3 × RTT) after it was sent, since a NACK for anything older arrives too late to help (the
/// receiver has given the frame up or asked for a keyframe). Here a packet older than
/// ``windowMilliseconds`` — max(``minimumWindowMilliseconds``, ``roundTripFactor`` × the last RTT) — is
/// evicted when a newer one is inserted, and a NACK for it is answered as not held even before that. A
/// 4.7 Mbit/s stream of 1200-byte packets then holds about 490 packets, 0.6 MB, per peer.
///
/// Two hard limits bound memory whatever the RTT and bitrate, the oldest packets going first:
/// - ``capacity`` packets: a ring buffer indexed by sequence number (a power of two dividing 65536, so
///   slot = sequence number mod capacity survives the 16-bit wrap); default ``defaultCapacity``.
/// - ``maxBytes`` bytes (the sum of packet sizes); default ``defaultMaxBytes``.
///
/// With the defaults the window, not a limit, decides up to about 16 Mbit/s (a 1 s window), or up to an
/// RTT of about 1.1 s at 4.7 Mbit/s (a 3.4 s window).
///
/// Packets are stored as header + payload (``RTPPacket``, plain: before SRTP), the payload shared with the
/// caller's storage without copying; sizes count their serialized bytes.
public struct RTPPacketHistory: Sendable {
    private struct Entry: Sendable {
        var sequenceNumber: UInt16
        var packet: RTPPacket
        /// Its serialized size, bytes.
        var size: Int
        var sentMilliseconds: UInt64
        var lastResentMilliseconds: UInt64?
    }

    /// The shortest time a packet is kept, ms (libwebrtc's `kMinPacketDuration`).
    public static let defaultMinimumWindowMilliseconds: UInt64 = 1000
    /// A packet is kept at least this many RTTs (libwebrtc's `kMinPacketDurationRtt`).
    public static let roundTripFactor: UInt64 = 3
    /// Hard limit on packets held: 2048, over 4 s of a 4.7 Mbit/s stream.
    public static let defaultCapacity = 2048
    /// Hard limit on bytes held: 2 MiB, 1 s of a 16.7 Mbit/s stream.
    public static let defaultMaxBytes = 2 << 20

    /// The SSRC of the stream kept (RFC 3550 §5.1); packets of another SSRC are refused.
    public let ssrc: UInt32
    /// Most packets kept (a power of two, 16…32768).
    public let capacity: Int
    /// Most bytes kept (sum of packet sizes).
    public let maxBytes: Int
    /// Packets are kept at least this long after they were sent, ms, whatever the RTT.
    public let minimumWindowMilliseconds: UInt64
    /// The last round-trip time, ms (from RTCP receiver reports, RFC 3550 §6.4.1); nil before the first.
    public var roundTripMilliseconds: UInt64?

    private var slots: [Entry?]
    private var oldest: UInt16 = 0
    private var newest: UInt16 = 0
    /// Packets held.
    public private(set) var count = 0
    /// Bytes held.
    public private(set) var bytes = 0

    /// - Parameters:
    ///   - ssrc: the stream's SSRC; packets of another SSRC are refused.
    ///   - capacity: packets kept at most, rounded up to a power of two in 16…32768 (default ``defaultCapacity``).
    ///   - maxBytes: bytes kept at most (default ``defaultMaxBytes``).
    ///   - minimumWindowMilliseconds: how long a packet is kept at least, ms, before the RTT makes it longer
    ///     (default ``defaultMinimumWindowMilliseconds``).
    public init(
        ssrc: UInt32, capacity: Int = defaultCapacity, maxBytes: Int = defaultMaxBytes,
        minimumWindowMilliseconds: UInt64 = defaultMinimumWindowMilliseconds
    ) {
        var size = 16
        while size < min(max(capacity, 16), 32768) { size <<= 1 }
        self.ssrc = ssrc
        self.capacity = size
        self.maxBytes = max(1, maxBytes)
        self.minimumWindowMilliseconds = minimumWindowMilliseconds
        slots = Array(repeating: nil, count: size)
    }

    /// How long packets are kept now, ms: max(``minimumWindowMilliseconds``, ``roundTripFactor`` × RTT).
    public var windowMilliseconds: UInt64 {
        guard let rtt = roundTripMilliseconds else { return minimumWindowMilliseconds }
        let (scaled, overflow) = rtt.multipliedReportingOverflow(by: Self.roundTripFactor)
        return overflow ? .max : max(minimumWindowMilliseconds, scaled)
    }

    /// The sequence numbers held span `oldestSequenceNumber` through `newestSequenceNumber`; nil when empty.
    public var oldestSequenceNumber: UInt16? { count == 0 ? nil : oldest }
    public var newestSequenceNumber: UInt16? { count == 0 ? nil : newest }

    /// Stores a packet just sent, then evicts what is older than ``windowMilliseconds`` before
    /// `sentMilliseconds`, and the oldest packets while a hard limit is exceeded. Packets are expected in
    /// sending order; a gap is allowed, an older sequence number replaces its slot only if that slot still
    /// holds the same number.
    /// - Parameters:
    ///   - packet: the RTP packet (plain, before SRTP).
    ///   - sentMilliseconds: send time on a monotonic millisecond clock (injected).
    /// - Throws: ``RTPError/wrongSSRC(expected:found:)`` for a packet of another stream.
    public mutating func insert(_ packet: RTPPacket, sentMilliseconds: UInt64) throws(RTPError) {
        guard packet.ssrc == ssrc else { throw .wrongSSRC(expected: ssrc, found: packet.ssrc) }
        let sequence = packet.sequenceNumber
        let size = packet.serializedSize
        let entry = Entry(sequenceNumber: sequence, packet: packet, size: size, sentMilliseconds: sentMilliseconds)
        let slot = index(sequence)
        if count == 0 {
            oldest = sequence
            newest = sequence
        } else {
            let ahead = SequenceNumber.distance(from: newest, to: sequence)
            if ahead <= 0 {
                if let old = slots[slot], old.sequenceNumber == sequence {
                    bytes += size - old.size
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
            // Unsigned: `oldest` is never after `newest`, and with the largest ring (32768) they can be a whole
            // ring apart here, which the signed distance would read as −32768.
            while Int(newest &- oldest) >= capacity { evictOldest() }
        }
        slots[slot] = entry
        count += 1
        bytes += size
        evictExpired(nowMilliseconds: sentMilliseconds)
        evictForBytes()
    }

    /// The stored packet with this sequence number, or nil when it was never stored or already evicted.
    public func packet(sequenceNumber: UInt16) -> RTPPacket? {
        guard count > 0, let entry = slots[index(sequenceNumber)], entry.sequenceNumber == sequenceNumber else {
            return nil
        }
        return entry.packet
    }

    /// The packet to resend for a NACKed sequence number, or nil when it is not held (never stored, evicted,
    /// or sent more than ``windowMilliseconds`` before `nowMilliseconds`), or was already resent less than
    /// `minimumIntervalMilliseconds` ago (typically the RTT, so one loss is not repaired twice), or `admit`
    /// refused it (a rate budget: the packet is then not marked, and a later NACK may still have it). Records
    /// the resend time.
    public mutating func retransmission(
        of sequenceNumber: UInt16, nowMilliseconds: UInt64, minimumIntervalMilliseconds: UInt64,
        admit: (RTPPacket) -> Bool = { _ in true }
    ) -> RTPPacket? {
        evictExpired(nowMilliseconds: nowMilliseconds)
        let slot = index(sequenceNumber)
        guard count > 0, var entry = slots[slot], entry.sequenceNumber == sequenceNumber else { return nil }
        if let last = entry.lastResentMilliseconds,
           nowMilliseconds < last || nowMilliseconds - last < minimumIntervalMilliseconds {  // no `last + interval`: it can overflow
            return nil
        }
        guard admit(entry.packet) else { return nil }
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

    /// Forgets every packet (a sequence-number jump of a whole ring or more).
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
            bytes -= entry.size
        }
        oldest &+= 1
    }

    /// Moves `oldest` forward to the next held packet (over gaps), so it names one while any is held.
    private mutating func skipToHeld() {
        while count > 0, slots[index(oldest)]?.sequenceNumber != oldest { oldest &+= 1 }
    }

    private mutating func evictForBytes() {
        while bytes > maxBytes, count > 1 {
            evictOldest()
            skipToHeld()
        }
    }

    /// Evicts, oldest first, the packets sent more than ``windowMilliseconds`` before `now` (packets are
    /// in sending order, so the first one young enough ends the walk).
    private mutating func evictExpired(nowMilliseconds now: UInt64) {
        let window = windowMilliseconds
        guard now > window else { return }
        let cutoff = now - window
        skipToHeld()
        while count > 0, let entry = slots[index(oldest)], entry.sentMilliseconds < cutoff {
            evictOldest()
            skipToHeld()
        }
    }
}
