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
}
