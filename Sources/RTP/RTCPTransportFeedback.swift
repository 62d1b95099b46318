/// Transport-wide congestion control feedback, PT = 205 (RTPFB), FMT = 15
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1): for a range of transport-wide sequence numbers
/// (every RTP packet on the transport, all SSRCs), whether each arrived and when.
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|  FMT=15 |    PT=205     |           length              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                     SSRC of packet sender                     |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                      SSRC of media source                     |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      base sequence number     |      packet status count      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                 reference time                | fb pkt. count |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |          packet chunk         |         packet chunk          |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// .                                                               .
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |         packet chunk          |  recv delta   |  recv delta   |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// .                                                               .
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           recv delta          |  recv delta   | zero padding  |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// - The packet status count covers `base`, `base + 1`, … (mod 2¹⁶); the chunks (§3.1.2–3.1.4, see
///   ``StatusChunk``) give one ``Symbol`` per packet; the last chunk may describe more, which are ignored.
/// - Reference time: a signed 24-bit count of 64 ms (§3.1); the first receive delta is relative to it, each
///   later one to the packet before.
/// - Receive deltas (§3.1.5), in 250 µs ticks, one per received packet: 1 unsigned byte for a small-delta
///   symbol (0…63.75 ms), 2 signed bytes for a large-or-negative one (−8192…8191.75 ms).
/// - Zero padding to a word; as libwebrtc writes it, with P = 1 and the last byte counting the padding.
///
/// Parsing is strict where libwebrtc's `TransportFeedback::Parse` is: a status count of 0, the reserved
/// symbol 3, missing chunks or deltas are refused. More than 3 bytes after the deltas are refused too.
public struct RTCPTransportFeedback: Sendable, Equatable {
    static let format: UInt8 = 15

    /// A packet's status symbol (§3.1.1).
    public enum Symbol: UInt8, Sendable {
        case notReceived = 0
        /// Received; its delta is one unsigned byte.
        case smallDelta = 1
        /// Received; its delta is two signed bytes.
        case largeDelta = 2
    }

    /// One 16-bit packet status chunk.
    public enum StatusChunk: Sendable, Equatable {
        /// T = 0 (§3.1.3): `length` (0…8191) packets with the same symbol.
        /// `0 | S (2 bits) | run length (13 bits)`.
        case runLength(Symbol, length: Int)
        /// T = 1, S = 0 (§3.1.4): exactly 14 symbols, each ``Symbol/notReceived`` or ``Symbol/smallDelta``.
        case oneBitVector([Symbol])
        /// T = 1, S = 1 (§3.1.4): exactly 7 two-bit symbols.
        case twoBitVector([Symbol])

        /// The longest run a run-length chunk holds.
        public static let maxRunLength = 0x1FFF

        /// Decodes the chunk's 16 bits. Throws for the reserved symbol 3.
        public init(bits: UInt16) throws(RTPError) {
            func symbol(_ value: UInt16) throws(RTPError) -> Symbol {
                guard let symbol = Symbol(rawValue: UInt8(value)) else {
                    throw .malformed(.feedback, "transport-cc status symbol 3 is reserved")
                }
                return symbol
            }
            if bits & 0x8000 == 0 {
                self = .runLength(try symbol(bits >> 13 & 0x3), length: Int(bits & 0x1FFF))
            } else if bits & 0x4000 == 0 {
                self = .oneBitVector((0..<14).map { bits >> (13 - $0) & 1 == 1 ? .smallDelta : .notReceived })
            } else {
                var symbols: [Symbol] = []
                symbols.reserveCapacity(7)
                for index in 0..<7 { symbols.append(try symbol(bits >> (12 - 2 * index) & 0x3)) }
                self = .twoBitVector(symbols)
            }
        }

        /// The chunk's 16 bits. Throws when a vector has the wrong number of symbols, a one-bit vector holds a
        /// large delta, or a run is longer than ``maxRunLength``.
        public func bits() throws(RTPError) -> UInt16 {
            switch self {
            case .runLength(let symbol, let length):
                guard (0...Self.maxRunLength).contains(length) else {
                    throw .tooMany(.feedback, count: length, limit: Self.maxRunLength)
                }
                return UInt16(symbol.rawValue) << 13 | UInt16(length)
            case .oneBitVector(let symbols):
                guard symbols.count == 14, !symbols.contains(.largeDelta) else {
                    throw .malformed(.feedback, "one-bit status vector needs 14 symbols without large deltas")
                }
                var bits: UInt16 = 0x8000
                for (index, symbol) in symbols.enumerated() { bits |= UInt16(symbol.rawValue) << (13 - index) }
                return bits
            case .twoBitVector(let symbols):
                guard symbols.count == 7 else { throw .malformed(.feedback, "two-bit status vector needs 7 symbols") }
                var bits: UInt16 = 0xC000
                for (index, symbol) in symbols.enumerated() { bits |= UInt16(symbol.rawValue) << (12 - 2 * index) }
                return bits
            }
        }

        /// How many packets the chunk describes.
        public var capacity: Int {
            switch self {
            case .runLength(_, let length): length
            case .oneBitVector: 14
            case .twoBitVector: 7
            }
        }

        /// The symbol of the chunk's `index`-th packet (`index < capacity`).
        func symbol(at index: Int) -> Symbol {
            switch self {
            case .runLength(let symbol, _): symbol
            case .oneBitVector(let symbols), .twoBitVector(let symbols): symbols[index]
            }
        }
    }

    /// One packet of the range: not received, or received `delta` × 250 µs after the packet received before
    /// it (the first one: after the reference time).
    public enum PacketStatus: Sendable, Equatable {
        case notReceived
        case received(delta: Int16)
    }

    /// A receive delta's unit, µs (§3.1.5).
    public static let deltaMicros: Int64 = 250
    /// The reference time's unit, µs (§3.1).
    public static let referenceTimeMicros: Int64 = 64_000
    /// The reference time's range: signed 24 bits.
    public static let referenceTimeRange: ClosedRange<Int32> = -(1 << 23)...((1 << 23) - 1)

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    /// The transport-wide sequence number of the first packet described.
    public var baseSequenceNumber: UInt16
    /// How many packets the chunks describe (1…65535).
    public var packetStatusCount: UInt16
    /// Signed 24-bit, in units of 64 ms (``referenceTimeMicros``) of the receiver's clock.
    public var referenceTime: Int32
    /// Counts feedback packets sent, mod 256, so the sender can tell one was lost.
    public var feedbackPacketCount: UInt8
    public var chunks: [StatusChunk]
    /// One delta per received packet, in 250 µs ticks, in sequence order.
    public var receiveDeltas: [Int16]

    /// A packet made of its fields as they are on the wire (chunks and deltas must agree; ``serialize(into:)``
    /// checks).
    public init(
        senderSSRC: UInt32, mediaSSRC: UInt32, baseSequenceNumber: UInt16, packetStatusCount: UInt16,
        referenceTime: Int32, feedbackPacketCount: UInt8, chunks: [StatusChunk], receiveDeltas: [Int16]
    ) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.baseSequenceNumber = baseSequenceNumber
        self.packetStatusCount = packetStatusCount
        self.referenceTime = referenceTime
        self.feedbackPacketCount = feedbackPacketCount
        self.chunks = chunks
        self.receiveDeltas = receiveDeltas
    }

    /// A packet describing `statuses` (for `base`, `base + 1`, …): chosen chunks (run lengths for runs,
    /// one-bit vectors where no delta is large, two-bit vectors otherwise) and the deltas in order. A delta
    /// in 0…255 gets the small symbol, any other the large one. Throws for no statuses or more than 65535.
    public init(
        senderSSRC: UInt32, mediaSSRC: UInt32, baseSequenceNumber: UInt16, referenceTime: Int32,
        feedbackPacketCount: UInt8, statuses: [PacketStatus]
    ) throws(RTPError) {
        guard !statuses.isEmpty else { throw .malformed(.feedback, "transport-cc feedback needs a packet") }
        guard statuses.count <= Int(UInt16.max) else { throw .tooMany(.feedback, count: statuses.count, limit: Int(UInt16.max)) }
        var symbols: [Symbol] = []
        symbols.reserveCapacity(statuses.count)
        var deltas: [Int16] = []
        for status in statuses {
            switch status {
            case .notReceived: symbols.append(.notReceived)
            case .received(let delta):
                symbols.append((0...255).contains(delta) ? .smallDelta : .largeDelta)
                deltas.append(delta)
            }
        }
        self.init(
            senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, baseSequenceNumber: baseSequenceNumber,
            packetStatusCount: UInt16(statuses.count), referenceTime: referenceTime,
            feedbackPacketCount: feedbackPacketCount, chunks: Self.chunks(for: symbols), receiveDeltas: deltas)
    }

    /// The chunks for `symbols`: a run-length chunk where a run fills 14 or more (or ends the list), else a
    /// one-bit vector of the next 14 when none of them is large, else a run of 7 or more, else a two-bit
    /// vector of the next 7. Vectors reaching past the end are filled with ``Symbol/notReceived``.
    public static func chunks(for symbols: [Symbol]) -> [StatusChunk] {
        var chunks: [StatusChunk] = []
        var index = 0
        while index < symbols.count {
            let symbol = symbols[index]
            var run = 1
            while index + run < symbols.count, symbols[index + run] == symbol, run < StatusChunk.maxRunLength { run += 1 }
            let remaining = symbols.count - index
            let window = symbols[index..<min(index + 14, symbols.count)]
            if run >= 14 || run == remaining {
                chunks.append(.runLength(symbol, length: run))
                index += run
            } else if !window.contains(.largeDelta) {
                chunks.append(.oneBitVector(Array(window) + Array(repeating: .notReceived, count: 14 - window.count)))
                index += 14
            } else if run >= 7 {
                chunks.append(.runLength(symbol, length: run))
                index += run
            } else {
                let seven = symbols[index..<min(index + 7, symbols.count)]
                chunks.append(.twoBitVector(Array(seven) + Array(repeating: .notReceived, count: 7 - seven.count)))
                index += 7
            }
        }
        return chunks
    }

    /// The status of each packet of the range, in sequence order (``packetStatusCount`` entries).
    public var statuses: [PacketStatus] {
        var result: [PacketStatus] = []
        result.reserveCapacity(Int(packetStatusCount))
        var deltas = receiveDeltas.makeIterator()
        forEachSymbol { symbol in
            result.append(symbol == .notReceived ? .notReceived : .received(delta: deltas.next() ?? 0))
        }
        return result
    }

    /// The reference time in µs of the receiver's clock (``referenceTime`` × 64 ms).
    public var referenceTimeMicroseconds: Int64 { Int64(referenceTime) * Self.referenceTimeMicros }

    /// Calls `body` with each packet's sequence number and arrival time (µs of the receiver's clock, on the
    /// same scale as ``referenceTimeMicroseconds``), or nil when it was not received; in sequence order.
    public func forEachPacket(_ body: (_ sequenceNumber: UInt16, _ arrivalMicros: Int64?) -> Void) {
        var sequence = baseSequenceNumber
        var time = referenceTimeMicroseconds
        var deltas = receiveDeltas.makeIterator()
        forEachSymbol { symbol in
            if symbol == .notReceived {
                body(sequence, nil)
            } else {
                time += Int64(deltas.next() ?? 0) * Self.deltaMicros
                body(sequence, time)
            }
            sequence &+= 1
        }
    }

    /// The symbols of the received packets (those with a delta), in order.
    func receivedSymbols() -> [Symbol] {
        var symbols: [Symbol] = []
        forEachSymbol { if $0 != .notReceived { symbols.append($0) } }
        return symbols
    }

    /// Calls `body` with the first ``packetStatusCount`` symbols the chunks describe.
    private func forEachSymbol(_ body: (Symbol) -> Void) {
        var left = Int(packetStatusCount)
        for chunk in chunks where left > 0 {
            let used = min(chunk.capacity, left)
            for index in 0..<used { body(chunk.symbol(at: index)) }
            left -= used
        }
    }
}
