import Synchronization

/// A response: its final URL (after redirects), status, head and body.
public struct HTTPClientResponse: Sendable {
    public var url: String
    public var status: Int
    public var head: HTTPResponseHead
    public var body: [UInt8]

    public init(url: String, status: Int, head: HTTPResponseHead, body: [UInt8]) {
        self.url = url
        self.status = status
        self.head = head
        self.body = body
    }

    /// The body as text (lossy UTF-8), cut to `limit` bytes, surrounding white space trimmed: for error messages.
    public func bodyText(limit: Int = 512) -> String {
        String(decoding: body.prefix(limit), as: UTF8.self).trimmingCharacters(in: " \t\r\n")
    }
}

/// Blocking HTTP requests over libcurl (``CurlEasy``, one handle per request), following 307/308
/// redirects itself (RFC 9110 §15.4.8/§15.4.9: same method and body) and no other kind, so a WHIP POST is
/// never turned into a GET. Runs on the caller's thread; the publisher calls it from its own.
public struct HTTPClient: Sendable {
    public struct Limits: Sendable {
        /// The whole exchange, connecting included, ms (CURLOPT_TIMEOUT_MS). Janus long polls last 30 s.
        public var timeoutMillis = 10_000
        /// Head and body together, bytes.
        public var responseBytes = 256 * 1024
        /// Redirects followed before giving up.
        public var redirects = 5
        public init() {}
    }

    public var limits: Limits
    /// Shared by every copy of this client: ``HTTPCancellation/cancelInFlight()`` ends the requests in flight
    /// (a call stopping must not wait out a 10 s POST or a Janus long poll); later requests run.
    public let cancellation = HTTPCancellation()

    public init(limits: Limits = Limits()) { self.limits = limits }

    /// - Throws: ``PublishingError/transport(url:reason:)``, ``PublishingError/responseTooLarge(url:limit:)``,
    ///   ``PublishingError/malformedResponse(url:reason:)``, ``PublishingError/badRedirect(url:reason:)``.
    public func request(
        _ method: String, _ url: String, headers: [String] = [], body: [UInt8] = [], timeoutMillis: Int? = nil
    ) throws(PublishingError) -> HTTPClientResponse {
        var target = url
        var headers = headers
        for _ in 0...limits.redirects {
            let easy = try CurlEasy()
            let raw = try easy.perform(
                method: method, url: target, headers: headers, body: body, timeoutMillis: timeoutMillis ?? limits.timeoutMillis,
                limit: limits.responseBytes, cancellation: cancellation)
            let head: HTTPResponseHead
            do { head = try HTTPResponseHead.parse(raw.head) } catch { throw .malformedResponse(url: target, reason: Self.reason(error)) }
            guard head.status == 307 || head.status == 308 else {
                return HTTPClientResponse(url: target, status: head.status, head: head, body: raw.body)
            }
            guard let location = head.value("Location"), let next = URLReference.resolve(location, against: target) else {
                throw .badRedirect(url: target, reason: "HTTP \(head.status) without a usable Location")
            }
            guard let scheme = URLReference.origin(of: next)?.scheme, scheme == "http" || scheme == "https" else {
                throw .badRedirect(url: target, reason: "HTTP \(head.status) to \(next): only http and https are followed")
            }
            // Credentials go to the origin they were given for (RFC 9110 §15.4: a client drops them when a
            // redirect leaves it, as curl and browsers do): the WHIP token never reaches another server.
            let (from, to) = (URLReference.origin(of: target), URLReference.origin(of: next))
            if from?.scheme != to?.scheme || from?.host != to?.host || from?.port != to?.port {
                headers.removeAll { $0.lowercased().hasPrefix("authorization:") }
            }
            target = next
        }
        throw .badRedirect(url: url, reason: "more than \(limits.redirects) redirects")
    }

    static func reason(_ error: PublishingError) -> String {
        if case .malformedResponse(_, let reason) = error { return reason }
        return error.description
    }
}

/// Cancels the requests of an ``HTTPClient`` (and its copies) that are in flight, and no later ones: each
/// request notes the generation it started in and ends when it has moved on.
public final class HTTPCancellation: Sendable {
    private let current = Atomic<UInt64>(0)
    public init() {}
    /// The current generation.
    public var generation: UInt64 { current.load(ordering: .acquiring) }
    /// Ends every request in flight (with ``PublishingError/transport(url:reason:)`` "cancelled").
    public func cancelInFlight() { current.add(1, ordering: .releasing) }
}

/// Resolving a URI reference (a `Location` header, a `Link` target) against the request URL (RFC 3986
/// §5.2, for the forms servers send: absolute, network-path `//host/…`, absolute-path `/…`, relative).
public enum URLReference {
    /// Whether `url` is one we can send a request to: http or https, a host (and a numeric port, if any), no
    /// white space or control characters anywhere (`http://`, `http://x y/` are refused before any attempt).
    public static func isRequestable(_ url: String) -> Bool {
        guard let scheme = origin(of: url)?.scheme, scheme == "http" || scheme == "https" else { return false }
        return !url.unicodeScalars.contains { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }
    }

    /// The scheme, host and port of an absolute URL, lowercased, the port made explicit (80 for http, 443 for
    /// https); nil for a URL without `://` or without a host.
    public static func origin(of url: String) -> (scheme: String, host: String, port: Int)? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        let rest = url[schemeEnd.upperBound...]
        var authority = rest[..<(rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex)]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = Substring(authority), port: Int?
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            host = authority[..<colon]
            port = Int(authority[authority.index(after: colon)...])
            guard port != nil else { return nil }
        }
        guard !host.isEmpty else { return nil }
        return (scheme, host.lowercased(), port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0))
    }

    /// The absolute URL, or nil when `base` is not an absolute http(s) URL.
    public static func resolve(_ reference: String, against base: String) -> String? {
        if let colon = reference.firstIndex(of: ":"), reference[..<colon].allSatisfy({ $0.isLetter || $0 == "+" || $0 == "-" || $0 == "." }),
           !reference[..<colon].isEmpty {
            return reference
        }
        guard let schemeEnd = base.range(of: "://") else { return nil }
        let scheme = base[..<schemeEnd.lowerBound]
        guard scheme == "http" || scheme == "https" else { return nil }
        let afterScheme = base[schemeEnd.upperBound...]
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
        let origin = base[..<authorityEnd]
        if reference.hasPrefix("//") { return "\(scheme):\(reference)" }
        if reference.hasPrefix("/") { return origin + reference }
        var path = String(afterScheme[authorityEnd...])
        if let cut = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<cut]) }
        if reference.isEmpty { return String(base) }
        if reference.hasPrefix("?") { return origin + path + reference }
        let directory = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "/"
        var segments: [Substring] = []
        for segment in (directory + reference).split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            switch segment {
            case ".": continue
            case "..": if !segments.isEmpty { segments.removeLast() }
            default: segments.append(segment)
            }
        }
        return origin + "/" + segments.joined(separator: "/")
    }
}
