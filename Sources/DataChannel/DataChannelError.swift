/// Why a data channel operation failed: the one error type of the `DataChannel` module.
///
/// Errors that name the peer (``isPeerError``) close one channel (never the call); the rest are ours.
public enum DataChannelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A DCEP message (RFC 8832 §5) that does not parse: too short, lengths past its end, a label or
    /// protocol that is not UTF-8, or longer than ``DCEPMessage/maxLabelBytes``.
    case malformedDCEP(String)
    /// A DCEP message type other than DATA_CHANNEL_OPEN (0x03) and DATA_CHANNEL_ACK (0x02).
    case unknownDCEPType(UInt8)
    /// A message larger than the limit (bytes): ours (`a=max-message-size`, RFC 8841 §6) or the peer's.
    case messageTooLarge(size: Int, limit: Int)
    /// A payload protocol identifier data channels do not use (RFC 8831 §8; 52 and 54 are deprecated).
    case unsupportedPayloadProtocol(UInt32)
    /// A string message (PPID 51) that is not UTF-8 (RFC 8831 §6.6).
    case invalidUTF8
    /// No open channel on this stream.
    case noSuchChannel(UInt16)
    /// Every stream id of our parity is in use, or the channel limit is reached.
    case tooManyChannels(limit: Int)
    /// usrsctp refused a call (the function and its errno text).
    case sctp(String)
    /// The association is not up (not yet connected, or ended).
    case notConnected

    /// True when the peer is at fault.
    public var isPeerError: Bool {
        switch self {
        case .malformedDCEP, .unknownDCEPType, .unsupportedPayloadProtocol, .invalidUTF8: true
        case .messageTooLarge, .noSuchChannel, .tooManyChannels, .sctp, .notConnected: false
        }
    }

    public var description: String {
        switch self {
        case .malformedDCEP(let reason): "malformed DCEP message: \(reason)"
        case .unknownDCEPType(let type): "unknown DCEP message type 0x\(String(type, radix: 16))"
        case .messageTooLarge(let size, let limit): "message of \(size) bytes exceeds the limit of \(limit) bytes"
        case .unsupportedPayloadProtocol(let ppid): "unsupported payload protocol identifier \(ppid)"
        case .invalidUTF8: "string message is not UTF-8"
        case .noSuchChannel(let stream): "no open data channel on stream \(stream)"
        case .tooManyChannels(let limit): "no data channel left (limit \(limit))"
        case .sctp(let reason): "SCTP: \(reason)"
        case .notConnected: "the SCTP association is not up"
        }
    }
}
