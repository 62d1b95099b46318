/// One route: a method and a path pattern, how much body it accepts, an optional check that runs
/// on the headers before any body is read, and the handler.
public struct HTTPRoute: Sendable {
    public enum Path: Sendable, Equatable {
        /// Exactly this path (`/whep`).
        case exact(String)
        /// `prefix` plus one non-empty segment without `/` (`/whep/` + id); the segment becomes
        /// ``HTTPRequest/pathParameter``.
        case parameter(prefix: String)

        /// nil when `path` does not match; otherwise the parameter (nil for `.exact`).
        func match(_ path: String) -> String?? {
            switch self {
            case .exact(let exact): return path == exact ? .some(nil) : nil
            case .parameter(let prefix):
                guard path.hasPrefix(prefix) else { return nil }
                let segment = path.dropFirst(prefix.count)
                guard !segment.isEmpty, !segment.contains("/") else { return nil }
                return .some(String(segment))
            }
        }
    }

    public var method: String
    public var path: Path
    /// The largest body accepted, in bytes; more is answered with 413 (RFC 9110 §15.5.14).
    public var bodyLimit: Int
    /// Runs once the headers are in (body still empty): a response here ends the request unread
    /// (401, 415, …). nil lets the body be read and the handler run.
    public var check: (@Sendable (HTTPRequest) -> HTTPResponse?)?
    /// Runs on the connection's thread with the whole body; keep it short (see ``HTTPServer``).
    public var handler: @Sendable (HTTPRequest) -> HTTPResponse
    /// True when pages of other origins may call this route (CORS headers and preflights): WHEP, which
    /// players embed. The viewer page, `/stats` and the rest are same-origin only, so no other site a
    /// viewer's browser visits can read them.
    public var crossOrigin: Bool

    public init(_ method: String, _ path: Path, bodyLimit: Int = 0, crossOrigin: Bool = false,
                check: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil,
                handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) {
        self.method = method
        self.path = path
        self.bodyLimit = bodyLimit
        self.crossOrigin = crossOrigin
        self.check = check
        self.handler = handler
    }

    /// GET routes answer HEAD too (the server sends no body for HEAD).
    func accepts(_ method: String) -> Bool { self.method == method || (self.method == "GET" && method == "HEAD") }
}

/// The CORS headers put on every response of a ``HTTPRoute/crossOrigin`` route, and the preflight answer to OPTIONS (Fetch standard §3.2;
/// RFC 9725 §4.2 has WHIP endpoints answer CORS OPTIONS requests; WHEP does the same, so pages on other
/// origins can play the stream).
public struct CORSPolicy: Sendable {
    public var allowOrigin = "*"
    public var allowMethods = "POST, PATCH, DELETE, OPTIONS, GET"
    public var allowHeaders = "Content-Type, Authorization, If-Match"
    public var exposeHeaders = "Location, ETag, Link"
    /// How long a browser may cache a preflight, in seconds.
    public var maxAge = 600

    public init() {}
}

/// Method + path → handler, with CORS on every response, OPTIONS preflights, 404 for unknown paths and
/// 405 (with `Allow`, RFC 9110 §15.5.6) for a known path with the wrong method.
///
/// A request goes through two stages so that a refused request is never read whole: ``begin(_:contentLength:)``
/// on the headers (route match, the route's check, the declared length against the route's limit), then
/// ``finish(_:body:)`` with the body. ``respond(to:)`` runs both for in-memory tests.
public struct HTTPRouter: Sendable {
    public let routes: [HTTPRoute]
    public let cors: CORSPolicy

    public init(routes: [HTTPRoute], cors: CORSPolicy = CORSPolicy()) {
        self.routes = routes
        self.cors = cors
    }

    /// A request whose route accepts a body of up to `limit` bytes.
    struct Pending: Sendable {
        let route: HTTPRoute
        var request: HTTPRequest
        var limit: Int { route.bodyLimit }
    }

    enum Decision: Sendable {
        case respond(HTTPResponse)
        case readBody(Pending)
    }

    /// The header stage. `contentLength` is the declared `Content-Length` (nil when chunked or absent).
    func begin(_ request: HTTPRequest, contentLength: Int?) -> Decision {
        var matching: [(HTTPRoute, String?)] = []
        for route in routes {
            if let parameter = route.path.match(request.path) { matching.append((route, parameter)) }
        }
        guard !matching.isEmpty else { return .respond(.text(404, "not found")) }
        let allowed = allowHeader(matching.map(\.0))
        let crossOrigin = matching.contains { $0.0.crossOrigin }
        if request.method == "OPTIONS" {
            var headers: HTTPHeaders = [:]
            headers.add("Allow", allowed)
            if crossOrigin {
                headers.add("Access-Control-Allow-Methods", cors.allowMethods)
                headers.add("Access-Control-Allow-Headers", cors.allowHeaders)
                headers.add("Access-Control-Max-Age", String(cors.maxAge))
            }
            if matching.contains(where: { $0.0.method == "POST" }) { headers.add("Accept-Post", "application/sdp") }
            if matching.contains(where: { $0.0.method == "PATCH" }) { headers.add("Accept-Patch", "application/trickle-ice-sdpfrag") }
            return .respond(decorate(HTTPResponse(status: 204, headers: headers), crossOrigin: crossOrigin))
        }
        guard let (route, parameter) = matching.first(where: { $0.0.accepts(request.method) }) else {
            return .respond(decorate(.text(405, "method \(request.method) not allowed", headers: ["Allow": allowed]), crossOrigin: crossOrigin))
        }
        var request = request
        request.pathParameter = parameter
        if let refusal = route.check?(request) { return .respond(decorate(refusal, crossOrigin: route.crossOrigin)) }
        if let contentLength, contentLength > route.bodyLimit {
            return .respond(bodyTooLarge(limit: route.bodyLimit, crossOrigin: route.crossOrigin))
        }
        return .readBody(Pending(route: route, request: request))
    }

    /// The body stage: runs the handler.
    func finish(_ pending: Pending, body: [UInt8]) -> HTTPResponse {
        guard body.count <= pending.limit else { return bodyTooLarge(limit: pending.limit, crossOrigin: pending.route.crossOrigin) }
        var request = pending.request
        request.body = body
        return decorate(pending.route.handler(request), crossOrigin: pending.route.crossOrigin)
    }

    /// Both stages at once, for requests held in memory.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        switch begin(request, contentLength: request.body.isEmpty ? nil : request.body.count) {
        case .respond(let response): response
        case .readBody(let pending): finish(pending, body: request.body)
        }
    }

    /// 413 for a body over `limit` bytes.
    func bodyTooLarge(limit: Int, crossOrigin: Bool) -> HTTPResponse {
        decorate(.text(413, "request body exceeds \(limit) bytes"), crossOrigin: crossOrigin)
    }

    /// Adds the CORS fields to a response of a cross-origin route; others go out as they are.
    func decorate(_ response: HTTPResponse, crossOrigin: Bool) -> HTTPResponse {
        guard crossOrigin else { return response }
        var response = response
        response.headers.set("Access-Control-Allow-Origin", cors.allowOrigin)
        response.headers.set("Access-Control-Expose-Headers", cors.exposeHeaders)
        if cors.allowOrigin != "*" { response.headers.set("Vary", "Origin") }
        return response
    }

    private func allowHeader(_ routes: [HTTPRoute]) -> String {
        var methods: [String] = []
        for route in routes {
            if !methods.contains(route.method) { methods.append(route.method) }
            if route.method == "GET", !methods.contains("HEAD") { methods.append("HEAD") }
        }
        methods.append("OPTIONS")
        return methods.joined(separator: ", ")
    }
}
