public import PeerConnection

/// The server's answer to an ICE restart PATCH (RFC 9725 §4.3.3): `200 OK`, `Content-Type:
/// application/trickle-ice-sdpfrag`, a body with the server's new `ice-ufrag` / `ice-pwd` (and possibly
/// candidates), and the session's new entity tag (`ETag`, RFC 9110 §8.8.3) for later PATCHes.
public struct WHIPRestartAnswer: Sendable, Equatable {
    public var fragment: ICERestartFragment
    public var etag: String?

    /// Reads the PATCH's response.
    /// - Throws: ``PublishingError/sessionGone(url:)`` for 404 (the session is no more: a new POST is
    ///   needed), ``PublishingError/httpStatus(method:url:status:body:)`` for another status but 200 (405:
    ///   the server does not do PATCH; 412: it refused the precondition), ``PublishingError/whipProtocol(url:reason:)``
    ///   for a 200 of another content type or whose fragment does not parse (``ICERestartFragment/init(parsing:)``).
    public init(response: HTTPClientResponse) throws(PublishingError) {
        if response.status == 404 { throw .sessionGone(url: response.url) }
        guard response.status == 200 else {
            throw .httpStatus(method: "PATCH", url: response.url, status: response.status, body: response.bodyText())
        }
        let mediaType = response.head.value("Content-Type")?.split(separator: ";").first.map { $0.trimmingCharacters(in: " ").lowercased() }
        guard mediaType == "application/trickle-ice-sdpfrag" else {
            throw .whipProtocol(url: response.url, reason: "the ICE restart answer's Content-Type is \(mediaType ?? "absent"), not application/trickle-ice-sdpfrag")
        }
        guard let text = String(validating: response.body, as: UTF8.self) else {
            throw .whipProtocol(url: response.url, reason: "the ICE restart answer is not UTF-8")
        }
        do { fragment = try ICERestartFragment(parsing: text) } catch {
            throw .whipProtocol(url: response.url, reason: "the ICE restart answer: \(error)")
        }
        etag = response.head.value("ETag")
    }
}

extension WHIPClient {
    /// Restarts ICE on a session (RFC 9725 §4.3.3): PATCHes `fragment` (our new credentials and every
    /// candidate, `a=end-of-candidates`) to the session URL with `Content-Type:
    /// application/trickle-ice-sdpfrag` and `If-Match: *` (§4.3.3: a restart PATCH matches any entity; the
    /// bare asterisk of RFC 9110 §13.1.1, not the quoted entity-tag `"*"`). Returns the server's answer and
    /// the session with its new entity tag. simple-whip-server with `strictETags` wants `"*"` quoted and
    /// answers 412: the leg then publishes anew.
    /// - Throws: what ``HTTPClient/request(_:_:headers:body:timeoutMillis:)`` and
    ///   ``WHIPRestartAnswer/init(response:)`` throw.
    public func restartICE(_ session: WHIPSession, fragment: ICERestartFragment, payloadType: UInt8) throws(PublishingError)
        -> (answer: WHIPRestartAnswer, session: WHIPSession)
    {
        let response = try http.request(
            "PATCH", session.url,
            headers: ["Content-Type: application/trickle-ice-sdpfrag", "If-Match: *"] + authorizationHeaders,
            body: Array(fragment.rendered(payloadType: payloadType).utf8), timeoutMillis: 5_000)
        let answer = try WHIPRestartAnswer(response: response)
        var session = session
        if let etag = answer.etag { session.etag = etag }
        return (answer, session)
    }
}
