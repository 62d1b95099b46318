import Foundation
import ScreencastSupport
import TestSupport
import XCTest

/// ``ConfigFile`` (the TOML subset of call.toml and agent.toml) and ``ProgramSettings`` (the file under the
/// command line), in memory; then the programs with a file, as a user runs them.
final class ConfigFileTests: XCTestCase {
    func testValuesOfTheSubset() throws {
        let text = """
            # a comment\r
            bitrate = 2_500   # kbps\r
            min-bitrate = -0
            max-fps = 12.5
            big = 1e3
            small = -2.5E-2
            share = true
            off = false
            source = "file:/srv/a \\"b\\"\\\\c\\t\\u00e9\\U0001F600"
            token = 'C:\\raw'
            ice-address = [ "192.0.2.7", '127.0.0.1', ]
            empty = []

            """
        let entries = try ConfigFile.parse(text)
        XCTAssertEqual(entries.map(\.key), ["bitrate", "min-bitrate", "max-fps", "big", "small", "share", "off", "source", "token", "ice-address", "empty"])
        XCTAssertEqual(entries.map(\.line), [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
        XCTAssertEqual(entries.map(\.value), [
            .integer(2500), .integer(0), .float(12.5), .float(1000), .float(-0.025), .boolean(true), .boolean(false),
            .string("file:/srv/a \"b\"\\c\té😀"), .string("C:\\raw"), .strings(["192.0.2.7", "127.0.0.1"]), .strings([]),
        ])
    }

    func testEachBreakOfTheSubsetNamesItsLine() {
        let cases: [(String, String)] = [
            ("[call]", "tables are not supported"),
            ("a.b = 1", "dotted keys are not supported"),
            ("\"a\" = 1", "quoted keys are not supported"),
            ("a = 1\na = 2", "'a' is set twice (first on line 3)"),
            ("bitrate", "'bitrate' has no '= value'"),
            ("bitrate 12", "expected '=' after 'bitrate'"),
            ("a =", "a key without a value"),
            ("a = 1 2", "unexpected text after the value of 'a'"),
            ("a = 012", "'012' is not a value"),
            ("a = 1__0", "'1__0' is not a value"),
            ("a = _1", "'_1' is not a value"),
            ("a = 1.", "'1.' is not a value"),
            ("a = yes", "'yes' is not a value"),
            ("a = \"open", "a string without its closing \""),
            ("a = \"\"\"x\"\"\"", "multi-line strings are not supported"),
            ("a = [\"x\",", "an array must close on its line"),
            ("a = [1, 2]", "arrays hold strings only"),
            ("a = {b = 1}", "inline tables are not supported"),
            ("a = \"\\q\"", "unknown escape \\q"),
            ("a = \"\\uD800\"", "is not a Unicode scalar value"),
            ("a = \"\\u12\"", "\\u needs 4 hexadecimal digits"),
            ("a = \"x\u{01}\"", "a control character (U+1) in a string"),
            ("a = 1 # \u{07}", "a control character (U+7) in a comment"),
            ("= 1", "expected a key"),
        ]
        for (text, reason) in cases {
            let lines = "# first\n\n" + text
            XCTAssertThrowsError(try ConfigFile.parse(lines), text) { error in
                guard let error = error as? ConfigFile.ParseError else { return XCTFail("\(error)") }
                XCTAssertTrue(error.reason.contains(reason), "\(text): \(error.reason)")
                XCTAssertEqual(error.line, text.contains("\n") ? 4 : 3, text)
            }
        }
        XCTAssertThrowsError(try ConfigFile.parse(String(repeating: "#", count: ConfigFile.maximumBytes + 1))) { error in
            XCTAssertEqual((error as? ConfigFile.ParseError)?.line, 0)
        }
        let many = "a = [" + Array(repeating: "\"x\"", count: ConfigFile.maximumArrayElements + 1).joined(separator: ",") + "]"
        XCTAssertThrowsError(try ConfigFile.parse(many)) { XCTAssertTrue("\($0)".contains("more than 256 values"), "\($0)") }
        XCTAssertNoThrow(try ConfigFile.parse("a = [" + Array(repeating: "\"x\"", count: 256).joined(separator: ",") + "]"))
    }

    // MARK: The file under the command line

    private let options: Set<String> = ["bitrate", "max-fps", "ice-address", "token", "source"]
    private let flags: Set<String> = ["share", "https"]

    private func settings(_ file: String, _ commandLine: [String]) throws -> ProgramSettings {
        let folder = try TemporaryDirectory(prefix: "sc-config")
        let path = folder.path("call.toml")
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(file.utf8)))
        return try ProgramSettings.load(["--config", path] + commandLine, program: "call", options: options, flags: flags, environment: [:])
    }

    func testTheCommandLineOverridesTheFile() throws {
        let file = "bitrate = 2500\nmax-fps = 12.5\nshare = true\nhttps = false\nice-address = [\"a\", \"b\"]\ntoken = 'x y'\n"
        let plain = try settings(file, [])
        XCTAssertEqual(plain.words, ["--bitrate=2500", "--max-fps=12.5", "--share", "--ice-address=a", "--ice-address=b", "--token=x y"])
        let over = try settings(file, ["--bitrate", "99", "--ice-address=c", "--print-config"])
        XCTAssertTrue(over.printConfig)
        XCTAssertEqual(over.words, ["--max-fps=12.5", "--share", "--token=x y", "--bitrate", "99", "--ice-address=c"],
                       "an option on the command line replaces all of the file's values")
        XCTAssertEqual(over.toml(program: "screencast-call").split(separator: "\n").dropFirst(2), [
            "max-fps = 12.5", "share = true", "token = \"x y\"", "bitrate = 99", "ice-address = \"c\"",
        ])
        // What --print-config writes reads back to the same settings.
        let printed = try settings(over.toml(program: "screencast-call"), [])
        XCTAssertEqual(printed.words, ["--max-fps=12.5", "--share", "--token=x y", "--bitrate=99", "--ice-address=c"])
        let both = try settings("ice-address = [\"a\", \"b\"]\n", [])
        XCTAssertTrue(both.toml(program: "p").hasSuffix("ice-address = [\"a\", \"b\"]\n"))
    }

    func testKeysAreTheProgramsOptions() throws {
        for (file, reason) in [
            ("\nbitrat = 3", ":2: unknown key 'bitrat': the program has no option --bitrat"),
            ("share = \"yes\"", ":1: 'share' is a switch: true or false"),
            ("bitrate = true", ":1: 'bitrate' takes a value (--bitrate VALUE), not true or false"),
            ("config = \"x\"", ":1: 'config' is for the command line only"),
            ("max-fps = inf", ":1: 'max-fps' must be a finite number"),
            ("[call]", ":1: tables are not supported"),
        ] {
            XCTAssertThrowsError(try settings(file, []), file) { error in
                let text = (error as? UsageError)?.reason ?? "\(error)"
                XCTAssertTrue(text.contains("call.toml" + reason), text)
            }
        }
        // A bad value is the program's to find; it is then said with the file's line, unless the command line set it.
        let fromFile = try settings("# x\nbitrate = 0\n", [])
        XCTAssertTrue(fromFile.attributed(UsageError("--bitrate must be from 1, not '0'")).reason.hasSuffix("call.toml:2: --bitrate must be from 1, not '0'"))
        XCTAssertEqual(fromFile.attributed(UsageError("--max-fps bad")).reason, "--max-fps bad")
        let overridden = try settings("bitrate = 0\n", ["--bitrate=0"])
        XCTAssertEqual(overridden.attributed(UsageError("--bitrate must be from 1, not '0'")).reason, "--bitrate must be from 1, not '0'")

        XCTAssertThrowsError(try ProgramSettings.load(["--config", "/nonexistent/c.toml"], program: "call", options: options, flags: flags)) {
            XCTAssertTrue("\($0)".hasPrefix("--config: '/nonexistent/c.toml': "), "\($0)")
        }
        XCTAssertEqual(ProgramSettings.defaultPath(program: "call", environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]), "/x/screencast/call.toml")
        XCTAssertEqual(ProgramSettings.defaultPath(program: "agent", environment: ["XDG_CONFIG_HOME": "rel", "HOME": "/h"]),
                       "/h/.config/screencast/agent.toml")
        let none = try ProgramSettings.load(["--share"], program: "call", options: options, flags: flags, environment: ["HOME": "/nonexistent"])
        XCTAssertNil(none.file)
        XCTAssertEqual(none.words, ["--share"])
    }

    // MARK: The programs

    /// Every option `--help` lists can be set in the file (no key is unknown, each switch takes true, each other
    /// option a value), for the call and the agent; the default file is read from XDG_CONFIG_HOME; a bad value in
    /// it is exit 64 with the file and line.
    func testEveryOptionOfTheHelpIsAKeyAndTheDefaultFileIsRead() throws {
        let folder = try TemporaryDirectory(prefix: "sc-config")
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.path("screencast"), withIntermediateDirectories: true)
        for program in ["call", "agent"] {
            let executable = TestPaths.executable("screencast-" + program)
            let help = try ProcessRunner.run(executable, ["--help"]).stdout
            // `  --name ARG   text` or `  --name   text`: an argument word in capitals or a|b choices means a value.
            let pattern = try NSRegularExpression(pattern: #"^ {2}(--[a-z0-9-]+)((?:, --[a-z0-9-]+)*)( [A-Z]|[ ]?[a-z0-9]+\||  |$)"#,
                                                  options: [.anchorsMatchLines])
            // Every option in one file: the keys are checked (unknown, switch or value) before any value is, so
            // one run per program says whether each is a key; the values ("1") may then be refused, with the line.
            var lines: [String] = []
            var seen = Set<String>()  // an option listed twice (--record FILE.mp4, --record FILE.webm) is one key
            for match in pattern.matches(in: help, range: NSRange(help.startIndex..., in: help)) {
                let names = ([String(help[Range(match.range(at: 1), in: help)!])]
                    + String(help[Range(match.range(at: 2), in: help)!]).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                    .map { String($0.dropFirst(2)) }
                let tail = String(help[Range(match.range(at: 3), in: help)!])
                let takesValue = tail.hasPrefix(" ") && tail != "  " || tail.contains("|")
                for name in names where !["help", "version", "config", "print-config"].contains(name) && seen.insert(name).inserted {
                    lines.append("\(name) = \(takesValue ? "\"1\"" : "true")")
                }
            }
            let file = folder.path("screencast/\(program).toml")
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))
            let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["XDG_CONFIG_HOME=" + folder.url.path, executable.path])
            XCTAssertEqual(result.status, 64, "\(program): the values are not all valid: \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("screencast-\(program): \(file):"), "\(program): said with the file and line: \(result.stderr)")
            for refusal in ["unknown key", "is a switch", "takes a value", "is for the command line only", "set twice"] {
                XCTAssertFalse(result.stderr.contains(refusal), "\(program): \(result.stderr)")
            }
            let checked = lines.count
            XCTAssertGreaterThan(checked, program == "call" ? 50 : 25, program)
        }
        // The default file under the command line, as --print-config shows it.
        try Data("max-fps = 12.5\nbitrate = 2500\nexit-when-source-ends = true\n".utf8).write(to: URL(fileURLWithPath: folder.path("screencast/call.toml")))
        let shown = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["XDG_CONFIG_HOME=" + folder.url.path, TestPaths.executable("screencast-call").path, "--bitrate", "99", "--print-config"])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertEqual(shown.stdout.split(separator: "\n").dropFirst(2), ["max-fps = 12.5", "exit-when-source-ends = true", "bitrate = 99"])
        XCTAssertTrue(shown.stdout.hasPrefix("# screencast-call: the effective settings (\(folder.path("screencast/call.toml")), then"), shown.stdout)
        // The default file, a bad value in it.
        try Data("# call\n\nbitrate = 0\n".utf8).write(to: URL(fileURLWithPath: folder.path("screencast/call.toml")))
        let bad = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["XDG_CONFIG_HOME=" + folder.url.path, TestPaths.executable("screencast-call").path])
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.hasPrefix("screencast-call: \(folder.path("screencast/call.toml")):3: --bitrate must be "), bad.stderr)
        let agent = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["XDG_CONFIG_HOME=" + folder.url.path, TestPaths.executable("screencast-agent").path, "--config", folder.path("nope.toml")])
        XCTAssertEqual(agent.status, 64)
        XCTAssertTrue(agent.stderr.hasPrefix("screencast-agent: --config: '\(folder.path("nope.toml"))': "), agent.stderr)
    }
}
