import ScreencastSupport

/// A WHIP session as the server created it (RFC 9725 §4.2): the session URL (`Location`, resolved
/// against the endpoint), the SDP answer, the entity tag for ICE restarts (`ETag`, §4.3.1) and the ICE
/// servers offered in `Link` headers (§4.6).
public struct WHIPSession: Sendable, Equatable {
    public var url: String
    public var answer: String
    public var etag: String?
    public var iceServers: WHIPICEServers

    /// Reads the response to the offer's POST.
    /// - Throws: ``PublishingError/httpStatus(method:url:status:body:)`` for any status but 201 (body
    ///   kept), ``PublishingError/whipProtocol(url:reason:)`` for a 201 without `Location`, with another
    ///   content type than `application/sdp`, with an empty or non-UTF-8 body, or a malformed `Link`.
    public init(created response: HTTPClientResponse) throws(PublishingError) {
        guard response.status == 201 else {
            throw .httpStatus(method: "POST", url: response.url, status: response.status, body: response.bodyText())
        }
        let mediaType = response.head.value("Content-Type")?.split(separator: ";").first.map { $0.trimmingCharacters(in: " ").lowercased() }
        guard mediaType == "application/sdp" else {
            throw .whipProtocol(url: response.url, reason: "the answer's Content-Type is \(mediaType ?? "absent"), not application/sdp")
        }
        guard let location = response.head.value("Location"), !location.isEmpty else {
            throw .whipProtocol(url: response.url, reason: "201 without a Location header")
        }
        guard let url = URLReference.resolve(location, against: response.url) else {
            throw .whipProtocol(url: response.url, reason: "unusable Location \(location)")
        }
        guard let answer = String(validating: response.body, as: UTF8.self), !answer.isEmpty else {
            throw .whipProtocol(url: response.url, reason: "the answer is empty or not UTF-8")
        }
        let links: [WebLink]
        do { links = try WebLink.parse(response.head.values("Link")) } catch {
            guard case .whipProtocol(_, let reason) = error else { throw error }
            throw .whipProtocol(url: response.url, reason: reason)
        }
        self.url = url
        self.answer = answer
        etag = response.head.value("ETag")
        iceServers = WHIPICEServers(links: links)
    }
}

/// The WHIP client (RFC 9725): POST the offer to the endpoint, DELETE the session on stop. Blocking
/// (libcurl); the publisher calls it from its own thread.
public struct WHIPClient: Sendable {
    /// The WHIP endpoint URL (`--whip`).
    public var endpoint: String
    /// `Authorization: Bearer <token>` on every request (RFC 9725 §4.5; `--whip-token`).
    public var token: String?
    public var http: HTTPClient

    public init(endpoint: String, token: String? = nil, http: HTTPClient = HTTPClient()) throws(PublishingError) {
        if let problem = URLReference.requestProblem(endpoint) {
            throw .invalidConfiguration(
                "--whip needs an http:// or https:// URL with a host and no spaces, not '\(endpoint.escapingNonPrintable)': \(problem)")
        }
        if let token { guard !token.isEmpty, token.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw .invalidConfiguration("--whip-token must be non-empty printable ASCII without spaces")
        } }
        self.endpoint = endpoint
        self.token = token
        self.http = http
    }

    private var authorization: [String] { authorizationHeaders }

    /// `Authorization: Bearer <token>` when a token is set (RFC 9725 §4.5; RFC 6750 §2.1).
    var authorizationHeaders: [String] { token.map { ["Authorization: Bearer \($0)"] } ?? [] }

    /// Publishes: POSTs `offer` (`Content-Type: application/sdp`, §4.2), 307/308 followed.
    /// - Throws: what ``HTTPClient/request(_:_:headers:body:timeoutMillis:)`` and
    ///   ``WHIPSession/init(created:)`` throw.
    /// A 201 whose answer cannot be used (an empty or non-UTF-8 body, a wrong content type, a bad `Link`)
    /// still created a resource: it is deleted (best effort) before the error is thrown, so the SFU is not
    /// left holding it.
    public func publish(offer: String) throws(PublishingError) -> WHIPSession {
        let response = try http.request(
            "POST", endpoint, headers: ["Content-Type: application/sdp", "Accept: application/sdp"] + authorization, body: Array(offer.utf8))
        do {
            return try WHIPSession(created: response)
        } catch {
            if response.status == 201, let location = response.head.value("Location"), !location.isEmpty,
               let url = URLReference.resolve(location, against: response.url) {
                _ = try? http.request("DELETE", url, headers: authorization, timeoutMillis: 3_000)
            }
            throw error
        }
    }

    /// Ends the session (DELETE on its URL, §4.2). 200/204 and 404 (already gone) are fine.
    /// - Throws: ``PublishingError/httpStatus(method:url:status:body:)`` for another status; transport errors.
    public func delete(_ session: WHIPSession) throws(PublishingError) {
        let response = try http.request("DELETE", session.url, headers: authorization, timeoutMillis: 3_000)
        guard (200...299).contains(response.status) || response.status == 404 else {
            throw .httpStatus(method: "DELETE", url: session.url, status: response.status, body: response.bodyText())
        }
    }
}
