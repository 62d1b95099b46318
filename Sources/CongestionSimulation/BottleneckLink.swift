import RTP

/// A one-way network path in memory: random loss (seeded), then a FIFO drop-tail queue served at a
/// capacity that may change over time, then a fixed propagation delay — the shape of a home uplink or of
/// `tc … tbf`/`htb` on a test namespace (see shared/notes/congestion.md), with the delay a relay would add.
///
/// Packets are served one at a time: one starts when the one before has left, at the capacity in force
/// when it starts (so a capacity step applies from the next packet), and arrives ``Configuration/propagationMicros``
/// after its last bit left. A packet that does not fit the queue's free bytes is dropped (drop-tail).
public struct BottleneckLink: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Bytes the queue holds besides the packet being served.
        public var queueBytes: Int
        /// One-way propagation delay, µs.
        public var propagationMicros: Int64
        /// Fraction of packets lost at random before the queue, 0…1.
        public var lossRate: Double
        /// Bytes added to each packet's size on the wire (IP + UDP + SRTP tag…), counted against the capacity.
        public var overheadBytes: Int
        public var seed: UInt64

        public init(queueBytes: Int = 30_000, propagationMicros: Int64 = 25_000, lossRate: Double = 0, overheadBytes: Int = 0,
                    seed: UInt64 = 1) {
            self.queueBytes = queueBytes
            self.propagationMicros = propagationMicros
            self.lossRate = lossRate
            self.overheadBytes = overheadBytes
            self.seed = seed
        }
    }

    /// A packet and when it reaches the far end.
    public struct Delivery: Sendable {
        public var bytes: [UInt8]
        public var arrivalMicros: Int64
    }

    /// Counters since the start.
    public struct Counters: Sendable, Equatable {
        public var accepted = 0
        public var droppedByQueue = 0
        public var droppedAtRandom = 0
        public var delivered = 0
    }

    public let configuration: Configuration
    /// The rate the queue is served at, bits/s.
    public var capacityBitsPerSecond: Int
    public private(set) var counters = Counters()

    private var random: SplitMix64
    private var waiting: [(bytes: [UInt8], enqueued: Int64)] = []
    private var waitingHead = 0
    private var waitingBytes = 0
    private var busyUntil: Int64 = .min
    private var inFlight: [Delivery] = []

    public init(configuration: Configuration, capacityBitsPerSecond: Int) {
        self.configuration = configuration
        self.capacityBitsPerSecond = max(capacityBitsPerSecond, 1)
        random = SplitMix64(seed: configuration.seed)
    }

    /// Bytes waiting in the queue (not counting the packet being served).
    public var queuedBytes: Int { waitingBytes }

    /// The delay a packet entering now would see before its first bit leaves, µs.
    public func queueDelayMicros(at now: Int64) -> Int64 {
        let serving = max(busyUntil - now, 0)
        return serving + Int64(Double(waitingBytes) * 8 * 1_000_000 / Double(capacityBitsPerSecond))
    }

    /// Offers a packet at `now`; false when it was lost or dropped.
    @discardableResult
    public mutating func send(_ bytes: [UInt8], at now: Int64) -> Bool {
        serve(until: now)
        if configuration.lossRate > 0, Double.random(in: 0..<1, using: &random) < configuration.lossRate {
            counters.droppedAtRandom += 1
            return false
        }
        let size = bytes.count + configuration.overheadBytes
        if busyUntil > now, waitingBytes + size > configuration.queueBytes {
            counters.droppedByQueue += 1
            return false
        }
        counters.accepted += 1
        waiting.append((bytes, now))
        waitingBytes += size
        serve(until: now)
        return true
    }

    /// The packets that have arrived by `now`, in arrival order.
    public mutating func deliveries(until now: Int64) -> [Delivery] {
        serve(until: now)
        guard let split = inFlight.firstIndex(where: { $0.arrivalMicros > now }) else {
            defer { inFlight.removeAll(keepingCapacity: true) }
            counters.delivered += inFlight.count
            return inFlight
        }
        let arrived = Array(inFlight[..<split])
        inFlight.removeFirst(split)
        counters.delivered += arrived.count
        return arrived
    }

    /// Starts service of every waiting packet whose turn comes by `now`.
    private mutating func serve(until now: Int64) {
        while waitingHead < waiting.count {
            let head = waiting[waitingHead]
            let start = max(busyUntil, head.enqueued)
            guard start <= now else { break }
            let size = head.bytes.count + configuration.overheadBytes
            let service = Int64((Double(size) * 8 * 1_000_000 / Double(capacityBitsPerSecond)).rounded(.up))
            busyUntil = start + service
            inFlight.append(Delivery(bytes: head.bytes, arrivalMicros: busyUntil + configuration.propagationMicros))
            waitingBytes -= size
            waitingHead += 1
        }
        if waitingHead > 256, waitingHead * 2 > waiting.count {
            waiting.removeFirst(waitingHead)
            waitingHead = 0
        }
    }
}
