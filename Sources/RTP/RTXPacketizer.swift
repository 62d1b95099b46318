/// Builds RTP retransmission packets (RFC 4588 §4) on the RTX stream (its own SSRC, payload type and
/// sequence numbers, negotiated with `a=rtpmap:N rtx/90000`, `a=fmtp:N apt=VP8` and `a=ssrc-group:FID`).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         RTP Header                            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |            OSN                |                               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               |
/// |                  Original RTP Packet Payload                  |
/// |                                                               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// The RTX header keeps the original's marker, timestamp, CSRCs and header extension; its PT, sequence
/// number and SSRC are the RTX stream's; OSN is the original sequence number (big-endian). The original's
/// padding is not carried.
public struct RTXPacketizer: Sendable {
    public let ssrc: UInt32
    /// The RTX payload type, 0…127.
    public let payloadType: UInt8
    /// The sequence number the next RTX packet gets.
    public private(set) var nextSequenceNumber: UInt16

    public init(ssrc: UInt32, payloadType: UInt8, initialSequenceNumber: UInt16) {
        self.ssrc = ssrc
        self.payloadType = payloadType & 0x7F
        nextSequenceNumber = initialSequenceNumber
    }

    /// Appends the RTX packet for `original` (a serialized RTP packet, e.g. from ``RTPPacketHistory``)
    /// to `buffer`.
    public mutating func wrap(_ original: [UInt8], into buffer: inout [UInt8]) throws(RTPError) {
        let packet = try RTPPacket(parsing: original)
        let headerSize = packet.headerSize
        buffer.reserveCapacity(buffer.count + headerSize + 2 + packet.payload.count)
        let start = buffer.count
        buffer.append(contentsOf: original[0..<headerSize])
        buffer[start] &= ~0x20  // no padding
        buffer[start + 1] = (buffer[start + 1] & 0x80) | payloadType
        buffer.setU16(nextSequenceNumber, at: start + 2)
        buffer[start + 8] = UInt8(truncatingIfNeeded: ssrc >> 24)
        buffer[start + 9] = UInt8(truncatingIfNeeded: ssrc >> 16)
        buffer[start + 10] = UInt8(truncatingIfNeeded: ssrc >> 8)
        buffer[start + 11] = UInt8(truncatingIfNeeded: ssrc)
        buffer.appendU16(packet.sequenceNumber)
        buffer.append(contentsOf: packet.payload)
        nextSequenceNumber &+= 1
    }

    /// The RTX packet for `original` as header + payload: the original's header with the RTX stream's PT,
    /// sequence number and SSRC, no padding, and a new payload of the OSN followed by the original payload.
    public mutating func wrap(_ original: RTPPacket) -> RTPPacket {
        var payload: [UInt8] = []
        payload.reserveCapacity(2 + original.payload.count)
        payload.appendU16(original.sequenceNumber)
        payload.append(contentsOf: original.payload)
        var rtx = original
        rtx.payloadType = payloadType
        rtx.sequenceNumber = nextSequenceNumber
        rtx.ssrc = ssrc
        rtx.payload = payload[...]
        rtx.paddingCount = 0
        nextSequenceNumber &+= 1
        return rtx
    }

    /// A padding-only packet on the RTX stream (RFC 3550 §5.1 padding, no payload; libwebrtc probes with
    /// these): `bytes` of padding (1…255, clamped) after the header, the next RTX sequence number, `timestamp`
    /// (the media's latest). The receiver counts it in its transport-wide feedback and discards it.
    public mutating func padding(bytes: Int, timestamp: UInt32) -> RTPPacket {
        let packet = RTPPacket(
            marker: false, payloadType: payloadType, sequenceNumber: nextSequenceNumber, timestamp: timestamp, ssrc: ssrc,
            payload: [][...], paddingCount: UInt8(min(max(bytes, 1), 255)))
        nextSequenceNumber &+= 1
        return packet
    }

    /// The RTX packet for `original`, in a new array.
    public mutating func wrap(_ original: [UInt8]) throws(RTPError) -> [UInt8] {
        var buffer: [UInt8] = []
        try wrap(original, into: &buffer)
        return buffer
    }

    /// Recovers the original packet from a received RTX packet (the receiver side of RFC 4588 §4): the OSN
    /// becomes the sequence number, the original SSRC and payload type (from `a=ssrc-group:FID` and `apt=`)
    /// are restored. The payload shares the RTX packet's storage.
    public static func unwrap(
        _ rtx: RTPPacket, originalSSRC: UInt32, originalPayloadType: UInt8
    ) throws(RTPError) -> RTPPacket {
        guard rtx.payload.count >= 2 else { throw .truncated(.rtx, needed: 2, available: rtx.payload.count) }
        var original = rtx
        original.sequenceNumber = rtx.payload.u16(0)
        original.ssrc = originalSSRC
        original.payloadType = originalPayloadType & 0x7F
        original.payload = rtx.payload.dropFirst(2)
        original.paddingCount = 0
        return original
    }
}
