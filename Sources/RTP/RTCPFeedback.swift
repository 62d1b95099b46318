// RTCP feedback messages (RFC 4585 §6.1) share this layout:
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |V=2|P|   FMT   |       PT      |          length               |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                  SSRC of packet sender                        |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                  SSRC of media source                         |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// :            Feedback Control Information (FCI)                 :
// :                                                               :

/// Reads the two SSRCs every feedback message starts with.
private func feedbackSSRCs(_ body: ArraySlice<UInt8>) throws(RTPError) -> (sender: UInt32, media: UInt32) {
    guard body.count >= 8 else { throw .truncated(.feedback, needed: 12, available: body.count + 4) }
    return (body.u32(0), body.u32(4))
}

/// Generic NACK, PT = 205 (RTPFB), FMT = 1 (RFC 4585 §6.2.1): sequence numbers the receiver is missing.
///
/// Each FCI entry names a packet ID and a bitmask of the 16 following sequence numbers also lost:
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |            PID                |             BLP               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// Bit i of BLP (least significant = 0) set means PID + i + 1 is lost too.
public struct RTCPGenericNACK: Sendable, Equatable {
    static let format: UInt8 = 1

    /// One PID + BLP entry.
    public struct Entry: Sendable, Equatable {
        public var packetID: UInt16
        public var lostBitmask: UInt16

        public init(packetID: UInt16, lostBitmask: UInt16) {
            self.packetID = packetID
            self.lostBitmask = lostBitmask
        }
    }

    public var senderSSRC: UInt32
    /// The SSRC whose packets are missing.
    public var mediaSSRC: UInt32
    public var entries: [Entry]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32, entries: [Entry]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.entries = entries
    }

    /// Packs sequence numbers into as few entries as they allow, in sending order (wrap-aware,
    /// relative to the first one given); duplicates are merged.
    public init(senderSSRC: UInt32, mediaSSRC: UInt32, sequenceNumbers: [UInt16]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        entries = []
        guard let reference = sequenceNumbers.first else { return }
        let ordered = sequenceNumbers.sorted {
            SequenceNumber.distance(from: reference, to: $0) < SequenceNumber.distance(from: reference, to: $1)
        }
        for sequence in ordered {
            if var last = entries.last {
                let distance = SequenceNumber.distance(from: last.packetID, to: sequence)
                if distance == 0 { continue }
                if (1...16).contains(distance) {
                    last.lostBitmask |= 1 << (distance - 1)
                    entries[entries.count - 1] = last
                    continue
                }
            }
            entries.append(Entry(packetID: sequence, lostBitmask: 0))
        }
    }

    /// Every sequence number the entries name, in order.
    public var sequenceNumbers: [UInt16] {
        var result: [UInt16] = []
        for entry in entries {
            result.append(entry.packetID)
            for bit in 0..<16 where entry.lostBitmask & (1 << bit) != 0 {
                result.append(entry.packetID &+ UInt16(bit + 1))
            }
        }
        return result
    }

    init(body: ArraySlice<UInt8>) throws(RTPError) {
        (senderSSRC, mediaSSRC) = try feedbackSSRCs(body)
        let fci = body.sub(from: 8)
        guard fci.count % 4 == 0 else { throw .malformed(.feedback, "NACK FCI of \(fci.count) bytes") }
        entries = stride(from: 0, to: fci.count, by: 4).map { Entry(packetID: fci.u16($0), lostBitmask: fci.u16($0 + 2)) }
    }

    public func serialize(into buffer: inout [UInt8]) throws(RTPError) {
        let start = buffer.beginRTCPPacket(count: Self.format, type: RTCPPacket.PacketType.transportFeedback)
        buffer.appendU32(senderSSRC)
        buffer.appendU32(mediaSSRC)
        for entry in entries {
            buffer.appendU16(entry.packetID)
            buffer.appendU16(entry.lostBitmask)
        }
        try buffer.finishRTCPPacket(startingAt: start)
    }
}

/// Picture Loss Indication, PT = 206 (PSFB), FMT = 1 (RFC 4585 §6.3.1): the receiver lost picture data and
/// needs a key frame. No FCI.
public struct RTCPPictureLossIndication: Sendable, Equatable {
    static let format: UInt8 = 1

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32

    public init(senderSSRC: UInt32, mediaSSRC: UInt32) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
    }

    init(body: ArraySlice<UInt8>) throws(RTPError) {
        (senderSSRC, mediaSSRC) = try feedbackSSRCs(body)
    }

    public func serialize(into buffer: inout [UInt8]) throws(RTPError) {
        let start = buffer.beginRTCPPacket(count: Self.format, type: RTCPPacket.PacketType.payloadFeedback)
        buffer.appendU32(senderSSRC)
        buffer.appendU32(mediaSSRC)
        try buffer.finishRTCPPacket(startingAt: start)
    }
}

/// Full Intra Request, PT = 206 (PSFB), FMT = 4 (RFC 5104 §4.3.1): a decoder refresh point is requested.
/// The common header's media source SSRC is 0 (§4.3.1.2); each FCI entry names the source:
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                              SSRC                             |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// | Seq nr.       |    Reserved                                   |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// A repeated request carries the same Seq nr.; a new request increments it (§4.3.1.2).
public struct RTCPFullIntraRequest: Sendable, Equatable {
    static let format: UInt8 = 4

    public struct Entry: Sendable, Equatable {
        public var ssrc: UInt32
        public var sequenceNumber: UInt8

        public init(ssrc: UInt32, sequenceNumber: UInt8) {
            self.ssrc = ssrc
            self.sequenceNumber = sequenceNumber
        }
    }

    public var senderSSRC: UInt32
    /// 0 on the wire per RFC 5104; kept as read.
    public var mediaSSRC: UInt32
    public var entries: [Entry]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32 = 0, entries: [Entry]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.entries = entries
    }

    init(body: ArraySlice<UInt8>) throws(RTPError) {
        (senderSSRC, mediaSSRC) = try feedbackSSRCs(body)
        let fci = body.sub(from: 8)
        guard fci.count % 8 == 0 else { throw .malformed(.feedback, "FIR FCI of \(fci.count) bytes") }
        entries = stride(from: 0, to: fci.count, by: 8).map { Entry(ssrc: fci.u32($0), sequenceNumber: fci.u8($0 + 4)) }
    }

    public func serialize(into buffer: inout [UInt8]) throws(RTPError) {
        let start = buffer.beginRTCPPacket(count: Self.format, type: RTCPPacket.PacketType.payloadFeedback)
        buffer.appendU32(senderSSRC)
        buffer.appendU32(mediaSSRC)
        for entry in entries {
            buffer.appendU32(entry.ssrc)
            buffer.append(entry.sequenceNumber)
            buffer.appendU24(0)
        }
        try buffer.finishRTCPPacket(startingAt: start)
    }
}

/// Receiver Estimated Maximum Bitrate, PT = 206 (PSFB), FMT = 15 (application layer feedback),
/// draft-alvestrand-rmcat-remb-03 §2.2:
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P| FMT=15  |   PT=206      |             length            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  SSRC of packet sender                        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  SSRC of media source (0)                     |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  Unique identifier 'R' 'E' 'M' 'B'                            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  Num SSRC     | BR Exp    |  BR Mantissa                      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |   SSRC feedback                                               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  ...                                                          |
/// ```
/// The bitrate is mantissa × 2^exp bits per second (6-bit exponent, 18-bit mantissa).
public struct RTCPRemb: Sendable, Equatable {
    static let format: UInt8 = 15
    private static let identifier: [UInt8] = Array("REMB".utf8)

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    /// The estimate in bits per second. When serialized it is rounded down to what 18 bits of mantissa
    /// hold (relative error below 2⁻¹⁷).
    public var bitrate: UInt64
    /// The media SSRCs the estimate applies to (at most 255).
    public var ssrcs: [UInt32]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32 = 0, bitrate: UInt64, ssrcs: [UInt32]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.bitrate = bitrate
        self.ssrcs = ssrcs
    }

    /// The bitrate in kbit/s (rounded down).
    public var kilobitsPerSecond: UInt64 { bitrate / 1000 }

    static func isREMB(_ body: ArraySlice<UInt8>) -> Bool {
        body.count >= 12 && body.sub(8, 4).elementsEqual(identifier)
    }

    init(body: ArraySlice<UInt8>) throws(RTPError) {
        (senderSSRC, mediaSSRC) = try feedbackSSRCs(body)
        guard body.count >= 16 else { throw .truncated(.feedback, needed: 20, available: body.count + 4) }
        let count = Int(body.u8(12))
        let exponent = Int(body.u8(13) >> 2)
        let mantissa = UInt64(body.u24(13) & 0x3_FFFF)
        bitrate = mantissa == 0 || mantissa.leadingZeroBitCount >= exponent ? mantissa << exponent : .max
        guard body.count >= 16 + 4 * count else {
            throw .truncated(.feedback, needed: 20 + 4 * count, available: body.count + 4)
        }
        ssrcs = (0..<count).map { body.u32(16 + 4 * $0) }
    }

    /// The (exponent, mantissa) pair for `bitrate`: the smallest exponent whose mantissa fits 18 bits.
    public static func encode(bitrate: UInt64) -> (exponent: UInt8, mantissa: UInt32) {
        var exponent: UInt8 = 0
        var mantissa = bitrate
        while mantissa > 0x3_FFFF {
            mantissa >>= 1
            exponent += 1
        }
        return (exponent, UInt32(mantissa))
    }

    public func serialize(into buffer: inout [UInt8]) throws(RTPError) {
        guard ssrcs.count <= 255 else { throw .tooMany(.feedback, count: ssrcs.count, limit: 255) }
        let start = buffer.beginRTCPPacket(count: Self.format, type: RTCPPacket.PacketType.payloadFeedback)
        buffer.appendU32(senderSSRC)
        buffer.appendU32(mediaSSRC)
        buffer.append(contentsOf: Self.identifier)
        buffer.append(UInt8(ssrcs.count))
        let (exponent, mantissa) = Self.encode(bitrate: bitrate)
        buffer.appendU24(UInt32(exponent) << 18 | mantissa)
        for ssrc in ssrcs { buffer.appendU32(ssrc) }
        try buffer.finishRTCPPacket(startingAt: start)
    }
}
