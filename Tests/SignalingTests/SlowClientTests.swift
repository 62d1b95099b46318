import DTLS
import Foundation
import Glibc
import ScreencastSupport
@testable import Signaling
import Synchronization
import TestSupport
import XCTest

/// Slow and stalling clients against the real server, plain HTTP and HTTPS, over 127.0.0.0/8 (each address
/// stands for another client). A bad-input review locked every client out with 2 addresses × 32 connections
/// that dripped header bytes, or sent the 5-byte header of a TLS record (`16 03 01 40 00`) and stalled: now one
/// address holds at most ``HTTPServerOptions/defaultPerAddressIncompleteLimit`` connections that have not
/// completed a request, and a request that has not arrived within ``HTTPServerOptions/requestDeadlineMillis``
/// is closed however it drips. Established (kept-alive) connections do not count: a whole office behind one NAT
/// watches (issue 31).
final class SlowClientTests: XCTestCase {
    private let logger = Logger(component: "test", threshold: .error)
    private var server: SignalingServer?
    private var held: [Int32] = []

    override func tearDown() {
        held.forEach { close($0) }
        held = []
        server?.stop()
        server = nil
        super.tearDown()
    }

    private func start(tls: Bool, deadlineMillis: UInt32 = HTTPServerOptions.defaultRequestDeadlineMillis) throws -> UInt16 {
        var configuration = SignalingConfiguration(endpoint: HTTPEndpoint(host: "127.0.0.1", port: 0))
        configuration.serverOptions.requestDeadlineMillis = deadlineMillis
        if tls {
            let certificate = try DTLSCertificate.generate(commonName: "test", validityDays: 1)
            configuration.serverOptions.tls = TLSIdentity(
                certificatePEM: try certificate.certificatePEM(), privateKeyPEM: try certificate.privateKeyPEM(),
                fingerprint: certificate.fingerprint.value)
        }
        let started = try SignalingServer(configuration: configuration, sessions: FakeSessions(), stats: { .null }, logger: logger)
        server = started
        return started.port
    }

    /// The first bytes of a request that never completes: half a request line, or a TLS record header that
    /// announces 16 KiB (RFC 8446 §5.1: handshake(22), legacy version 3.1, length 0x4000) and stops there.
    private static func stalledStart(tls: Bool) -> [UInt8] {
        tls ? [0x16, 0x03, 0x01, 0x40, 0x00] : Array("GET /healthz HTTP/1.1\r\nHo".utf8)
    }

    func testTheDefaultsAreTheNamedLimits() {
        let defaults = HTTPServerOptions()
        XCTAssertEqual(defaults.connectionLimit, HTTPServerOptions.defaultConnectionLimit)
        XCTAssertEqual(defaults.perAddressConnectionLimit, HTTPServerOptions.defaultPerAddressConnectionLimit)
        XCTAssertEqual(defaults.requestDeadlineMillis, HTTPServerOptions.defaultRequestDeadlineMillis)
        XCTAssertEqual(defaults.perAddressIncompleteLimit, HTTPServerOptions.defaultPerAddressIncompleteLimit)
        XCTAssertEqual(
            [HTTPServerOptions.defaultConnectionLimit, HTTPServerOptions.defaultPerAddressConnectionLimit, HTTPServerOptions.defaultPerAddressIncompleteLimit],
            [256, 64, 32])
        XCTAssertEqual(TLSPortAcceptor.maxWaitingPerAddress, 32, "the same bound on a slow client before TLS")
        XCTAssertEqual(HTTPServerOptions.defaultRequestDeadlineMillis, 10_000)
        XCTAssertEqual(Int(HTTPServerOptions.defaultConnectionLimit / HTTPServerOptions.defaultPerAddressIncompleteLimit), 8,
                       "addresses of slow clients it takes to fill the server")
    }

    func testPlainHTTPAnAddressAtItsLimitLeavesOthersServed() throws { try anAddressAtItsLimitLeavesOthersServed(tls: false) }

    func testHTTPSAnAddressAtItsLimitLeavesOthersServed() throws { try anAddressAtItsLimitLeavesOthersServed(tls: true) }

    /// 127.0.0.2 opens its 32 connections and stalls each one; its 33rd–36th are closed at once; 127.0.0.3 is
    /// served meanwhile (the default limits; the deadline is not what frees the server here).
    private func anAddressAtItsLimitLeavesOthersServed(tls: Bool) throws {
        let port = try start(tls: tls)
        let limit = Int(HTTPServerOptions.defaultPerAddressIncompleteLimit)
        for _ in 0..<limit {
            let fd = try RawHTTPClient.connect(port: port, timeout: 5, source: "127.0.0.2")
            held.append(fd)
            XCTAssertTrue(RawHTTPClient.sendAll(fd, Self.stalledStart(tls: tls)))
        }
        usleep(300_000)  // each one is in the server, waiting for the rest of its request
        var closedAtOnce = 0
        for _ in 0..<4 {
            let fd = try RawHTTPClient.connect(port: port, timeout: 3, source: "127.0.0.2")
            defer { close(fd) }
            RawHTTPClient.sendAll(fd, Self.stalledStart(tls: tls))
            let started = Date()
            let reply = (try? RawHTTPClient.readAll(fd)) ?? [0]
            if reply.isEmpty, Date().timeIntervalSince(started) < 2 { closedAtOnce += 1 }
        }
        XCTAssertEqual(closedAtOnce, 4, "the same address's connections past its limit are closed at accept")
        if tls {
            let status = try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/curl"),
                ["-sk", "-m", "5", "--interface", "127.0.0.3", "-o", "/dev/null", "-w", "%{http_code}", "https://127.0.0.1:\(port)/healthz"],
                timeout: 10
            ).stdout
            XCTAssertEqual(status, "200", "another client is served over HTTPS")
        } else {
            XCTAssertEqual(try RawHTTPClient.request(port: port, method: "GET", path: "/healthz", timeout: 3, source: "127.0.0.3").status, 200)
        }
        for fd in held {
            var byte: UInt8 = 0
            let got = recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
            XCTAssertTrue(got == -1 && errno == EAGAIN, "the stalled ones are still open, nothing sent (no deadline yet): \(got)")
        }
    }

    /// Twenty browsers behind one NAT: 30 kept-alive connections from 127.0.0.2 (one or two a browser), each
    /// having completed a request, are all served and stay open; new ones are served beside them; and that
    /// address's incomplete connections are still capped (32 stalled, the next closed at once) while its
    /// established ones answer a second request (63 of the address's 64 in all).
    func testEstablishedConnectionsFromOneAddressAreNotCapped() throws {
        let port = try start(tls: false)
        let request = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        func served(_ fd: Int32) -> Bool {
            guard RawHTTPClient.sendAll(fd, request) else { return false }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return count > 0 && String(decoding: buffer.prefix(count), as: UTF8.self).hasPrefix("HTTP/1.1 200")
        }
        var established: [Int32] = []
        for _ in 0..<30 {
            let fd = try RawHTTPClient.connect(port: port, timeout: 5, source: "127.0.0.2")
            held.append(fd)
            established.append(fd)
            XCTAssertTrue(served(fd))
        }
        XCTAssertEqual(try RawHTTPClient.request(port: port, method: "GET", path: "/healthz", timeout: 3, source: "127.0.0.2").status, 200,
                       "a 31st connection from the same address is served")
        let limit = Int(HTTPServerOptions.defaultPerAddressIncompleteLimit)
        for _ in 0..<limit {
            let fd = try RawHTTPClient.connect(port: port, timeout: 5, source: "127.0.0.2")
            held.append(fd)
            XCTAssertTrue(RawHTTPClient.sendAll(fd, Self.stalledStart(tls: false)))
        }
        usleep(300_000)
        let extra = try RawHTTPClient.connect(port: port, timeout: 3, source: "127.0.0.2")
        defer { close(extra) }
        RawHTTPClient.sendAll(extra, Self.stalledStart(tls: false))
        let started = Date()
        XCTAssertEqual((try? RawHTTPClient.readAll(extra)) ?? [0], [], "the 33rd incomplete connection is closed without an answer")
        XCTAssertLessThan(Date().timeIntervalSince(started), 2, "at once, not at the deadline")
        XCTAssertEqual(established.filter(served).count, 30, "every established connection answers again")
    }

    func testPlainHTTPADrippingRequestIsClosedAtTheDeadline() throws { try aDrippingRequestIsClosedAtTheDeadline(tls: false) }

    func testHTTPSADrippingHandshakeIsClosedAtTheDeadline() throws { try aDrippingRequestIsClosedAtTheDeadline(tls: true) }

    /// A byte every 100 ms keeps the idle timeout (30 s) from ever firing; the 800 ms request deadline closes
    /// the connection anyway, after the deadline and before the deadline plus a sweep plus scheduling slack.
    private func aDrippingRequestIsClosedAtTheDeadline(tls: Bool) throws {
        let deadline: UInt32 = 800
        let port = try start(tls: tls, deadlineMillis: deadline)
        let fd = try RawHTTPClient.connect(port: port, timeout: 10)
        defer { close(fd) }
        let started = Date()
        XCTAssertTrue(RawHTTPClient.sendAll(fd, Self.stalledStart(tls: tls)))
        let stop = Atomic(false)
        let dripperDone = DispatchSemaphore(value: 0)
        let dripper = Thread {
            defer { dripperDone.signal() }
            while true {
                usleep(100_000)
                if stop.load(ordering: .relaxed) { return }
                var byte: UInt8 = tls ? 0 : UInt8(ascii: "a")
                if send(fd, &byte, 1, Int32(MSG_NOSIGNAL)) != 1 { return }
            }
        }
        dripper.start()
        // The dripper ends before `fd` is closed: a byte sent after would go to whatever socket takes the
        // number next (the next test's, which then no longer starts with a TLS record).
        defer {
            stop.store(true, ordering: .relaxed)
            dripperDone.wait()
        }
        let reply = try RawHTTPClient.readAll(fd)
        let waited = Date().timeIntervalSince(started)
        print("http: a request dripping a byte every 100 ms was closed after \(String(format: "%.2f", waited)) s (deadline \(deadline) ms, tls \(tls))")
        XCTAssertEqual(reply, [], "closed without an answer")
        XCTAssertGreaterThanOrEqual(waited, Double(deadline) / 1000 - 0.05, "not before the deadline")
        XCTAssertLessThan(waited, Double(deadline) / 1000 + 1.0, "at the deadline (sweeps every 80 ms), not at the idle timeout")
        // The server goes on: a whole request within the deadline is answered.
        if !tls { XCTAssertEqual(try RawHTTPClient.request(port: port, method: "GET", path: "/healthz").status, 200) }
    }

    /// A kept-alive connection is served request after request as long as each arrives within the deadline.
    func testKeptAliveRequestsWithinTheDeadlineAreServed() throws {
        let port = try start(tls: false, deadlineMillis: 600)
        let fd = try RawHTTPClient.connect(port: port, timeout: 5)
        defer { close(fd) }
        for _ in 0..<3 {
            usleep(400_000)  // under the deadline since the previous answer
            RawHTTPClient.sendAll(fd, Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            XCTAssertGreaterThan(count, 0)
            XCTAssertTrue(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        }
    }
}

/// The deadline's bookkeeping, driven by hand (µs clock injected).
final class RequestDeadlineTableTests: XCTestCase {
    func testARequestStillArrivingAtTheDeadlineExpiresOnce() {
        var table = RequestDeadlineTable(deadlineMicros: 1_000)
        XCTAssertTrue(table.opened(1, socket: 11, now: 0))
        XCTAssertTrue(table.opened(2, socket: 12, now: 500))
        XCTAssertEqual(table.expire(now: 999), [])
        XCTAssertEqual(table.expire(now: 1_000), [11])
        XCTAssertEqual(table.expire(now: 5_000), [12], "the first is returned once")
        table.closed(1)
        table.closed(2)
        XCTAssertTrue(table.connections.isEmpty)
    }

    func testHandlingStopsTheClockAndCompletionRestartsIt() {
        var table = RequestDeadlineTable(deadlineMicros: 1_000)
        XCTAssertTrue(table.opened(1, socket: 11, now: 0))
        table.handling(1)
        XCTAssertEqual(table.expire(now: 10_000), [], "a handler's time is not the client's")
        table.requestCompleted(1, now: 10_000)
        XCTAssertEqual(table.expire(now: 10_999), [])
        XCTAssertEqual(table.expire(now: 11_000), [11], "the next request on a kept-alive connection has its own deadline")
        table.requestCompleted(7, now: 0)
        table.handling(7)
        XCTAssertNil(table.connections[7], "events of an unknown connection add nothing")
    }

    /// Per address, only connections that have not completed a request count against the limit.
    func testIncompleteConnectionsAreCappedPerAddressEstablishedOnesAreNot() {
        var table = RequestDeadlineTable(deadlineMicros: 1_000, incompleteLimitPerAddress: 2)
        XCTAssertTrue(table.opened(1, socket: 11, address: "10.0.0.1", now: 0))
        XCTAssertTrue(table.opened(2, socket: 12, address: "10.0.0.1", now: 0))
        XCTAssertFalse(table.opened(3, socket: 13, address: "10.0.0.1", now: 0), "a third still sending its first request")
        XCTAssertNil(table.connections[3], "a refused connection is not recorded")
        XCTAssertTrue(table.opened(4, socket: 14, address: "10.0.0.2", now: 0), "another address has its own count")
        XCTAssertTrue(table.opened(5, socket: 15, now: 0), "an unknown address is not capped")
        table.handling(1)
        XCTAssertFalse(table.opened(6, socket: 16, address: "10.0.0.1", now: 0), "handled but not yet answered: still incomplete")
        table.requestCompleted(1, now: 10)
        XCTAssertEqual(table.incomplete(from: "10.0.0.1"), 1)
        XCTAssertTrue(table.opened(6, socket: 16, address: "10.0.0.1", now: 10), "an established connection does not count")
        table.requestCompleted(2, now: 20)
        table.requestCompleted(6, now: 20)
        XCTAssertEqual(table.incomplete(from: "10.0.0.1"), 0)
        XCTAssertEqual(table.expire(now: 1_010).sorted(), [11, 14, 15], "an established connection's next request still has its deadline")
        table.closed(4)
        XCTAssertTrue(table.opened(7, socket: 17, address: "10.0.0.2", now: 30))
        XCTAssertTrue(table.opened(8, socket: 18, address: "10.0.0.2", now: 30))
        XCTAssertFalse(table.opened(9, socket: 19, address: "10.0.0.2", now: 30))
    }
}

/// libmicrohttpd runs strict for clients (MHD_OPTION_STRICT_FOR_CLIENT 1): an HTTP/1.1 request without
/// `Host` is refused with 400 (RFC 9112 §3.2); HTTP/1.0 needs none.
final class StrictRequestTests: XCTestCase {
    func testHTTP11WithoutHostIs400AndHTTP10IsServed() throws {
        let server = try SignalingServer(
            configuration: SignalingConfiguration(endpoint: HTTPEndpoint(host: "127.0.0.1", port: 0)), sessions: FakeSessions(),
            stats: { .null }, logger: Logger(component: "test", threshold: .error))
        defer { server.stop() }
        func raw(_ text: String) throws -> Int {
            let fd = try RawHTTPClient.connect(port: server.port)
            defer { close(fd) }
            RawHTTPClient.sendAll(fd, Array(text.utf8))
            return try RawHTTPClient.readResponse(fd).status
        }
        XCTAssertEqual(try raw("GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n"), 400)
        XCTAssertEqual(try raw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"), 200)
        XCTAssertEqual(try raw("GET /healthz HTTP/1.0\r\n\r\n"), 200)
    }
}

/// libmicrohttpd's messages about clients are rate-limited once the server runs; start-up ones are not.
final class LibraryMessageRateTests: XCTestCase {
    func testAFloodOfLibraryMessagesGivesABurstOfLines() {
        let box = LineBox()
        let logger = Logger(component: "http", threshold: .debug, output: LogOutput { line in box.lines.withLock { $0.append(line) } })
        let core = ServerCore(router: HTTPRouter(routes: []), deadlines: RequestDeadlineSweeper(deadlineMillis: 1_000, logger: logger), logger: logger)
        for _ in 0..<3 { core.libraryMessage("Failed to bind to port 1: Address already in use\n") }
        XCTAssertEqual(box.lines.withLock { $0.count }, 3, "start-up messages all go out")
        core.running.withLock { $0 = true }
        for _ in 0..<1_000 { core.libraryMessage("Error: received handshake message out of context.\n") }
        XCTAssertEqual(box.lines.withLock { $0.count }, 3 + ServerCore.libraryMessageBurst, "a burst, then one per 6 s")
    }
}

final class LineBox: Sendable {
    let lines = Mutex<[String]>([])
}
