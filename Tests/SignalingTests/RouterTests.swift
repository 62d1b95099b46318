import ScreencastSupport
import Signaling
import XCTest

/// The router and the WHEP routes in memory (no sockets): every status the HTTP tests check for real,
/// plus the pieces (endpoint parsing, token comparison, ids, error mapping) on their own.
final class RouterTests: XCTestCase {
    private let logger = Logger(component: "test", threshold: .error)

    private func router(token: String? = nil, sessions: FakeSessions = FakeSessions()) -> HTTPRouter {
        let configuration = SignalingConfiguration(token: token.flatMap(BearerToken.init))
        return HTTPRouter(routes: SignalingServer.routes(
            configuration: configuration, sessions: sessions, stats: { .object([("frames", 3)]) }, logger: logger))
    }

    private func post(_ offer: String, type: String = "application/sdp", auth: String? = nil) -> HTTPRequest {
        var headers: HTTPHeaders = ["Content-Type": type]
        if let auth { headers.add("Authorization", auth) }
        return HTTPRequest(method: "POST", path: "/whep", headers: headers, body: Array(offer.utf8))
    }

    func testPostCreatesSessionWithLocationAndAnswer() {
        let sessions = FakeSessions()
        let response = router(sessions: sessions).respond(to: post(Offers.vp8))
        XCTAssertEqual(response.status, 201)
        XCTAssertEqual(response.headers["Location"], "/whep/s1")
        XCTAssertEqual(response.headers["Content-Type"], "application/sdp")
        XCTAssertEqual(response.bodyText, FakeSessions.answer)
        XCTAssertEqual(response.headers["Access-Control-Allow-Origin"], "*")
        XCTAssertEqual(sessions.calls, [.create(Offers.vp8)])
    }

    func testOfferErrorsMapToStatuses() {
        let r = router()
        XCTAssertEqual(r.respond(to: post(Offers.vp8, type: "text/plain")).status, 415)
        XCTAssertEqual(r.respond(to: post(Offers.vp8, type: "application/sdp; charset=utf-8")).status, 201)
        XCTAssertEqual(r.respond(to: post(Offers.vp8, type: "Application/SDP")).status, 201)
        XCTAssertEqual(r.respond(to: post("")).status, 400)
        XCTAssertEqual(r.respond(to: post(Offers.garbage)).status, 400)
        let noVP8 = r.respond(to: post(Offers.h264Only))
        XCTAssertEqual(noVP8.status, 422)
        XCTAssertTrue(noVP8.bodyText.contains("VP8"), noVP8.bodyText)
        let full = r.respond(to: post(Offers.full))
        XCTAssertEqual(full.status, 503)
        XCTAssertEqual(full.headers["Retry-After"], "2")
        let internalError = r.respond(to: post(Offers.explode))
        XCTAssertEqual(internalError.status, 500)
        XCTAssertEqual(internalError.bodyText, "internal error: ICE agent did not start\n")
        var notText = post("")
        notText.body = [0x76, 0x3D, 0xFF, 0xFE]
        XCTAssertEqual(r.respond(to: notText).status, 400)
        var tooLarge = post("")
        tooLarge.body = Array(repeating: 0x61, count: 64 * 1024 + 1)
        XCTAssertEqual(r.respond(to: tooLarge).status, 413)
    }

    func testErrorStatusMapping() {
        XCTAssertEqual(SignalingError.refused(.malformed, reason: "x").httpStatus, 400)
        XCTAssertEqual(SignalingError.refused(.tooLarge, reason: "x").httpStatus, 413)
        XCTAssertEqual(SignalingError.refused(.unanswerable, reason: "x").httpStatus, 422)
        XCTAssertEqual(SignalingError.refused(.unanswerable, reason: "no VP8").description, "no VP8")
        XCTAssertEqual(DescriptionFault.allCases.map(\.httpStatus), [400, 413, 422])
        XCTAssertEqual(SignalingError.unknownSession("x").httpStatus, 404)
        XCTAssertEqual(SignalingError.unavailable("x").httpStatus, 503)
        XCTAssertEqual(SignalingError.internalFailure("x").httpStatus, 500)
    }

    func testPatchAndDelete() {
        let sessions = FakeSessions(restartAnswer: "a=ice-ufrag:new\r\na=ice-pwd:newnewnewnewnewnewnewnew\r\n")
        let r = router(sessions: sessions)
        XCTAssertEqual(r.respond(to: post(Offers.vp8)).status, 201)
        let patch = { (path: String, type: String, body: String) in
            r.respond(to: HTTPRequest(method: "PATCH", path: path, headers: ["Content-Type": type], body: Array(body.utf8)))
        }
        XCTAssertEqual(patch("/whep/s1", "application/trickle-ice-sdpfrag", Offers.candidateOnly).status, 204)
        let restart = patch("/whep/s1", "application/trickle-ice-sdpfrag", Offers.trickle)
        XCTAssertEqual(restart.status, 200)
        XCTAssertEqual(restart.headers["Content-Type"], "application/trickle-ice-sdpfrag")
        XCTAssertEqual(patch("/whep/s1", "application/sdp", Offers.candidateOnly).status, 415)
        XCTAssertEqual(patch("/whep/nope", "application/trickle-ice-sdpfrag", Offers.candidateOnly).status, 404)
        XCTAssertEqual(patch("/whep/s1", "application/trickle-ice-sdpfrag", "").status, 400)
        XCTAssertEqual(r.respond(to: HTTPRequest(method: "DELETE", path: "/whep/s1")).status, 200)
        XCTAssertEqual(r.respond(to: HTTPRequest(method: "DELETE", path: "/whep/s1")).status, 404)
        XCTAssertEqual(sessions.calls.last, .delete("s1"))
    }

    func testNotFoundMethodNotAllowedAndOptions() {
        let r = router()
        XCTAssertEqual(r.respond(to: HTTPRequest(method: "GET", path: "/nope")).status, 404)
        XCTAssertEqual(r.respond(to: HTTPRequest(method: "GET", path: "/whep/a/b")).status, 404)
        XCTAssertEqual(r.respond(to: HTTPRequest(method: "GET", path: "/whep/")).status, 404)
        let wrong = r.respond(to: HTTPRequest(method: "GET", path: "/whep"))
        XCTAssertEqual(wrong.status, 405)
        XCTAssertEqual(wrong.headers["Allow"], "POST, OPTIONS")
        XCTAssertEqual(r.respond(to: HTTPRequest(method: "PUT", path: "/whep/s1")).headers["Allow"], "PATCH, POST, DELETE, OPTIONS")
        XCTAssertEqual(r.respond(to: HTTPRequest(method: "POST", path: "/stats")).headers["Allow"], "GET, HEAD, OPTIONS")
        let preflight = r.respond(to: HTTPRequest(method: "OPTIONS", path: "/whep"))
        XCTAssertEqual(preflight.status, 204)
        XCTAssertEqual(preflight.headers["Access-Control-Allow-Origin"], "*")
        XCTAssertEqual(preflight.headers["Access-Control-Allow-Methods"], "POST, PATCH, DELETE, OPTIONS, GET")
        XCTAssertEqual(preflight.headers["Access-Control-Allow-Headers"], "Content-Type, Authorization, If-Match")
        XCTAssertEqual(preflight.headers["Access-Control-Expose-Headers"], "Location, ETag, Link")
        XCTAssertEqual(preflight.headers["Accept-Post"], "application/sdp")
        XCTAssertEqual(r.respond(to: HTTPRequest(method: "OPTIONS", path: "/nope")).status, 404)
        XCTAssertEqual(r.respond(to: HTTPRequest(method: "HEAD", path: "/healthz")).status, 200)
    }

    func testTokenRequiredOnWHEPThePageAndStats() {
        let sessions = FakeSessions()
        let r = router(token: "s3cret", sessions: sessions)
        let missing = r.respond(to: post(Offers.vp8))
        XCTAssertEqual(missing.status, 401)
        XCTAssertEqual(missing.headers["WWW-Authenticate"], "Bearer realm=\"screencast\"")
        let wrong = r.respond(to: post(Offers.vp8, auth: "Bearer s3cre"))
        XCTAssertEqual(wrong.status, 401)
        XCTAssertTrue(wrong.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true)
        XCTAssertEqual(r.respond(to: post(Offers.vp8, auth: "Basic s3cret")).status, 401)
        XCTAssertEqual(r.respond(to: post(Offers.vp8, auth: "Bearer s3cret")).status, 201)
        XCTAssertEqual(r.respond(to: post(Offers.vp8, auth: "bearer  s3cret ")).status, 201)
        // The token is checked before the content type, and nothing reaches the provider without it.
        XCTAssertEqual(r.respond(to: post(Offers.vp8, type: "text/plain")).status, 401)
        XCTAssertEqual(r.respond(to: HTTPRequest(method: "DELETE", path: "/whep/s1")).status, 401)
        XCTAssertEqual(sessions.calls.count, 2)
        // Preflights, health and the icon need no token; the page and stats need it, as a header or ?token=.
        XCTAssertEqual(r.respond(to: HTTPRequest(method: "OPTIONS", path: "/whep")).status, 204)
        XCTAssertEqual(r.respond(to: HTTPRequest(method: "GET", path: "/healthz")).status, 200)
        XCTAssertEqual(r.respond(to: HTTPRequest(method: "GET", path: "/favicon.ico")).status, 200)
        for path in ["/", "/stats"] {
            let bare = r.respond(to: HTTPRequest(method: "GET", path: path))
            XCTAssertEqual(bare.status, 401, path)
            XCTAssertEqual(bare.bodyText, "this call needs its viewer link, with ?token=…\n", path)
            let wrong = r.respond(to: HTTPRequest(method: "GET", path: path, query: ["token": "s3cre"]))
            XCTAssertEqual(wrong.status, 401, path)
            XCTAssertEqual(wrong.bodyText, "wrong token: open the viewer link you were given\n", path)
            XCTAssertEqual(r.respond(to: HTTPRequest(method: "GET", path: path, query: ["token": "s3cret"])).status, 200, path)
            XCTAssertEqual(r.respond(to: HTTPRequest(method: "GET", path: path, headers: ["Authorization": "Bearer s3cret"])).status, 200, path)
        }
    }

    /// CORS only where other origins need it (WHEP): the page and /stats are same-origin, so no other site
    /// a viewer visits can read the stats (viewers' addresses) through the viewer's browser.
    func testCORSOnlyOnWHEP() {
        let r = router()
        XCTAssertEqual(r.respond(to: post(Offers.vp8)).headers["Access-Control-Allow-Origin"], "*")
        for path in ["/", "/stats", "/healthz", "/favicon.ico", "/nowhere"] {
            let response = r.respond(to: HTTPRequest(method: "GET", path: path))
            XCTAssertNil(response.headers["Access-Control-Allow-Origin"], path)
            let preflight = r.respond(to: HTTPRequest(method: "OPTIONS", path: path))
            XCTAssertNil(preflight.headers["Access-Control-Allow-Methods"], path)
        }
    }

    func testBearerTokenComparison() {
        let token = BearerToken("abc")!
        XCTAssertTrue(token.authorizes("Bearer abc"))
        XCTAssertTrue(token.authorizes("BEARER abc"))
        XCTAssertFalse(token.authorizes("Bearer abcd"))
        XCTAssertFalse(token.authorizes("Bearer ab"))
        XCTAssertFalse(token.authorizes("Bearer "))
        XCTAssertFalse(token.authorizes("Bearerabc"))
        XCTAssertFalse(token.authorizes(nil))
        XCTAssertNil(BearerToken(""))
    }

    func testEndpointParsing() throws {
        XCTAssertEqual(try HTTPEndpoint(parsing: "127.0.0.1:8080"), HTTPEndpoint(host: "127.0.0.1", port: 8080))
        XCTAssertEqual(try HTTPEndpoint(parsing: "[::1]:0"), HTTPEndpoint(host: "::1", port: 0))
        XCTAssertEqual(try HTTPEndpoint(parsing: "localhost:9"), HTTPEndpoint(host: "localhost", port: 9))
        XCTAssertEqual(HTTPEndpoint(host: "::1", port: 80).description, "[::1]:80")
        XCTAssertEqual(HTTPEndpoint.default.description, "127.0.0.1:8080")
        XCTAssertTrue(HTTPEndpoint.default.isLoopback)
        XCTAssertFalse(HTTPEndpoint(host: "0.0.0.0", port: 1).isLoopback)
        for bad in ["8080", ":8080", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "::1:80", "[::1]80", "[::1:80", "h:8o"] {
            XCTAssertThrowsError(try HTTPEndpoint(parsing: bad), bad)
        }
    }

    func testSessionIDs() {
        let a = WHEPSessionID.random()
        let b = WHEPSessionID.random()
        XCTAssertEqual(a.count, 32)
        XCTAssertNotEqual(a, b)
        XCTAssertTrue(WHEPSessionID.isValid(a))
        XCTAssertFalse(WHEPSessionID.isValid(""))
        XCTAssertFalse(WHEPSessionID.isValid("a/b"))
        XCTAssertFalse(WHEPSessionID.isValid("a b"))
        XCTAssertFalse(WHEPSessionID.isValid(String(repeating: "a", count: 129)))
    }

    func testStatsAndHealth() {
        let r = router()
        let stats = r.respond(to: HTTPRequest(method: "GET", path: "/stats"))
        XCTAssertEqual(stats.headers["Content-Type"], "application/json")
        XCTAssertEqual(stats.bodyText, "{\"frames\":3}\n")
        XCTAssertEqual(r.respond(to: HTTPRequest(method: "GET", path: "/healthz")).bodyText, "ok\n")
    }

    func testViewerURL() throws {
        let server = try SignalingServer(
            configuration: SignalingConfiguration(endpoint: HTTPEndpoint(host: "127.0.0.1", port: 0)), sessions: FakeSessions(),
            stats: { nil }, logger: logger)
        defer { server.stop() }
        XCTAssertEqual(server.viewerURL(), "http://127.0.0.1:\(server.port)/")
        XCTAssertEqual(server.viewerURL(token: "a b&c"), "http://127.0.0.1:\(server.port)/?token=a%20b%26c")
    }
}
