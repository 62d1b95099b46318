import RTP
import XCTest

/// The secure generator PeerConnection draws SSRCs, CNAMEs and session ids from has storage of its own, so
/// `&generator` is a real address (the empty SystemRandomNumberGenerator crashed ThreadSanitizer builds in
/// every `PeerConnection.answering`; `tools/test --sanitize thread` runs PeerConnectionBadInputTests again).
final class SecureRandomTests: XCTestCase {
    func testItHasStorageAndDrawsFromTheSystemSource() {
        XCTAssertGreaterThan(MemoryLayout<SecureRandomNumberGenerator>.size, 0)
        XCTAssertEqual(MemoryLayout<SystemRandomNumberGenerator>.size, 0, "the reason it exists")
        var generator = SecureRandomNumberGenerator()
        let draws = (0..<64).map { _ in UInt64.random(in: 0...UInt64.max, using: &generator) }
        XCTAssertEqual(Set(draws).count, 64, "64-bit draws repeat")
        var first = SecureRandomNumberGenerator(), second = SecureRandomNumberGenerator()
        XCTAssertNotEqual((0..<4).map { _ in first.next() }, (0..<4).map { _ in second.next() }, "two generators, one sequence")
    }
}
