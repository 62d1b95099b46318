import WebRTC

/// The one error type of the `Signaling` module: the HTTP server's start-up failures and the outcomes a
/// ``WHEPSessionProvider`` reports, each of which the WHEP routes turn into a status code
/// (``httpStatus``).
public enum SignalingError: Error, Sendable, Equatable, CustomStringConvertible {
    // MARK: Server set-up

    /// `--http HOST:PORT` could not be parsed (the text, what was wrong).
    case invalidEndpoint(String, reason: String)
    /// The host does not resolve to an IPv4 or IPv6 address (host, resolver message).
    case addressResolution(host: String, reason: String)
    /// libmicrohttpd did not start: address in use, no permission, … (endpoint, last log line or errno text).
    case startFailed(endpoint: String, reason: String)

    // MARK: Session outcomes (thrown by a WHEPSessionProvider)

    /// The offer (or trickle fragment) was refused by the SDP layer. Peer errors become 4xx
    /// (syntax 400, too large 413, unanswerable 422), our own (`invalidConfiguration`) 500.
    case sdp(WebRTCError)
    /// No session has this id (PATCH/DELETE on a stale URL): 404.
    case unknownSession(String)
    /// The session cannot be created now (viewer limit, shutting down): 503 with the reason.
    case unavailable(String)
    /// Anything else that went wrong on our side (ICE agent failed to start, …): 500 with the reason.
    case internalFailure(String)

    /// Wraps an SDP error, so providers can `throw SignalingError(error)`.
    public init(_ error: WebRTCError) { self = .sdp(error) }

    /// The HTTP status a WHEP route answers this error with (RFC 9110 §15.5, §15.6; RFC 9725 §4.2).
    public var httpStatus: Int {
        switch self {
        case .sdp(let error):
            guard error.isPeerError else { return 500 }
            switch error {
            case .sdpTooLarge: return 413
            case .sdpNotText, .sdpBadLine, .sdpMissingLine, .sdpUnexpectedLine, .sdpBadAttribute: return 400
            default: return 422  // well-formed but unanswerable: no VP8, no rtcp-mux, no fingerprint, …
            }
        case .unknownSession: return 404
        case .unavailable: return 503
        case .invalidEndpoint, .addressResolution, .startFailed, .internalFailure: return 500
        }
    }

    public var description: String {
        switch self {
        case .invalidEndpoint(let text, let reason): "invalid HTTP endpoint '\(text)': \(reason)"
        case .addressResolution(let host, let reason): "cannot resolve '\(host)': \(reason)"
        case .startFailed(let endpoint, let reason): "HTTP server on \(endpoint) did not start: \(reason)"
        case .sdp(let error): error.description
        case .unknownSession(let id): "no session \(id)"
        case .unavailable(let reason): "unavailable: \(reason)"
        case .internalFailure(let reason): "internal error: \(reason)"
        }
    }
}
