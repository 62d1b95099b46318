import ScreencastSupport

/// Settings of the call's HTTP side (`--http`, `--token`).
public struct SignalingConfiguration: Sendable {
    /// Where to listen (default `127.0.0.1:8080`).
    public var endpoint: HTTPEndpoint = .default
    /// `--token`: required as `Authorization: Bearer …` on WHEP requests when set.
    public var token: BearerToken?
    public var whepLimits = WHEPLimits()
    public var serverOptions = HTTPServerOptions()
    /// The most frames a second the call encodes (`--max-fps`); the page's overlay adds "only changes are
    /// sent" when far fewer arrive (the agent sends a frame only when the screen changed). Nil: it says nothing.
    public var sourceFramesPerSecond: Double?
    /// Whether the source sends only what changed (the screen; false for the test pattern, which changes
    /// every frame): only then does a low rate earn the page's "only changes are sent".
    public var sourceSendsOnlyChanges = true
    /// The ratchet salt when the call encrypts its frames end to end (`--e2ee-key-file`): the page then
    /// decrypts them (see ``ViewerPage/html(sourceFramesPerSecond:sourceSendsOnlyChanges:e2eeSalt:)``). Nil: frames are not encrypted.
    public var e2eeSalt: String?

    public init(endpoint: HTTPEndpoint = .default, token: BearerToken? = nil, sourceFramesPerSecond: Double? = nil) {
        self.endpoint = endpoint
        self.token = token
        self.sourceFramesPerSecond = sourceFramesPerSecond
    }
}

/// The call's HTTP server: the WHEP endpoint, the viewer page, stats and a health check.
///
///     GET    /            viewer page (text/html); with a token, only with it (?token= or Authorization)
///     GET    /stats       the stats provider's JSON (application/json); ?format=text: a summary for people
///     GET    /metrics     the counters in the Prometheus text format 0.0.4 (same access rule as /stats)
///     POST   /control/kick/{id}  end a viewer's session (the sharer's `screencast-call kick`): from loopback
///                         only, with the token when there is one → 200, 404 for an unknown viewer
///     POST   /control/pause, /control/resume  the share paused (viewers keep the last picture) or resumed; same rule
///     GET    /healthz     200 "ok"
///     GET    /favicon.ico the page's icon (image/x-icon, see ``Favicon``)
///     POST   /whep        WHEP offer → 201 + answer          (see ``WHEPEndpoint``)
///     PATCH  /whep/{id}   trickle ICE → 204
///     DELETE /whep/{id}   end the session → 200
///     OPTIONS any of them CORS preflight → 204
///
/// The WHEP routes carry `Access-Control-Allow-Origin: *` (see ``CORSPolicy``), so players on other origins
/// can use them; the page, `/stats` and the rest are same-origin only.
public final class SignalingServer: Sendable {
    public let http: HTTPServer
    public let configuration: SignalingConfiguration

    /// Starts serving.
    /// - Parameters:
    ///   - sessions: creates, updates and ends viewer sessions.
    ///   - stats: called on an HTTP thread for every `GET /stats`; must be cheap and thread-safe.
    ///   - statsText: the same for `GET /stats?format=text`, a short summary for people (text/plain); nil
    ///     answers that form with 404.
    ///   - metrics: for every `GET /metrics`, the Prometheus text exposition (format 0.0.4, ``MetricsText``); on an
    ///     HTTP thread, so cheap and thread-safe; nil answers 404.
    ///   - kick: for `POST /control/kick/{id}`: ends that viewer's session, false for an unknown id; nil answers 404.
    ///   - pause: for `POST /control/pause` (true) and `/control/resume` (false); returns whether it changed.
    ///   - sharerState: for `GET /source`, what the page shows of the sharer (``SharerState``); polled by every
    ///     page every 2 s, so it must be cheap; nil answers 404.
    /// - Throws: ``SignalingError/addressResolution(host:reason:)``, ``SignalingError/startFailed(endpoint:reason:)``.
    public init(
        configuration: SignalingConfiguration, sessions: any WHEPSessionProvider, stats: @escaping @Sendable () -> JSONValue,
        statsText: (@Sendable () -> String)? = nil, metrics: (@Sendable () -> String)? = nil,
        sharerState: (@Sendable () -> SharerState)? = nil, kick: (@Sendable (String) -> Bool)? = nil,
        pause: (@Sendable (Bool) -> Bool)? = nil, logger: Logger
    ) throws(SignalingError) {
        self.configuration = configuration
        let router = HTTPRouter(routes: Self.routes(
            configuration: configuration, sessions: sessions, stats: stats, statsText: statsText, metrics: metrics, sharerState: sharerState,
            kick: kick, pause: pause, logger: logger))
        http = try HTTPServer.start(endpoint: configuration.endpoint, router: router, options: configuration.serverOptions, logger: logger)
    }

    /// The routes, for in-memory use through ``HTTPRouter/respond(to:)``.
    public static func routes(
        configuration: SignalingConfiguration, sessions: any WHEPSessionProvider, stats: @escaping @Sendable () -> JSONValue,
        statsText: (@Sendable () -> String)? = nil, metrics: (@Sendable () -> String)? = nil,
        sharerState: (@Sendable () -> SharerState)? = nil, kick: (@Sendable (String) -> Bool)? = nil,
        pause: (@Sendable (Bool) -> Bool)? = nil, logger: Logger
    ) -> [HTTPRoute] {
        let page = Array(ViewerPage.html(
            sourceFramesPerSecond: configuration.sourceFramesPerSecond, sourceSendsOnlyChanges: configuration.sourceSendsOnlyChanges,
            e2eeSalt: configuration.e2eeSalt).utf8)
        // With a token, the page and /stats need it too (header or ?token=): they name viewers and addresses.
        let token = configuration.token
        let needsToken: @Sendable (HTTPRequest) -> HTTPResponse? = { request in
            guard let token, !token.authorizes(request) else { return nil }
            let presented = request.headers["Authorization"] != nil || request.query["token"] != nil
            var refusal = BearerToken.challenge(presented: presented)
            refusal.body = Array((presented ? "wrong token: open the viewer link you were given\n"
                : "this call needs its viewer link, with ?token=…\n").utf8)
            return refusal
        }
        // The sharer's controls: from this machine only (a viewer on the LAN holds the share link's token too),
        // then the token as for /stats.
        // A browser says where a request comes from (`Origin`, RFC 6454 §7; sent with every cross-site POST): a
        // web page the sharer has open must not pause the share or kick viewers by a form, so any Origin is
        // refused (the sharer's `screencast-call` sends none); and the token only as a header, never in the URL
        // a page could build from a share link.
        let controlCheck: @Sendable (HTTPRequest) -> HTTPResponse? = { request in
            guard Self.isLoopback(request.clientAddress) else { return .text(403, "the call's controls answer on this machine only (loopback)") }
            if request.headers["Origin"] != nil {
                return .text(403, "the call's controls take no request from a web page (Origin); use screencast-call status, kick, pause, resume")
            }
            if request.query["token"] != nil {
                return .text(403, "the call's controls take the token as 'Authorization: Bearer', not in the URL")
            }
            return needsToken(request)
        }
        return [
            HTTPRoute("GET", .exact("/"), check: needsToken) { _ in
                HTTPResponse(status: 200, headers: ["Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache"], body: page)
            },
            HTTPRoute("GET", .exact("/stats"), check: needsToken) { request in
                switch request.query["format"] {
                case nil, "json": break
                case "text":
                    guard let statsText else { return .text(404, "no text form of the stats here") }
                    return HTTPResponse(
                        status: 200, headers: ["Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store"],
                        body: Array(Self.printableLines(statsText()).utf8))
                case let other?:
                    return .text(400, "format must be json or text, not '\(other.prefix(40))'")
                }
                return HTTPResponse(
                    status: 200, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"],
                    body: Array((stats().serialized + "\n").utf8))
            },
            // Prometheus scrapes: the same rule as /stats (a scrape config carries the token as its bearer_token).
            HTTPRoute("GET", .exact("/metrics"), check: needsToken) { _ in
                guard let metrics else { return .text(404, "no metrics here") }
                return HTTPResponse(
                    status: 200, headers: ["Content-Type": MetricsText.contentType, "Cache-Control": "no-store"], body: Array(metrics().utf8))
            },
            // The sharer's controls: from this machine only (a viewer on the LAN holds the share link's token too),
            // then the token as for /stats.
            HTTPRoute("POST", .parameter(prefix: "/control/kick/"), check: controlCheck) { request in
                guard let kick else { return .text(404, "no controls here") }
                let id = request.pathParameter ?? ""
                return kick(id) ? .text(200, "kicked \(id)") : .text(404, "no viewer \(id.prefix(64))")
            },
            HTTPRoute("POST", .exact("/control/pause"), check: controlCheck) { _ in
                guard let pause else { return .text(404, "no controls here") }
                return .text(200, pause(true) ? "paused" : "already paused")
            },
            HTTPRoute("POST", .exact("/control/resume"), check: controlCheck) { _ in
                guard let pause else { return .text(404, "no controls here") }
                return .text(200, pause(false) ? "resumed" : "not paused")
            },
            // What the page shows of the sharer: {"state": "waiting" | "live" | "paused" | "ended"}.
            HTTPRoute("GET", .exact("/source"), check: needsToken) { _ in
                guard let sharerState else { return .text(404, "no sharer state here") }
                return HTTPResponse(
                    status: 200, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"],
                    body: Array((JSONValue.object([("state", .string(sharerState().rawValue))]).serialized + "\n").utf8))
            },
            HTTPRoute("GET", .exact("/healthz")) { _ in .text(200, "ok") },
            HTTPRoute("GET", .exact("/favicon.ico")) { _ in
                HTTPResponse(status: 200, headers: ["Content-Type": "image/x-icon", "Cache-Control": "max-age=86400"], body: Favicon.ico)
            },
        ] + WHEPEndpoint.routes(provider: sessions, token: configuration.token, limits: configuration.whepLimits, logger: logger)
    }

    /// True for an address of this machine's loopback: 127.0.0.0/8, ::1, ::ffff:127.x (RFC 1122 §3.2.1.3, RFC 4291 §2.5.3).
    /// nil (unknown) is not.
    static func isLoopback(_ address: String?) -> Bool {
        guard let address else { return false }
        return address.hasPrefix("127.") || address == "::1" || address.lowercased().hasPrefix("::ffff:127.")
    }

    /// The port actually bound.
    public var port: UInt16 { http.port }

    /// `text` with its lines kept and every other non-printable character escaped
    /// (`String.escapingNonPrintable`): the text stats carry what a sender chose (the agent's
    /// `Capture-Rect`), and an ESC or CR in it must not act on the terminal of whoever runs `curl`.
    public static func printableLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { String($0).escapingNonPrintable }.joined(separator: "\n")
    }

    /// `http://HOST:PORT` (a wildcard host is shown as loopback).
    public var baseURL: String {
        var host = configuration.endpoint.host
        if host == "0.0.0.0" { host = "127.0.0.1" } else if host == "::" { host = "::1" }
        return "\(scheme)://\(HTTPEndpoint(host: host, port: port))"
    }

    /// `https` when serving TLS, else `http`.
    public var scheme: String { http.isTLS ? "https" : "http" }

    /// The viewer page's URL, with `?token=` when a token is needed (`token` is the `--token` text).
    public func viewerURL(token: String? = nil) -> String {
        guard let token, !token.isEmpty else { return baseURL + "/" }
        return baseURL + "/?token=" + Self.percentEncoded(token)
    }

    /// `text` with every byte outside RFC 3986's unreserved set percent-encoded (upper-case hex).
    public static func percentEncoded(_ text: String) -> String {
        text.utf8.map { byte -> String in
            let unreserved = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            return unreserved ? String(UnicodeScalar(byte)) : "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }.joined()
    }

    /// Stops the server (idempotent; waits for running handlers).
    public func stop() { http.stop() }
}
