// Fuzz target: what one ICE socket receives, demultiplexed by RFC 7983 §7 (RFC 5764 §5.1.2) and, within
// RTP/RTCP, by RFC 5761 §4, then read by the parser of its kind.
//
// Input: records [length u16] [datagram…] (the last one may be short).
// Properties: classification is total and follows the RFC 7983 ranges exactly (checked against the table
// below, written from the RFC, not from the code under test), is the same for an array and for a slice of
// a larger buffer, and every RTP/RTCP datagram ends in a packet or a typed RTPError.
import RTP

/// RFC 7983 §7's table, with RFC 5761 §4's RTP/RTCP split (payload types 64–95 with the marker are RTCP).
private func expectedKind(_ datagram: [UInt8]) -> DatagramKind {
    guard let first = datagram.first else { return .unknown }
    if first <= 3 { return .stun }
    if (16...19).contains(first) { return .zrtp }
    if (20...63).contains(first) { return .dtls }
    if (64...79).contains(first) { return .turnChannel }
    if (128...191).contains(first) {
        guard datagram.count >= 2 else { return .unknown }
        return (192...223).contains(datagram[1]) ? .rtcp : .rtp
    }
    return .unknown
}

func fuzzOne(_ bytes: [UInt8]) {
    var input = FuzzInput(bytes)
    while !input.isAtEnd {
        let length = Int(input.u16()) % 2049
        let datagram = Array(input.take(length))
        let kind = DatagramKind.classify(datagram)
        check(kind == expectedKind(datagram), "classified \(kind), RFC 7983 says \(expectedKind(datagram)) for first bytes \(datagram.prefix(2))")
        // The same bytes inside a larger buffer (a receive buffer's slice): indices must not be assumed 0-based.
        let buffer = [0xFF, 0x00] + datagram + [0xC8]
        check(DatagramKind.classify(buffer[2..<(2 + datagram.count)]) == kind, "a slice classified differently")
        switch kind {
        case .rtp:
            _ = try? RTPPacket(parsing: datagram)
        case .rtcp:
            _ = try? RTCPPacket.parseCompound(datagram)
        case .stun, .zrtp, .dtls, .turnChannel, .unknown:
            break
        }
    }
}
