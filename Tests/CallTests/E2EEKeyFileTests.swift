import Foundation
import Glibc
import TestSupport
import XCTest

/// `--e2ee-key-file`: the passphrase comes from a file only its owner can access, is never printed, and
/// SIGHUP reads it again and rotates the key index; a refused file at start is a usage fault (64).
final class E2EEKeyFileTests: CallTestCase {
    private var call: URL { TestPaths.executable("screencast-call") }
    private let secret = "s3cret passphrase for the test"

    /// Writes `bytes` to the folder's key file with `mode` and returns its path.
    @discardableResult
    private func keyFile(_ bytes: [UInt8], mode: mode_t = 0o600, name: String = "key") -> String {
        let path = folder.path(name)
        unlink(path)
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        XCTAssertEqual(chmod(path, mode), 0)
        return path
    }

    func testKeyFilesThatCannotBeUsedAreUsageFaults() throws {
        let text = Array((secret + "\n").utf8)
        let directory = folder.path("dir")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let cases: [(String, [String], String)] = [
            ("missing", ["--e2ee-key-file", folder.path("none")], "cannot open key file \(folder.path("none")): No such file or directory"),
            ("0644", ["--e2ee-key-file", keyFile(text, mode: 0o644, name: "a")], "has mode 0644: group or others have access to it; run chmod 600"),
            ("0604", ["--e2ee-key-file", keyFile(text, mode: 0o604, name: "b")], "has mode 0604"),
            ("0620", ["--e2ee-key-file", keyFile(text, mode: 0o620, name: "c")], "has mode 0620"),
            ("0601", ["--e2ee-key-file", keyFile(text, mode: 0o601, name: "d")], "has mode 0601"),
            ("directory", ["--e2ee-key-file", directory], "is not a regular file"),
            ("empty", ["--e2ee-key-file", keyFile([], name: "e")], "is empty: write the passphrase in it"),
            ("only a newline", ["--e2ee-key-file", keyFile([0x0A], name: "f")], "is empty"),
            ("two lines", ["--e2ee-key-file", keyFile(Array((secret + "\nmore\n").utf8), name: "g")], "must hold the passphrase on one line"),
            ("a NUL", ["--e2ee-key-file", keyFile(Array("ab".utf8) + [0] + Array("cd".utf8), name: "h")], "on one line"),
            ("not UTF-8", ["--e2ee-key-file", keyFile([0x61, 0xFF, 0x62], name: "i")], "is not UTF-8 text"),
            ("4097 bytes", ["--e2ee-key-file", keyFile(Array(repeating: 0x61, count: 4097), name: "j")], "holds 4097 bytes, more than the 4096"),
            ("no file name", ["--e2ee-key-file", ""], "--e2ee-key-file needs a file name"),
            ("salt alone", ["--e2ee-salt", "x"], "--e2ee-salt needs --e2ee-key-file"),
            ("index alone", ["--e2ee-key-index", "3"], "--e2ee-key-index needs --e2ee-key-file"),
            ("index 16", ["--e2ee-key-file", keyFile(text, name: "k"), "--e2ee-key-index", "16"], "--e2ee-key-index must be"),
            ("empty salt", ["--e2ee-key-file", keyFile(text, name: "l"), "--e2ee-salt", ""], "--e2ee-salt must be non-empty"),
        ]
        for (name, arguments, reason) in cases {
            let result = try ProcessRunner.run(call, arguments + ["--http", "off", "--socket", socket], timeout: 10)
            XCTAssertEqual(result.status, 64, "\(name): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(reason), "\(name): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasSuffix("Try 'screencast-call --help'.\n"), "\(name): \(result.stderr)")
            XCTAssertFalse(result.stderr.contains(secret), "\(name): the passphrase must never be printed")
        }
        let help = try ProcessRunner.run(call, ["--help"]).stdout
        for option in ["--e2ee-key-file FILE", "--e2ee-salt S", "--e2ee-key-index N", "SIGHUP"] {
            XCTAssertTrue(help.contains(option), option)
        }
    }

    /// 4096 bytes (the limit) and a CRLF line end are accepted; the call says e2ee is on, never the key.
    func testTheLargestPassphraseAndCRLFAreAccepted() throws {
        for (name, bytes) in [("limit", Array(repeating: UInt8(0x7A), count: 4096)), ("crlf", Array((secret + "\r\n").utf8))] {
            let running = try startCall(["--e2ee-key-file", keyFile(bytes, mode: 0o400, name: name), "--e2ee-key-index", "5"])
            let line = try XCTUnwrap(running.waitForLine("end-to-end encryption on"), running.logText)
            XCTAssertEqual(field("key.index", in: line), "5")
            XCTAssertEqual(field("salt", in: line), "default")
            running.signal(SIGTERM)
            XCTAssertEqual(running.waitForExit(), 0)
            XCTAssertFalse(running.logText.contains(secret) || running.logText.contains(String(repeating: "z", count: 64)))
        }
    }

    /// SIGHUP with frames flowing: the file is read again and the next key index starts at a keyframe
    /// (15, then 0: the ring wraps); a file that became readable by others is refused and the key kept.
    func testSIGHUPRotatesTheKeyAndABadFileKeepsIt() throws {
        let path = keyFile(Array((secret + "\n").utf8))
        let running = try startCall(["--e2ee-key-file", path, "--e2ee-key-index", "14", "--e2ee-salt", "my-salt",
                                     "--source", "testpattern", "--pattern-size", "160x120"])
        XCTAssertEqual(running.waitForLine("end-to-end encryption on").flatMap { field("salt", in: $0) }, "custom")
        keyFile(Array("the next passphrase".utf8))
        running.signal(SIGHUP)
        XCTAssertEqual(running.waitForLine("e2ee key rotated").flatMap { field("key.index", in: $0) }, "15", running.logText)
        running.signal(SIGHUP)
        XCTAssertEqual(running.waitForLine("e2ee key rotated", occurrence: 2).flatMap { field("key.index", in: $0) }, "0", running.logText)
        XCTAssertEqual(chmod(path, 0o644), 0)
        running.signal(SIGHUP)
        let refused = try XCTUnwrap(running.waitForLine("e2ee key not rotated"), running.logText)
        XCTAssertTrue(refused.hasPrefix("error "), refused)
        XCTAssertTrue(refused.contains("has mode 0644"), refused)
        XCTAssertTrue(running.process.isRunning, "a bad file on SIGHUP does not end the call")
        running.signal(SIGTERM)
        XCTAssertEqual(running.waitForExit(), 0)
        XCTAssertEqual(running.log.filter { $0.contains("e2ee key rotated") }.count, 2)
        XCTAssertFalse(running.logText.contains(secret) || running.logText.contains("the next passphrase"))
    }

    /// Without e2ee, SIGHUP (a closed terminal) stops the call cleanly, as SIGTERM does.
    func testSIGHUPWithoutE2EEStopsTheCall() throws {
        let running = try startCall([])
        running.signal(SIGHUP)
        XCTAssertEqual(running.waitForExit(), 0)
        XCTAssertNotNil(running.log.first { $0.contains("stopping") && $0.contains("reason=SIGHUP") }, running.logText)
    }
}
