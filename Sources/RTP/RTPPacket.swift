/// An RTP data packet (RFC 3550 §5.1).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                           timestamp                           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           synchronization source (SSRC) identifier            |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |            contributing source (CSRC) identifiers             |
/// |                             ....                              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |          header extension (X = 1, see RTPHeaderExtension)     |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                           payload  ...                        |
/// |                               +-------------------------------+
/// |                               | padding (P = 1)   | pad count |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// All fields are big-endian. Parsing does not copy: ``payload`` and the extension's data are slices of the
/// parsed bytes.
public struct RTPPacket: Sendable, Equatable {
    /// Size of the fixed header in bytes.
    public static let fixedHeaderSize = 12

    /// M: for video, set on the last packet of a frame (RFC 7741 §4.1).
    public var marker: Bool
    /// PT, 0…127 (dynamic types 96…127 are negotiated in SDP).
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    /// Media clock ticks (90 kHz for video).
    public var timestamp: UInt32
    public var ssrc: UInt32
    /// Contributing sources, at most 15.
    public var csrcs: [UInt32]
    /// The header extension block, present when X = 1.
    public var headerExtension: RTPHeaderExtension?
    /// The payload, without padding.
    public var payload: ArraySlice<UInt8>
    /// Padding bytes after the payload including the final count byte; 0 for none (P = 0). Serialized as
    /// zero bytes followed by the count.
    public var paddingCount: UInt8

    public init(
        marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32,
        csrcs: [UInt32] = [], headerExtension: RTPHeaderExtension? = nil, payload: ArraySlice<UInt8>,
        paddingCount: UInt8 = 0
    ) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.headerExtension = headerExtension
        self.payload = payload
        self.paddingCount = paddingCount
    }

    /// Parses one RTP packet (a whole datagram after SRTP unprotection).
    public init(parsing bytes: [UInt8]) throws(RTPError) { try self.init(parsing: bytes[...]) }

    /// Parses one RTP packet from a slice; the result's payload shares the slice's storage.
    public init(parsing bytes: ArraySlice<UInt8>) throws(RTPError) {
        let size = bytes.count
        guard size >= Self.fixedHeaderSize else {
            throw .truncated(.rtpHeader, needed: Self.fixedHeaderSize, available: size)
        }
        let first = bytes.u8(0)
        guard first >> 6 == 2 else { throw .badVersion(first >> 6) }
        let hasPadding = first & 0x20 != 0
        let hasExtension = first & 0x10 != 0
        let csrcCount = Int(first & 0x0F)
        let second = bytes.u8(1)
        marker = second & 0x80 != 0
        payloadType = second & 0x7F
        sequenceNumber = bytes.u16(2)
        timestamp = bytes.u32(4)
        ssrc = bytes.u32(8)

        var offset = Self.fixedHeaderSize
        guard size >= offset + 4 * csrcCount else {
            throw .truncated(.rtpHeader, needed: offset + 4 * csrcCount, available: size)
        }
        var csrcs: [UInt32] = []
        if csrcCount > 0 {
            csrcs.reserveCapacity(csrcCount)
            for index in 0..<csrcCount { csrcs.append(bytes.u32(offset + 4 * index)) }
        }
        self.csrcs = csrcs
        offset += 4 * csrcCount

        if hasExtension {
            guard size >= offset + 4 else { throw .truncated(.headerExtension, needed: offset + 4, available: size) }
            let profile = bytes.u16(offset)
            let length = 4 * Int(bytes.u16(offset + 2))
            guard size >= offset + 4 + length else {
                throw .truncated(.headerExtension, needed: offset + 4 + length, available: size)
            }
            headerExtension = RTPHeaderExtension(profile: profile, data: bytes.sub(offset + 4, length))
            offset += 4 + length
        } else {
            headerExtension = nil
        }

        var end = size
        if hasPadding {
            let count = Int(bytes.u8(size - 1))
            guard count >= 1, count <= size - offset else { throw .badPadding(count: count, available: size - offset) }
            end -= count
            paddingCount = UInt8(count)
        } else {
            paddingCount = 0
        }
        payload = bytes.sub(offset, end - offset)
    }

    /// Bytes of the header: 12 + 4 × CSRCs + the extension block.
    public var headerSize: Int {
        Self.fixedHeaderSize + 4 * csrcs.count + (headerExtension.map { 4 + $0.data.count } ?? 0)
    }

    /// Bytes ``serialize(into:)`` appends.
    public var serializedSize: Int { headerSize + payload.count + Int(paddingCount) }

    /// Appends the packet's bytes to `buffer` (reserve ``serializedSize`` first to avoid growth).
    /// Throws for fields that do not fit the format: PT above 127, more than 15 CSRCs, an extension whose
    /// data is not a whole number of 32-bit words (or longer than 65535 words).
    public func serialize(into buffer: inout [UInt8]) throws(RTPError) {
        guard payloadType <= 127 else { throw .malformed(.rtpHeader, "payload type \(payloadType) above 127") }
        guard csrcs.count <= 15 else { throw .tooMany(.rtpHeader, count: csrcs.count, limit: 15) }
        if let headerExtension {
            guard headerExtension.data.count % 4 == 0, headerExtension.data.count / 4 <= Int(UInt16.max) else {
                throw .malformed(.headerExtension, "data of \(headerExtension.data.count) bytes is not whole words")
            }
        }
        var first: UInt8 = 0x80 | UInt8(csrcs.count)
        if paddingCount > 0 { first |= 0x20 }
        if headerExtension != nil { first |= 0x10 }
        buffer.append(first)
        buffer.append((marker ? 0x80 : 0) | payloadType)
        buffer.appendU16(sequenceNumber)
        buffer.appendU32(timestamp)
        buffer.appendU32(ssrc)
        for csrc in csrcs { buffer.appendU32(csrc) }
        if let headerExtension {
            buffer.appendU16(headerExtension.profile)
            buffer.appendU16(UInt16(headerExtension.data.count / 4))
            buffer.append(contentsOf: headerExtension.data)
        }
        buffer.append(contentsOf: payload)
        if paddingCount > 0 {
            for _ in 1..<paddingCount { buffer.append(0) }
            buffer.append(paddingCount)
        }
    }

    /// The packet's bytes in a new array of exactly ``serializedSize`` capacity.
    public func serialized() throws(RTPError) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(serializedSize)
        try serialize(into: &buffer)
        return buffer
    }
}

extension RTPPacket {
    /// Appends a 12-byte fixed header without CSRCs or extension (the payloader's fast path).
    @inline(__always)
    static func appendFixedHeader(
        to buffer: inout [UInt8], marker: Bool, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32,
        ssrc: UInt32
    ) {
        buffer.append(0x80)
        buffer.append((marker ? 0x80 : 0) | (payloadType & 0x7F))
        buffer.appendU16(sequenceNumber)
        buffer.appendU32(timestamp)
        buffer.appendU32(ssrc)
    }
}
