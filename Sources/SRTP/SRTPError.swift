/// Why an SRTP or SRTCP packet could not be protected or unprotected, or a context not made: the one error
/// type of the `SRTP` module.
///
/// The per-packet cases carry no text, so failing a packet costs no allocation.
public enum SRTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The authentication tag did not verify (RFC 3711 §3.3/§3.4, RFC 7714 §9): tampered, or another key.
    case authenticationFailed
    /// The packet index was seen before or is older than the replay window (RFC 3711 §3.3.2).
    case replayed
    /// Too short, not RTP/RTCP version 2, or a header that runs past the end.
    case malformedPacket
    /// The caller's buffer lacks room for the trailer protect appends (bytes needed, bytes available).
    case bufferTooSmall(needed: Int, capacity: Int)
    /// The keying material does not fit the profile (what was wrong).
    case invalidKey(String)
    /// A context's settings are invalid (what was wrong; ours).
    case invalidConfiguration(String)
    /// Any other `srtp_err_status_t` (its numeric code and libsrtp's name for it).
    case library(code: Int32, name: String)

    /// True for failures caused by what arrived from the wire.
    public var isPeerError: Bool {
        switch self {
        case .authenticationFailed, .replayed, .malformedPacket: true
        case .bufferTooSmall, .invalidKey, .invalidConfiguration, .library: false
        }
    }

    public var description: String {
        switch self {
        case .authenticationFailed: "SRTP authentication failed"
        case .replayed: "SRTP packet replayed or too old"
        case .malformedPacket: "SRTP packet malformed"
        case .bufferTooSmall(let needed, let capacity): "SRTP buffer of \(capacity) bytes lacks room (\(needed) needed)"
        case .invalidKey(let reason): "SRTP key invalid: \(reason)"
        case .invalidConfiguration(let reason): "invalid SRTP configuration: \(reason)"
        case .library(let code, let name): "libsrtp error \(code) (\(name))"
        }
    }
}
