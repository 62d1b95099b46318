import Foundation
import TestSupport
import XCTest

/// `screencast-agent`'s command line, as a black box, without an X server: help, bad options (exit 64 with
/// one line and a pointer to --help), no display at all (exit 64, saying how to name one), and unusable
/// displays (exit 1 with one line). The tests that need a display are in CaptureTests (`AgentUnderXTests`,
/// `AgentSocketTests`), beside the X server harness.
final class AgentCommandLineTests: XCTestCase {
    let agent = TestPaths.executable("screencast-agent")

    private func run(_ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
        guard let environment else { return try ProcessRunner.run(agent, arguments, timeout: 20) }
        // ProcessRunner has no environment parameter: go through env(1).
        return try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"),
                                     ["-i"] + environment.map { "\($0)=\($1)" } + [agent.path] + arguments, timeout: 20)
    }

    func testHelpDescribesEveryOption() throws {
        let result = try run(["--help"])
        XCTAssertEqual(result.status, 0)
        for option in ["--socket", "--output", "--record", "--frames", "--duration", "--display", "--monitor", "--region",
                       "--list-monitors", "--cursor", "--fps", "--scale", "--max-size", "--quality", "--subsampling",
                       "--keepalive", "--orientation", "--log-level", "--paint-over-quality", "--shm", "--stats-interval", "--format"] {
            XCTAssertTrue(result.stdout.contains(option), "--help does not mention \(option)")
        }
        XCTAssertTrue(result.stdout.contains("--format jpeg|i420|shm"), "--help names the shm format")
        XCTAssertTrue(result.stdout.contains("a --socket no call could serve"), "the exit-64 list names --socket")
        XCTAssertEqual(try run(["-h"]).stdout, result.stdout)
    }

    func testBadOptionsExit64WithOneLineAndAPointerToHelp() throws {
        let cases: [([String], String)] = [
            (["--bogus"], "unknown option '--bogus'"),
            (["--quality", "0"], "--quality must be a whole number from 1 to 100, not '0'"),
            (["--fps", "fast"], "--fps must be a number"),
            (["--scale", "2"], "--scale must be a number from 0.01 to 1.0, not '2'"),
            (["--stats-interval", "0.05"], "--stats-interval must be 0 (none) or from 0.1 to 86400 seconds, not '0.05'"),
            (["--stats-interval", "86401"], "--stats-interval must be 0 (none) or from 0.1 to 86400 seconds, not '86401'"),
            (["--max-size", "12x"], "--max-size must be WxH"),
            (["--scale", "0.5", "--max-size", "640x480"], "--scale and --max-size exclude each other"),
            (["--subsampling", "422"], "--subsampling must be 420 or 444, not '422'"),
            (["--format", "png"], "--format must be jpeg, i420 or shm, not 'png'"),
            (["--format", "shm", "--output", "x.frames"], "--output cannot record --format shm (the picture is in shared memory); use jpeg or i420"),
            (["--format", "shm", "--record", "x.frames"], "--record cannot record --format shm"),
            (["--format", "shm", "--subsampling", "444"], "--subsampling is for JPEG frames; --format shm sends raw pictures"),
            (["--format", "i420", "--quality", "50"], "--quality is for JPEG frames; --format i420 sends raw pictures"),
            (["--format", "i420", "--paint-over-delay", "2"], "--paint-over-delay is for JPEG frames"),
            (["--cursor", "maybe"], "--cursor must be on or off, not 'maybe'"),
            (["--region", "1,2,3"], "--region must be X,Y,W,H"),
            (["--region", "0,0,10,10", "--monitor", "0"], "--monitor and --region exclude each other"),
            (["--orientation", "256"], "--orientation must be a whole number from 0 to 255"),
            (["--keepalive", "0"], "--keepalive must be a number"),
            (["--frames", "0"], "--frames must be a whole number"),
            (["--output", "a.frames", "--socket", "/tmp/x.sock"], "--output and --socket exclude each other"),
            (["--output", "a.frames", "--record", "b.frames"], "--output and --record exclude each other"),
            (["--socket", "relative.sock"], "--socket: socket path 'relative.sock' is relative"),
            // No call could ever serve these (it creates only the socket's own folder, never replaces a file):
            // waiting for one would be forever.
            (["--socket", "/nonexistent-\(getpid())/d/a.sock"],
             "--socket: cannot create the socket folder '/nonexistent-\(getpid())/d': '/nonexistent-\(getpid())' does not exist"),
            (["--socket", "/tmp"], "--socket: '/tmp' exists and is not a socket; not replacing it"),
            (["--log-level", "loud"], "--log-level must be debug, info, warn or error"),
            (["extra"], "unexpected argument 'extra'"),
            (["--format", "--display", ":0"], "option '--format' needs a value (found the option '--display' instead)"),
            (["--fps", "--cursor=off"], "option '--fps' needs a value (found the option '--cursor' instead)"),
            (["--fps"], "option '--fps' needs a value"),
        ]
        for (arguments, reason) in cases {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
            XCTAssertEqual(lines.count, 3, "\(arguments): one reason line, the --help line, the final newline: \(result.stderr)")
            XCTAssertTrue(lines.first?.hasPrefix("screencast-agent: \(reason)") ?? false, "\(arguments): \(result.stderr)")
            XCTAssertEqual(lines.dropFirst().first, "Try 'screencast-agent --help'.")
        }
    }

    /// No display at all (DISPLAY unset or empty, no --display) is bad usage: exit 64, the reason saying how
    /// to name one, and the pointer to --help; nothing else is written, and no dump file is created.
    func testNoDisplayExits64AndSaysHowToNameOne() throws {
        let expected = "screencast-agent: no X display: DISPLAY is not set and no --display was given; "
            + "name the X server with --display :N (e.g. --display :0)\nTry 'screencast-agent --help'.\n"
        let dump = "/tmp/never-written-\(getpid()).frames"
        let result = try run(["--output", dump], environment: ["PATH": "/usr/bin:/bin"])
        XCTAssertEqual(result.status, 64)
        XCTAssertEqual(result.stderr, expected)
        XCTAssertEqual(result.stdout, "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dump))
        // With the socket as output, and with DISPLAY set but empty: the same, before the sender starts.
        let folder = "/tmp/screencast-agent-test-\(getpid())"
        let socket = try run(["--socket", "\(folder)/agent.sock"], environment: ["PATH": "/usr/bin:/bin", "DISPLAY": ""])
        XCTAssertEqual(socket.status, 64)
        XCTAssertEqual(socket.stderr, expected)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder))
        // --list-monitors needs a display as much.
        let monitors = try run(["--list-monitors"], environment: ["PATH": "/usr/bin:/bin"])
        XCTAssertEqual(monitors.status, 64)
        XCTAssertEqual(monitors.stderr, expected)
    }

    /// A display that cannot be used fails before the dump file is opened: an existing file is kept.
    func testFailingDisplayLeavesAnExistingDumpAlone() throws {
        let path = "/tmp/precious-\(getpid()).frames"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        for option in ["--output", "--record"] {
            let result = try run(["--display", ":4093", option, path])
            XCTAssertEqual(result.status, 1, option)
            XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "keep me", option)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/tmp/never-written-\(getpid()).frames"))
    }

    func testUnreachableDisplayExits1WithOneLine() throws {
        // A display number far above anything a test server takes; its socket does not exist.
        let result = try run(["--display", ":4093", "--output", "/tmp/never-written-\(getpid()).frames"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr,
                       "screencast-agent: cannot open X display ':4093': connection refused or broken (is the X server running?)\n")
        let list = try run(["--display", ":4093", "--list-monitors"])
        XCTAssertEqual(list.status, 1)
        XCTAssertEqual(list.stderr.split(separator: "\n").count, 1, list.stderr)
    }

    /// A display name xcb cannot parse is the command line's fault (64); a display that does not answer is
    /// a runtime failure (1, `testUnreachableDisplayExits1WithOneLine`).
    func testBadDisplayNameIsBadUsage() throws {
        for arguments in [["--display", "not a display", "--output", "/tmp/never-written-\(getpid()).frames"],
                          ["--display", "not a display", "--list-monitors"]] {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 64, "\(arguments)")
            XCTAssertEqual(result.stderr, "screencast-agent: cannot open X display 'not a display': bad display name\n"
                + "Try 'screencast-agent --help'.\n", "\(arguments)")
        }
    }

    /// A dump in a missing folder is the command line's fault and is said first (64), before the display is
    /// tried (an unusable display is a runtime failure, 1); under X in `AgentUnderXTests`.
    func testADumpInAMissingFolderIsReportedBeforeAnUnusableDisplay() throws {
        let result = try run(["--display", ":4093", "--output", "/nonexistent-folder/x.frames"])
        XCTAssertEqual(result.status, 64, result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 2, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("screencast-agent: --output: folder '/nonexistent-folder' does not exist"), result.stderr)
    }
}
