/// What a datagram received on the one shared ICE socket carries, by its first byte (RFC 7983 §7, which
/// updates RFC 5764 §5.1.2), and RTP from RTCP by the second byte (RFC 5761 §4):
///
/// ```
///                 +----------------+
///                 |        [0..3] -+--> forward to STUN
///                 |                |
///                 |      [16..19] -+--> forward to ZRTP
///                 |                |
///     packet -->  |      [20..63] -+--> forward to DTLS
///                 |                |
///                 |      [64..79] -+--> forward to TURN Channel
///                 |                |
///                 |    [128..191] -+--> forward to RTP/RTCP
///                 +----------------+
/// ```
/// Within 128…191, a second byte (marker bit + payload type) of 192…223 is RTCP (packet types 192…223;
/// SR = 200 … PSFB = 206), anything else RTP — which is why RTP payload types 64…95 must not be used
/// with rtcp-mux.
public enum DatagramKind: Sendable, Equatable, CaseIterable {
    case stun
    case zrtp
    case dtls
    case turnChannel
    case rtp
    case rtcp
    /// Empty, a first byte in no range above, or an RTP/RTCP first byte without a second byte: drop it.
    case unknown

    /// Classifies a datagram by its first (and for RTP/RTCP, second) byte. Never fails.
    public static func classify(_ datagram: ArraySlice<UInt8>) -> DatagramKind {
        guard let first = datagram.first else { return .unknown }
        switch first {
        case 0...3: return .stun
        case 16...19: return .zrtp
        case 20...63: return .dtls
        case 64...79: return .turnChannel
        case 128...191:
            guard datagram.count >= 2 else { return .unknown }
            let second = datagram[datagram.startIndex + 1]
            return (192...223).contains(second) ? .rtcp : .rtp
        default: return .unknown
        }
    }

    /// Classifies a whole datagram.
    public static func classify(_ datagram: [UInt8]) -> DatagramKind { classify(datagram[...]) }
}
