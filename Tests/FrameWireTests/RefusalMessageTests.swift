import FrameWire
import XCTest

/// The call's one message to a sender it does not take (Protocol/frame-wire.md §5): bytes, parsing, limits.
final class RefusalMessageTests: XCTestCase {
    func testTheBusyRefusalsBytesAndRoundTrip() {
        let busy = RefusalMessage.busy(currentPID: 4242)
        let text = "another agent is already sharing to this call (pid 4242)\n"
        XCTAssertEqual(String(decoding: busy.bytes, as: UTF8.self),
                       "HTTP/1.1 409 Conflict\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(text.utf8.count)\r\n\r\n" + text)
        XCTAssertEqual(RefusalMessage.parse(busy.bytes), busy)
        XCTAssertEqual(RefusalMessage.parse(RefusalMessage.foreignUser.bytes), .foreignUser)
        XCTAssertEqual(RefusalMessage.busy(currentPID: 0).reason, "another agent is already sharing to this call")
    }

    func testAReasonIsCutAndCleaned() {
        let long = RefusalMessage(status: 409, reason: String(repeating: "é", count: 150) + "\r\nX-Injected: 1")
        let parsed = RefusalMessage.parse(long.bytes)
        XCTAssertNotNil(parsed)
        XCTAssertLessThanOrEqual(parsed?.reason.utf8.count ?? 999, RefusalMessage.maximumReasonBytes)
        XCTAssertFalse(parsed?.reason.contains("\r") ?? true)
        XCTAssertTrue(parsed?.reason.allSatisfy { $0 == "é" } ?? false, "cut on a character boundary: \(parsed?.reason ?? "-")")
    }

    func testWhatIsNotARefusalIsNil() {
        func parse(_ text: String) -> RefusalMessage? { RefusalMessage.parse(Array(text.utf8)) }
        XCTAssertNil(parse(""))
        XCTAssertNil(parse("HTTP/1.1 409 Conflict\r\nContent-Length: 3\r\n\r\nab"), "the body is short")
        XCTAssertNil(parse("HTTP/1.1 409 Conflict\r\nContent-Length: 3\r\n\r\nabcd"), "the body is long")
        XCTAssertNil(parse("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na"), "not an error status")
        XCTAssertNil(parse("HTTP/1.1 4x9 Conflict\r\nContent-Length: 1\r\n\r\na"))
        XCTAssertNil(parse("HTTP/1.0 409 Conflict\r\nContent-Length: 1\r\n\r\na"))
        XCTAssertNil(parse("HTTP/1.1 409 Conflict\r\n\r\na"), "no Content-Length")
        XCTAssertNil(parse("HTTP/1.1 409 Conflict\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na"), "two")
        XCTAssertNil(parse("HTTP/1.1 409 Conflict\r\nContent-Length: -1\r\n\r\n"))
        XCTAssertNil(parse("HTTP/1.1 409 Conflict\r\nContent-Length: 99999\r\n\r\n"))
        XCTAssertNil(parse("HTTP/1.1 409 Conflict\r\nno colon\r\nContent-Length: 1\r\n\r\na"))
        XCTAssertNil(RefusalMessage.parse([UInt8](repeating: 0x41, count: RefusalMessage.maximumBytes + 1)))
        XCTAssertEqual(parse("HTTP/1.1 503 Busy\r\ncontent-length: 2\r\nX-Other: y\r\n\r\nb\n"), RefusalMessage(status: 503, reason: "b"))
        XCTAssertEqual(parse("HTTP/1.1 409\r\nContent-Length: 0\r\n\r\n"), RefusalMessage(status: 409, reason: ""))
    }
}
