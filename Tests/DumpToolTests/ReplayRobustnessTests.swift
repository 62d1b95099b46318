import FrameSocket
import FrameWire
import Foundation
import ScreencastSupport
import TestSupport
import XCTest

/// What the break-it trial found in `replay` and `record`, kept fixed.
final class ReplayRobustnessTests: XCTestCase {
    private let tool = TestPaths.executable("screencast-dump")
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory(prefix: "sc-robust") }
    override func tearDown() { dir.remove() }

    private func dump(_ name: String, timestamps: [UInt64?]) throws -> String {
        var bytes: [UInt8] = []
        for (index, stamp) in timestamps.enumerated() {
            let header = FrameHeader(contentLength: 0, bufferWidth: 8, bufferHeight: 8, orientation: 1,
                                     timestampMicros: stamp, sequence: UInt64(index))
            bytes += FrameEncoder.encode(header: header, body: [0xFF, 0xD8, 0xFF, 0xD9])
        }
        let path = dir.path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Gaps of 2^64-1 µs or backwards are replaced by one frame interval: no overflow, no sleeping for days.
    func testAbsurdTimestampGapsAreReplaced() throws {
        let file = try dump("gaps.frames", timestamps: [0, UInt64.max, 5, 6, nil, 1_000_000_000_000])
        let socket = dir.path("r.sock")
        let record = try ProcessRunner.start(tool, ["record", "--socket", socket, "--out", dir.path("out.frames")])
        let err = Pipe()
        let replay = try ProcessRunner.start(tool, ["replay", file, "--socket", socket], stderr: err)
        XCTAssertFalse(ProcessRunner.wait(for: replay, timeout: 10), "replay hung")
        XCTAssertEqual(ProcessRunner.status(of: replay), 0)
        let log = String(decoding: POSIXPipeRead.toEnd(err.fileHandleForReading.fileDescriptor), as: UTF8.self)
        XCTAssertTrue(log.contains("timestamp gaps out of range replaced"), log)
        XCTAssertFalse(ProcessRunner.wait(for: record, timeout: 10))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir.path("out.frames"))),
                       try Data(contentsOf: URL(fileURLWithPath: file)))
    }

    func testLoopWithoutACompleteFrameIsRefused() throws {
        let file = dir.path("tail.frames")
        try Data("HTTP/1.1 200 OK\r\nContent-Len".utf8).write(to: URL(fileURLWithPath: file))
        let result = try ProcessRunner.run(tool, ["replay", file, "--loop", "--socket", dir.path("x.sock")], timeout: 10)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("no complete frame to loop"), result.stderr)
    }

    func testReplayToSomethingThatIsNotASocketFailsAtOnce() throws {
        let file = TestPaths.golden.appendingPathComponent("ios-three-frames.frames").path
        let notSocket = dir.path("regular")
        try Data().write(to: URL(fileURLWithPath: notSocket))
        let result = try ProcessRunner.run(tool, ["replay", file, "--socket", notSocket, "--wait", "30"], timeout: 10)
        XCTAssertFalse(result.timedOut)
        XCTAssertEqual(result.status, 64, "a --socket no reader can serve is bad usage, as for the call")
        XCTAssertTrue(result.stderr.contains("exists and is not a socket"), result.stderr)
        let folder = try ProcessRunner.run(tool, ["replay", dir.url.path, "--socket", dir.path("y.sock")])
        XCTAssertEqual(folder.status, 64, "a folder given as the dump is bad usage")
        XCTAssertTrue(folder.stderr.contains("is a folder"), folder.stderr)
    }

    /// A failed `record` start leaves an existing file of the output's name alone.
    /// `inspect` of a FIFO nobody writes to waits in open(2), as `cat` would; SIGTERM must still end it.
    func testInspectWaitingOnAFIFOEndsAtSIGTERM() throws {
        let fifo = dir.path("no-writer.fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let process = try ProcessRunner.start(tool, ["inspect", fifo])
        usleep(300_000)
        XCTAssertTrue(process.isRunning, "inspect did not wait for a writer")
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        let stillRunning = process.isRunning
        if stillRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        XCTAssertFalse(stillRunning, "SIGTERM did not end inspect blocked on a FIFO")
        XCTAssertEqual(process.terminationReason, .uncaughtSignal)
        XCTAssertEqual(process.terminationStatus, SIGTERM)
    }

    func testFailedRecordKeepsAnExistingOutputFile() throws {
        let out = dir.path("precious.frames")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: out))
        let busy = try SocketPath(dir.path("busy.sock"))
        let server = FrameServer(path: busy, logger: Logger(component: "test", threshold: .error)) { _ in }
        try server.start()
        defer { server.stop() }
        let result = try ProcessRunner.run(tool, ["record", "--socket", busy.string, "--out", out], timeout: 10)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("in use"), result.stderr)
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), "keep me")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + ".partial"))
    }

    /// A connection that sends nothing (a probe) does not end the recording; the next real sender is recorded.
    func testRecordIgnoresConnectionsThatSendNothing() throws {
        let socket = try SocketPath(dir.path("probe.sock"))
        let out = dir.path("probe.frames")
        let record = try ProcessRunner.start(tool, ["record", "--socket", socket.string, "--out", out])
        let deadline = Date().addingTimeInterval(5)
        while !FileManager.default.fileExists(atPath: socket.string), Date() < deadline { usleep(10_000) }
        // A second record on the same path probes it (connects, sends nothing) and fails with "in use".
        let second = try ProcessRunner.run(tool, ["record", "--socket", socket.string, "--out", dir.path("other.frames")])
        XCTAssertEqual(second.status, 1)
        XCTAssertTrue(record.isRunning, "the probe ended the first recording")
        let file = TestPaths.golden.appendingPathComponent("ios-three-frames.frames").path
        let replay = try ProcessRunner.run(tool, ["replay", file, "--socket", socket.string, "--as-fast-as-possible"])
        XCTAssertEqual(replay.status, 0, replay.stderr)
        XCTAssertFalse(ProcessRunner.wait(for: record, timeout: 10))
        XCTAssertEqual(ProcessRunner.status(of: record), 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), try Data(contentsOf: URL(fileURLWithPath: file)))
    }

    /// SIGINT while a lossless replay waits for a reader that stopped reading ends it promptly.
    func testInterruptWhileWaitingForAStoppedReaderIsPrompt() throws {
        let socket = dir.path("stopped.sock")
        let out = dir.path("stopped.frames")
        let record = try ProcessRunner.start(tool, ["record", "--socket", socket, "--out", out])
        defer { kill(record.processIdentifier, SIGCONT); kill(record.processIdentifier, SIGKILL); record.waitUntilExit() }
        let deadline = Date().addingTimeInterval(5)
        while !FileManager.default.fileExists(atPath: socket), Date() < deadline { usleep(10_000) }
        kill(record.processIdentifier, SIGSTOP)
        let file = TestPaths.sharedCases.appendingPathComponent("large-4k-frame.frames").path
        let replay = try ProcessRunner.start(tool, ["replay", file, "--socket", socket, "--as-fast-as-possible", "--loop"])
        usleep(1_500_000)  // the socket buffer fills; the next send waits for the slot
        XCTAssertTrue(replay.isRunning)
        let interrupted = Date()
        kill(replay.processIdentifier, SIGINT)
        XCTAssertFalse(ProcessRunner.wait(for: replay, timeout: 5), "replay ignored SIGINT")
        XCTAssertLessThan(Date().timeIntervalSince(interrupted), 2)
        XCTAssertEqual(ProcessRunner.status(of: replay), 0)
    }

    /// Lossless replay whose reader goes away mid-stream fails (exit 1) instead of hanging or claiming success.
    func testLosslessReplayFailsWhenTheReaderLeaves() throws {
        let socket = try SocketPath(dir.path("leaving.sock"))
        let frames = Collector()
        let server = FrameServer(path: socket, logger: Logger(component: "test", threshold: .error)) { frames.add($0) }
        try server.start()
        let file = TestPaths.sharedCases.appendingPathComponent("large-4k-frame.frames").path
        let replay = try ProcessRunner.start(tool, ["replay", file, "--socket", socket.string, "--as-fast-as-possible", "--loop"],
                                             stderr: Pipe())
        let deadline = Date().addingTimeInterval(10)
        while frames.frameCount < 3, Date() < deadline { usleep(5_000) }
        server.stop()  // the reader goes away for good
        XCTAssertFalse(ProcessRunner.wait(for: replay, timeout: 10), "replay hung after the reader left")
        XCTAssertEqual(ProcessRunner.status(of: replay), 1)
    }

    func testInspectWritesU64TimestampsExactly() throws {
        let file = try dump("u64.frames", timestamps: [UInt64.max])
        let result = try ProcessRunner.run(tool, ["inspect", "--json", file])
        XCTAssertTrue(result.stdout.contains("\"timestamp\":18446744073709551615"), result.stdout)
    }
}
