import ScreencastSupport
import XCTest

/// The scanner every executable's options go through: what it accepts, and the words of what it refuses (the
/// executables print these after `name: ` and exit 64).
final class CommandLineArgumentsTests: XCTestCase {
    private let options: Set<String> = ["socket", "bitrate", "rtmp", "max-fps", "stats-interval"]
    private let flags: Set<String> = ["help", "share"]

    private func parse(_ words: [String]) throws -> CommandLineArguments {
        try CommandLineArguments(words, options: options, flags: flags)
    }

    private func refusal(_ words: [String]) -> String? {
        do {
            _ = try parse(words)
            return nil
        } catch {
            return (error as? UsageError)?.reason ?? "\(error)"
        }
    }

    func testValuesSeparateOrInlineFlagsAndPositionalsInOrder() throws {
        let a = try parse(["one", "--socket", "/tmp/a.sock", "--bitrate=900", "--share", "two", "-", "--max-fps=", "three"])
        XCTAssertEqual(a.string("socket"), "/tmp/a.sock")
        XCTAssertEqual(a.string("bitrate"), "900")
        XCTAssertEqual(a.string("max-fps"), "", "an inline empty value is a value")
        XCTAssertTrue(a.has("share"))
        XCTAssertFalse(a.has("help"))
        XCTAssertEqual(a.positionals, ["one", "two", "-", "three"], "'-' (standard input) is a positional")
        XCTAssertNil(a.string("rtmp"))
    }

    func testARepeatedOptionKeepsEveryValueAndTheLastWins() throws {
        let a = try parse(["--rtmp", "rtmp://a/x", "--rtmp=rtmp://b/y", "--bitrate", "1", "--bitrate", "2"])
        XCTAssertEqual(a.strings("rtmp"), ["rtmp://a/x", "rtmp://b/y"])
        XCTAssertEqual(a.string("bitrate"), "2")
        XCTAssertEqual(a.strings("socket"), [])
    }

    func testAfterDoubleDashEverythingIsPositional() throws {
        let a = try parse(["--share", "--", "--socket", "-x", "--"])
        XCTAssertEqual(a.positionals, ["--socket", "-x", "--"])
        XCTAssertNil(a.string("socket"))
    }

    func testValuesMayLookLikeOptionsOnlyWhenTheyNameNone() throws {
        XCTAssertEqual(try parse(["--socket", "--odd-name"]).string("socket"), "--odd-name")
        XCTAssertEqual(try parse(["--socket=--share"]).string("socket"), "--share", "inline, the user meant it")
        XCTAssertEqual(refusal(["--socket", "--share"]), "option '--socket' needs a value (found the option '--share' instead)")
        XCTAssertEqual(refusal(["--socket", "--bitrate=3"]), "option '--socket' needs a value (found the option '--bitrate' instead)")
        XCTAssertEqual(try parse(["--socket", "-5"]).string("socket"), "-5", "a negative number is a value")
    }

    func testWhatItRefusesIsNamed() {
        XCTAssertEqual(refusal(["--nope"]), "unknown option '--nope'")
        XCTAssertEqual(refusal(["--nope=1"]), "unknown option '--nope'")
        XCTAssertEqual(refusal(["-h"]), "unknown option '-h'")
        XCTAssertEqual(refusal(["--share=yes"]), "option '--share' takes no value")
        XCTAssertEqual(refusal(["--socket"]), "option '--socket' needs a value")
    }

    func testNumbersAreReadWithinTheirRangeAndRefusedWithBoth() throws {
        let a = try parse(["--bitrate", "900", "--max-fps", "29.97"])
        XCTAssertEqual(try a.int("bitrate", in: 1...1_000_000), 900)
        XCTAssertEqual(try a.double("max-fps", in: 0.1...240), 29.97)
        XCTAssertNil(try a.int("socket", in: 0...1), "absent: nil")
        XCTAssertThrowsError(try a.int("bitrate", in: 1...500)) {
            XCTAssertEqual(($0 as? UsageError)?.reason, "--bitrate must be a whole number from 1 to 500, not '900'")
        }
        XCTAssertThrowsError(try a.int("max-fps", in: 1...60), "29.97 is not whole")
        for text in ["nan", "inf", "-inf", "1e400", "", "1,5", "five"] {
            let b = try parse(["--max-fps", text])
            XCTAssertThrowsError(try b.double("max-fps", in: 0.1...240), text)
        }
    }

    func testTheStatsIntervalIsZeroOrATenthToADay() throws {
        XCTAssertEqual(try parse(["--stats-interval", "0"]).statsInterval(), 0)
        XCTAssertEqual(try parse(["--stats-interval", "0.1"]).statsInterval(), 0.1)
        XCTAssertEqual(try parse(["--stats-interval", "86400"]).statsInterval(), 86_400)
        XCTAssertNil(try parse([]).statsInterval())
        for text in ["0.05", "86401", "-1", "x"] {
            XCTAssertThrowsError(try parse(["--stats-interval", text]).statsInterval()) {
                XCTAssertEqual(($0 as? UsageError)?.reason, "--stats-interval must be 0 (none) or from 0.1 to 86400 seconds, not '\(text)'")
            }
        }
    }

    func testExactlyThisManyPositionals() throws {
        XCTAssertEqual(try parse(["a", "b"]).positionals(exactly: 2, names: "INPUT and OUTPUT"), ["a", "b"])
        XCTAssertThrowsError(try parse(["a"]).positionals(exactly: 2, names: "INPUT and OUTPUT")) {
            XCTAssertEqual(($0 as? UsageError)?.reason, "missing INPUT and OUTPUT")
        }
        XCTAssertThrowsError(try parse(["a", "b", "c"]).positionals(exactly: 2, names: "INPUT and OUTPUT")) {
            XCTAssertEqual(($0 as? UsageError)?.reason, "unexpected argument 'c'")
        }
    }

    func testExitCodesAreTheSysexitsOnes() {
        XCTAssertEqual(ExitCode.success, 0)
        XCTAssertEqual(ExitCode.failure, 1)
        XCTAssertEqual(ExitCode.usage, 64, "EX_USAGE")
        XCTAssertEqual(UsageError("x").description, "x")
    }
}
