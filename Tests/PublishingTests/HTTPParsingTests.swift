import Foundation
import Publishing
import TestSupport
import XCTest

/// The HTTP response head reader, `Link` headers (RFC 8288) and URI references (RFC 3986 §5.2): all at
/// once, byte by byte, and truncated.
final class HTTPParsingTests: XCTestCase {
    let created = Array((
        "HTTP/1.1 100 Continue\r\n\r\n" + "HTTP/1.1 201 Created\r\nContent-Type: application/sdp\r\nLocation: /whip/abc\r\n"
            + "ETag: \"xyzzy\"\r\nLink: <stun:127.0.0.1:3478>; rel=\"ice-server\"\r\n"
            + "link: <turn:127.0.0.1:3478?transport=udp>; rel=\"ice-server\"; username=\"u\"; credential=\"p\\\"w\"\r\n\r\n").utf8)

    func check(_ head: HTTPResponseHead, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(head.status, 201, file: file, line: line)
        XCTAssertEqual(head.fields.count, 5, file: file, line: line)
        XCTAssertEqual(head.value("location"), "/whip/abc", file: file, line: line)
        XCTAssertEqual(head.value("ETAG"), "\"xyzzy\"", file: file, line: line)
        XCTAssertEqual(head.values("Link").count, 2, file: file, line: line)
    }

    func testHeadAllAtOnceByteByByteAndTruncated() throws {
        check(try HTTPResponseHead.parse(created))
        var parser = HTTPResponseHead.Parser()
        var result: HTTPResponseHead?
        for (index, byte) in created.enumerated() {
            let got = try parser.feed([byte])
            if index < created.count - 1 { XCTAssertNil(got, "complete early at byte \(index)") } else { result = got }
        }
        check(try XCTUnwrap(result))
        for cut in 0..<created.count {
            XCTAssertThrowsError(try HTTPResponseHead.parse(Array(created[..<cut])), "cut at \(cut)") { error in
                guard case .malformedResponse = error as? PublishingError else { return XCTFail("\(error)") }
            }
        }
        // Bytes after the head are not read; bare LF line ends and HTTP/2's status line are fine.
        XCTAssertEqual(try HTTPResponseHead.parse(Array("HTTP/2 404\nX: y\n\nbody".utf8)).status, 404)
    }

    func testMalformedHeadsSayWhy() {
        let cases = [
            ("not a status line: HTTP/1.1 2O1 Created", "HTTP/1.1 2O1 Created\r\n\r\n"),
            ("not a status line: SIP/2.0 200 OK", "SIP/2.0 200 OK\r\n\r\n"),
            ("not a status line: HTTP/1.1 600 Nope", "HTTP/1.1 600 Nope\r\n\r\n"),
            ("field line without a name: : x", "HTTP/1.1 200 OK\r\n: x\r\n\r\n"),
            ("field line without a name: novalue", "HTTP/1.1 200 OK\r\nnovalue\r\n\r\n"),
            ("space in the field name Bad Name", "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n"),
        ]
        for (reason, text) in cases {
            XCTAssertThrowsError(try HTTPResponseHead.parse(Array(text.utf8))) { error in
                XCTAssertEqual(error as? PublishingError, .malformedResponse(url: "", reason: reason))
            }
        }
        XCTAssertThrowsError(try HTTPResponseHead.parse([0x48, 0xFF, 0x0A])) { error in
            XCTAssertEqual(error as? PublishingError, .malformedResponse(url: "", reason: "a line is not UTF-8 text"))
        }
        // A bare CR (RFC 9112 §2.2), also one followed by a combining mark (U+064C), which an optimized String
        // search for "\r" missed (the sfu-response fuzzer's find: it reached a Link value), anywhere in a head.
        for bare: [UInt8] in [[0x0D, 0x78], [0x0D, 0xD9, 0x8C, 0x78], [0x0D]] {
            for head in [Array("HTTP/1.1 201 Created".utf8) + bare + [0x0D, 0x0A, 0x0D, 0x0A],
                         Array("HTTP/1.1 201 Created\r\nLink: <turn:x>; rel=i".utf8) + bare + Array("\r\n\r\n".utf8)] {
                XCTAssertThrowsError(try HTTPResponseHead.parse(head), "\(head)") { error in
                    XCTAssertEqual(error as? PublishingError, .malformedResponse(url: "", reason: "a bare CR in a line (RFC 9112 §2.2)"))
                }
            }
        }
        let huge = Array(("HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: HTTPResponseHead.Parser.limit)).utf8)
        XCTAssertThrowsError(try HTTPResponseHead.parse(huge)) { error in
            XCTAssertEqual(error as? PublishingError, .malformedResponse(url: "", reason: "the head exceeds 16384 bytes"))
        }
    }

    /// What `tools/fuzz sfu-response` found (Tests/Fixtures/fuzz/sfu-response/: a mode byte, the head's length
    /// as u16 big-endian, the head): a head is refused or holds no CR or LF in any field, whole and in chunks.
    func testFuzzRegressionsLeaveNoCROrLFInAField() throws {
        let files = try TestPaths.fuzzRegressions("sfu-response")
        XCTAssertFalse(files.isEmpty)
        for file in files {
            let bytes = Array(try Data(contentsOf: file))
            let length = Int(bytes[1]) << 8 | Int(bytes[2])
            let head = Array(bytes[3..<min(bytes.count, 3 + length)])
            for chunk in [head.count, 1, 2, 7] {
                var parser = HTTPResponseHead.Parser()
                var parsed: HTTPResponseHead?
                var refusal: PublishingError?
                do {
                    var offset = 0
                    while parsed == nil, offset < head.count {
                        parsed = try parser.feed(head[offset..<min(head.count, offset + chunk)])
                        offset += chunk
                    }
                } catch {
                    refusal = error
                }
                for field in parsed?.fields ?? [] {
                    XCTAssertFalse((field.name + field.value).utf8.contains { $0 == 0x0D || $0 == 0x0A }, "\(file.lastPathComponent): \(field)")
                }
                if file.lastPathComponent == "bare-cr-before-a-combining-mark-in-link" {
                    XCTAssertEqual(refusal, .malformedResponse(url: "", reason: "a bare CR in a line (RFC 9112 §2.2)"), "chunks of \(chunk)")
                }
            }
        }
    }

    /// RFC 9725 §4.6's form: STUN and TURN servers with credentials (a quoted-pair in the credential).
    func testLinkHeadersGiveICEServers() throws {
        let head = try HTTPResponseHead.parse(created)
        let links = try WebLink.parse(head.values("Link"))
        XCTAssertEqual(links.map(\.target), ["stun:127.0.0.1:3478", "turn:127.0.0.1:3478?transport=udp"])
        XCTAssertEqual(links[1].parameters, ["rel": "ice-server", "username": "u", "credential": "p\"w"])
        let servers = WHIPICEServers(links: links)
        XCTAssertEqual(servers.stun.map(\.description), ["127.0.0.1:3478"])
        XCTAssertEqual(servers.turn.map(\.username), ["u"])
        XCTAssertEqual(servers.turn.map(\.credential), ["p\"w"])
        XCTAssertEqual(servers.skipped, [])
        // Two links in one field value; other relations are ignored; a TURN link without credentials is skipped.
        let two = try WebLink.parse(["<https://x/a>; rel=next , <turn:10.0.0.1>; rel=ice-server", "<stun:[::1]:5349>;rel=\"ice-server other\""])
        XCTAssertEqual(two.count, 3)
        let filtered = WHIPICEServers(links: two)
        XCTAssertEqual(filtered.stun.map(\.port), [5349])
        XCTAssertEqual(filtered.skipped, ["turn:10.0.0.1: no username/credential"])
    }

    func testMalformedLinksAndEveryTruncation() throws {
        let cases = [
            ("a link must start with <URI>", "stun:127.0.0.1"),
            ("a link must start with <URI>", "<stun:127.0.0.1"),
            ("a link parameter without a name", "<stun:a>; =x"),
            ("a quoted string is not closed", "<stun:a>; rel=\"ice-server"),
            ("a quoted string ends in a backslash", "<stun:a>; rel=\"x\\"),
            ("a link parameter's value is empty", "<stun:a>; rel="),
            ("links must be separated by commas", "<stun:a> <stun:b>"),
        ]
        for (reason, text) in cases {
            XCTAssertThrowsError(try WebLink.parse([text]), text) { error in
                XCTAssertEqual(error as? PublishingError, .whipProtocol(url: "", reason: "Link header: \(reason)"))
            }
        }
        // Every prefix of a valid value either parses (a shorter valid list) or fails with a reason: never traps.
        let value = "<turn:h:3478?transport=udp>; rel=\"ice-server\"; username=\"u\"; credential=\"c\", <stun:h>; rel=ice-server"
        for cut in 0...value.count {
            _ = try? WebLink.parse([String(value.prefix(cut))])
        }
        XCTAssertEqual(try WebLink.parse([value]).count, 2)
    }

    func testURIReferencesResolveAgainstTheRequest() {
        let base = "http://127.0.0.1:8080/whip/endpoint?x=1"
        XCTAssertEqual(URLReference.resolve("/whip/r/1", against: base), "http://127.0.0.1:8080/whip/r/1")
        XCTAssertEqual(URLReference.resolve("r/1", against: base), "http://127.0.0.1:8080/whip/r/1")
        XCTAssertEqual(URLReference.resolve("../r/1", against: base), "http://127.0.0.1:8080/r/1")
        XCTAssertEqual(URLReference.resolve("./r", against: base), "http://127.0.0.1:8080/whip/r")
        XCTAssertEqual(URLReference.resolve("https://sfu.example/r", against: base), "https://sfu.example/r")
        XCTAssertEqual(URLReference.resolve("//sfu.example/r", against: base), "http://sfu.example/r")
        XCTAssertEqual(URLReference.resolve("?y=2", against: base), "http://127.0.0.1:8080/whip/endpoint?y=2")
        XCTAssertEqual(URLReference.resolve("r", against: "http://h"), "http://h/r")
        XCTAssertNil(URLReference.resolve("/r", against: "ftp://h/x"))
        XCTAssertNil(URLReference.resolve("/r", against: "not a url"))
    }

    func testReconnectScheduleIsAtOnceThen2_5_10AndEvery10Seconds() {
        var schedule = ReconnectSchedule()
        XCTAssertEqual((0..<7).map { _ in schedule.nextDelayMillis() }, [0, 2_000, 5_000, 10_000, 10_000, 10_000, 10_000])
        schedule.succeeded()
        XCTAssertEqual((0..<3).map { _ in schedule.nextDelayMillis() }, [0, 2_000, 5_000])
        XCTAssertEqual(schedule.reconnects, 10)
    }
}

/// What a WHIP server's answer to the POST must hold (RFC 9725 §4.2), each breach named.
final class WHIPSessionTests: XCTestCase {
    func response(_ head: String, body: String = "v=0\r\n") throws -> HTTPClientResponse {
        let parsed = try HTTPResponseHead.parse(Array((head + "\r\n\r\n").utf8))
        return HTTPClientResponse(url: "http://h/whip/ep", status: parsed.status, head: parsed, body: Array(body.utf8))
    }

    func testACreatedSessionResolvesItsLocationAndKeepsETagAndLinks() throws {
        let session = try WHIPSession(created: response(
            "HTTP/1.1 201 Created\r\nContent-Type: application/sdp; charset=utf-8\r\nLocation: r/1\r\nETag: \"e1\"\r\n"
                + "Link: <stun:h:3478>; rel=\"ice-server\""))
        XCTAssertEqual(session.url, "http://h/whip/r/1")
        XCTAssertEqual(session.etag, "\"e1\"")
        XCTAssertEqual(session.answer, "v=0\r\n")
        XCTAssertEqual(session.iceServers.stun.map(\.host), ["h"])
    }

    func testBreachesAreNamed() throws {
        let cases: [(PublishingError, String, String)] = [
            (.httpStatus(method: "POST", url: "http://h/whip/ep", status: 200, body: "v=0"), "HTTP/1.1 200 OK\r\nContent-Type: application/sdp\r\nLocation: r", "v=0\r\n"),
            (.whipProtocol(url: "http://h/whip/ep", reason: "201 without a Location header"), "HTTP/1.1 201 Created\r\nContent-Type: application/sdp", "v=0\r\n"),
            (.whipProtocol(url: "http://h/whip/ep", reason: "the answer's Content-Type is text/plain, not application/sdp"),
             "HTTP/1.1 201 Created\r\nContent-Type: text/plain\r\nLocation: r", "v=0\r\n"),
            (.whipProtocol(url: "http://h/whip/ep", reason: "the answer's Content-Type is absent, not application/sdp"),
             "HTTP/1.1 201 Created\r\nLocation: r", "v=0\r\n"),
            (.whipProtocol(url: "http://h/whip/ep", reason: "the answer is empty or not UTF-8"),
             "HTTP/1.1 201 Created\r\nContent-Type: application/sdp\r\nLocation: r", ""),
            (.whipProtocol(url: "http://h/whip/ep", reason: "Link header: a link must start with <URI>"),
             "HTTP/1.1 201 Created\r\nContent-Type: application/sdp\r\nLocation: r\r\nLink: stun:h", "v=0\r\n"),
        ]
        for (expected, head, body) in cases {
            XCTAssertThrowsError(try WHIPSession(created: response(head, body: body))) { error in
                XCTAssertEqual(error as? PublishingError, expected)
            }
        }
    }
}
