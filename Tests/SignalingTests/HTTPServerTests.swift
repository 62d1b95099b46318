import Foundation
import Glibc
import ScreencastSupport
@testable import Signaling
import Synchronization
import XCTest

/// The real server over 127.0.0.1 (port 0), driven by a raw-socket client.
final class HTTPServerTests: XCTestCase {
    private let logger = Logger(component: "test", threshold: .error)
    private var server: SignalingServer!
    private var sessions: FakeSessions!
    private var port: UInt16 { server.port }

    private func start(token: String? = nil, sessions: FakeSessions = FakeSessions(), stats: JSONValue = .null) throws {
        self.sessions = sessions
        var configuration = SignalingConfiguration(endpoint: HTTPEndpoint(host: "127.0.0.1", port: 0), token: token.flatMap(BearerToken.init))
        configuration.serverOptions.idleTimeoutSeconds = 5
        server = try SignalingServer(configuration: configuration, sessions: sessions, stats: { stats }, logger: logger)
        XCTAssertNotEqual(server.port, 0)
    }

    override func tearDown() {
        server?.stop()
        server = nil
        super.tearDown()
    }

    private func post(_ offer: String, type: String = "application/sdp", headers: [(String, String)] = []) throws -> RawResponse {
        try RawHTTPClient.request(port: port, method: "POST", path: "/whep", headers: [("Content-Type", type)] + headers, body: Array(offer.utf8))
    }

    /// The provider learns each POST's client address (per-address limits key on it).
    func testTheClientAddressReachesTheProvider() throws {
        try start()
        let created = try RawHTTPClient.request(
            port: port, method: "POST", path: "/whep", headers: [("Content-Type", "application/sdp")], body: Array(Offers.vp8.utf8),
            source: "127.0.0.5")
        XCTAssertEqual(created.status, 201)
        XCTAssertEqual(try post(Offers.vp8).status, 201)
        XCTAssertEqual(sessions.clientAddresses, ["127.0.0.5", "127.0.0.1"])
    }

    /// 429 for too many pending sessions from one address, with Retry-After.
    func testTooManyPendingIs429WithRetryAfter() {
        let response = WHEPEndpoint.errorResponse(.tooManyPending("4 sessions from 127.0.0.1 have not connected yet"))
        XCTAssertEqual(response.status, 429)
        XCTAssertEqual(response.headers["Retry-After"], "2")
    }

    func testWHEPLifecycle() throws {
        try start()
        let created = try post(Offers.vp8)
        XCTAssertEqual(created.status, 201)
        XCTAssertEqual(created.header("Location"), "/whep/s1")
        XCTAssertEqual(created.header("Content-Type"), "application/sdp")
        XCTAssertEqual(created.text, FakeSessions.answer)
        XCTAssertEqual(created.header("Access-Control-Allow-Origin"), "*")
        XCTAssertEqual(created.header("Access-Control-Expose-Headers"), "Location, ETag, Link")
        XCTAssertEqual(sessions.calls.first, .create(Offers.vp8), "the offer reaches the provider byte for byte")

        let location = try XCTUnwrap(created.header("Location"))
        let patched = try RawHTTPClient.request(
            port: port, method: "PATCH", path: location, headers: [("Content-Type", "application/trickle-ice-sdpfrag")],
            body: Array(Offers.candidateOnly.utf8))
        XCTAssertEqual(patched.status, 204)
        XCTAssertTrue(patched.body.isEmpty)
        XCTAssertEqual(sessions.calls.last, .update(id: "s1", fragment: Offers.candidateOnly))

        XCTAssertEqual(try RawHTTPClient.request(port: port, method: "DELETE", path: location).status, 200)
        XCTAssertEqual(try RawHTTPClient.request(port: port, method: "DELETE", path: location).status, 404)
        let stale = try RawHTTPClient.request(
            port: port, method: "PATCH", path: location, headers: [("Content-Type", "application/trickle-ice-sdpfrag")],
            body: Array(Offers.candidateOnly.utf8))
        XCTAssertEqual(stale.status, 404)
        XCTAssertTrue(sessions.liveSessions.isEmpty)
    }

    func testErrorStatuses() throws {
        try start()
        XCTAssertEqual(try post(Offers.vp8, type: "text/plain").status, 415)
        XCTAssertEqual(try post("").status, 400)
        XCTAssertEqual(try post(Offers.garbage).status, 400)
        let noVP8 = try post(Offers.h264Only)
        XCTAssertEqual(noVP8.status, 422)
        XCTAssertEqual(noVP8.header("Content-Type"), "text/plain; charset=utf-8")
        XCTAssertEqual(noVP8.header("Access-Control-Allow-Origin"), "*")
        XCTAssertEqual(try post(Offers.full).status, 503)
        let failed = try post(Offers.explode)
        XCTAssertEqual(failed.status, 500)
        XCTAssertEqual(failed.text, "internal error: ICE agent did not start\n")
        let patch415 = try RawHTTPClient.request(
            port: port, method: "PATCH", path: "/whep/s1", headers: [("Content-Type", "application/sdp")], body: [0x61])
        XCTAssertEqual(patch415.status, 415)
        XCTAssertEqual(try RawHTTPClient.request(port: port, method: "GET", path: "/nope").status, 404)
        let wrongMethod = try RawHTTPClient.request(port: port, method: "GET", path: "/whep")
        XCTAssertEqual(wrongMethod.status, 405)
        XCTAssertEqual(wrongMethod.header("Allow"), "POST, OPTIONS")
        XCTAssertEqual(wrongMethod.header("Access-Control-Allow-Origin"), "*")
    }

    func testPreflight() throws {
        try start(token: "t0ken")
        for path in ["/whep", "/whep/s1"] {
            let response = try RawHTTPClient.request(
                port: port, method: "OPTIONS", path: path,
                headers: [("Origin", "http://example.test"), ("Access-Control-Request-Method", "POST"),
                          ("Access-Control-Request-Headers", "authorization, content-type")])
            XCTAssertEqual(response.status, 204, path)
            XCTAssertEqual(response.header("Access-Control-Allow-Origin"), "*")
            XCTAssertEqual(response.header("Access-Control-Allow-Methods"), "POST, PATCH, DELETE, OPTIONS, GET")
            XCTAssertEqual(response.header("Access-Control-Allow-Headers"), "Content-Type, Authorization, If-Match")
            XCTAssertEqual(response.header("Access-Control-Expose-Headers"), "Location, ETag, Link")
            XCTAssertNotNil(response.header("Access-Control-Max-Age"))
            XCTAssertTrue(response.body.isEmpty)
            XCTAssertNil(response.header("Content-Length"), "no Content-Length on 204 (RFC 9110 §8.6)")
        }
    }

    func testToken() throws {
        try start(token: "s3cret")
        let missing = try post(Offers.vp8)
        XCTAssertEqual(missing.status, 401)
        XCTAssertEqual(missing.header("WWW-Authenticate"), "Bearer realm=\"screencast\"")
        XCTAssertEqual(missing.header("Access-Control-Allow-Origin"), "*")
        let wrong = try post(Offers.vp8, headers: [("Authorization", "Bearer wrong")])
        XCTAssertEqual(wrong.status, 401)
        XCTAssertEqual(wrong.header("WWW-Authenticate"), "Bearer realm=\"screencast\", error=\"invalid_token\"")
        XCTAssertTrue(sessions.calls.isEmpty, "no unauthorised request reaches the provider")
        let accepted = try post(Offers.vp8, headers: [("Authorization", "Bearer s3cret")])
        XCTAssertEqual(accepted.status, 201)
        let location = try XCTUnwrap(accepted.header("Location"))
        XCTAssertEqual(try RawHTTPClient.request(port: port, method: "DELETE", path: location).status, 401)
        XCTAssertEqual(
            try RawHTTPClient.request(port: port, method: "DELETE", path: location, headers: [("Authorization", "Bearer s3cret")]).status, 200)
        XCTAssertEqual(try RawHTTPClient.request(port: port, method: "GET", path: "/").status, 401)
        XCTAssertEqual(try RawHTTPClient.request(port: port, method: "GET", path: "/?token=s3cret").status, 200, "the link's query")
        XCTAssertEqual(try RawHTTPClient.request(port: port, method: "GET", path: "/stats?token=nope").status, 401)
        // Given twice, the token is ambiguous whichever comes first: 400, for the right one too.
        for path in ["/?token=s3cret&token=nope", "/stats?token=nope&token=s3cret", "/stats?token=s3cret&token=s3cret"] {
            let twice = try RawHTTPClient.request(port: port, method: "GET", path: path)
            XCTAssertEqual(twice.status, 400, path)
            XCTAssertEqual(twice.text, "query parameter 'token' is given more than once\n", path)
        }
        XCTAssertEqual(try RawHTTPClient.request(port: port, method: "GET", path: "/?whep=%2Fwhep&token=s3cret").status, 200, "other parameters beside it")
    }

    func testStatsHealthAndPage() throws {
        try start(stats: .object([("frames", .int(42)), ("peers", .array([.object([("state", "connected"), ("rtt_ms", .double(1.5))])]))]))
        let stats = try RawHTTPClient.request(port: port, method: "GET", path: "/stats")
        XCTAssertEqual(stats.status, 200)
        XCTAssertEqual(stats.header("Content-Type"), "application/json")
        let decoded = try JSONSerialization.jsonObject(with: Data(stats.body)) as? [String: Any]
        XCTAssertEqual(decoded?["frames"] as? Int, 42)
        XCTAssertEqual(stats.text, "{\"frames\":42,\"peers\":[{\"state\":\"connected\",\"rtt_ms\":1.5}]}\n")

        let health = try RawHTTPClient.request(port: port, method: "GET", path: "/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.text, "ok\n")

        let page = try RawHTTPClient.request(port: port, method: "GET", path: "/?token=abc")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.header("Content-Type"), "text/html; charset=utf-8")
        XCTAssertEqual(page.text, ViewerPage.html)
        let head = try RawHTTPClient.request(port: port, method: "HEAD", path: "/")
        XCTAssertEqual(head.status, 200)
        XCTAssertTrue(head.body.isEmpty)
        XCTAssertEqual(head.header("Content-Length"), String(ViewerPage.html.utf8.count))
    }

    func testOversizedBodies() throws {
        try start()
        // Declared too large: refused from the headers alone, the body is never read.
        let fd = try RawHTTPClient.connect(port: port)
        defer { close(fd) }
        let head = "POST /whep HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\nContent-Length: 70000\r\n\r\n"
        RawHTTPClient.sendAll(fd, Array(head.utf8))
        let early = try RawHTTPClient.readResponse(fd)
        XCTAssertEqual(early.status, 413)
        XCTAssertEqual(early.header("Access-Control-Allow-Origin"), "*")

        // Sent in full with a true Content-Length.
        XCTAssertEqual(try post(String(repeating: "a", count: 64 * 1024 + 1)).status, 413)

        // Chunked, no length: drained and answered 413 at the end.
        var chunked: [UInt8] = []
        for _ in 0..<20 { chunked += Array("1000\r\n".utf8) + Array(repeating: 0x61, count: 4096) + Array("\r\n".utf8) }
        chunked += Array("0\r\n\r\n".utf8)
        let response = try RawHTTPClient.request(
            port: port, method: "POST", path: "/whep",
            headers: [("Content-Type", "application/sdp"), ("Transfer-Encoding", "chunked")], body: chunked)
        XCTAssertEqual(response.status, 413)
        XCTAssertTrue(sessions.calls.isEmpty)

        // Exactly at the limit: accepted and handed to the provider.
        let atLimit = Offers.vp8 + "a=pad:" + String(repeating: "x", count: 64 * 1024 - Offers.vp8.utf8.count - 8) + "\r\n"
        XCTAssertEqual(atLimit.utf8.count, 64 * 1024)
        XCTAssertNotEqual(try post(atLimit).status, 413)
        XCTAssertEqual(sessions.calls.count, 1)

        // A chunked offer within the limit works.
        let offer = Array(Offers.vp8.utf8)
        let small = Array(String(offer.count, radix: 16).utf8) + [13, 10] + offer + Array("\r\n0\r\n\r\n".utf8)
        let ok = try RawHTTPClient.request(
            port: port, method: "POST", path: "/whep",
            headers: [("Content-Type", "application/sdp"), ("Transfer-Encoding", "chunked")], body: small)
        XCTAssertEqual(ok.status, 201)
    }

    /// Twenty POSTs at once, each taking 1 s in the provider: all answered, in far less than 20 × 1 s.
    func testConcurrentPosts() throws {
        try start(sessions: FakeSessions(delay: .seconds(1)))
        let results = Mutex<[Int]>([])
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        let started = ContinuousClock.now
        // From 5 loopback addresses, 4 each: within the per-address connection limit (8).
        for index in 0..<20 {
            group.enter()
            Thread.detachNewThread { [port] in
                var status = -1
                do {
                    status = try RawHTTPClient.request(
                        port: port, method: "POST", path: "/whep", headers: [("Content-Type", "application/sdp")],
                        body: Array(Offers.vp8.utf8), timeout: 10, source: "127.0.0.\(10 + index % 5)").status
                } catch {
                    failures.withLock { $0.append("\(error) after \(ContinuousClock.now - started)") }
                }
                results.withLock { $0.append(status) }
                group.leave()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 15), .success)
        let elapsed = ContinuousClock.now - started
        // A CI run once saw 16 of 20 fail at once (-1, the error then unrecorded): say why if it recurs.
        XCTAssertEqual(results.withLock { $0 }, Array(repeating: 201, count: 20), "failures: \(failures.withLock { $0 })")
        XCTAssertEqual(sessions.liveSessions.count, 20)
        XCTAssertLessThan(elapsed, .seconds(5), "requests ran in parallel (thread per connection)")
        // While a slow POST runs, other requests are answered at once.
        let slow = Thread { [port] in
            _ = try? RawHTTPClient.request(port: port, method: "POST", path: "/whep", headers: [("Content-Type", "application/sdp")],
                                           body: Array(Offers.vp8.utf8))
        }
        slow.start()
        Thread.sleep(forTimeInterval: 0.1)
        let quick = ContinuousClock.now
        XCTAssertEqual(try RawHTTPClient.request(port: port, method: "GET", path: "/healthz").status, 200)
        XCTAssertLessThan(ContinuousClock.now - quick, .milliseconds(600), "not queued behind the slow POST")
    }

    func testKeepAliveServesSeveralRequests() throws {
        try start()
        let fd = try RawHTTPClient.connect(port: port)
        defer { close(fd) }
        let request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        RawHTTPClient.sendAll(fd, Array((request + request + "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").utf8))
        let text = String(decoding: try RawHTTPClient.readAll(fd), as: UTF8.self)
        XCTAssertEqual(text.components(separatedBy: "HTTP/1.1 200 OK\r\n").count, 4, text)
    }

    /// A client that sends half a body and leaves does not disturb the server.
    func testClientLeavingMidBody() throws {
        try start()
        for _ in 0..<5 {
            let fd = try RawHTTPClient.connect(port: port)
            let head = "POST /whep HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\nContent-Length: 5000\r\n\r\n"
            RawHTTPClient.sendAll(fd, Array(head.utf8) + Array(repeating: 0x61, count: 1000))
            close(fd)
        }
        XCTAssertEqual(try post(Offers.vp8).status, 201)
        XCTAssertEqual(sessions.calls.count, 1)
    }

    /// stop() returns promptly even with idle keep-alive connections open, and frees the port.
    func testStopIsPromptAndFreesThePort() throws {
        try start()
        let port = self.port
        var idle: [Int32] = []
        for _ in 0..<3 {
            let fd = try RawHTTPClient.connect(port: port)
            RawHTTPClient.sendAll(fd, Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            idle.append(fd)
        }
        idle.append(try RawHTTPClient.connect(port: port))  // connected, never sends
        Thread.sleep(forTimeInterval: 0.1)
        let started = ContinuousClock.now
        server.stop()
        server.stop()
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(1))
        for fd in idle { close(fd) }
        XCTAssertThrowsError(try RawHTTPClient.connect(port: port), "nothing listens after stop")

        // The same port can be bound again at once.
        let again = try SignalingServer(
            configuration: SignalingConfiguration(endpoint: HTTPEndpoint(host: "127.0.0.1", port: port)), sessions: FakeSessions(),
            stats: { nil }, logger: logger)
        XCTAssertEqual(again.port, port)
        XCTAssertEqual(try RawHTTPClient.request(port: port, method: "GET", path: "/healthz").status, 200)
        again.stop()
    }

    func testBindConflictIsATypedError() throws {
        try start()
        let endpoint = HTTPEndpoint(host: "127.0.0.1", port: port)
        XCTAssertThrowsError(try SignalingServer(
            configuration: SignalingConfiguration(endpoint: endpoint), sessions: FakeSessions(), stats: { nil }, logger: logger)
        ) { error in
            guard case SignalingError.startFailed(let where_, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(where_, endpoint.description)
            XCTAssertTrue(reason.contains("in use"), reason)
        }
    }
}

/// The limits that keep one client from taking the server: connections per address, header bytes.
final class HTTPServerLimitTests: XCTestCase {
    private var server: SignalingServer?

    override func tearDown() { server?.stop() }

    private func start(perAddress: UInt32, idleSeconds: UInt32 = 10) throws -> UInt16 {
        var configuration = SignalingConfiguration(endpoint: HTTPEndpoint(host: "127.0.0.1", port: 0))
        configuration.serverOptions.perAddressConnectionLimit = perAddress
        configuration.serverOptions.idleTimeoutSeconds = idleSeconds
        let started = try SignalingServer(
            configuration: configuration, sessions: FakeSessions(), stats: { .null }, logger: Logger(component: "test", threshold: .error))
        server = started
        return started.port
    }

    func testOneAddressCannotHoldMoreThanItsShareOfConnections() throws {
        let port = try start(perAddress: 4)
        // Four silent connections (a slow client) from 127.0.0.1 take this address's share…
        let held = try (0..<4).map { _ in try RawHTTPClient.connect(port: port) }
        // Closed exactly once (below): a second close would hit whatever descriptor took the number since,
        // such as the server's own socket (libmicrohttpd then aborts: "Close socket failed").
        var open = true
        defer { if open { held.forEach { close($0) } } }
        usleep(200_000)
        // …so a fifth is closed at accept without an answer.
        XCTAssertThrowsError(try RawHTTPClient.request(port: port, method: "GET", path: "/healthz", timeout: 2)) { error in
            print("http: fifth connection from one address: \(error)")
        }
        // Once they go, the address is served again.
        held.forEach { close($0) }
        open = false
        usleep(300_000)
        XCTAssertEqual(try RawHTTPClient.request(port: port, method: "GET", path: "/healthz").status, 200)
    }

    func testHeadersPastTheMemoryLimitAreRefusedWith431() throws {
        let port = try start(perAddress: 32)
        let huge = String(repeating: "x", count: 40 * 1024)
        let response = try RawHTTPClient.request(port: port, method: "GET", path: "/healthz", headers: [("X-Filler", huge)])
        XCTAssertEqual(response.status, 431)
        XCTAssertEqual(try RawHTTPClient.request(port: port, method: "GET", path: "/healthz").status, 200, "the server goes on")
    }

    /// A slow client (half a request line, then silence) is closed at the idle timeout, so it gives its
    /// connection back; the defaults are the ones the threat model names.
    func testASilentClientIsClosedAtTheIdleTimeout() throws {
        let defaults = HTTPServerOptions()
        XCTAssertEqual([defaults.connectionLimit, defaults.perAddressConnectionLimit, defaults.idleTimeoutSeconds], [256, 64, 30])
        XCTAssertEqual(defaults.memoryLimitBytes, 32 * 1024)
        let port = try start(perAddress: 32, idleSeconds: 1)
        let fd = try RawHTTPClient.connect(port: port)
        defer { close(fd) }
        let partial = Array("GET /healthz HT".utf8)
        XCTAssertEqual(partial.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }, partial.count)
        var timeout = timeval(tv_sec: 6, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let started = Date()
        var byte: UInt8 = 0
        let got = recv(fd, &byte, 1, 0)
        let waited = Date().timeIntervalSince(started)
        print("http: a silent client was closed after \(String(format: "%.2f", waited)) s (idle timeout 1 s)")
        XCTAssertEqual(got, 0, "the server did not close the silent connection (recv: \(got), errno \(errno))")
        XCTAssertGreaterThanOrEqual(waited, 0.5, "closed before the idle timeout")
    }
}
