import Foundation
import TestSupport
import XCTest

/// Every executable's help fits a 100-column terminal: a new user reads `--help` first, and lines that wrap
/// mid-word in a terminal were the first thing a trial complained about (one agent line was 138 columns).
/// Width is counted in characters (Unicode scalars: `→` and `—` are one column each).
final class HelpWidthTests: XCTestCase {
    static let maxColumns = 100

    func testEveryHelpTextFitsOneHundredColumns() throws {
        let helps: [(String, [String])] = [
            ("screencast-agent", ["--help"]),
            ("screencast-call", ["--help"]),
            ("screencast-dump", ["--help"]),
            ("screencast-dump", ["inspect", "--help"]),
            ("screencast-dump", ["replay", "--help"]),
            ("screencast-dump", ["record", "--help"]),
            ("screencast-dump", ["extract", "--help"]),
            ("screencast-bench", ["--help"]),
            ("screencast-bench", ["viewers", "--help"]),
            ("screencast-bench", ["gcc-sim", "--help"]),
        ]
        for (tool, words) in helps {
            let result = try ProcessRunner.run(TestPaths.executable(tool), words)
            XCTAssertEqual(result.status, 0, "\(tool) \(words): \(result.stderr)")
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            XCTAssertGreaterThan(lines.count, 5, "\(tool) \(words) printed no help")
            for line in lines where line.unicodeScalars.count > Self.maxColumns {
                XCTFail("\(tool) \(words): \(line.unicodeScalars.count) columns: \(line)")
            }
        }
    }
}
