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

/// Every numeric option's help gives the range its parser enforces: a user should not have to provoke an
/// error to learn it (a trial found ranges only in the error messages). The range is read from the error a
/// far-out value gets ("must be a number from A to B") and looked for in the option's help, as `A-B`,
/// `A...B` or `A to B` (whole numbers without ".0").
final class HelpRangeTests: XCTestCase {
    /// Placeholders of options that take a number or a size; others (paths, URLs, names) are not tried.
    static let numericPlaceholders: Set<String> = ["N", "S", "Q", "F", "KBPS", "WxH", "N|auto", "M", "H"]

    func testNumericOptionsStateTheirRangeInTheHelp() throws {
        var checked = 0
        for tool in ["screencast-agent", "screencast-call"] {
            let executable = TestPaths.executable(tool)
            let help = try ProcessRunner.run(executable, ["--help"]).stdout
            for (option, placeholder, text) in Self.options(in: help) where Self.numericPlaceholders.contains(placeholder) {
                let result = try ProcessRunner.run(executable, [option, "-999999999"], timeout: 10)
                XCTAssertEqual(result.status, 64, "\(tool) \(option) -999999999 was accepted")
                guard let (low, high) = Self.range(in: result.stderr) else { continue }
                checked += 1
                let forms = ["\(low)-\(high)", "\(low)...\(high)", "\(low) to \(high)"]
                XCTAssertTrue(forms.contains { text.contains($0) }, "\(tool) --help does not give \(option)'s range \(low) to \(high): \(text)")
            }
        }
        XCTAssertGreaterThan(checked, 20, "too few ranges found: the help's layout or the errors' wording changed")
    }

    /// Option lines (`  --name PLACEHOLDER  description`) with their continuation lines joined.
    static func options(in help: String) -> [(String, String, String)] {
        var found: [(String, String, String)] = []
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            let indent = line.count - trimmed.count
            if (2...6).contains(indent), trimmed.hasPrefix("--") {
                let words = trimmed.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
                let placeholder = words.count > 1 && words[1].first?.isUppercase == true ? String(words[1]) : ""
                found.append((String(words[0]).trimmingCharacters(in: [","]), placeholder, String(trimmed)))
            } else if indent > 6, let last = found.popLast() {
                found.append((last.0, last.1, last.2 + " " + trimmed))
            }
        }
        return found
    }

    /// "from A to B" in an error line, numbers written as the help would (no ".0").
    static func range(in error: String) -> (String, String)? {
        guard let match = error.firstMatch(of: /from (-?[0-9.x]+) to (-?[0-9.x]+)/) else { return nil }
        func plain(_ s: Substring) -> String { s.hasSuffix(".0") ? String(s.dropLast(2)) : String(s) }
        return (plain(match.1), plain(match.2))
    }
}
