import FrameSocket
import Foundation
import ScreencastSupport
import TestSupport
import XCTest

/// `--help`, `help CMD`, `CMD --help`, `--version` and the bare command.
final class HelpTests: XCTestCase {
    private let tool = TestPaths.executable("screencast-dump")

    func testEachCommandHasItsOwnHelp() throws {
        for command in ["inspect", "replay", "record", "extract"] {
            for arguments in [["help", command], [command, "--help"], [command, "-h"], [command, "x", "--bogus", "--help"]] {
                let result = try ProcessRunner.run(tool, arguments)
                XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
                XCTAssertTrue(result.stdout.hasPrefix("Usage: screencast-dump \(command)"), "\(arguments): \(result.stdout)")
                XCTAssertTrue(result.stderr.isEmpty, "\(arguments): \(result.stderr)")
            }
        }
        // After `--`, `--help` is a file name.
        let file = try ProcessRunner.run(tool, ["inspect", "--", "--help"])
        XCTAssertEqual(file.status, 64, "a FILE that is not there is bad usage")
        XCTAssertTrue(file.stderr.contains("--help: No such file or directory"), file.stderr)
    }

    func testGeneralHelpVersionAndNoArguments() throws {
        for arguments in [["--help"], ["-h"], ["help"]] {
            let result = try ProcessRunner.run(tool, arguments)
            XCTAssertEqual(result.status, 0, "\(arguments)")
            XCTAssertTrue(result.stdout.hasPrefix("Usage: screencast-dump <command>"), "\(arguments): \(result.stdout)")
        }
        let bare = try ProcessRunner.run(tool, [])
        XCTAssertEqual(bare.status, 64)
        XCTAssertTrue(bare.stdout.isEmpty, bare.stdout)
        XCTAssertEqual(bare.stderr, "screencast-dump: a command is needed: inspect, extract, replay or record\n"
                       + "Try 'screencast-dump --help'.\n")
        let version = try ProcessRunner.run(tool, ["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertEqual(version.stdout, "screencast-dump \(ScreencastVersion.string)\n")
        for arguments in [["help", "frobnicate"], ["help", "inspect", "replay"]] {
            let result = try ProcessRunner.run(tool, arguments)
            XCTAssertEqual(result.status, 64, "\(arguments)")
            XCTAssertTrue(result.stderr.contains("Try 'screencast-dump --help'"), result.stderr)
        }
    }

    func testHelpDocumentsTheSocketPathAndItsDefault() throws {
        let here = try SocketPath.defaultPath().string
        for arguments in [["--help"], ["help", "replay"], ["help", "record"]] {
            let text = try ProcessRunner.run(tool, arguments).stdout
            XCTAssertTrue(text.contains("absolute"), "\(arguments)")
            XCTAssertTrue(text.contains("107 bytes"), "\(arguments)")
            XCTAssertTrue(text.contains("$XDG_RUNTIME_DIR/screencast/agent.sock"), "\(arguments)")
            XCTAssertTrue(text.contains("/tmp/screencast-$UID/agent.sock"), "\(arguments)")
            XCTAssertTrue(text.contains(here), "\(arguments): the default path here, \(here)")
        }
    }

    func testInspectHelpDocumentsTheJSONLayout() throws {
        let text = try ProcessRunner.run(tool, ["help", "inspect"]).stdout
        for word in ["\"frames\"", "\"offset\"", "\"decodeError\"", "\"timestamp\"", "\"sequence\"", "\"kind\"",
                     "Buffer-Timestamp", "Buffer-Sequence", "optional"] {
            XCTAssertTrue(text.contains(word), word)
        }
    }

    func testRecordHelpSaysWhereARecordingOfABrokenStreamEnds() throws {
        let text = try ProcessRunner.run(tool, ["record", "--help"]).stdout
        XCTAssertTrue(text.contains("16 KiB"), text)
        XCTAssertTrue(text.contains("the read that found the fault"), text)
        XCTAssertTrue(text.contains("sends nothing"), text)
    }

    /// `tools/demo --help` prints its usage without running the demo (no build, no setup).
    func testDemoHelpDoesNotRunTheDemo() throws {
        let demo = TestPaths.packageRoot.appendingPathComponent("tools/demo")
        let result = try ProcessRunner.run(demo, ["--help"], timeout: 10)
        XCTAssertFalse(result.timedOut)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.hasPrefix("Usage: tools/demo"), result.stdout)
        XCTAssertFalse(result.stdout.contains("=="), "the demo ran: \(result.stdout)")
        let bad = try ProcessRunner.run(demo, ["--bogus"], timeout: 10)
        XCTAssertEqual(bad.status, 64)
    }

    /// A busy port is reported before anything is built or started, with the option that helps; bad values
    /// of the new options are bad usage.
    func testDemoChecksItsPortFirstAndValidatesItsOptions() throws {
        let demo = TestPaths.packageRoot.appendingPathComponent("tools/demo")
        let taken = try LoopbackPort.Listener()
        let busy = try ProcessRunner.run(demo, ["--port", "\(taken.port)"], timeout: 10)
        XCTAssertEqual(busy.status, 1, busy.stderr)
        XCTAssertEqual(busy.stderr, "demo: port \(taken.port) on 127.0.0.1 is already in use; pick another with --port N (e.g. --port \(taken.port + 1))\n")
        XCTAssertFalse(busy.stdout.contains("Open the viewer"), busy.stdout)
        withExtendedLifetime(taken) {}
        // --share binds 0.0.0.0: a listener on any address blocks it (here 127.0.0.2, which 127.0.0.1 does not reach).
        let other = Pipe()
        let holder = try ProcessRunner.start(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", """
            import socket, sys, time
            s = socket.socket(); s.bind(("127.0.0.2", 0)); s.listen(1)
            print(s.getsockname()[1], flush=True); time.sleep(30)
            """], stdout: other)
        defer { ProcessRunner.terminate(holder) }
        let port = String(decoding: (POSIXPipeRead.chunk(other.fileHandleForReading.fileDescriptor) ?? Data()), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let shared = try ProcessRunner.run(demo, ["--share", "--port", port], timeout: 10)
        XCTAssertEqual(shared.status, 1, shared.stderr)
        XCTAssertEqual(shared.stderr, "demo: port \(port) on 0.0.0.0 is already in use; pick another with --port N (e.g. --port \(Int(port).map { $0 + 1 } ?? 0))\n")
        for (arguments, reason) in [
            (["--record", "/nonexistent-folder/x.ivf"], "demo: --record: folder '/nonexistent-folder' does not exist"),
            (["--ice-address"], "demo: --ice-address needs a value"),
            (["--port", "70000"], "demo: --port must be 1-65535"),
        ] {
            let result = try ProcessRunner.run(demo, arguments, timeout: 10)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").first.map(String.init), reason, "\(arguments)")
        }
    }

    /// `make-golden.py --help` prints its usage and leaves the golden files alone.
    func testMakeGoldenHelpDoesNotRegenerate() throws {
        let script = TestPaths.golden.appendingPathComponent("make-golden.py").path
        let files = try FileManager.default.contentsOfDirectory(atPath: TestPaths.golden.path).sorted()
        func stamps() throws -> [Date] {
            try files.map { try FileManager.default.attributesOfItem(atPath: TestPaths.golden.appendingPathComponent($0).path)[.modificationDate] as! Date }
        }
        let before = try stamps()
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, "--help"], timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.hasPrefix("usage: make-golden.py"), result.stdout)
        XCTAssertEqual(try stamps(), before, "--help regenerated the golden files")
    }
}
