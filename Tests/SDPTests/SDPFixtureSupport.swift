import SDP
import TestSupport
import XCTest

/// The text of a fixture offer (`Tests/Fixtures/SDP`).
func fixture(_ name: String) throws -> String { try SDPFixture.text(name) }

/// Our side's fixed parameters (``SDPFixture/localParameters(candidates:)``).
func localParameters(candidates: [String]? = nil) throws(SDPError) -> LocalMediaParameters {
    if let candidates { return try SDPFixture.localParameters(candidates: candidates) }
    return try SDPFixture.localParameters()
}

/// The lines of a description's text.
func lines(_ text: String) -> [String] {
    text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
}

/// Asserts that `body` throws the given `SDPError`.
func assertThrowsSDPError<T>(
    _ body: @autoclosure () throws(SDPError) -> T, _ expected: SDPError, file: StaticString = #filePath, line: UInt = #line
) {
    do {
        _ = try body()
        XCTFail("expected \(expected)", file: file, line: line)
    } catch {
        XCTAssertEqual(error, expected, file: file, line: line)
    }
}
