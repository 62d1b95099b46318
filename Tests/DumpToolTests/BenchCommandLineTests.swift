import Foundation
import TestSupport
import XCTest

/// `screencast-bench` as a black box, by the rule every executable keeps (README "Exit codes"): `--help`/`-h`
/// and `--version` answer, and a command line that must change ends in one line, a pointer to `--help` and
/// exit 64 (a new user's trial found exit 1 for an unreadable `--content` dump and a malformed `--url`).
final class BenchCommandLineTests: XCTestCase {
    let bench = TestPaths.executable("screencast-bench")

    func testHelpAndVersionAnswer() throws {
        for words in [["--help"], ["-h"], ["viewers", "-h"], ["viewers", "--help"]] {
            let result = try ProcessRunner.run(bench, words)
            XCTAssertEqual(result.status, 0, "\(words): \(result.stderr)")
            XCTAssertTrue(result.stdout.hasPrefix("Usage: screencast-bench"), "\(words): \(result.stdout.prefix(200))")
        }
        XCTAssertTrue(try ProcessRunner.run(bench, ["--help"]).stdout.contains("Exit codes: 0 done, 1 a stage failed, 64 bad usage"))
        let version = try ProcessRunner.run(bench, ["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertTrue(version.stdout.hasPrefix("screencast-bench "), version.stdout)
    }

    func testCommandLinesThatMustChangeExit64WithOneReason() throws {
        let cases: [([String], String)] = [
            (["--content", "foo=/nonexistent.frames", "--stage", "vp8"], "--content foo=/nonexistent.frames: cannot read /nonexistent.frames"),
            (["--content", "foo=" + TestPaths.packageRoot.appendingPathComponent("Tests").path, "--stage", "vp8"], "--content foo="),
            (["--stage", "nope"], "unknown stage 'nope'"),
            (["--repeat", "0"], "--repeat"),
            (["viewers", "--url", "notaurl"], "--url: WHEP URL must be http://HOST:PORT/PATH, got notaurl"),
            (["viewers"], "viewers needs --url"),
        ]
        for (words, reason) in cases {
            let result = try ProcessRunner.run(bench, words)
            XCTAssertEqual(result.status, 64, "\(words): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            XCTAssertEqual(lines.count, 2, "\(words): \(result.stderr)")
            XCTAssertTrue(lines.first?.hasPrefix("screencast-bench: \(reason)") == true, "\(words): \(result.stderr)")
            XCTAssertEqual(lines.last, "Try 'screencast-bench --help'.", "\(words)")
        }
    }
}
