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

    /// The offer (or trickle fragment) was refused for a fault of its own (``DescriptionFault``: 400, 413
    /// or 422), and why (the SDP layer's words). A failure of ours on a good offer is ``internalFailure(_:)``.
    case refused(DescriptionFault, reason: String)
    /// No session has this id (PATCH/DELETE on a stale URL): 404.
    case unknownSession(String)
    /// The session cannot be created now (viewer limit, shutting down): 503 with the reason.
    case unavailable(String)
    /// This client holds too many sessions that have not connected yet (a per-address limit): 429 Too Many
    /// Requests (RFC 6585 §4) with the reason.
    case tooManyPending(String)
    /// Anything else that went wrong on our side (ICE agent failed to start, …): 500 with the reason.
    case internalFailure(String)

    /// The HTTP status a WHEP route answers this error with (RFC 9110 §15.5, §15.6; RFC 9725 §4.2).
    public var httpStatus: Int {
        switch self {
        case .refused(let fault, _): return fault.httpStatus
        case .unknownSession: return 404
        case .unavailable: return 503
        case .tooManyPending: return 429
        case .invalidEndpoint, .addressResolution, .startFailed, .internalFailure: return 500
        }
    }

    public var description: String {
        switch self {
        case .invalidEndpoint(let text, let reason): "invalid HTTP endpoint '\(text)': \(reason)"
        case .addressResolution(let host, let reason): "cannot resolve '\(host)': \(reason)"
        case .startFailed(let endpoint, let reason): "the server on \(endpoint) did not start: \(reason)"
        case .refused(_, let reason): reason
        case .unknownSession(let id): "no session \(WHEPSessionID.echoed(id))"
        case .unavailable(let reason): "unavailable: \(reason)"
        case .tooManyPending(let reason): "too many sessions pending: \(reason)"
        case .internalFailure(let reason): "internal error: \(reason)"
        }
    }
}

/// What was wrong with a session description a peer sent (an offer, a trickle fragment): the part of the
/// WebRTC layer's error the HTTP status depends on, so `Signaling` needs none of those modules.
public enum DescriptionFault: String, Sendable, Equatable, CaseIterable {
    /// Not well-formed (RFC 8866 syntax, a malformed candidate line): 400 Bad Request.
    case malformed
    /// Larger than the parser accepts: 413 Content Too Large.
    case tooLarge
    /// Well-formed but unanswerable (no VP8, no rtcp-mux, no fingerprint; in a trickle fragment an ICE
    /// restart or a mid the session lacks, …): 422 (RFC 9110 §15.5.21).
    case unanswerable

    /// The status a WHEP route answers with (RFC 9110 §15.5.1, §15.5.14, §15.5.21).
    public var httpStatus: Int {
        switch self {
        case .malformed: 400
        case .tooLarge: 413
        case .unanswerable: 422
        }
    }
}
