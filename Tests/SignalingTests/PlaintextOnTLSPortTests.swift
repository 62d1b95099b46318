import DTLS
import Foundation
import Glibc
import ScreencastSupport
import Signaling
import TestSupport
import XCTest

/// The HTTPS server's own listener (TLSPortAcceptor): plain HTTP sent to the HTTPS port is answered (301 to
/// https for GET/HEAD with a Host, else 400), TLS goes on to libmicrohttpd, and its limits hold: a silent
/// connection is closed after the first-byte timeout, and connections past `maxWaiting` at accept.
final class PlaintextOnTLSPortTests: XCTestCase {
    private let logger = Logger(component: "test", threshold: .error)
    private var server: SignalingServer!
    private var port: UInt16 { server.port }

    private func start(firstByteTimeoutMillis: Int32) throws {
        let certificate = try DTLSCertificate.generate(commonName: "test", validityDays: 1)
        var configuration = SignalingConfiguration(endpoint: HTTPEndpoint(host: "127.0.0.1", port: 0))
        configuration.serverOptions.tls = TLSIdentity(
            certificatePEM: try certificate.certificatePEM(), privateKeyPEM: try certificate.privateKeyPEM(),
            fingerprint: certificate.fingerprint.value)
        configuration.serverOptions.tlsFirstByteTimeoutMillis = firstByteTimeoutMillis
        server = try SignalingServer(configuration: configuration, sessions: FakeSessions(), stats: { .null }, logger: logger)
        XCTAssertNotEqual(server.port, 0)
    }

    override func tearDown() {
        server?.stop()
        server = nil
        super.tearDown()
    }

    private func raw(_ text: String) throws -> String {
        let fd = try RawHTTPClient.connect(port: port)
        defer { close(fd) }
        RawHTTPClient.sendAll(fd, Array(text.utf8))
        return String(decoding: try RawHTTPClient.readAll(fd), as: UTF8.self)
    }

    func testPlainRequestsAreAnsweredAndTLSStillServes() throws {
        try start(firstByteTimeoutMillis: 5_000)
        let get = try RawHTTPClient.request(port: port, method: "GET", path: "/?token=abc")
        XCTAssertEqual(get.status, 301)
        XCTAssertEqual(get.header("Location"), "https://127.0.0.1:\(port)/?token=abc")
        let body = "This port speaks HTTPS, not plain HTTP: open https://127.0.0.1:\(port)/?token=abc (the certificate is "
            + "self-signed: compare its SHA-256 fingerprint with the one the sharer's terminal printed).\n"
        XCTAssertEqual(String(decoding: get.body, as: UTF8.self), body)
        XCTAssertEqual(get.header("Content-Length"), "\(body.utf8.count)")

        let post = try RawHTTPClient.request(port: port, method: "POST", path: "/whep", body: Array("v=0\r\n".utf8))
        XCTAssertEqual(post.status, 400)
        XCTAssertNil(post.header("Location"))

        let head = try raw("HEAD /x HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        XCTAssertTrue(head.hasPrefix("HTTP/1.1 301 Moved Permanently\r\nLocation: https://127.0.0.1:\(port)/x\r\n"), head)
        XCTAssertTrue(head.hasSuffix("Connection: close\r\n\r\n"), "HEAD: no body\n\(head)")
        // No Host, a Host that is not a plain name (a header injection), junk: 400 with the hint, no Location.
        for request in ["GET / HTTP/1.0\r\n\r\n", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
                        "hello\n", "GET http://elsewhere/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"] {
            let answer = try raw(request)
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(request.debugDescription): \(answer)")
            XCTAssertFalse(answer.contains("Location:"), answer)
            XCTAssertTrue(answer.contains("This port speaks HTTPS"), answer)
        }

        // TLS is libmicrohttpd's as before.
        let curl = try ProcessRunner.runCurl(["-sk", "-o", "/dev/null", "-w", "%{http_code}", "https://127.0.0.1:\(port)/healthz"])
        XCTAssertEqual(curl, "200")
    }

    /// A connection that sends nothing is closed once the first-byte timeout passes (before TLS starts).
    func testASilentConnectionIsClosedAfterTheFirstByteTimeout() throws {
        try start(firstByteTimeoutMillis: 300)
        let fd = try RawHTTPClient.connect(port: port, timeout: 5)
        defer { close(fd) }
        let start = Date()
        XCTAssertEqual(try RawHTTPClient.readAll(fd), [], "closed without a byte")
        let waited = Date().timeIntervalSince(start)
        XCTAssertGreaterThanOrEqual(waited, 0.25)
        XCTAssertLessThan(waited, 2)
    }

    /// At most `maxWaiting` connections wait for their first byte (here from 8 addresses of 127.0.0.0/8, 8
    /// each); the next one is closed at accept, and once they are gone a new one is served again.
    func testConnectionsPastMaxWaitingAreClosedAtAccept() throws {
        try start(firstByteTimeoutMillis: 8_000)
        var waiting: [Int32] = []
        defer { waiting.forEach { close($0) } }
        let perAddress = TLSPortAcceptor.maxWaitingPerAddress
        for index in 0..<TLSPortAcceptor.maxWaiting {
            waiting.append(try RawHTTPClient.connect(port: port, timeout: 5, source: "127.0.0.\(10 + index / perAddress)"))
        }
        usleep(300_000)  // every one accepted and waiting
        let extra = try RawHTTPClient.connect(port: port, timeout: 5, source: "127.0.0.99")
        defer { close(extra) }
        let start = Date()
        XCTAssertEqual(try RawHTTPClient.readAll(extra), [], "closed")
        XCTAssertLessThan(Date().timeIntervalSince(start), 2, "at accept, not after the 8 s timeout")
        for fd in waiting { RawHTTPClient.sendAll(fd, Array("hello\n".utf8)) }  // each is answered and closed
        for fd in waiting { XCTAssertTrue(String(decoding: try RawHTTPClient.readAll(fd), as: UTF8.self).hasPrefix("HTTP/1.1 400")) }
        XCTAssertEqual(try RawHTTPClient.request(port: port, method: "GET", path: "/").status, 301, "served again")
    }

    /// One address holds at most `maxWaitingPerAddress` silent connections: its next is closed at accept, while
    /// another client (another loopback address) is still served at once (a break-it trial's 64 silent
    /// connections from one address had locked every client out of the HTTPS port).
    func testOneAddressCannotHoldThePort() throws {
        try start(firstByteTimeoutMillis: 8_000)
        var waiting: [Int32] = []
        defer { waiting.forEach { close($0) } }
        for _ in 0..<TLSPortAcceptor.maxWaitingPerAddress { waiting.append(try RawHTTPClient.connect(port: port, timeout: 5, source: "127.0.0.7")) }
        usleep(300_000)
        let extra = try RawHTTPClient.connect(port: port, timeout: 5, source: "127.0.0.7")
        defer { close(extra) }
        let start = Date()
        XCTAssertEqual(try RawHTTPClient.readAll(extra), [], "the same address's next is closed")
        XCTAssertLessThan(Date().timeIntervalSince(start), 2, "at accept, not after the 8 s timeout")
        let other = try RawHTTPClient.connect(port: port, timeout: 5, source: "127.0.0.8")
        defer { close(other) }
        RawHTTPClient.sendAll(other, Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        XCTAssertTrue(String(decoding: try RawHTTPClient.readAll(other), as: UTF8.self).hasPrefix("HTTP/1.1 301"), "another client is served")
    }
}

extension ProcessRunner {
    /// `curl ARGS`' standard output (curl is installed by tools/setup).
    static func runCurl(_ arguments: [String]) throws -> String {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/curl"), arguments, timeout: 20).stdout
    }
}
