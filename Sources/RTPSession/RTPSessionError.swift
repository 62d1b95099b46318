public import RTP

/// Why a peer's RTP session could not be set up or could not send a frame: the one error type of the
/// `RTPSession` module. Nothing here comes from the wire — RTCP that does not parse is counted and dropped
/// (``RTPSenderChain/Statistics/rtcpIgnored``), never thrown.
public enum RTPSessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configuration cannot work: a packet size with no room for VP8 data, a payload type above 127,
    /// a non-positive interval (what was wrong).
    case invalidConfiguration(String)
    /// A frame could not be packetized (empty, or more packets than ``RTP/VP8Payloader/maxPacketsPerFrame``).
    case unsendableFrame(RTPError)

    public var description: String {
        switch self {
        case .invalidConfiguration(let reason): "invalid RTP session configuration: \(reason)"
        case .unsendableFrame(let error): "frame not sent: \(error)"
        }
    }
}
