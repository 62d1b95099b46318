/// One RTCP packet of a compound packet (RFC 3550 §6, RFC 4585 §6, RFC 5104 §4.3.1,
/// draft-alvestrand-rmcat-remb-03 §2.2).
///
/// Every RTCP packet starts with the common header (RFC 3550 §6.4.1):
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P| RC/FMT  |      PT       |             length            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// `length` is the packet's size in 32-bit words minus one (header included). A compound packet is such
/// packets back to back (RFC 3550 §6.1); with P = 1 the packet's last byte counts the padding bytes.
public enum RTCPPacket: Sendable, Equatable {
    /// PT = 200.
    case senderReport(RTCPSenderReport)
    /// PT = 201.
    case receiverReport(RTCPReceiverReport)
    /// PT = 202.
    case sourceDescription(RTCPSourceDescription)
    /// PT = 203.
    case goodbye(RTCPGoodbye)
    /// PT = 205 (RTPFB), FMT = 1.
    case nack(RTCPGenericNACK)
    /// PT = 206 (PSFB), FMT = 1.
    case pictureLossIndication(RTCPPictureLossIndication)
    /// PT = 206 (PSFB), FMT = 4.
    case fullIntraRequest(RTCPFullIntraRequest)
    /// PT = 206 (PSFB), FMT = 15 with the "REMB" identifier.
    case estimatedBitrate(RTCPRemb)

    /// RTCP packet type values (RFC 3550 §12.1, RFC 4585 §6.1).
    public enum PacketType {
        public static let senderReport: UInt8 = 200
        public static let receiverReport: UInt8 = 201
        public static let sourceDescription: UInt8 = 202
        public static let goodbye: UInt8 = 203
        public static let application: UInt8 = 204
        public static let transportFeedback: UInt8 = 205
        public static let payloadFeedback: UInt8 = 206
    }

    /// Parses a compound RTCP packet (a whole datagram after SRTCP unprotection) into its packets, in
    /// order. Packets of types or formats not modelled here (APP, XR, transport-wide CC, …) are skipped.
    /// Any malformed packet fails the whole datagram.
    public static func parseCompound(_ bytes: [UInt8]) throws(RTPError) -> [RTCPPacket] {
        try parseCompound(bytes[...])
    }

    /// Parses a compound RTCP packet from a slice.
    public static func parseCompound(_ bytes: ArraySlice<UInt8>) throws(RTPError) -> [RTCPPacket] {
        var packets: [RTCPPacket] = []
        try forEachPacket(in: bytes) { type, count, body throws(RTPError) in
            if let packet = try parse(type: type, count: count, body: body) { packets.append(packet) }
        }
        return packets
    }

    /// Walks a compound packet's common headers (RFC 3550 §6.1, §6.4.1) and calls `body` with each packet's
    /// type, its RC/FMT field and the bytes after the 4-byte header with any padding removed. Throws for a
    /// truncated header, version other than 2, a length beyond the datagram or a bad padding count.
    static func forEachPacket(
        in bytes: ArraySlice<UInt8>, _ body: (_ type: UInt8, _ count: UInt8, _ body: ArraySlice<UInt8>) throws(RTPError) -> Void
    ) throws(RTPError) {
        var offset = 0
        while offset < bytes.count {
            let available = bytes.count - offset
            guard available >= 4 else { throw .truncated(.rtcpHeader, needed: 4, available: available) }
            let first = bytes.u8(offset)
            guard first >> 6 == 2 else { throw .badVersion(first >> 6) }
            let count = first & 0x1F
            let type = bytes.u8(offset + 1)
            let size = (Int(bytes.u16(offset + 2)) + 1) * 4
            guard size <= available else { throw .truncated(.rtcpHeader, needed: size, available: available) }
            var packetBody = bytes.sub(offset + 4, size - 4)
            if first & 0x20 != 0 {
                let padding = Int(bytes.u8(offset + size - 1))
                guard padding >= 1, padding <= packetBody.count else {
                    throw .badPadding(count: padding, available: packetBody.count)
                }
                packetBody = packetBody.dropLast(padding)
            }
            try body(type, count, packetBody)
            offset += size
        }
    }

    private static func parse(type: UInt8, count: UInt8, body: ArraySlice<UInt8>) throws(RTPError) -> RTCPPacket? {
        switch (type, count) {
        case (PacketType.senderReport, _): .senderReport(try RTCPSenderReport(count: count, body: body))
        case (PacketType.receiverReport, _): .receiverReport(try RTCPReceiverReport(count: count, body: body))
        case (PacketType.sourceDescription, _): .sourceDescription(try RTCPSourceDescription(count: count, body: body))
        case (PacketType.goodbye, _): .goodbye(try RTCPGoodbye(count: count, body: body))
        case (PacketType.transportFeedback, RTCPGenericNACK.format): .nack(try RTCPGenericNACK(body: body))
        case (PacketType.payloadFeedback, RTCPPictureLossIndication.format):
            .pictureLossIndication(try RTCPPictureLossIndication(body: body))
        case (PacketType.payloadFeedback, RTCPFullIntraRequest.format): .fullIntraRequest(try RTCPFullIntraRequest(body: body))
        case (PacketType.payloadFeedback, RTCPRemb.format) where RTCPRemb.isREMB(body):
            .estimatedBitrate(try RTCPRemb(body: body))
        default: nil
        }
    }

    /// Appends this packet (header included, no padding).
    public func serialize(into buffer: inout [UInt8]) throws(RTPError) {
        switch self {
        case .senderReport(let packet): try packet.serialize(into: &buffer)
        case .receiverReport(let packet): try packet.serialize(into: &buffer)
        case .sourceDescription(let packet): try packet.serialize(into: &buffer)
        case .goodbye(let packet): try packet.serialize(into: &buffer)
        case .nack(let packet): try packet.serialize(into: &buffer)
        case .pictureLossIndication(let packet): try packet.serialize(into: &buffer)
        case .fullIntraRequest(let packet): try packet.serialize(into: &buffer)
        case .estimatedBitrate(let packet): try packet.serialize(into: &buffer)
        }
    }

    /// The bytes of a compound packet made of `packets` in order. RFC 3550 §6.1 wants a report (SR or RR)
    /// first and an SDES CNAME in each compound packet; RFC 5506 allows reduced-size feedback alone. This
    /// writes what it is given.
    public static func serializeCompound(_ packets: [RTCPPacket]) throws(RTPError) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(64 * packets.count)
        for packet in packets { try packet.serialize(into: &buffer) }
        return buffer
    }
}

// MARK: - Common header writing

extension Array<UInt8> {
    /// Appends a common header with a placeholder length; returns where the packet starts, for
    /// ``finishRTCPPacket(startingAt:)``.
    mutating func beginRTCPPacket(count: UInt8, type: UInt8) -> Int {
        let start = self.count
        append(0x80 | (count & 0x1F))
        append(type)
        appendU16(0)
        return start
    }

    /// Pads the packet begun at `start` to a word boundary and writes its length field.
    mutating func finishRTCPPacket(startingAt start: Int) throws(RTPError) {
        padToWord(from: start)
        let words = (count - start) / 4 - 1
        guard words <= Int(UInt16.max) else {
            removeSubrange(start...)
            throw .tooMany(.rtcpHeader, count: words, limit: Int(UInt16.max))
        }
        setU16(UInt16(words), at: start + 2)
    }
}

extension RTCPPacket {
    /// A compound RTCP packet (RFC 3550 §6.1) of a participant that has sent no media: a Receiver Report
    /// with no report blocks (RC = 0, §6.4.2), then SDES with the CNAME (§6.5.1). Bytes in network order,
    /// unprotected (SRTCP protection is the caller's).
    /// - Throws: ``RTPError`` for a CNAME an SDES item cannot carry (over 255 bytes).
    public static func emptyReceiverReport(ssrc: UInt32, cname: String) throws(RTPError) -> [UInt8] {
        try serializeCompound([
            .receiverReport(RTCPReceiverReport(ssrc: ssrc)), .sourceDescription(RTCPSourceDescription(ssrc: ssrc, cname: cname)),
        ])
    }
}
