import Publishing
import ScreencastSupport

/// The HTTP side of a WHEP viewer (RFC 9725): POST the offer, DELETE the session — through the SFU leg's
/// HTTP client (``HTTPClient``, libcurl), over http or https, with the call's token when it has one. Loopback
/// only (the bench measures calls on 127.0.0.1): an https call's self-signed certificate is not checked.
struct WHEPClient {
    let url: String
    let host: String
    private let client: HTTPClient
    private let token: String?

    /// Parses `http(s)://127.0.0.1:PORT/PATH`.
    /// - Throws: ``BenchError`` for another scheme or a URL that does not parse (the caller checks the host).
    init(url: String, token: String?) throws {
        guard let origin = URLReference.origin(of: url), origin.scheme == "http" || origin.scheme == "https" else {
            throw BenchError("WHEP URL must be http(s)://127.0.0.1:PORT/PATH, got \(url)")
        }
        self.url = url
        host = origin.host
        var limits = HTTPClient.Limits()
        limits.verifyPeer = false  // loopback only (checked by the caller): the call's self-signed certificate
        limits.timeoutMillis = 15_000
        client = HTTPClient(limits: limits)
        self.token = token
    }

    private var authorization: [String] { token.map { ["Authorization: Bearer \($0)"] } ?? [] }

    /// POSTs `offer`; returns the answer and the session's location (the `Location` header).
    func post(offer: String) throws -> (answer: String, location: String?) {
        let response = try client.request(
            "POST", url, headers: ["Content-Type: application/sdp"] + authorization, body: Array(offer.utf8))
        guard response.status == 201 else {
            throw BenchError("WHEP POST answered \(response.status): \(response.bodyText(limit: 200))")
        }
        return (String(decoding: response.body, as: UTF8.self), response.head.value("Location"))
    }

    /// DELETEs the session at `location` (a path, or a URL on the same server); returns the status.
    @discardableResult
    func delete(location: String) throws -> Int {
        guard let target = URLReference.resolve(location, against: url) else { throw BenchError("bad session location \(location)") }
        return try client.request("DELETE", target, headers: authorization).status
    }
}
