import Foundation
import TestSupport
import XCTest

/// `tools/bench --self-check`: the glass-to-glass benchmark's own tests, so the suite catches a broken
/// measurement before a long benchmark run does. glasscode.py's encoder and decoder (round trips, codec
/// noise, every one- and two-bit error caught, mid-repaint cells refused), then painter.py on a private Xvfb
/// read back from the screen (every reading a time painted between the painter's start and the reading).
final class BenchSelfCheckTests: XCTestCase {
    func testTheGlassToGlassCodeAndPainterCheckThemselves() throws {
        let tools = [URL(fileURLWithPath: "/usr/bin/python3"), URL(fileURLWithPath: "/usr/bin/Xvfb")]
        guard EndToEnd.requireTools(tools) else { return }
        let script = TestPaths.packageRoot.appendingPathComponent("tools/bench").path
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), [script, "--self-check"], timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr.suffix(3000).description)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let checks = lines.first { $0.hasPrefix("glasscode: ") && $0.hasSuffix(" checks passed") }
        let count = checks.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
        XCTAssertGreaterThan(count, 3000, "\(lines)")
        XCTAssertTrue(lines.contains("painter: 50 screen readings decoded"), "\(lines)")
    }

    /// `--help` of the tools that print their own header comment: all of it, up to the first line of code. A
    /// fixed line range (`sed -n '2,26p'`) had cut tools/bench's mid-sentence ("The machine should be
    /// otherwise") and printed tools/test's `set -euo pipefail`.
    func testToolsHelpPrintsTheirWholeHeaderComment() throws {
        let lastLines = [
            "bench": "idle: the load average before and after is recorded with the results.",
            "fuzz": "held, 1 when one failed, 64 for bad usage.",
            "soak": "Exit 0 when the bar is met, 1 when not, 2 when the run could not start, 64 for bad usage, 128+N after signal N.",
            "test": "SCREENCAST_TEST_TIMEOUT (seconds, default 1800; 5400 under a sanitizer) bounds the whole `swift test` run.",
        ]
        for (tool, lastLine) in lastLines.sorted(by: { $0.key < $1.key }) {
            let script = TestPaths.packageRoot.appendingPathComponent("tools/\(tool)").path
            let result = try ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), [script, "--help"], timeout: 10)
            XCTAssertEqual(result.status, 0, "\(tool): \(result.stderr)")
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            XCTAssertTrue(lines.first?.hasPrefix("tools/\(tool)") == true, "\(tool): \(lines.prefix(2))")
            XCTAssertEqual(lines.dropLast().last, lastLine, "\(tool): \(lines.suffix(3))")
            XCTAssertFalse(lines.contains { $0.hasPrefix("#") || $0.hasPrefix("set -") }, "\(tool): \(lines)")
        }
    }
}
