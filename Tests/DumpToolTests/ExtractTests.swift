import Foundation
import TestSupport
import XCTest

/// `extract`: never mixes two runs in one folder, says what it wrote, and why it failed.
final class ExtractTests: XCTestCase {
    private let tool = TestPaths.executable("screencast-dump")
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory(prefix: "sc-extract") }
    override func tearDown() { dir.remove() }

    func testRefusesAFolderThatHoldsFilesUnlessForced() throws {
        let out = dir.path("bodies")
        let file = DumpFixtures.golden("ios-three-frames")
        let first = try ProcessRunner.run(tool, ["extract", file, "--out", out])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stderr.contains("wrote 3 bodies to \(out)"), first.stderr)
        XCTAssertFalse(first.stderr.contains("JPEG files"), first.stderr)

        try Data("mine".utf8).write(to: URL(fileURLWithPath: out + "/notes.txt"))
        let second = try ProcessRunner.run(tool, ["extract", DumpFixtures.golden("tolerant-reader"), "--out", out])
        XCTAssertEqual(second.status, 64, "the command line must change (--force or another folder)")
        XCTAssertTrue(second.stderr.hasPrefix("screencast-dump: \(out): "), second.stderr)
        XCTAssertTrue(second.stderr.contains("--force"), second.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out).sorted(),
                       ["000000.jpg", "000001.jpg", "000002.jpg", "notes.txt"], "a refused run writes nothing")

        let forced = try ProcessRunner.run(tool, ["extract", DumpFixtures.golden("tolerant-reader"), "--out", out, "--force"])
        XCTAssertEqual(forced.status, 0, forced.stderr)
        XCTAssertTrue(forced.stderr.contains("wrote 2 bodies"), forced.stderr)
    }

    func testAnEmptyExistingFolderIsFine() throws {
        let out = dir.path("empty")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        let result = try ProcessRunner.run(tool, ["extract", DumpFixtures.golden("ios-three-frames"), "--out", out])
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    /// A folder that cannot be the output is the command line's fault (exit 64, a pointer to --help), and a
    /// missing parent is refused rather than made: a typo must not leave new folders behind (a new user's
    /// `--out /nonexistent/out` made `/nonexistent`, 2026-12-05).
    func testFolderErrorsAreUsageErrorsAndNoParentIsMade() throws {
        let blocker = dir.path("file")
        try Data().write(to: URL(fileURLWithPath: blocker))
        let file = DumpFixtures.golden("ios-three-frames")
        let underFile = try ProcessRunner.run(tool, ["extract", file, "--out", blocker + "/sub"])
        XCTAssertEqual(underFile.status, 64)
        XCTAssertEqual(underFile.stderr, "screencast-dump: \(blocker)/sub: '\(blocker)' is not a folder\nTry 'screencast-dump --help'.\n")
        let isFile = try ProcessRunner.run(tool, ["extract", file, "--out", blocker])
        XCTAssertEqual(isFile.status, 64)
        XCTAssertTrue(isFile.stderr.hasPrefix("screencast-dump: \(blocker): exists and is not a folder\n"), isFile.stderr)
        let missing = dir.path("typo/out")
        let noParent = try ProcessRunner.run(tool, ["extract", file, "--out", missing])
        XCTAssertEqual(noParent.status, 64)
        XCTAssertTrue(noParent.stderr.contains("folder '\(dir.path("typo"))' does not exist (make it first)"), noParent.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("typo")), "no folder made for a typo")
    }

    func testABrokenStreamWritesTheBodiesBeforeTheFault() throws {
        let out = dir.path("partial")
        let result = try ProcessRunner.run(tool, ["extract", DumpFixtures.handed("truncated-body"), "--out", out])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("stream end: truncated"), result.stderr)
    }
}
