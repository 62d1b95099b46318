import Foundation
import FrameWire
import Glibc
import Media
import TestSupport
import XCTest
import XTestSupport

/// `screencast-agent` as a black box under a real X server: dumps, options, signals, the X server dying.
/// (The socket robustness tests are in `AgentSocketTests`.)
final class AgentUnderXTests: XServerTestCase {
    let agent = TestPaths.executable("screencast-agent")
    private var folder: TemporaryDirectory!

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = try TemporaryDirectory(prefix: "sc-agent")
    }

    override func tearDown() {
        folder?.remove()
        super.tearDown()
    }

    private func run(_ arguments: [String], timeout: Double = 20) throws -> ProcessResult {
        try ProcessRunner.run(agent, ["--display", server.display] + arguments, timeout: timeout)
    }

    func testOutputDumpCarriesTheScreenWithTimestampsAndSequence() throws {
        let pattern = TestImages.pattern(width: 320, height: 240)
        client.setRootBackground(pattern)
        let dump = folder.path("out.frames")
        let result = try run(["--output", dump, "--frames", "4", "--keepalive", "0.1", "--quality", "90",
                              "--orientation", "6", "--cursor", "off"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let (frames, end) = try DumpReader.frames(dump)
        XCTAssertEqual(end, .eof)
        XCTAssertEqual(frames.count, 4)
        XCTAssertEqual(frames.map(\.header.sequence), [0, 1, 2, 3])
        XCTAssertEqual(frames.map(\.header.bufferWidth), [320, 320, 320, 320])
        XCTAssertEqual(frames.map(\.header.bufferHeight), [240, 240, 240, 240])
        XCTAssertEqual(frames.map(\.header.orientation), [6, 6, 6, 6])
        let stamps = frames.compactMap(\.header.timestampMicros)
        XCTAssertEqual(stamps.count, 4)
        XCTAssertEqual(stamps, stamps.sorted())
        let now = MonotonicClockForTests.nowMicros()
        XCTAssertLessThan(now - stamps[0], 20_000_000, "timestamps are CLOCK_MONOTONIC µs")
        let psnr = TestImages.psnr(try TestImages.decode(frames[0].body), pattern)
        XCTAssertGreaterThanOrEqual(psnr, 35)
        // The dump tool agrees with the stream.
        let inspect = try ProcessRunner.run(TestPaths.executable("screencast-dump"), ["inspect", "--json", dump])
        XCTAssertEqual(inspect.status, 0, inspect.stderr)
        XCTAssertTrue(result.stderr.contains("summary frames=4"), result.stderr)
        XCTAssertTrue(result.stderr.contains("stop=frames"), result.stderr)
    }

    func testScaleHalfViaTheCommandLine() throws {
        let dump = folder.path("scaled.frames")
        let result = try run(["--output", dump, "--frames", "1", "--scale", "0.5"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let frame = try XCTUnwrap(try DumpReader.frames(dump).frames.first)
        XCTAssertEqual([frame.header.bufferWidth, frame.header.bufferHeight], [160, 120])
        let info = try JPEGDecoder().readHeader(frame.body)
        XCTAssertEqual([info.width, info.height], [160, 120])
    }

    func testStatsLinesAndSummaryWithDuration() throws {
        let dump = folder.path("stats.frames")
        let result = try run(["--output", dump, "--duration", "1.2", "--stats-interval", "0.5", "--keepalive", "0.1"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let stats = result.stderr.split(separator: "\n").filter { $0.hasPrefix("info agent stats ") }
        XCTAssertEqual(stats.count, 2, result.stderr)
        for key in ["captured=", "sent=", "dropped=", "fps=", "jpeg_ms=", "bytes_per_frame="] {
            XCTAssertTrue(stats.allSatisfy { $0.contains(key) }, "\(key) missing: \(stats)")
        }
        XCTAssertTrue(result.stderr.contains("info agent summary "), result.stderr)
        XCTAssertTrue(result.stderr.contains("stop=duration"), result.stderr)
    }

    func testSigintAndSigtermEndCleanly() throws {
        for signal in [SIGINT, SIGTERM] {
            let child = try ChildProcess(agent, ["--display", server.display, "--output", folder.path("sig.frames")])
            XCTAssertTrue(child.waitForOutput("capture area", timeout: 5), child.stderr)
            usleep(200_000)
            child.send(signal)
            XCTAssertEqual(child.waitForExit(timeout: 5), 0, child.stderr)
            XCTAssertTrue(child.stderr.contains("stop=signal"), child.stderr)
            XCTAssertEqual(try DumpReader.frames(folder.path("sig.frames")).end, .eof, "the dump ends between frames")
        }
    }

    /// A dump whose folder is missing is checked with the options: bad usage (64), said before the display
    /// is opened, so nothing is logged about a capture area that will never be used.
    func testDumpInAMissingFolderIsBadUsageBeforeAnythingIsLogged() throws {
        for option in ["--output", "--record"] {
            let result = try run([option, "/nonexistent-folder/x.frames"])
            XCTAssertEqual(result.status, 64, result.stderr)
            XCTAssertEqual(result.stderr, "screencast-agent: \(option): folder '/nonexistent-folder' does not exist (for "
                + "'/nonexistent-folder/x.frames')\nTry 'screencast-agent --help'.\n")
        }
    }

    func testDumpThatCannotBeWrittenEndsWithExit1() throws {
        let result = try run(["--output", "/dev/full"])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("stop=failure"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").last, "screencast-agent: cannot write dump '/dev/full': No space left on device")
    }

    func testListMonitors() throws {
        let result = try run(["--list-monitors"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "0: screen 320x240+0+0\n")
    }

    /// A monitor the display does not have is fixed by changing the command line: bad usage (64), as a
    /// region outside the screen; the dump is not created.
    func testUnknownMonitorIsBadUsage() throws {
        let result = try run(["--monitor", "nope", "--output", folder.path("x.frames")])
        XCTAssertEqual(result.status, 64, result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").suffix(2).map(String.init),
                       ["screencast-agent: no monitor 'nope' (monitors: 0=screen)", "Try 'screencast-agent --help'."])
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.path("x.frames")))
    }

    func testXServerKilledEndsWithAClearErrorAndExit1() throws {
        let child = try ChildProcess(agent, ["--display", server.display, "--output", folder.path("dead.frames")])
        XCTAssertTrue(child.waitForOutput("capture area", timeout: 5), child.stderr)
        let display = server.display
        server.crash()
        XCTAssertEqual(child.waitForExit(timeout: 5), 1, child.stderr)
        let last = child.stderr.split(separator: "\n").last.map(String.init) ?? ""
        XCTAssertTrue(last.hasPrefix("screencast-agent: lost the connection to X display '\(display)'"), child.stderr)
        XCTAssertTrue(child.stderr.contains("stop=failure"), child.stderr)
    }
}

/// CLOCK_MONOTONIC µs, as the agent stamps frames.
enum MonotonicClockForTests {
    static func nowMicros() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }
}
