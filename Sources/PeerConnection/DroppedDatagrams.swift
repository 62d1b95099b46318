public import ScreencastSupport
import SRTP

/// Datagrams from the peer that were dropped, by why. None of them ends the peer: only authenticated input
/// (a close_notify or fatal alert inside DTLS, an RTCP BYE inside SRTCP) does.
public struct DroppedDatagrams: Sendable, Equatable {
    /// Empty, or a first byte in no range of RFC 7983 §7.
    public var unknown = 0
    /// STUN-range (first byte 0–3) that the ICE agent did not take as STUN and passed up.
    public var stun = 0
    /// ZRTP (16–19): never negotiated.
    public var zrtp = 0
    /// TURN ChannelData (64–79) the ICE agent passed up.
    public var turnChannel = 0
    /// RTP (RFC 5761 §4): this peer only sends media.
    public var rtp = 0
    /// DTLS datagrams none of whose records reached OpenSSL (``DTLS/DTLSEndpoint/statistics`` has the
    /// records by reason; those OpenSSL discards for their tag are not seen here).
    public var dtls = 0
    /// SRTCP before the DTLS handshake gave the keys.
    public var rtcpBeforeKeys = 0
    /// SRTCP whose authentication tag did not verify (RFC 3711 §3.4, RFC 7714 §9.2).
    public var srtcpAuthenticationFailed = 0
    /// SRTCP replayed or older than the replay window (RFC 3711 §3.3.2).
    public var srtcpReplayed = 0
    /// SRTCP too short for its header and trailer, or not RTCP (RFC 3711 §3.4).
    public var srtcpMalformed = 0
    /// SRTCP libsrtp refused for another reason (its error code).
    public var srtcpOther = 0
    /// Authenticated RTCP that does not parse as a compound packet (RFC 3550 §6.1).
    public var rtcpMalformed = 0

    public init() {}

    /// Every dropped datagram.
    public var total: Int {
        unknown + stun + zrtp + turnChannel + rtp + dtls + rtcpBeforeKeys + srtcpAuthenticationFailed
            + srtcpReplayed + srtcpMalformed + srtcpOther + rtcpMalformed
    }

    /// Counts an SRTCP packet libsrtp refused, by why.
    mutating func countSRTCP(_ error: SRTPError) {
        switch error {
        case .authenticationFailed: srtcpAuthenticationFailed += 1
        case .replayed: srtcpReplayed += 1
        case .malformedPacket: srtcpMalformed += 1
        default: srtcpOther += 1
        }
    }

    /// The `droppedDatagrams` object of `/stats`.
    public var json: JSONValue {
        .object([
            ("unknown", .number(unknown)), ("stun", .number(stun)), ("zrtp", .number(zrtp)),
            ("turnChannel", .number(turnChannel)), ("rtp", .number(rtp)), ("dtls", .number(dtls)),
            ("rtcpBeforeKeys", .number(rtcpBeforeKeys)), ("srtcpAuthenticationFailed", .number(srtcpAuthenticationFailed)),
            ("srtcpReplayed", .number(srtcpReplayed)), ("srtcpMalformed", .number(srtcpMalformed)),
            ("srtcpOther", .number(srtcpOther)), ("rtcpMalformed", .number(rtcpMalformed)),
        ])
    }
}
