/// The payload protocol identifiers of WebRTC data channels (RFC 8831 §8, IANA "SCTP Payload Protocol
/// Identifiers"), carried in every SCTP DATA chunk.
public enum PayloadProtocol: UInt32, Sendable {
    /// DCEP (RFC 8832 §8.1).
    case dcep = 50
    /// A UTF-8 string message.
    case string = 51
    /// A string part (deprecated, RFC 8831 §8: never sent; refused).
    case stringPartial = 52
    /// A binary message.
    case binary = 53
    /// A binary part (deprecated; refused).
    case binaryPartial = 54
    /// An empty string: the payload is one byte, 0, ignored (RFC 8831 §6.6: SCTP cannot send 0 bytes).
    case stringEmpty = 56
    /// An empty binary message (one ignored byte, as 56).
    case binaryEmpty = 57
}

/// How a channel delivers (RFC 8832 §5.1, DATA_CHANNEL_OPEN's Channel Type and Reliability Parameter).
public struct ChannelReliability: Sendable, Equatable {
    /// When a message is given up (the Channel Type's reliability bits and its 32-bit Reliability Parameter).
    public enum Limit: Sendable, Equatable {
        /// Retransmitted until acknowledged.
        case reliable
        /// At most this many retransmissions (PR-SCTP, RFC 3758).
        case maxRetransmits(UInt32)
        /// Given up after this many ms (PR-SCTP, RFC 3758).
        case lifetimeMillis(UInt32)
    }

    /// Delivered in order.
    public var ordered: Bool
    /// When a message is given up.
    public var limit: Limit

    /// Ordered and reliable by default (an `RTCDataChannel`'s defaults).
    public init(ordered: Bool = true, limit: Limit = .reliable) {
        self.ordered = ordered
        self.limit = limit
    }

    /// The Channel Type byte (0x00/0x01/0x02, +0x80 when unordered) and the Reliability Parameter.
    var wire: (type: UInt8, parameter: UInt32) {
        let unordered: UInt8 = ordered ? 0 : 0x80
        switch limit {
        case .reliable: return (unordered, 0)
        case .maxRetransmits(let count): return (unordered | 0x01, count)
        case .lifetimeMillis(let ms): return (unordered | 0x02, ms)
        }
    }

    init?(type: UInt8, parameter: UInt32) {
        ordered = type & 0x80 == 0
        switch type & 0x7f {
        case 0x00: limit = .reliable
        case 0x01: limit = .maxRetransmits(parameter)
        case 0x02: limit = .lifetimeMillis(parameter)
        default: return nil
        }
    }
}

/// A message of the Data Channel Establishment Protocol (RFC 8832 §5), sent with PPID 50 on the channel's
/// stream.
///
/// ```
///  DATA_CHANNEL_OPEN (RFC 8832 §5.1), network byte order:
///   0                   1                   2                   3
///   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///  |  Message Type |  Channel Type |            Priority           |
///  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///  |                    Reliability Parameter                      |
///  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///  |         Label Length          |       Protocol Length         |
///  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///  \                 Label (UTF-8, Label Length bytes)             /
///  \                 Protocol (UTF-8, Protocol Length bytes)       /
///  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///  Message Type 0x03. DATA_CHANNEL_ACK (§5.2) is the Message Type 0x02 alone.
/// ```
public enum DCEPMessage: Sendable, Equatable {
    case open(label: String, protocol: String, reliability: ChannelReliability, priority: UInt16)
    case ack

    /// The longest label and the longest protocol we take (bytes of UTF-8). RFC 8832 allows 65535; a
    /// browser's labels are a few words, and the limit bounds what one OPEN holds in memory.
    public static let maxLabelBytes = 1024

    /// DATA_CHANNEL_OPEN's fixed part (bytes).
    static let openHeaderBytes = 12

    /// Parses one DCEP message (the whole SCTP message of PPID 50).
    /// - Throws: ``DataChannelError/malformedDCEP(_:)`` (empty, short, lengths past the end or trailing
    ///   bytes, an unknown channel type, label or protocol not UTF-8 or over ``maxLabelBytes``),
    ///   ``DataChannelError/unknownDCEPType(_:)``.
    public init(parsing bytes: UnsafeRawBufferPointer) throws(DataChannelError) {
        guard let type = bytes.first else { throw .malformedDCEP("empty message") }
        switch type {
        case 0x02:
            guard bytes.count == 1 else { throw .malformedDCEP("DATA_CHANNEL_ACK of \(bytes.count) bytes (1)") }
            self = .ack
        case 0x03:
            guard bytes.count >= Self.openHeaderBytes else {
                throw .malformedDCEP("DATA_CHANNEL_OPEN of \(bytes.count) bytes (at least \(Self.openHeaderBytes))")
            }
            func u16(_ at: Int) -> Int { Int(bytes[at]) << 8 | Int(bytes[at + 1]) }
            let parameter = UInt32(bytes[4]) << 24 | UInt32(bytes[5]) << 16 | UInt32(bytes[6]) << 8 | UInt32(bytes[7])
            guard let reliability = ChannelReliability(type: bytes[1], parameter: parameter) else {
                throw .malformedDCEP("unknown channel type 0x\(String(bytes[1], radix: 16))")
            }
            let labelLength = u16(8), protocolLength = u16(10)
            guard labelLength <= Self.maxLabelBytes, protocolLength <= Self.maxLabelBytes else {
                throw .malformedDCEP("label of \(labelLength) or protocol of \(protocolLength) bytes (at most \(Self.maxLabelBytes))")
            }
            guard Self.openHeaderBytes + labelLength + protocolLength == bytes.count else {
                throw .malformedDCEP("label and protocol lengths \(labelLength)+\(protocolLength) do not fill \(bytes.count - Self.openHeaderBytes) bytes")
            }
            let labelEnd = Self.openHeaderBytes + labelLength
            guard let label = Self.utf8(bytes[Self.openHeaderBytes..<labelEnd]),
                  let proto = Self.utf8(bytes[labelEnd..<bytes.count])
            else { throw .malformedDCEP("label or protocol is not UTF-8") }
            self = .open(label: label, protocol: proto, reliability: reliability, priority: UInt16(u16(2)))
        default:
            throw .unknownDCEPType(type)
        }
    }

    /// The message's bytes (label and protocol must be at most ``maxLabelBytes`` each: ours).
    public var bytes: [UInt8] {
        switch self {
        case .ack: return [0x02]
        case .open(let label, let proto, let reliability, let priority):
            let (type, parameter) = reliability.wire
            let labelBytes = Array(label.utf8), protocolBytes = Array(proto.utf8)
            var out: [UInt8] = [0x03, type, UInt8(priority >> 8), UInt8(priority & 0xff)]
            out += [UInt8(parameter >> 24), UInt8(parameter >> 16 & 0xff), UInt8(parameter >> 8 & 0xff), UInt8(parameter & 0xff)]
            out += [UInt8(labelBytes.count >> 8), UInt8(labelBytes.count & 0xff), UInt8(protocolBytes.count >> 8), UInt8(protocolBytes.count & 0xff)]
            return out + labelBytes + protocolBytes
        }
    }

    /// Strict UTF-8 decoding (nil for invalid sequences, SE-0405).
    static func utf8(_ bytes: Slice<UnsafeRawBufferPointer>) -> String? {
        String(validating: UnsafeRawBufferPointer(rebasing: bytes), as: UTF8.self)
    }
}
