import Foundation
import FrameWire
import Glibc
import Media
import TestSupport
import XCTest

/// `screencast-call` against what a robustness pass threw at it: giant pictures, empty connections,
/// files that are no dump, a recording that cannot be written, option values out of range.
final class CallLimitsTests: CallTestCase {
    private var call: URL { TestPaths.executable("screencast-call") }

    func testLimitOptionsAndTheStatsIntervalAreChecked() throws {
        let help = try ProcessRunner.run(call, ["--help"])
        for option in ["--max-encode-size", "--max-decode-pixels", "--second-encoding on|off"] {
            XCTAssertTrue(help.stdout.contains(option), option)
        }
        for (arguments, reason) in [
            (["--stats-interval", "0.05"], "--stats-interval must be 0 (none) or from 0.1 to 86400 seconds, not '0.05'"),
            (["--stats-interval", "0.0001"], "--stats-interval must be 0 (none) or from 0.1 to 86400 seconds"),
            (["--stats-interval", "-1"], "--stats-interval must be 0 (none) or from 0.1 to 86400 seconds, not '-1'"),
            (["--max-encode-size", "8x8"], "--max-encode-size must be WxH within 16x16...16384x16384, not '8x8'"),
            (["--max-encode-size", "3840"], "--max-encode-size must be WxH"),
            (["--max-decode-pixels", "0"], "--max-decode-pixels must be a pixel count or WxH"),
            (["--max-decode-pixels", "20000x20000"], "--max-decode-pixels must be a pixel count or WxH"),
            // Sides whose product overflows a 64-bit integer, signs, and one side over 16384 are usage errors too.
            (["--max-decode-pixels", "4294967296x4294967296"], "--max-decode-pixels must be a pixel count or WxH"),
            (["--max-decode-pixels", "3037000500x3037000500"], "--max-decode-pixels must be a pixel count or WxH"),
            (["--max-decode-pixels", "+5x+5"], "--max-decode-pixels must be a pixel count or WxH"),
            (["--max-decode-pixels", "+500"], "--max-decode-pixels must be a pixel count or WxH"),
            (["--max-decode-pixels", "16385x1"], "--max-decode-pixels must be a pixel count or WxH"),
            (["--max-decode-pixels", "99999999999999999999999"], "--max-decode-pixels must be a pixel count or WxH"),
            (["--max-encode-size", "99999999999x99999999999"], "--max-encode-size must be WxH"),
            (["--second-encoding", "yes"], "--second-encoding must be on or off, not 'yes'"),
        ] {
            let result = try ProcessRunner.run(call, arguments, timeout: 10)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("screencast-call: \(reason)"), "\(arguments): \(result.stderr)")
        }
    }

    /// Bad SFU options are usage errors (exit 64) that say what is wrong, before anything starts.
    func testBadSFUOptionsAreUsageErrors() throws {
        for (arguments, reason) in [
            (["--whip", "ftp://sfu.example/whip"], "--whip needs an http:// or https:// URL with a host and no spaces, not 'ftp://sfu.example/whip'"),
            // Never requestable, so never worth a retry (a break-it trial saw both retried every 10 s for ever).
            (["--whip", "http://"], "--whip needs an http:// or https:// URL with a host and no spaces, not 'http://'"),
            (["--whip", "http://x y/whip"], "--whip needs an http:// or https:// URL with a host and no spaces, not 'http://x y/whip'"),
            (["--whip", "http://h:port/whip"], "--whip needs an http:// or https:// URL with a host and no spaces"),
            // Forms libcurl refuses only at the request ("URL using bad/illegal format"), retried for ever before.
            (["--whip", "http://x:99999/"], "--whip needs an http:// or https:// URL with a host and no spaces, not 'http://x:99999/': the port must be a number of 1–65535, not '99999'"),
            (["--whip", "http://[::1"], "--whip needs an http:// or https:// URL with a host and no spaces, not 'http://[::1': an IPv6 address must be closed with ']'"),
            (["--janus", "http://x%00/", "--janus-room", "5"], "--janus needs an http:// or https:// URL with a host and no spaces, not 'http://x%00/': the host 'x%00'"),
            (["--whip", "http://127.0.0.1:9/whip", "--whip-token", "two words"], "--whip-token must be non-empty printable ASCII without spaces"),
            (["--whip-token", "t"], "--whip-token needs --whip"),
            (["--whip", "http://127.0.0.1:9/whip", "--janus", "http://127.0.0.1:9/janus"], "--whip and --janus cannot go together"),
            (["--janus", "http://127.0.0.1:9/janus"], "--janus needs --janus-room N"),
            (["--janus", "http://127.0.0.1:9/janus", "--janus-room", "0"], "--janus-room must be a positive number, not '0'"),
            (["--janus", "http://127.0.0.1:9/janus", "--janus-room", "lobby"], "--janus-room must be a positive number, not 'lobby'"),
            (["--janus", "janus.example", "--janus-room", "5"], "--janus needs an http:// or https:// URL with a host and no spaces, not 'janus.example'"),
            (["--janus", "https://", "--janus-room", "5"], "--janus needs an http:// or https:// URL with a host and no spaces, not 'https://'"),
            (["--janus-room", "5"], "--janus-room needs --janus"),
            (["--janus-create-room"], "--janus-create-room needs --janus"),
            // The call's own token: no space or control byte, also a CR hidden before a combining mark (U+064C).
            (["--token", "ab\r\u{064C}cd"], "--token must be non-empty without spaces or control characters"),
            (["--token", "a\tb"], "--token must be non-empty without spaces or control characters"),
            (["--token", ""], "--token must be non-empty without spaces or control characters"),
        ] {
            let result = try ProcessRunner.run(call, arguments, timeout: 10)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("screencast-call: \(reason)"), "\(arguments): \(result.stderr)")
        }
    }

    /// A FIFO (which must not block the start) or a device given as `--source file:`: exit 1 with "cannot
    /// read dump PATH: reason"; a folder or a missing file is the command line's fault: exit 64 with its reason.
    func testFileSourcesThatAreNoDumpFailWithTheirReason() throws {
        let fifo = folder.path("fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        try FileManager.default.createDirectory(atPath: folder.path("sub"), withIntermediateDirectories: true)
        for (path, status, message) in [
            (folder.path("sub"), 64, "screencast-call: --source: '\(folder.path("sub"))' is a folder, not a file\n"),
            (folder.path("none.frames"), 64, "screencast-call: --source: '\(folder.path("none.frames"))': No such file or directory\n"),
            (fifo, 1, "screencast-call: cannot read dump \(fifo): not a regular file (a FIFO)\n"),
            ("/dev/null", 1, "screencast-call: cannot read dump /dev/null: not a regular file (a device)\n"),
        ] {
            let result = try ProcessRunner.run(call, ["--socket", socket, "--http", "off", "--source", "file:\(path)"], timeout: 10)
            XCTAssertFalse(result.timedOut, path)
            XCTAssertEqual(result.status, Int32(status), "\(path): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(message), "\(path): \(result.stderr)")
        }
    }

    /// `--record-ivf /dev/full`: the failure is logged when it happens, the call goes on, and it exits 1.
    func testARecordingThatCannotBeWrittenMakesTheCallExit1() throws {
        let dump = folder.path("three.frames")
        try Data(try makeDump((0..<3).map {
            DumpFrame(picture: makeDesktop(width: 160, height: 96, variant: $0), timestamp: 1_000_000 + UInt64($0) * 50_000)
        })).write(to: URL(fileURLWithPath: dump))
        let run = try RunningCall(["--socket", socket, "--http", "off", "--source", "file:\(dump)", "--exit-when-source-ends",
                                   "--record-ivf", "/dev/full", "--stats-interval", "0"])
        XCTAssertEqual(run.waitForExit(timeout: 20), 1, run.logText)
        XCTAssertEqual(run.log.filter { $0.contains("recording failed") }.count, 1, run.logText)
        XCTAssertNotNil(run.log.first { $0.contains("the recording is incomplete") && $0.contains("No space left on device") }, run.logText)
        XCTAssertNotNil(run.log.first { $0.contains("info stats final ") }, "the call itself ran to its end")
    }

    /// One valid 16383×16383 JPEG header (as on the wire) is refused unread; pictures above
    /// `--max-encode-size` are encoded downscaled, keeping their aspect ratio.
    func testGiantPicturesAreRefusedAndLargeOnesEncodedDownscaled() throws {
        var jpeg = try JPEGEncoder().encode(makeDesktop(width: 64, height: 48, variant: 1), quality: 80)
        let sof = try XCTUnwrap((0..<jpeg.count - 9).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg.replaceSubrange(sof + 5...sof + 8, with: [0x3F, 0xFF, 0x3F, 0xFF])  // 16383 × 16383
        var bytes = FrameEncoder.encode(
            header: FrameHeader(contentLength: jpeg.count, bufferWidth: 16383, bufferHeight: 16383, timestampMicros: 900_000), body: jpeg)
        bytes += try makeDump((0..<4).map {
            DumpFrame(picture: makeDesktop(width: 640, height: 360, variant: $0), timestamp: 1_000_000 + UInt64($0) * 100_000)
        })
        let dump = folder.path("giant.frames")
        try Data(bytes).write(to: URL(fileURLWithPath: dump))
        let ivf = folder.path("out.ivf")
        let stats = folder.path("stats.json")
        let run = try startCall(["--record-ivf", ivf, "--exit-when-source-ends", "--stats-interval", "0", "--stats-file", stats,
                                 "--max-encode-size", "320x320"])
        try replay(dump, socket: socket)
        XCTAssertEqual(run.waitForExit(timeout: 20), 0, run.logText)
        let json = try readStats(stats)
        XCTAssertEqual(number(json, "frames", "received"), 5)
        XCTAssertEqual(number(json, "frames", "decoded"), 4)
        XCTAssertEqual(number(json, "dropped", "tooLarge"), 1)
        XCTAssertEqual(number(json, "dropped", "decodeError"), 0)
        // Each picture is encoded downscaled, or (a loaded machine, the encoder still busy) replaced by the
        // next one while it waited and counted as stale.
        let stale = number(json, "dropped", "stale") ?? 0
        XCTAssertLessThan(stale, 4, "at least the last picture is encoded")
        XCTAssertEqual(number(json, "frames", "downscaled"), 4 - stale)
        XCTAssertEqual(run.log.filter { $0.contains("exceeds the decode budget") && $0.contains("jpeg=16383x16383") }.count, 1, run.logText)
        XCTAssertEqual(run.log.filter { $0.contains("downscaled from=640x360 to=320x180") }.count, 1, run.logText)
        let (_, frames) = try decodeIVF(ivf)
        // libvpx's rate control may drop some at the 150-kbps default of this size (counted).
        let rateDropped = number(json, "dropped", "encoder") ?? 0
        XCTAssertGreaterThanOrEqual(frames.count, 4 - stale - rateDropped)
        XCTAssertGreaterThanOrEqual(frames.count, 1)
        XCTAssertTrue(frames.allSatisfy { $0.picture.width == 320 && $0.picture.height == 180 })
        XCTAssertEqual(frames.filter(\.keyframe).count, 1)
    }

    /// 100 connections that connect and close with `--source testpattern`: the pattern goes on, with no
    /// keyframe and no switch for them.
    func testManyEmptyConnectionsCostNoKeyframes() throws {
        let stats = folder.path("stats.json")
        let run = try startCall(["--source", "testpattern", "--pattern-size", "320x240", "--pattern-fps", "15",
                                 "--stats-interval", "0", "--stats-file", stats])
        XCTAssertNotNil(run.waitForLine("encoder created"), run.logText)
        for _ in 0..<100 {
            let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            XCTAssertGreaterThanOrEqual(fd, 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: Array(self.socket.utf8).prefix(raw.count - 1)) }
            let status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            XCTAssertEqual(status, 0)
            close(fd)
            usleep(5_000)
        }
        usleep(800_000)
        run.signal(SIGTERM)
        XCTAssertEqual(run.waitForExit(timeout: 10), 0, run.logText)
        let json = try readStats(stats)
        XCTAssertEqual(number(json, "frames", "keyframes"), 1, run.logText)
        XCTAssertGreaterThan(number(json, "screen", "connections") ?? 0, 0)
        XCTAssertEqual(number(json, "screen", "sendersTotal"), 0, "no connection sent a frame")
        XCTAssertEqual(number(json, "screen", "senders"), 0)
        XCTAssertEqual(run.log.filter { $0.contains("source switched") || $0.contains("screen takes over") }.count, 0)
        XCTAssertLessThanOrEqual(run.log.filter { $0.contains("info screen screen sender ended") }.count, 9, "rate-limited: a burst of 8, then one per 5 s")
    }
}
