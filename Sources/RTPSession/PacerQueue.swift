public import RTP

/// Spreads a peer's outgoing RTP packets in time, so a large keyframe leaves as a stream over a few
/// milliseconds instead of one burst that overflows socket buffers and router queues (libwebrtc's
/// "paced sender", in its simplest form).
///
/// A leaky bucket: every packet adds its size to a debt that drains at ``Configuration/rateBitsPerSecond``;
/// a packet may leave while the debt is at most ``Configuration/burstBytes``. Retransmissions go before
/// media that waits. With the defaults (40 Mbit/s, 12 000 bytes) an interframe of a few kB leaves at once
/// and a 60 kB keyframe takes about 10 ms.
///
/// ```
///   enqueue(media) ──▶ [ retransmissions | media … ] ──release(now)──▶ packets whose turn has come
///   enqueueRetransmission ──┘        nextSendMicros: when release has something to give
/// ```
///
/// Sans-I/O: times are the caller's monotonic microseconds. A queue that would hold more than
/// ``Configuration/maxQueuedBytes`` refuses the frame and is emptied (the caller then waits for a keyframe):
/// a peer that cannot keep up gets a fresh start instead of an ever-growing delay. The rate can follow a
/// congestion controller's target (``setRate(bitsPerSecond:keyframeBitsPerSecond:nowMicros:)``), and keyframe
/// packets can be paced slower than the rest (``Configuration/keyframeRateBitsPerSecond``: a keyframe at no
/// more than the congestion estimate, while interframes and retransmissions go at the pacing factor's 2.5 ×;
/// each keyframe byte then weighs rate ÷ keyframe rate bytes in the bucket). Sizes are the packets'
/// serialized bytes (plain RTP, before SRTP).
public struct PacerQueue: Sendable {
    /// How fast and how much: a token bucket of `burstBytes` refilled at `rateBitsPerSecond`.
    public struct Configuration: Sendable, Equatable {
        /// The pace, bits per second (at least 100 kbit/s).
        public var rateBitsPerSecond: Int
        /// Bytes that may leave at once before pacing applies.
        public var burstBytes: Int
        /// The most bytes waiting (media and retransmissions together).
        public var maxQueuedBytes: Int
        /// The pace of keyframe packets, bits per second (at least 50 kbit/s), when slower than
        /// ``rateBitsPerSecond``; nil: the same pace as every packet.
        public var keyframeRateBitsPerSecond: Int?

        public init(
            rateBitsPerSecond: Int = 40_000_000, burstBytes: Int = 12_000, maxQueuedBytes: Int = 2_000_000,
            keyframeRateBitsPerSecond: Int? = nil
        ) {
            self.rateBitsPerSecond = max(100_000, rateBitsPerSecond)
            self.burstBytes = max(1, burstBytes)
            self.maxQueuedBytes = max(1, maxQueuedBytes)
            self.keyframeRateBitsPerSecond = keyframeRateBitsPerSecond.map { max(50_000, $0) }
        }

        /// What a packet of `size` bytes adds to the bucket (bytes at ``rateBitsPerSecond``): more than its
        /// size for a packet paced at the slower keyframe rate.
        func weight(size: Int, slow: Bool) -> Double {
            guard slow, let slower = keyframeRateBitsPerSecond, slower < rateBitsPerSecond else { return Double(size) }
            return Double(size) * Double(rateBitsPerSecond) / Double(slower)
        }
    }

    /// One queued packet, plain RTP as header + payload (serialized and protected when it is released).
    public struct Packet: Sendable, Equatable {
        public var rtp: RTPPacket
        /// Media or a retransmission (RFC 4588 RTX, or the packet as it was).
        public var kind: PacketKind
        /// Its serialized size, bytes.
        public var size: Int
        /// Part of a keyframe (counted in ``PacerQueue/queuedKeyframeBytes``).
        public var keyframe: Bool
        /// Paced at ``Configuration/keyframeRateBitsPerSecond``: a keyframe's packet, or one of a delta frame
        /// as large (the sender chain's ``RTPSenderChain/Configuration/largeFrameMicros``).
        public var slow: Bool

        public init(rtp: RTPPacket, kind: PacketKind, keyframe: Bool = false, slow: Bool? = nil) {
            self.rtp = rtp
            self.kind = kind
            self.keyframe = keyframe
            self.slow = slow ?? keyframe
            size = rtp.serializedSize
        }
    }

    /// The rate, burst and size limit this queue keeps (the rate as last set).
    public private(set) var configuration: Configuration
    private var retransmissions: [Packet] = []
    private var retransmissionHead = 0
    private var media: [Packet] = []
    private var mediaHead = 0
    /// Bytes the bucket still has to drain, as of `debtTime`.
    private var debtBytes: Double = 0
    private var debtTime: UInt64 = 0
    /// Bytes waiting.
    public private(set) var queuedBytes = 0
    /// Of ``queuedBytes``, those of keyframe packets (a keyframe is never thinned: what counts against a
    /// congestion budget is the rest).
    public private(set) var queuedKeyframeBytes = 0
    /// Of ``queuedKeyframeBytes``, those paced at the keyframe rate (`slow`); the rest leave at the pacing rate.
    public private(set) var queuedSlowKeyframeBytes = 0
    /// Times the queue overflowed and was emptied.
    public private(set) var overflows = 0
    /// Packets released so far.
    public private(set) var packetsReleased = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Packets waiting.
    public var count: Int { (retransmissions.count - retransmissionHead) + (media.count - mediaHead) }
    public var isEmpty: Bool { count == 0 }

    /// Queues a frame's packets (in order), of a keyframe or not, paced at the keyframe rate when `slow`
    /// (default: when a keyframe). Returns false, and empties the queue, when they do not fit.
    public mutating func enqueue(media packets: [RTPPacket], keyframe: Bool = false, slow: Bool? = nil) -> Bool {
        let size = packets.reduce(0) { $0 + $1.serializedSize }
        guard queuedBytes + size <= configuration.maxQueuedBytes else {
            removeAll()
            overflows += 1
            return false
        }
        compact()
        let slow = slow ?? keyframe
        for packet in packets { media.append(Packet(rtp: packet, kind: .media, keyframe: keyframe, slow: slow)) }
        queuedBytes += size
        if keyframe {
            queuedKeyframeBytes += size
            if slow { queuedSlowKeyframeBytes += size }
        }
        return true
    }

    /// Queues a retransmission ahead of waiting media. Returns false (dropping it) when the queue is full.
    public mutating func enqueue(retransmission packet: RTPPacket) -> Bool {
        let queued = Packet(rtp: packet, kind: .retransmission)
        guard queuedBytes + queued.size <= configuration.maxQueuedBytes else { return false }
        compact()
        retransmissions.append(queued)
        queuedBytes += queued.size
        return true
    }

    /// Changes the pace from `now` on (at least 100 kbit/s), and that of keyframe packets (nil: the same):
    /// what left before `now` drained at the old rate.
    public mutating func setRate(bitsPerSecond rate: Int, keyframeBitsPerSecond: Int? = nil, nowMicros now: UInt64) {
        debtBytes = drained(at: now)
        debtTime = max(debtTime, now)
        configuration.rateBitsPerSecond = max(100_000, rate)
        configuration.keyframeRateBitsPerSecond = keyframeBitsPerSecond.map { max(50_000, $0) }
    }

    /// When ``release(nowMicros:)`` next has a packet to give; nil when the queue is empty.
    public func nextSendMicros(nowMicros now: UInt64) -> UInt64? {
        guard !isEmpty else { return nil }
        let debt = drained(at: now)
        let excess = debt - Double(configuration.burstBytes)
        guard excess > 0 else { return now }
        return now &+ UInt64((excess * 8_000_000 / Double(configuration.rateBitsPerSecond)).rounded(.up))
    }

    /// The packets whose turn has come by `now`, in sending order.
    public mutating func release(nowMicros now: UInt64) -> [Packet] {
        debtBytes = drained(at: now)
        debtTime = max(debtTime, now)
        var out: [Packet] = []
        while debtBytes <= Double(configuration.burstBytes), let packet = popFirst() {
            debtBytes += configuration.weight(size: packet.size, slow: packet.slow)
            forget(packet)
            out.append(packet)
        }
        packetsReleased += out.count
        compact()
        return out
    }

    /// The next packet (retransmissions first) whatever the bucket says, for a probe cluster that paces
    /// itself at its own rate; nil when empty. It adds nothing to the bucket's debt.
    public mutating func releaseNext() -> Packet? {
        guard let packet = popFirst() else { return nil }
        forget(packet)
        packetsReleased += 1
        compact()
        return packet
    }

    /// Drops everything waiting.
    public mutating func removeAll() {
        retransmissions.removeAll(keepingCapacity: true)
        media.removeAll(keepingCapacity: true)
        retransmissionHead = 0
        mediaHead = 0
        queuedBytes = 0
        queuedKeyframeBytes = 0
        queuedSlowKeyframeBytes = 0
    }

    /// Takes a packet that left out of the byte counts.
    private mutating func forget(_ packet: Packet) {
        queuedBytes -= packet.size
        guard packet.keyframe else { return }
        queuedKeyframeBytes -= packet.size
        if packet.slow { queuedSlowKeyframeBytes -= packet.size }
    }

    private func drained(at now: UInt64) -> Double {
        guard now > debtTime else { return debtBytes }
        let leaked = Double(now - debtTime) * Double(configuration.rateBitsPerSecond) / 8_000_000
        return max(0, debtBytes - leaked)
    }

    private mutating func popFirst() -> Packet? {
        if retransmissionHead < retransmissions.count {
            defer { retransmissionHead += 1 }
            return retransmissions[retransmissionHead]
        }
        if mediaHead < media.count {
            defer { mediaHead += 1 }
            return media[mediaHead]
        }
        return nil
    }

    /// Forgets released packets once they are half the storage (amortized O(1) per packet).
    private mutating func compact() {
        if retransmissionHead > 0, retransmissionHead * 2 >= retransmissions.count {
            retransmissions.removeFirst(retransmissionHead)
            retransmissionHead = 0
        }
        if mediaHead > 0, mediaHead * 2 >= media.count {
            media.removeFirst(mediaHead)
            mediaHead = 0
        }
    }
}
