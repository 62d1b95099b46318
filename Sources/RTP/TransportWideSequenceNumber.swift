/// The transport-wide sequence number header extension (draft-holmer-rmcat-transport-wide-cc-extensions-01
/// §2), negotiated with `a=extmap:<id> http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01`.
/// In the RFC 8285 one-byte form:
/// ```
///  0                   1                   2
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  ID   | L=1   |transport-wide sequence number |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// The number (big-endian) grows by one for every RTP packet sent on the transport — all SSRCs, RTX and
/// padding included — and wraps at 2¹⁶. The receiver reports on these numbers in ``RTCPTransportFeedback``.
public enum TransportWideSequenceNumber {
    /// The extension's URI in SDP.
    public static let uri = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    /// Bytes of data in the element.
    public static let dataSize = 2

    /// The element carrying `sequenceNumber` under local identifier `id`.
    public static func element(id: UInt8, sequenceNumber: UInt16) -> RTPHeaderExtensionElement {
        RTPHeaderExtensionElement(id: id, data: [UInt8(sequenceNumber >> 8), UInt8(truncatingIfNeeded: sequenceNumber)][...])
    }

    /// The sequence number in `headerExtension` under `id`, or nil when there is no such element. Throws for
    /// malformed elements or an element of another size than 2 bytes.
    public static func read(from headerExtension: RTPHeaderExtension, id: UInt8) throws(RTPError) -> UInt16? {
        guard let data = try headerExtension.element(id: id) else { return nil }
        guard data.count == dataSize else {
            throw .malformed(.headerExtension, "transport-wide sequence number of \(data.count) bytes, expected 2")
        }
        return data.u16(0)
    }

    /// The sequence number of `packet` under `id`, or nil when it carries none.
    public static func read(from packet: RTPPacket, id: UInt8) throws(RTPError) -> UInt16? {
        guard let headerExtension = packet.headerExtension else { return nil }
        return try read(from: headerExtension, id: id)
    }

    /// Writes `sequenceNumber` into the element `id` of an already serialized RTP packet, in place — so a
    /// packet can be built once with a placeholder and numbered when the pacer sends it, as libwebrtc does.
    /// Throws when the bytes are not an RTP packet, carry no such element, or it is not 2 bytes long.
    public static func stamp(_ sequenceNumber: UInt16, id: UInt8, inSerializedPacket bytes: inout [UInt8]) throws(RTPError) {
        let offset = try dataOffset(id: id, inSerializedPacket: bytes[...])
        bytes[offset] = UInt8(sequenceNumber >> 8)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: sequenceNumber)
    }

    /// The index in `bytes` of the element's 2 data bytes.
    private static func dataOffset(id: UInt8, inSerializedPacket bytes: ArraySlice<UInt8>) throws(RTPError) -> Int {
        guard bytes.count >= RTPPacket.fixedHeaderSize else {
            throw .truncated(.rtpHeader, needed: RTPPacket.fixedHeaderSize, available: bytes.count)
        }
        let first = bytes.u8(0)
        guard first >> 6 == 2 else { throw .badVersion(first >> 6) }
        guard first & 0x10 != 0 else { throw .malformed(.headerExtension, "packet has no header extension") }
        let offset = RTPPacket.fixedHeaderSize + 4 * Int(first & 0x0F)
        guard bytes.count >= offset + 4 else { throw .truncated(.headerExtension, needed: offset + 4, available: bytes.count) }
        let length = 4 * Int(bytes.u16(offset + 2))
        guard bytes.count >= offset + 4 + length else {
            throw .truncated(.headerExtension, needed: offset + 4 + length, available: bytes.count)
        }
        let block = RTPHeaderExtension(profile: bytes.u16(offset), data: bytes.sub(offset + 4, length))
        guard let data = try block.element(id: id) else {
            throw .malformed(.headerExtension, "no transport-wide sequence number element with ID \(id)")
        }
        guard data.count == dataSize else {
            throw .malformed(.headerExtension, "transport-wide sequence number of \(data.count) bytes, expected 2")
        }
        return data.startIndex
    }
}

/// Hands out transport-wide sequence numbers, one per RTP packet sent on the transport, wrapping at 2¹⁶
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §2). Start at a seeded random value for replayable
/// bytes, or 0 / 1 as libwebrtc does.
public struct TransportWideSequencer: Sendable {
    /// The number the next packet gets.
    public private(set) var nextSequenceNumber: UInt16

    public init(first: UInt16 = 1) { nextSequenceNumber = first }

    /// The number for the packet being sent now.
    public mutating func next() -> UInt16 {
        defer { nextSequenceNumber &+= 1 }
        return nextSequenceNumber
    }
}
