import RTP
import XCTest

/// Bytes from a hex string; whitespace, newlines and `|`/`-` separators are ignored, and so is anything
/// after `#` on a line (comments beside the fields).
func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        let code = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let digits = code.filter { $0.isHexDigit }
        precondition(digits.count % 2 == 0, "odd hex digits in \(line)")
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            bytes.append(UInt8(digits[index..<next], radix: 16)!)
            index = next
        }
    }
    return bytes
}

/// Random bytes from a seeded generator.
func randomBytes(_ count: Int, using generator: inout SplitMix64) -> [UInt8] {
    (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
}

/// Asserts that `body` throws an `RTPError` (and, when given, that exact one).
func assertThrowsRTPError<T>(
    _ body: @autoclosure () throws(RTPError) -> T, _ expected: RTPError? = nil, _ message: String = "",
    file: StaticString = #filePath, line: UInt = #line
) {
    do {
        _ = try body()
        XCTFail("expected an RTPError \(message)", file: file, line: line)
    } catch {
        if let expected { XCTAssertEqual(error, expected, message, file: file, line: line) }
    }
}
