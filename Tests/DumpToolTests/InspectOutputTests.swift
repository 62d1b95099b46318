import FrameWire
import Foundation
import TestSupport
import XCTest

/// What `inspect` says beyond the per-frame fields: the summary, where a wire error was detected, timestamps
/// that go backwards, and output that streams as the dump is decoded.
final class InspectOutputTests: XCTestCase {
    private let tool = TestPaths.executable("screencast-dump")
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory(prefix: "sc-inspect") }
    override func tearDown() { dir.remove() }

    func testSummarySaysTheBytesRead() throws {
        let file = DumpFixtures.golden("agent-extended")
        let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as! Int
        let result = try ProcessRunner.run(tool, ["inspect", file])
        XCTAssertEqual(result.status, 0)
        let summary = try XCTUnwrap(result.stdout.split(separator: "\n").last.map(String.init))
        XCTAssertTrue(summary.contains("read \(size) bytes"), summary)
        XCTAssertFalse(summary.contains(" of "), summary)
        XCTAssertTrue(summary.contains("0.10 s at 30.0 fps"), summary)
        XCTAssertFalse(summary.contains("backwards"), summary)
        XCTAssertTrue(result.stderr.isEmpty, result.stderr)
    }

    /// headerTooLarge is detected at byte 8193 of a header block that starts the stream (offset 8192).
    func testWireErrorSaysWhereItWasDetected() throws {
        let file = DumpFixtures.handed("header-flood")
        let json = try ProcessRunner.run(tool, ["inspect", "--json", file])
        XCTAssertEqual(json.status, 1)
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let error = try XCTUnwrap(root["error"] as? [String: Any], json.stdout)
        XCTAssertEqual(error["kind"] as? String, "headerTooLarge")
        XCTAssertEqual(error["offset"] as? Int, 8192)
        let message = try XCTUnwrap(error["message"] as? String)
        XCTAssertTrue(message.contains("at byte 8193"), message)
        XCTAssertTrue(json.stderr.isEmpty, "--json keeps stderr for failures to run: \(json.stderr)")

        let table = try ProcessRunner.run(tool, ["inspect", file])
        XCTAssertEqual(table.status, 1)
        XCTAssertTrue(table.stdout.contains("read 8193 bytes"), table.stdout)
        XCTAssertTrue(table.stdout.contains("at byte 8193"), table.stdout)
        let line = table.stderr.trimmingCharacters(in: .newlines)
        XCTAssertTrue(line.hasPrefix("screencast-dump: \(file): error: header block"), line)
        XCTAssertTrue(line.contains("at byte 8193"), line)
        XCTAssertFalse(line.contains("\n"), "one line: \(line)")
    }

    /// A fault after a frame: the offset counts from the start of the stream.
    func testWireErrorOffsetAfterAFrame() throws {
        let file = dir.path("bad-second.frames")
        var bytes = FrameEncoder.encode(header: FrameHeader(contentLength: 0, bufferWidth: 8, bufferHeight: 8),
                                        body: [0xFF, 0xD8, 0xFF, 0xD9])
        let first = bytes.count
        bytes += Array("HTTP/2 200 OK\r\n".utf8)  // '2' at first + 5 cannot continue "HTTP/1."
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let result = try ProcessRunner.run(tool, ["inspect", "--json", file])
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let error = try XCTUnwrap(root["error"] as? [String: Any])
        XCTAssertEqual(error["kind"] as? String, "badStatusLine")
        XCTAssertEqual(error["offset"] as? Int, first + 5)
        XCTAssertTrue((error["message"] as? String)?.contains("at byte \(first + 6)") ?? false, "\(error)")
    }

    func testTruncatedStreamIsExplainedOnStderr() throws {
        let result = try ProcessRunner.run(tool, ["inspect", DumpFixtures.handed("truncated-body")])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("truncated"), result.stderr)
    }

    func testTimestampsGoingBackwardsAreCountedAndTheRateUsesAMonotonicRun() throws {
        let file = dir.path("backwards.frames")
        // Two runs: 4 frames 33 333 µs apart, then a jump back and 3 frames 50 000 µs apart.
        try DumpFixtures.tinyFrames(at: file, timestamps: [1_000_000, 1_033_333, 1_066_666, 1_099_999, 10, 50_010, 100_010])
        let result = try ProcessRunner.run(tool, ["inspect", file])
        let summary = try XCTUnwrap(result.stdout.split(separator: "\n").last.map(String.init))
        XCTAssertTrue(summary.contains("1 timestamp goes backwards"), summary)
        XCTAssertTrue(summary.contains("longest monotonic run: 4 frames, 0.10 s at 30.0 fps"), summary)
        XCTAssertTrue(summary.contains("7 frames, 7 undecodable"), summary)
    }

    /// `--json` writes frames as they are decoded: with a FIFO whose writer keeps it open, the first frames
    /// arrive on stdout before the stream ends.
    func testJSONStreamsFramesBeforeTheStreamEnds() throws {
        let fifo = dir.path("stream.fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let out = Pipe()
        let process = try ProcessRunner.start(tool, ["inspect", "--json", fifo], stdout: out)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        var bytes: [UInt8] = []
        for index in 0..<3000 {
            bytes += FrameEncoder.encode(
                header: FrameHeader(contentLength: 0, bufferWidth: 8, bufferHeight: 8, sequence: UInt64(index)),
                body: [0xFF, 0xD8, 0xFF, 0xD9])
        }
        // The writer runs on its own thread (the FIFO and stdout pipes are small) and keeps the FIFO open
        // until told to close it.
        let mayClose = DispatchSemaphore(value: 0)
        let closed = DispatchSemaphore(value: 0)
        let message = bytes
        Thread.detachNewThread {
            if let writer = FileHandle(forWritingAtPath: fifo) {
                try? writer.write(contentsOf: message)
                mayClose.wait()
                try? writer.close()
            }
            closed.signal()
        }
        // Should inspect wait for EOF after all, end the stream after 10 s rather than hang.
        DispatchQueue.global().asyncAfter(deadline: .now() + 10) { mayClose.signal() }
        // Nothing ends the stream yet; output must already be there.
        let first = (POSIXPipeRead.chunk(out.fileHandleForReading.fileDescriptor) ?? Data())
        XCTAssertTrue(String(decoding: first, as: UTF8.self).hasPrefix("{\"frames\":[{\"offset\":0,"))
        XCTAssertTrue(process.isRunning, "inspect finished before the stream ended")
        mayClose.signal()
        let rest = POSIXPipeRead.toEnd(out.fileHandleForReading.fileDescriptor)
        XCTAssertFalse(ProcessRunner.wait(for: process, timeout: 30))
        XCTAssertEqual(ProcessRunner.status(of: process), 0)
        let report = try InspectReport(json: String(decoding: first + rest, as: UTF8.self))
        XCTAssertEqual(report.frames.count, 3000)
        XCTAssertEqual(report.end, "eof")
        closed.wait()
    }

    func testErrorsSayPathAndReason() throws {
        for arguments in [["inspect", "/nonexistent/x.frames"], ["replay", "/nonexistent/x.frames", "--socket", "/tmp/x.sock"],
                          ["extract", "/nonexistent/x.frames", "--out", dir.path("never")]] {
            // A FILE that is not there is fixed by changing the command line: bad usage (64).
            let result = try ProcessRunner.run(tool, arguments)
            XCTAssertEqual(result.status, 64, "\(arguments)")
            XCTAssertEqual(result.stderr, "screencast-dump: /nonexistent/x.frames: No such file or directory\n\(helpPointer)", "\(arguments)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("never")), "extract made a folder for nothing")
        let folder = try ProcessRunner.run(tool, ["inspect", dir.url.path])
        XCTAssertEqual(folder.status, 64)
        XCTAssertEqual(folder.stderr, "screencast-dump: \(dir.url.path): is a folder, not a dump file\n\(helpPointer)")
    }

    private var helpPointer: String { "Try 'screencast-dump --help'.\n" }

    /// A file that is no frame dump at all (its first bytes are no status line): one line on stderr, nothing
    /// on stdout (no empty table, no summary repeating the error), exit 1.
    func testANonDumpIsSaidOnce() throws {
        let file = dir.path("notes.txt")
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: file))
        let result = try ProcessRunner.run(tool, ["inspect", file])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stdout, "")
        XCTAssertEqual(result.stderr, "screencast-dump: \(file): not a frame dump: bad status line: 'h' at status-line byte 1, "
            + "expected 'H' (HTTP/1.0 or HTTP/1.1 200) (detected at byte 1, offset 0)\n")
    }

    /// `record --out` in a missing folder names the path the user gave (never its `.partial` file): bad
    /// usage, said before the socket is made.
    func testRecordIntoAMissingFolderNamesTheGivenPath() throws {
        let socket = dir.path("never.sock")
        let result = try ProcessRunner.run(tool, ["record", "--socket", socket, "--out", "/nonexistent/x.frames"])
        XCTAssertEqual(result.status, 64)
        XCTAssertEqual(result.stderr, "screencast-dump: --out: folder '/nonexistent' does not exist (for '/nonexistent/x.frames')\n\(helpPointer)")
        XCTAssertFalse(result.stderr.contains(".partial"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "no socket for a recording that cannot be written")
    }
}
