import FrameWire
import XCTest

/// Protocol/frame-wire.md §2.1: the status line, refused at the first byte that cannot begin one.
final class StatusLineTests: XCTestCase {
    func testAcceptedStatusLines() {
        for status in ["HTTP/1.1 200 OK", "HTTP/1.0 200 OK", "HTTP/1.1 200", "HTTP/1.0 200",
                       "HTTP/1.1 200 ", "HTTP/1.1 200 Any reason\tat all (even: colons)", "HTTP/1.1 200 \u{e9}t\u{e9}"] {
            for lineEnd in ["\r\n", "\n"] {
                let bytes = message(["Content-Length: 2", "Buffer-Width: 4", "Buffer-Height: 4"],
                                    status: status, body: [0xFF, 0xD8], lineEnd: lineEnd)
                for chunking in Chunking.standardSet {
                    let result = decode(bytes, chunking)
                    XCTAssertEqual(result.end, .eof, "\(status.debugDescription) \(chunking)")
                    XCTAssertEqual(result.frames.map(\.body), [[0xFF, 0xD8]], status)
                }
            }
        }
    }

    func testRejectedStatusLines() {
        for status in ["HTTP/1.2 200 OK", "HTTP/1.1 201 Created", "HTTP/1.1  200", "http/1.1 200", "HTTP/1.1 200OK",
                       "HTTP/2 200", "HTTP/1.1 2000", "GET / HTTP/1.1", " HTTP/1.1 200", "HTTP/1.1 200 bad\u{1}byte",
                       "HTTP/1.1\t200", "HTTP/1.11 200", "HTTP/1.1 200\rX"] {
            let bytes = message(["Content-Length: 2", "Buffer-Width: 4", "Buffer-Height: 4"], status: status, body: [1, 2])
            for chunking in Chunking.standardSet {
                let result = decode(bytes, chunking)
                XCTAssertEqual(result.end?.errorKind, "badStatusLine", "\(status.debugDescription) \(chunking)")
                XCTAssertTrue(result.frames.isEmpty)
            }
        }
    }

    /// The error comes with the first impossible byte, before any line end arrives.
    func testRefusedWithoutWaitingForALineEnd() {
        let cases: [(String, Bool)] = [
            ("HTTP/1.2", true), ("HTTP/1.1 20", false), ("HTTP/1.1 201", true), ("H", false), ("X", true),
            ("HTTP/1.1 200", false), ("HTTP/1.1 200x", true), ("HTTP/1.1 200 reason so far", false),
            ("\u{FF}\u{D8}", true),
        ]
        for (prefix, refused) in cases {
            var decoder = FrameDecoder()
            var end: FrameStreamEnd?
            decoder.feed(Array(prefix.utf8)) { if case .end(let e) = $0 { end = e } }
            XCTAssertEqual(end?.errorKind == "badStatusLine", refused, prefix.debugDescription)
            XCTAssertEqual(decoder.isFinished, refused, prefix.debugDescription)
        }
        // A reader that joined inside a JPEG fails at its very first byte.
        var decoder = FrameDecoder()
        var end: FrameStreamEnd?
        decoder.feed([0xFF]) { if case .end(let e) = $0 { end = e } }
        XCTAssertEqual(end?.errorKind, "badStatusLine")
    }

    func testEmptyLinesBeforeAStatusLineAreSkippedAndNotCounted() {
        let first = validMessage()
        let second = validMessage(length: 3)
        let bytes = Array("\r\n\n\r\n".utf8) + first + Array("\n\r\n".utf8) + second + Array("\r\n\n".utf8)
        for chunking in Chunking.standardSet {
            let result = decode(bytes, chunking)
            XCTAssertEqual(result.end, .eof, "\(chunking)")
            XCTAssertEqual(result.frames.map(\.offset), [5, 5 + first.count + 3], "\(chunking)")
        }
    }

    func testEndOfStream() {
        let cases: [(String, String)] = [
            ("", "eof"), ("\r\n\n", "eof"), ("\r", "truncated"), ("\r\n\r", "truncated"), ("H", "truncated"), ("HTTP/1.1 200 OK\r\n", "truncated"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 4\r\nBuffer-Width: 2\r\nBuffer-Height: 2\r\n\r\n", "truncated"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 4\r\nBuffer-Width: 2\r\nBuffer-Height: 2\r\n\r\nabc", "truncated"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 4\r\nBuffer-Width: 2\r\nBuffer-Height: 2\r\n\r\nabcd", "eof"),
        ]
        for (text, end) in cases {
            for chunking in Chunking.standardSet {
                let result = decode(Array(text.utf8), chunking)
                XCTAssertEqual(result.end?.name, end, "\(text.debugDescription) \(chunking)")
                XCTAssertEqual(result.frames.count, end == "eof" && text.hasSuffix("abcd") ? 1 : 0, text.debugDescription)
            }
        }
    }
}

extension FrameStreamEnd {
    /// The error kind, or nil for a clean or truncated end.
    var errorKind: String? {
        if case .error(let error) = self { return error.kind }
        return nil
    }
}
