import Foundation
import TestSupport
import XCTest

/// Exit codes that say what happened: a region wholly outside the screen is bad usage (64), one partly outside
/// is cut with a warning naming the new size, and a run asked for frames that sent none fails (1).
final class AgentHonestExitTests: XServerTestCase {
    let agent = TestPaths.executable("screencast-agent")
    private var folder: TemporaryDirectory!

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = try TemporaryDirectory(prefix: "sc-exit")
    }

    override func tearDown() {
        folder?.remove()
        super.tearDown()
    }

    private func run(_ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run(agent, ["--display", server.display] + arguments, timeout: 20)
    }

    func testARegionWhollyOutsideTheScreenIsBadUsage() throws {
        let result = try run(["--region", "2000,2000,10,10", "--output", folder.path("x.frames")])
        XCTAssertEqual(result.status, 64, result.stderr)
        let lines = result.stderr.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("info ") }
        XCTAssertEqual(lines, [
            "screencast-agent: --region 10x10+2000+2000 lies wholly outside the 320x240 screen",
            "Try 'screencast-agent --help'.",
        ], result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.path("x.frames")), "nothing written")
    }

    func testARegionPartlyOutsideIsCutAndTheWarningGivesTheNewSize() throws {
        let dump = folder.path("cut.frames")
        let result = try run(["--region", "300,200,100,100", "--frames", "1", "--output", dump])
        XCTAssertEqual(result.status, 0, result.stderr)
        let warning = result.stderr.split(separator: "\n").first { $0.hasPrefix("warn ") && $0.contains("clipped") }
        XCTAssertNotNil(warning, result.stderr)
        XCTAssertTrue(warning?.contains("20x40+300+200") ?? false, "the new size: \(warning ?? "-")")
        let frame = try XCTUnwrap(try DumpReader.frames(dump).frames.first)
        XCTAssertEqual([frame.header.bufferWidth, frame.header.bufferHeight], [20, 40])
    }

    func testFramesAskedForAndNoneSentExits1WithTheReason() throws {
        let socket = folder.path("nobody-listens.sock")
        let result = try run(["--socket", socket, "--frames", "1"])
        XCTAssertEqual(result.status, 1, result.stderr)
        let last = result.stderr.split(separator: "\n").last.map(String.init) ?? ""
        XCTAssertTrue(last.hasPrefix("screencast-agent: asked for 1 frame(s) and sent none: cannot connect to the call:"), result.stderr)
        XCTAssertTrue(last.contains(socket), last)
    }
}
