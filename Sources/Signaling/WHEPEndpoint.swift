import ScreencastSupport

/// What the WHEP routes ask of the WebRTC side. Implemented by whoever owns the peer connections; every
/// method is called on an HTTP connection thread (concurrently with the others) and must return in
/// bounded time — at most a second or two, e.g. the ICE gathering of a new session.
public protocol WHEPSessionProvider: Sendable {
    /// Answers a viewer's offer (RFC 9725 §4.2): a new session with a URL-safe id (see ``WHEPSessionID``)
    /// and the complete SDP answer, candidates included.
    /// - Throws: ``SignalingError/refused(_:reason:)`` for an offer that is malformed or cannot be answered (no VP8 → 422),
    ///   ``SignalingError/unavailable(_:)`` when no more viewers fit (503), ``SignalingError/internalFailure(_:)``.
    func createSession(offer: String) throws(SignalingError) -> WHEPSession

    /// ``createSession(offer:)`` for a client at `clientAddress` (its IP address as text, nil if unknown), so
    /// that a provider can bound the sessions one address holds before they connect; the default ignores it.
    /// - Throws: also ``SignalingError/tooManyPending(_:)`` (429) when that address holds too many.
    func createSession(offer: String, clientAddress: String?) throws(SignalingError) -> WHEPSession

    /// Applies a trickle-ICE or ICE-restart fragment (`application/trickle-ice-sdpfrag`, RFC 8840) to the
    /// session (RFC 9725 §4.3). Returns nil when there is nothing to answer (trickle: 204), or the answer
    /// fragment of an ICE restart (200, RFC 9725 §4.3.3).
    /// - Throws: ``SignalingError/unknownSession(_:)`` (404), ``SignalingError/refused(_:reason:)`` for a bad
    ///   fragment: malformed (400), or understood but unanswerable (422: an ICE restart we do not support, a
    ///   mid the session lacks).
    func updateSession(id: String, fragment: String) throws(SignalingError) -> String?

    /// Ends the session (RFC 9725 §4.2, teardown by `DELETE`). False when no session has this id (404).
    func deleteSession(id: String) -> Bool

    /// The session's viewer can decode again (our extension, `POST {base}/{id}`: a page given the end-to-end key
    /// after it had none or a wrong one) and wants a keyframe now rather than when its spaced-out requests are
    /// next let through. Returns nil when no session has this id (404), false when the request was not honoured
    /// (rate-limited: 429), true when a keyframe was asked for (204). The default knows no session.
    func keyframeWanted(id: String) -> Bool?
}

extension WHEPSessionProvider {
    public func keyframeWanted(id: String) -> Bool? { nil }

    public func createSession(offer: String, clientAddress: String?) throws(SignalingError) -> WHEPSession {
        try createSession(offer: offer)
    }
}

/// A created session: its id (the last segment of its URL) and the SDP answer.
public struct WHEPSession: Sendable, Equatable {
    public var id: String
    public var answer: String

    public init(id: String, answer: String) {
        self.id = id
        self.answer = answer
    }
}

/// Session ids: safe to put in a URL path segment unescaped.
public enum WHEPSessionID {
    /// 128 random bits as 32 lower-case hex digits (SystemRandomNumberGenerator).
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// Characters of a client's session id that a 404 or a log line repeats: twice the length of ours
    /// (``random()``, 32). A `DELETE /whep/<5,000 characters>` had its whole id echoed in the 404.
    public static let maxEchoedCharacters = 64

    /// `id` as an answer repeats it: its first ``maxEchoedCharacters`` characters, non-printable ones
    /// escaped, then `…` when it was longer.
    public static func echoed(_ id: String) -> String {
        let shown = String(id.prefix(maxEchoedCharacters)).escapingNonPrintable
        return id.count > maxEchoedCharacters ? shown + "…" : shown
    }

    /// 1–128 characters of RFC 3986 `unreserved` (letters, digits, `-._~`).
    public static func isValid(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128
            && id.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            }
    }
}

/// Body limits of the WHEP routes.
public struct WHEPLimits: Sendable {
    /// The largest SDP offer accepted (a browser's video-only offer is 3–6 KiB; with audio and data
    /// channels about 10 KiB).
    public var offerBytes = 64 * 1024
    /// The largest trickle-ICE fragment accepted.
    public var fragmentBytes = 16 * 1024

    public init() {}
}

/// The WHEP routes (draft-ietf-wish-whep, which reuses the shapes of WHIP, RFC 9725):
///
///     POST   {base}        application/sdp offer          → 201 Created, Location: {base}/{id}, SDP answer
///     PATCH  {base}/{id}   application/trickle-ice-sdpfrag → 204 No Content (200 + fragment on ICE restart)
///     DELETE {base}/{id}                                  → 200 OK
///     POST   {base}/{id}   (empty body; our extension)     → 204: the viewer can decode again, a keyframe now
///                                                          (429 when asked again within 10 s)
///
/// With a token, each needs `Authorization: Bearer <token>` (RFC 9725 §4.7.1) or gets 401 with
/// `WWW-Authenticate: Bearer` before its body is read; OPTIONS preflights (answered by the router) need
/// none, as browsers send them without credentials.
public enum WHEPEndpoint {
    public static let sdpType = "application/sdp"
    public static let fragmentType = "application/trickle-ice-sdpfrag"

    public static func routes(
        basePath: String = "/whep", provider: any WHEPSessionProvider, token: BearerToken?, limits: WHEPLimits = WHEPLimits(),
        logger: Logger
    ) -> [HTTPRoute] {
        let sessionPrefix = basePath + "/"
        return [
            HTTPRoute("POST", .exact(basePath), bodyLimit: limits.offerBytes, crossOrigin: true, check: precheck(token: token, type: sdpType)) { request in
                createSession(request, provider: provider, sessionPrefix: sessionPrefix, logger: logger)
            },
            HTTPRoute("PATCH", .parameter(prefix: sessionPrefix), bodyLimit: limits.fragmentBytes, crossOrigin: true,
                      check: precheck(token: token, type: fragmentType)) { request in
                updateSession(request, provider: provider, logger: logger)
            },
            HTTPRoute("POST", .parameter(prefix: sessionPrefix), bodyLimit: 4096, crossOrigin: true, check: precheck(token: token, type: nil)) { request in
                let id = request.pathParameter ?? ""
                switch provider.keyframeWanted(id: id) {
                case nil: return .text(404, "no session \(WHEPSessionID.echoed(id))")
                case false?: return .text(429, "a keyframe was asked for less than 10 s ago", headers: ["Retry-After": "10"])
                case true?:
                    logger.info("viewer can decode again: keyframe requested", ["session": id])
                    return HTTPResponse(status: 204)
                }
            },
            HTTPRoute("DELETE", .parameter(prefix: sessionPrefix), bodyLimit: 4096, crossOrigin: true, check: precheck(token: token, type: nil)) { request in
                let id = request.pathParameter ?? ""
                guard provider.deleteSession(id: id) else { return .text(404, "no session \(WHEPSessionID.echoed(id))") }
                logger.info("viewer session deleted", ["session": id])
                return HTTPResponse(status: 200)
            },
        ]
    }

    /// Header-stage checks: the token first (401), then the media type (415, RFC 9110 §15.5.16).
    private static func precheck(token: BearerToken?, type: String?) -> @Sendable (HTTPRequest) -> HTTPResponse? {
        { request in
            if let token {
                let authorization = request.headers["Authorization"]
                if !token.authorizes(authorization) { return BearerToken.challenge(presented: authorization != nil) }
            }
            if let type, request.mediaType != type {
                return .text(415, "expected Content-Type: \(type)", headers: [type == sdpType ? "Accept-Post" : "Accept-Patch": type])
            }
            return nil
        }
    }

    private static func createSession(
        _ request: HTTPRequest, provider: any WHEPSessionProvider, sessionPrefix: String, logger: Logger
    ) -> HTTPResponse {
        guard !request.body.isEmpty else { return .text(400, "empty SDP offer") }
        guard let offer = String(validating: request.body, as: UTF8.self) else { return .text(400, "SDP offer is not UTF-8 text") }
        let session: WHEPSession
        do {
            session = try provider.createSession(offer: offer, clientAddress: request.clientAddress)
        } catch {
            let level: LogLevel = error.httpStatus >= 500 && error.httpStatus != 503 ? .warning : .info
            logger.log(level, "viewer offer refused", ["status": error.httpStatus, "reason": error])
            return errorResponse(error)
        }
        guard WHEPSessionID.isValid(session.id) else {
            logger.error("session id is not URL-safe", ["session": session.id])
            _ = provider.deleteSession(id: session.id)
            return .text(500, "internal error: bad session id")
        }
        logger.info("viewer session created", ["session": session.id])
        let headers: HTTPHeaders = [
            "Location": sessionPrefix + session.id, "Content-Type": sdpType, "Cache-Control": "no-store",
        ]
        return HTTPResponse(status: 201, headers: headers, body: Array(session.answer.utf8))
    }

    private static func updateSession(_ request: HTTPRequest, provider: any WHEPSessionProvider, logger: Logger) -> HTTPResponse {
        let id = request.pathParameter ?? ""
        guard !request.body.isEmpty else { return .text(400, "empty SDP fragment") }
        guard let fragment = String(validating: request.body, as: UTF8.self) else { return .text(400, "SDP fragment is not UTF-8 text") }
        do {
            guard let answer = try provider.updateSession(id: id, fragment: fragment) else { return HTTPResponse(status: 204) }
            logger.info("viewer ICE restart", ["session": id])
            return HTTPResponse(status: 200, headers: ["Content-Type": fragmentType], body: Array(answer.utf8))
        } catch {
            logger.log(error.httpStatus >= 500 ? .warning : .debug, "viewer fragment refused", [
                "session": WHEPSessionID.echoed(id), "status": error.httpStatus,
            ])
            return errorResponse(error)
        }
    }

    /// A short text body naming the error; 503 and 429 ask the client to retry after 2 s.
    static func errorResponse(_ error: SignalingError) -> HTTPResponse {
        let status = error.httpStatus
        var text = error.description
        if text.count > 300 { text = String(text.prefix(300)) + "…" }
        return .text(status, text, headers: status == 503 || status == 429 ? ["Retry-After": "2"] : [:])
    }
}
