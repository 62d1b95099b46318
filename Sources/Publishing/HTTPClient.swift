import Glibc
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
        /// Whether an https server's certificate and name are checked (CURLOPT_SSL_VERIFYPEER/VERIFYHOST):
        /// always, except for a loopback measurement against a call's self-signed certificate
        /// (`screencast-bench viewers`).
        public var verifyPeer = true
        public init() {}
    }

    public var limits: Limits
    /// Shared by every copy of this client: ``HTTPCancellation/cancelInFlight()`` ends the requests in flight
    /// (a call stopping must not wait out a 10 s POST or a Janus long poll); later requests run.
    public let cancellation = HTTPCancellation()

    public init(limits: Limits = Limits()) { self.limits = limits }

    /// - Throws: ``PublishingError/transport(url:reason:)``, ``PublishingError/responseTooLarge(url:limit:)``,
    ///   ``PublishingError/malformedResponse(url:reason:)``, ``PublishingError/badRedirect(url:reason:)``.
    /// - Parameter trustedCertificate: a PEM file whose certificate is the only one an HTTPS server may present
    ///   (its names unchecked): a call's kept self-signed certificate. Nil: the system's authorities.
    public func request(
        _ method: String, _ url: String, headers: [String] = [], body: [UInt8] = [], timeoutMillis: Int? = nil,
        trustedCertificate: String? = nil
    ) throws(PublishingError) -> HTTPClientResponse {
        var target = url
        var headers = headers
        for _ in 0...limits.redirects {
            let easy = try CurlEasy()
            let raw = try easy.perform(
                method: method, url: target, headers: headers, body: body, timeoutMillis: timeoutMillis ?? limits.timeoutMillis,
                limit: limits.responseBytes, verifyPeer: limits.verifyPeer, cancellation: cancellation,
                trustedCertificate: trustedCertificate)
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
    /// Whether `url` is one we can send a request to (``requestProblem(_:)`` finds nothing wrong).
    public static func isRequestable(_ url: String) -> Bool { requestProblem(url) == nil }

    /// What makes `url` one we cannot send a request to, in a few words, or nil when it is fine: http or https;
    /// a host that is a name (ASCII letters, digits, `-._~`, or non-ASCII for IDN), a dotted IPv4 address with
    /// each part 0–255, or a bracketed IPv6 literal that `inet_pton(3)` reads (RFC 3986 §3.2.2: no zone, no
    /// `%` or control byte in any host); a port, if any, of 1–65535 (RFC 3986 §3.2.3; TCP has no port 0 to
    /// connect to); no white space or control characters anywhere. libcurl refuses the rest only when the
    /// request is made ("URL using bad/illegal format"), and a publisher would retry that for ever
    /// (`http://[::1`, `http://x:99999/`, `http://[zz]/`, `http://x%00/` in a bad-input review).
    public static func requestProblem(_ url: String) -> String? {
        if url.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F || $0.value == 0x85 }) {
            return "white space or a control character in the URL"
        }
        guard let schemeEnd = url.range(of: "://") else { return "not an absolute URL (no scheme://)" }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return "the scheme must be http or https" }
        switch authority(of: url) {
        case .failure(let problem): return problem.text
        case .success: return nil
        }
    }

    /// What is wrong with an authority (``authority(of:)``).
    public struct AuthorityProblem: Error, Equatable {
        /// The reason, one line for a usage error (e.g. "the port must be a number of 1–65535, not '99999'").
        public var text: String
    }

    /// The host (lowercased, an IPv6 literal without its brackets) and the port (nil when none is written) of
    /// an absolute URL's authority, checked as ``requestProblem(_:)`` says.
    public static func authority(of url: String) -> Result<(host: String, port: Int?), AuthorityProblem> {
        func problem(_ text: String) -> Result<(host: String, port: Int?), AuthorityProblem> { .failure(AuthorityProblem(text: text)) }
        guard let schemeEnd = url.range(of: "://") else { return problem("not an absolute URL (no scheme://)") }
        let rest = url[schemeEnd.upperBound...]
        var authority = rest[..<(rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex)]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return problem("an IPv6 address must be closed with ']'") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return problem("only ':PORT' may follow ']'") }
                portText = after.dropFirst()
            }
            var address = in6_addr()
            guard !host.contains("%"), inet_pton(AF_INET6, String(host), &address) == 1 else {
                return problem("'[\(host)]' is not an IPv6 address")
            }
        } else {
            if let colon = authority.firstIndex(of: ":") {
                host = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            } else {
                host = authority
            }
            guard !host.isEmpty else { return problem("the URL has no host") }
            let allowed = host.unicodeScalars.allSatisfy { scalar in
                scalar.value > 0x7F || ("0"..."9").contains(scalar) || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                    || "-._~".unicodeScalars.contains(scalar)
            }
            guard allowed else { return problem("the host '\(host)' may hold letters, digits and '-._~' only (no '%', brackets or ':')") }
            let parts = host.split(separator: ".", omittingEmptySubsequences: false)
            if parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }) {  // a numeric address: dotted IPv4
                guard parts.count == 4, parts.allSatisfy({ $0.count <= 3 && Int($0)! <= 255 }) else {
                    return problem("'\(host)' is not an IPv4 address (four parts of 0–255)")
                }
            }
        }
        var port: Int?
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ ("0"..."9").contains($0) }), let value = Int(portText), (1...65535).contains(value) else {
                return problem("the port must be a number of 1–65535, not '\(portText)'")
            }
            port = value
        }
        return .success((host.lowercased(), port))
    }

    /// The scheme, host and port of an absolute URL, lowercased, the port made explicit (80 for http, 443 for
    /// https); nil for a URL without `://`, or whose authority ``authority(of:)`` refuses (no host, a bad port
    /// or IPv6 literal, …). An IPv6 host keeps its brackets.
    public static func origin(of url: String) -> (scheme: String, host: String, port: Int)? {
        guard let schemeEnd = url.range(of: "://"), case .success(let authority) = authority(of: url) else { return nil }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        let host = authority.host.contains(":") ? "[\(authority.host)]" : authority.host
        return (scheme, host, authority.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0))
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
