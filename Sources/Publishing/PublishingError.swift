public import PeerConnection

/// Why publishing to an SFU failed: the one error type of the `Publishing` module. HTTP errors carry the
/// status and the server's body; Janus errors its numeric code. ``isRetryable`` says whether the reconnect
/// schedule (``ReconnectSchedule``) should try again.
public enum PublishingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libcurl could not complete the exchange: connection refused, timeout, DNS (libcurl's words).
    case transport(url: String, reason: String)
    /// The response (head and body) exceeded the named limit, bytes (``HTTPClient/Limits``).
    case responseTooLarge(url: String, limit: Int)
    /// The response head is not HTTP/1.x or HTTP/2 as RFC 9112 §4/§5 shape it (why).
    case malformedResponse(url: String, reason: String)
    /// The server answered with a status we did not expect (RFC 9110 §15), its body kept (at most 512 bytes).
    case httpStatus(method: String, url: String, status: Int, body: String)
    /// More than the limit of 307/308 redirects (RFC 9110 §15.4.8, §15.4.9), or a redirect without Location.
    case badRedirect(url: String, reason: String)
    /// A WHIP answer that breaks RFC 9725 §4.2 (no Location, not application/sdp, …).
    case whipProtocol(url: String, reason: String)
    /// The WHIP session or Janus session is gone (404 on PATCH, Janus code 458): a new session is needed.
    case sessionGone(url: String)
    /// Janus answered `"janus": "error"` (its `error.code`, e.g. 458 no such session, 459 no such handle).
    case janus(code: Int, reason: String)
    /// The VideoRoom plugin answered `error_code` (e.g. 426 no such room, 427 room exists, 433 unauthorized).
    case videoRoom(code: Int, reason: String)
    /// A Janus reply or event that is not the JSON the Janus HTTP API documents (why).
    case janusProtocol(String)
    /// Janus sent no answer to our offer within the limit, ms.
    case answerTimeout(millis: Int)
    /// The offering peer failed: gathering, the answer's SDP, ICE, DTLS.
    case peer(PeerConnectionError)
    /// The transport cannot restart ICE on a session (Janus here: publishing anew is the way back).
    case iceRestartUnsupported(server: String)
    /// Our options do not work (what was wrong): exit code 64 for the command line.
    case invalidConfiguration(String)

    /// Whether trying again later can help: transport failures, 5xx, a gone session, Janus errors other
    /// than bad requests. Bad options, 4xx (other than 404/408/429) and unusable answers are not.
    public var isRetryable: Bool {
        switch self {
        case .transport, .sessionGone, .answerTimeout, .malformedResponse, .responseTooLarge, .janusProtocol, .iceRestartUnsupported: true
        case .httpStatus(_, _, let status, _): status >= 500 || status == 404 || status == 408 || status == 429
        case .janus(let code, _): code == 458 || code == 459 || code >= 490
        case .videoRoom: false
        case .peer(let error): !error.isPeerError
        case .badRedirect, .whipProtocol, .invalidConfiguration: false
        }
    }

    public var description: String {
        switch self {
        case .transport(let url, let reason): "\(url): \(reason)"
        case .responseTooLarge(let url, let limit): "\(url): the response exceeds \(limit) bytes"
        case .malformedResponse(let url, let reason): "\(url): malformed HTTP response: \(reason)"
        case .httpStatus(let method, let url, let status, let body):
            "\(method) \(url): HTTP \(status)" + (body.isEmpty ? "" : ": \(body)")
        case .badRedirect(let url, let reason): "\(url): \(reason)"
        case .whipProtocol(let url, let reason): "\(url): WHIP: \(reason)"
        case .sessionGone(let url): "\(url): the session is gone"
        case .janus(let code, let reason): "Janus error \(code): \(reason)"
        case .videoRoom(let code, let reason): "VideoRoom error \(code): \(reason)"
        case .janusProtocol(let reason): "Janus: \(reason)"
        case .answerTimeout(let millis): "no answer to the offer within \(millis) ms"
        case .peer(let error): error.description
        case .iceRestartUnsupported(let server): "\(server): no ICE restart on this transport"
        case .invalidConfiguration(let reason): reason
        }
    }
}
