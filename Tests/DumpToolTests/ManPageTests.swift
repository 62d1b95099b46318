import Foundation
import TestSupport
import XCTest

/// The manual pages `tools/man` makes from each program's `--help`: each renders without a warning (groff -ww,
/// and `man -l` as a user reads it) and holds every option its `--help` lists, so the two cannot drift.
final class ManPageTests: XCTestCase {
    func testEachPageRendersAndHoldsEveryOptionOfItsHelp() throws {
        for tool in ["/usr/bin/groff", "/usr/bin/man", "/usr/bin/python3"] {
            XCTAssertTrue(FileManager.default.isExecutableFile(atPath: tool), "\(tool) is missing: run tools/setup")
        }
        let out = try TemporaryDirectory(prefix: "sc-man")
        defer { out.remove() }
        let products = TestPaths.executable("screencast-call").deletingLastPathComponent().path
        let made = try ProcessRunner.run(
            TestPaths.packageRoot.appendingPathComponent("tools/man"), ["--from", products, "--out", out.url.path], timeout: 30)
        XCTAssertEqual(made.status, 0, made.stderr)
        let optionPattern = try NSRegularExpression(pattern: #"(?<![\w-])--?[a-z][a-z0-9-]*"#)
        for program in ["screencast-call", "screencast-agent", "screencast-dump"] {
            let page = out.path(program + ".1")
            let warnings = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/groff"), ["-man", "-Tutf8", "-ww", "-z", page])
            XCTAssertEqual(warnings.status, 0)
            XCTAssertEqual(warnings.stderr, "", "\(program).1: groff warnings")
            let shown = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["MANWIDTH=200", "/usr/bin/man", "-l", page])
            XCTAssertEqual(shown.status, 0, shown.stderr)
            XCTAssertEqual(shown.stderr, "")
            // Hyphens as a terminal shows them, whichever glyph the man configuration picks for \-.
            let text = shown.stdout.replacingOccurrences(of: "\u{2212}", with: "-").replacingOccurrences(of: "\u{2010}", with: "-")
            XCTAssertTrue(text.hasPrefix(program.uppercased() + "(1)"), String(text.prefix(200)))
            XCTAssertTrue(text.contains("\nNAME\n       \(program) - "), program)
            let help = try ProcessRunner.run(TestPaths.executable(program), ["--help"]).stdout
            let options = Set(optionPattern.matches(in: help, range: NSRange(help.startIndex..., in: help)).map {
                String(help[Range($0.range, in: help)!])
            })
            XCTAssertGreaterThan(options.count, program == "screencast-dump" ? 5 : 25, program)
            let words = Set(optionPattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
                String(text[Range($0.range, in: text)!])
            })
            XCTAssertEqual(options.subtracting(words).sorted(), [], "\(program).1 lacks options its --help lists")
            // Each entry of --help is an entry of the page (bold term on its own line), not lost in a paragraph.
            for line in help.split(separator: "\n") where line.hasPrefix("  --") {
                let option = String(line.dropFirst(2).prefix { $0 != " " && $0 != "," })
                XCTAssertTrue(text.contains("\n       " + option), "\(program).1: \(option) is not an entry")
            }
        }
    }
}
