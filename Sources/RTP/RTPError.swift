/// Why bytes from the wire (or a request to build them) were refused. The one error type of the `RTP`
/// module: every parser and builder here throws it, typed, and none of them traps on wire input.
///
/// Datagrams arrive whole, so there is no "need more data" state in this module: a datagram shorter than its
/// own header says is simply ``truncated(_:needed:available:)``.
public enum RTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which wire structure an error is about.
    public enum Structure: String, Sendable, Equatable {
        case rtpHeader = "RTP header"
        case headerExtension = "RTP header extension"
        case padding = "RTP padding"
        case vp8Descriptor = "VP8 payload descriptor"
        case vp8PayloadHeader = "VP8 payload header"
        case rtcpHeader = "RTCP header"
        case senderReport = "RTCP SR"
        case receiverReport = "RTCP RR"
        case sourceDescription = "RTCP SDES"
        case goodbye = "RTCP BYE"
        case feedback = "RTCP feedback"
        case rtx = "RTX payload"
    }

    /// The bytes end before the structure does (`needed` bytes were required, `available` were there).
    case truncated(Structure, needed: Int, available: Int)
    /// The version field is not 2 (RFC 3550 §5.1, §6.4.1).
    case badVersion(UInt8)
    /// A padding count of zero or larger than the bytes it pads (RFC 3550 §5.1, §6.4.1).
    case badPadding(count: Int, available: Int)
    /// A field holds a value the format forbids (structure, what was wrong).
    case malformed(Structure, String)
    /// More items than the format can carry (e.g. 16 CSRCs, 32 report blocks, 256 SDES bytes).
    case tooMany(Structure, count: Int, limit: Int)
    /// A packet that would exceed its size limit: the RTP header alone leaves no room for payload
    /// within the configured maximum packet size (bytes).
    case packetSizeTooSmall(maxPacketSize: Int, headerSize: Int)
    /// An encoded frame that cannot be sent: empty, or needing more than `limit` packets.
    case unsendableFrame(bytes: Int, packetsNeeded: Int, limit: Int)
    /// A packet given to a per-SSRC component carries another SSRC (expected, found).
    case wrongSSRC(expected: UInt32, found: UInt32)

    public var description: String {
        switch self {
        case .truncated(let structure, let needed, let available):
            "\(structure.rawValue) truncated: needs \(needed) bytes, has \(available)"
        case .badVersion(let version): "RTP/RTCP version \(version), expected 2"
        case .badPadding(let count, let available): "padding count \(count) with \(available) bytes available"
        case .malformed(let structure, let reason): "malformed \(structure.rawValue): \(reason)"
        case .tooMany(let structure, let count, let limit): "\(structure.rawValue): \(count) items, limit \(limit)"
        case .packetSizeTooSmall(let max, let header):
            "maximum packet size \(max) leaves no payload room after \(header) header bytes"
        case .unsendableFrame(let bytes, let needed, let limit):
            "frame of \(bytes) bytes needs \(needed) packets (limit \(limit))"
        case .wrongSSRC(let expected, let found): "packet for SSRC \(found), expected \(expected)"
        }
    }
}
