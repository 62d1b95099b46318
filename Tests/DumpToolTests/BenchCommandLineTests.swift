import Foundation
import Glibc
import TestSupport
import XCTest

/// `screencast-bench` as a black box, by the rule every executable keeps (README "Exit codes"): `--help`/`-h`
/// and `--version` answer, and a command line that must change ends in one line, a pointer to `--help` and
/// exit 64 (a new user's trial found exit 1 for an unreadable `--content` dump and a malformed `--url`).
final class BenchCommandLineTests: XCTestCase {
    let bench = TestPaths.executable("screencast-bench")

    func testHelpAndVersionAnswer() throws {
        for words in [["--help"], ["-h"], ["viewers", "-h"], ["viewers", "--help"]] {
            let result = try ProcessRunner.run(bench, words)
            XCTAssertEqual(result.status, 0, "\(words): \(result.stderr)")
            XCTAssertTrue(result.stdout.hasPrefix("Usage: screencast-bench"), "\(words): \(result.stdout.prefix(200))")
        }
        XCTAssertTrue(try ProcessRunner.run(bench, ["--help"]).stdout.contains("Exit codes: 0 done, 1 a stage failed, 64 bad usage"))
        let version = try ProcessRunner.run(bench, ["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertTrue(version.stdout.hasPrefix("screencast-bench "), version.stdout)
    }

    func testCommandLinesThatMustChangeExit64WithOneReason() throws {
        let cases: [([String], String)] = [
            (["--content", "foo=/nonexistent.frames", "--stage", "vp8"], "--content foo=/nonexistent.frames: cannot read /nonexistent.frames"),
            (["--content", "foo=" + TestPaths.packageRoot.appendingPathComponent("Tests").path, "--stage", "vp8"], "--content foo="),
            (["--stage", "nope"], "unknown stage 'nope'"),
            (["--repeat", "0"], "--repeat"),
            (["viewers", "--url", "notaurl"], "--url: WHEP URL must be http(s)://127.0.0.1:PORT/PATH, got notaurl"),
            (["viewers"], "viewers needs --url"),
        ]
        for (words, reason) in cases {
            let result = try ProcessRunner.run(bench, words)
            XCTAssertEqual(result.status, 64, "\(words): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            XCTAssertEqual(lines.count, 2, "\(words): \(result.stderr)")
            XCTAssertTrue(lines.first?.hasPrefix("screencast-bench: \(reason)") == true, "\(words): \(result.stderr)")
            XCTAssertEqual(lines.last, "Try 'screencast-bench --help'.", "\(words)")
        }
    }

    /// `viewers` whose every join fails (here a WHEP endpoint that answers 500, as a call without a usable
    /// ICE address does) exits 1 at once with the reason, instead of waiting out `--seconds` for nothing.
    func testViewersWhoseEveryJoinFailsExitAtOnceWithTheReason() throws {
        let endpoint = try RefusingWHEPEndpoint()
        defer { endpoint.stop() }
        let started = Date()
        let result = try ProcessRunner.run(
            bench, ["viewers", "--url", "http://127.0.0.1:\(endpoint.port)/whep", "--count", "2", "--seconds", "60"], timeout: 50)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertFalse(result.timedOut)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertLessThan(elapsed, 15, "waited \(elapsed) s: \(result.stderr)")
        XCTAssertEqual(endpoint.requests, 2, "one POST per viewer")
        XCTAssertTrue(result.stderr.contains(
            "viewers: every join failed (2 of 2): join: WHEP POST answered 500: no ICE address for this offer\n"), result.stderr)
        XCTAssertFalse(result.stderr.contains("\n\n"), "the body's newline is not an empty line: \(result.stderr)")
        XCTAssertTrue(result.stdout.hasPrefix("{\"connected\":0,"), result.stdout)
        XCTAssertEqual(result.stdout.components(separatedBy: "\"joinError\"").count - 1, 2, result.stdout)
    }
}

/// A WHEP endpoint on 127.0.0.1 that answers every request `500` with a one-line body, on a thread of its own
/// until ``stop()``: reads each request's headers and `Content-Length` body before answering.
private final class RefusingWHEPEndpoint: @unchecked Sendable {
    // @unchecked Sendable: `fd` is set once in init; `count` is guarded by `lock`.
    let port: UInt16
    private let fd: Int32
    private let lock = NSLock()
    private var count = 0
    private let finished = DispatchSemaphore(value: 0)

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard fd >= 0, ok else {
            if fd >= 0 { close(fd) }
            throw XCTSkip("cannot listen on 127.0.0.1: errno \(errno)")
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { break }
                answer(client)
            }
            finished.signal()
        }
    }

    /// Requests answered so far.
    var requests: Int { lock.withLock { count } }

    /// Stops accepting (the thread ends) and closes the socket.
    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        _ = finished.wait(timeout: .now() + 5)
        close(fd)
    }

    private func answer(_ client: Int32) {
        defer { close(client) }
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let text = String(decoding: request, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let header = text[..<end.lowerBound].lowercased()
                let length = header.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if text.utf8.count - text.utf8.distance(from: text.startIndex, to: end.upperBound) >= length { break }
            }
            let got = read(client, &buffer, buffer.count)
            if got <= 0 { return }
            request += buffer[0..<got]
        }
        lock.withLock { count += 1 }
        let body = "no ICE address for this offer\n"  // as the call answers: the reason, then a newline
        let response = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Connection: close\r\n\r\n\(body)"
        _ = response.withCString { write(client, $0, strlen($0)) }
    }
}
