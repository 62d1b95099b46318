import Publishing
import ScreencastSupport
import Signaling
import Synchronization
import XCTest

/// ``HTTPClient`` following 307/308 itself (RFC 9110 §15.4.8, §15.4.9) with real servers (libmicrohttpd) on
/// 127.0.0.1: the `Authorization` header (the WHIP bearer token) goes to the origin it was given for and no
/// further — a break-it trial saw a `307 Location: http://127.0.0.1:OTHER/whip` receive the token — and
/// a redirect to a scheme other than http/https is refused at once instead of retried for ever.
final class RedirectCredentialTests: XCTestCase {
    /// A server that records each request's Authorization header, and answers by `answer(path)`.
    final class Recorder: @unchecked Sendable {
        // @unchecked Sendable: `log` is behind a Mutex; the server is thread-safe and set once in init.
        final class Log: Sendable {
            let entries = Mutex<[(path: String, authorization: String?)]>([])
        }
        let log = Log()
        var server: HTTPServer!
        init(answer: @escaping @Sendable (String) -> HTTPResponse) throws {
            let routes = ["/whip", "/ingest", "/final"].map { path in
                HTTPRoute("POST", .exact(path), bodyLimit: 1024) { [log] (request: HTTPRequest) -> HTTPResponse in
                    log.entries.withLock { $0.append((path, request.headers["Authorization"])) }
                    return answer(path)
                }
            }
            server = try HTTPServer.start(
                endpoint: HTTPEndpoint(host: "127.0.0.1", port: 0), router: HTTPRouter(routes: routes),
                logger: Logger(component: "recorder", threshold: .error))
        }
        var port: Int { Int(server.port) }
    }

    func testTheTokenStaysWithItsOriginAcrossRedirects() throws {
        let other = try Recorder { _ in .text(201, "other") }
        let otherPort = other.port
        let first = try Recorder { path in
            path == "/whip" ? HTTPResponse(status: 307, headers: ["Location": "/ingest"])
                : HTTPResponse(status: 308, headers: ["Location": "http://127.0.0.1:\(otherPort)/final"])
        }
        let response = try HTTPClient().request(
            "POST", "http://127.0.0.1:\(first.port)/whip", headers: ["Authorization: Bearer SECRET123", "Content-Type: application/sdp"],
            body: Array("v=0\r\n".utf8))
        XCTAssertEqual(response.status, 201)
        XCTAssertEqual(response.url, "http://127.0.0.1:\(otherPort)/final")
        let firstSeen = first.log.entries.withLock { $0 }
        XCTAssertEqual(firstSeen.map(\.path), ["/whip", "/ingest"])
        XCTAssertEqual(firstSeen.map(\.authorization), ["Bearer SECRET123", "Bearer SECRET123"], "the same origin keeps the token")
        let otherSeen = other.log.entries.withLock { $0 }
        XCTAssertEqual(otherSeen.map(\.path), ["/final"])
        XCTAssertEqual(otherSeen.first?.authorization ?? nil, nil, "another port is another origin: no token")
    }

    func testARedirectToAnotherSchemeIsRefused() throws {
        let server = try Recorder { _ in HTTPResponse(status: 307, headers: ["Location": "file:///etc/passwd"]) }
        XCTAssertThrowsError(try HTTPClient().request("POST", "http://127.0.0.1:\(server.port)/whip")) { error in
            guard case .badRedirect(_, let reason)? = error as? PublishingError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("only http and https are followed"), reason)
            XCTAssertFalse((error as? PublishingError)?.isRetryable ?? true, "no retry can help")
        }
    }

    func testOrigins() {
        XCTAssertEqual(URLReference.origin(of: "http://Host.Example/x")?.host, "host.example")
        XCTAssertEqual(URLReference.origin(of: "http://h/x")?.port, 80)
        XCTAssertEqual(URLReference.origin(of: "https://h:8443/x?y")?.port, 8443)
        XCTAssertEqual(URLReference.origin(of: "https://user:pw@h/x")?.host, "h")
        XCTAssertEqual(URLReference.origin(of: "http://[::1]:8088/janus")?.host, "[::1]")
        XCTAssertEqual(URLReference.origin(of: "http://[::1]/janus")?.port, 80)
        XCTAssertNil(URLReference.origin(of: "http://"))
        XCTAssertNil(URLReference.origin(of: "http://h:port/"))
        XCTAssertNil(URLReference.origin(of: "no url"))
    }
}
