import FrameSocket
import FrameWire
import Foundation
import ScreencastSupport
import TestSupport
import XCTest

/// `replay` when its reader goes away, comes back or stops reading: bounded waits, and one line saying why
/// it exits 1.
final class ReplayReaderTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory(prefix: "sc-reader") }
    override func tearDown() { dir.remove() }

    private func server(_ socket: SocketPath, _ collector: Collector) throws -> FrameServer {
        let server = FrameServer(path: socket, logger: Logger(component: "test", threshold: .error)) { collector.add($0) }
        try server.start()
        return server
    }

    /// Paced: the reader leaves for good; replay logs once that it waits, gives up after --wait and says why.
    func testPacedReplayGivesUpWhenTheReaderDoesNotComeBack() throws {
        let socket = try SocketPath(dir.path("gone.sock"))
        let collector = Collector()
        let reader = try server(socket, collector)
        let replay = try RunningTool(["replay", DumpFixtures.golden("agent-extended"), "--socket", socket.string,
                                      "--loop", "--wait", "1"])
        let deadline = Date().addingTimeInterval(10)
        while collector.frameCount < 6, Date() < deadline { usleep(5_000) }
        reader.stop()
        let left = Date()
        let status = replay.finish(timeout: 15)
        XCTAssertEqual(status, 1, replay.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(left), 8, "gave up promptly after --wait 1")
        let log = replay.stderr
        XCTAssertEqual(log.components(separatedBy: "reader gone, waiting up to 1 s").count - 1, 1, log)
        let last = try XCTUnwrap(log.split(separator: "\n").last.map(String.init))
        XCTAssertTrue(last.hasPrefix("screencast-dump: \(socket.string): the reader went away"), last)
        XCTAssertNotNil(last.range(of: #"\d+ of \d+ frames dropped$"#, options: .regularExpression), last)
    }

    /// Paced: a reader that comes back within --wait gets the rest; an interrupt then ends the run with exit 0.
    func testPacedReplayGoesOnWhenAReaderComesBack() throws {
        let socket = try SocketPath(dir.path("back.sock"))
        let first = Collector()
        var reader = try server(socket, first)
        let replay = try RunningTool(["replay", DumpFixtures.golden("agent-extended"), "--socket", socket.string,
                                      "--loop", "--wait", "20"])
        var deadline = Date().addingTimeInterval(10)
        while first.frameCount < 4, Date() < deadline { usleep(5_000) }
        reader.stop()
        XCTAssertTrue(replay.waitForStderr("reader gone, waiting up to 20 s", timeout: 10), replay.stderr)
        let second = Collector()
        reader = try server(socket, second)
        defer { reader.stop() }
        deadline = Date().addingTimeInterval(10)
        while second.frameCount < 4, Date() < deadline { usleep(5_000) }
        XCTAssertGreaterThanOrEqual(second.frameCount, 4, "the returning reader gets frames")
        replay.signal(SIGINT)
        XCTAssertEqual(replay.finish(timeout: 10), 0, replay.stderr)
        XCTAssertTrue(replay.stderr.contains("interrupted"), replay.stderr)
    }

    /// Paced, the reader stopped (SIGSTOP) with the last frame unsent: the final flush waits --wait, not 30 s.
    func testFinalFlushIsBoundedByWait() throws {
        let socket = dir.path("stopped.sock")
        let record = try RunningTool(["record", "--socket", socket, "--out", dir.path("stopped.frames")])
        // The file exists from bind(2); "listening" comes after listen(2).
        XCTAssertTrue(record.waitForStderr("listening", timeout: 10), record.stderr)
        record.signal(SIGSTOP)
        defer { record.signal(SIGCONT) }
        let started = Date()
        let replay = try ProcessRunner.run(
            TestPaths.executable("screencast-dump"),
            ["replay", DumpFixtures.handed("large-4k-frame"), "--socket", socket, "--fps", "30", "--wait", "1"], timeout: 20)
        XCTAssertFalse(replay.timedOut)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertEqual(replay.status, 1)
        let last = try XCTUnwrap(replay.stderr.split(separator: "\n").last.map(String.init))
        XCTAssertTrue(last.contains("the reader did not take the last frame within 1 s"), replay.stderr)
        XCTAssertTrue(last.contains("1 of 1 frames dropped"), last)
    }

    /// Lossless: the reader leaving is a failure with the same kind of explanation.
    func testLosslessReplaySaysWhyItFailsWhenTheReaderLeaves() throws {
        let socket = try SocketPath(dir.path("lossless.sock"))
        let collector = Collector()
        let reader = try server(socket, collector)
        let replay = try RunningTool(["replay", DumpFixtures.handed("large-4k-frame"), "--socket", socket.string,
                                      "--as-fast-as-possible", "--loop"])
        let deadline = Date().addingTimeInterval(10)
        while collector.frameCount < 3, Date() < deadline { usleep(5_000) }
        reader.stop()
        XCTAssertEqual(replay.finish(timeout: 10), 1)
        let last = try XCTUnwrap(replay.stderr.split(separator: "\n").last.map(String.init))
        XCTAssertNotNil(last.range(of: #"the reader went away; \d+ of \d+ frames dropped$"#, options: .regularExpression), last)
    }
}
