import Foundation
import FrameWire
import Media
import TestSupport
import VideoSource
import XCTest

/// `screencast-call` as a black box: options, signals, switching, the handed cases, idle refinement.
final class CallProcessTests: CallTestCase {
    func testHelpAndBadUsage() throws {
        let call = TestPaths.executable("screencast-call")
        let help = try ProcessRunner.run(call, ["--help"])
        XCTAssertEqual(help.status, 0)
        for option in ["--socket", "--source", "--bitrate", "--max-fps", "--min-fps", "--keyframe-spacing", "--record-ivf", "--stats-interval", "--exit-when-source-ends", "--remote-candidates", "--consent-timeout", "--ice-tcp"] {
            XCTAssertTrue(help.stdout.contains(option), option)
        }
        for (arguments, reason) in [
            (["--bogus"], "unknown option '--bogus'"),
            (["--source", "camera"], "--source must be screen, testpattern or file:PATH"),
            (["--cpu-used", "4"], "--cpu-used must be negative"),
            (["--bitrate", "0"], "--bitrate must be a whole number"),
            (["--record", "/tmp/a.mp4", "--record", "/tmp/b.mp4"], "--record: two MP4 recordings ('/tmp/a.mp4', '/tmp/b.mp4'): one of each kind at most"),
            (["--record", "/tmp/a.mov"], "--record takes a FILE.mp4 or FILE.webm, not '/tmp/a.mov'"),
            (["--max-fps", "abc"], "--max-fps must be a number"),
            (["--min-q", "40", "--max-q", "20"], "--min-q (40) must not exceed --max-q (20)"),
            (["--min-fps", "12", "--max-fps", "10"], "--min-fps (12) must not exceed --max-fps (10)"),
            (["--keyframe-spacing", "61"], "--keyframe-spacing must be"),
            (["--pattern-size", "10x10"], "--pattern-size must be WxH"),
            (["--remote-candidates", "public"], "--remote-candidates must be any, private or loopback, not 'public'"),
            (["--ice-tcp", "yes"], "--ice-tcp must be on or off, not 'yes'"),
            (["--ice-address", "localhost"], "--ice-address must be an IP address, not 'localhost'"),
            // 192.0.2.1 (RFC 5737 TEST-NET-1) is on no interface: bind(2) says so, before libnice would gather nothing.
            (["--ice-address", "192.0.2.1"], "--ice-address 192.0.2.1 is not an address of this machine (Cannot assign requested address)"),
            (["--min-bitrate", "200", "--bitrate", "100"], "--min-bitrate (200) must not exceed --bitrate (100)"),
            (["--consent-timeout", "1"], "--consent-timeout must be a whole number from 2 to 300, not '1'"),
            (["--consent-timeout", "301"], "--consent-timeout must be a whole number from 2 to 300, not '301'"),
            (["extra"], "unexpected argument 'extra'"),
            (["--audio-bitrate", "5"], "--audio-bitrate must be a whole number from 6 to 510, not '5'"),
            (["--audio-bitrate", "511"], "--audio-bitrate must be a whole number from 6 to 510, not '511'"),
            (["--audio-frame-ms", "15"], "--audio-frame-ms must be 10 or 20, not 15"),
            (["--audio-test-tone", "19"], "--audio-test-tone must be a number from 20.0 to 20000.0, not '19'"),
            // A numeric host that is no address is a usage error, not a resolver failure (exit 1 before).
            (["--http", "256.0.0.1:80"], "--http: invalid HTTP endpoint '256.0.0.1:80': '256.0.0.1' is not an IPv4 address (four parts of 0–255)"),
        ] {
            let result = try ProcessRunner.run(call, arguments)
            XCTAssertEqual(result.status, 64, "\(arguments)")
            let lines = result.stderr.split(separator: "\n")
            XCTAssertEqual(lines.count, 2, "\(arguments): \(result.stderr)")
            XCTAssertTrue(lines.first?.hasPrefix("screencast-call: \(reason)") ?? false, "\(arguments): \(result.stderr)")
            XCTAssertEqual(lines.last, "Try 'screencast-call --help'.")
        }
        // A --bitrate under the default floor (150) lowers the floor: the call starts (and runs until stopped).
        let low = try ProcessRunner.run(call, ["--socket", socket, "--source", "testpattern", "--http", "off", "--bitrate", "100"], timeout: 2)
        XCTAssertTrue(low.timedOut, "--bitrate 100 alone was refused: \(low.stderr)")
        XCTAssertFalse(low.stderr.contains("must not exceed"), low.stderr)
        let missing = try ProcessRunner.run(call, ["--socket", socket, "--source", "file:\(folder.path("none.frames"))"])
        XCTAssertEqual(missing.status, 64, missing.stderr)
        XCTAssertEqual(missing.stderr, "screencast-call: --source: '\(folder.path("none.frames"))': No such file or directory\n"
            + "Try 'screencast-call --help'.\n")
        // Outputs whose folder is missing: the same rule (64), before anything starts or is logged.
        for option in ["--record-ivf", "--stats-file"] {
            let result = try ProcessRunner.run(call, ["--socket", socket, option, "/nonexistent-folder/x"])
            XCTAssertEqual(result.status, 64, "\(option): \(result.stderr)")
            XCTAssertEqual(result.stderr, "screencast-call: \(option): folder '/nonexistent-folder' does not exist (for "
                + "'/nonexistent-folder/x')\nTry 'screencast-call --help'.\n")
        }
    }

    func testSIGINTAndSIGTERMStopFlushTheIVFAndRemoveTheSocket() throws {
        for signal in [SIGINT, SIGTERM] {
            let ivf = folder.path("pattern-\(signal).ivf")
            let call = try startCall(["--source", "testpattern", "--pattern-size", "320x240", "--record-ivf", ivf,
                                      "--stats-interval", "0.5"])
            XCTAssertNotNil(call.waitForLine("info stats stats ", occurrence: 2, timeout: 10), call.logText)
            XCTAssertTrue(FileManager.default.fileExists(atPath: socket))
            call.signal(signal)
            XCTAssertEqual(call.waitForExit(timeout: 5), 0, call.logText)
            XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "socket removed")
            let final = try XCTUnwrap(call.log.last { $0.contains("info stats final ") })
            let (header, frames) = try decodeIVF(ivf)
            XCTAssertGreaterThan(frames.count, 10)
            XCTAssertEqual(header.length, ivfLength(frames.map(\.pts)), "length written at exit")
            XCTAssertEqual(field("encoded", in: final), String(frames.count))
            XCTAssertEqual([header.width, header.height], [320, 240])
            if let probe = try ffprobeFrames(ivf) {
                XCTAssertEqual(probe.count, frames.count)
                XCTAssertEqual(probe.errors, "")
            }
            // The stats line carries every number the issue lists.
            for key in ["source", "received", "decoded", "encoded", "dropped.decode", "dropped.stale", "fps", "kbps",
                        "encode.p50", "encode.p95", "queue"] {
                XCTAssertNotNil(field(key, in: final), "\(key) in \(final)")
            }
        }
    }

    func testASecondCallOnTheSameSocketFailsWithExit1() throws {
        let first = try startCall([])
        let second = try ProcessRunner.run(TestPaths.executable("screencast-call"), ["--socket", socket], timeout: 10)
        XCTAssertEqual(second.status, 1, second.stderr)
        XCTAssertTrue(second.stderr.contains("in use"), second.stderr)
        first.signal(SIGTERM)
        XCTAssertEqual(first.waitForExit(), 0)
    }

    /// testpattern → screen → testpattern: one continuous IVF, a keyframe exactly at each switch.
    func testSwitchingGivesAKeyframeAtEachSwitchInOneContinuousIVF() throws {
        let (w, h) = (320, 240)
        let ivf = folder.path("switch.ivf")
        let call = try startCall(["--source", "testpattern", "--pattern-size", "\(w)x\(h)", "--pattern-fps", "15",
                                  "--record-ivf", ivf, "--stats-interval", "0"])
        XCTAssertNotNil(call.waitForLine("encoder created"))
        usleep(700_000)
        let dump = folder.path("screen.frames")
        try Data(try makeDump((0..<6).map {
            DumpFrame(picture: makeDesktop(width: w, height: h, variant: $0), timestamp: 1_000_000 + UInt64($0) * 100_000)
        })).write(to: URL(fileURLWithPath: dump))
        try replay(dump, socket: socket)
        XCTAssertNotNil(call.waitForLine("screen left; falling back"), call.logText)
        usleep(700_000)
        call.signal(SIGTERM)
        XCTAssertEqual(call.waitForExit(), 0, call.logText)

        let (_, frames) = try decodeIVF(ivf)  // one decoder from the first frame to the last: continuous
        var pattern = I420Buffer()
        TestPatternPainter(width: w, height: h).paint(frameNumber: 0, timestampMicros: 0, into: &pattern)
        let desktop = makeDesktop(width: w, height: h, variant: 3)
        let kinds = String(frames.map { lumaPSNR($0.picture, pattern) > lumaPSNR($0.picture, desktop) ? "P" : "D" })
        let runs = kinds.reduce(into: [(Character, Int)]()) { runs, kind in
            if runs.last?.0 == kind { runs[runs.count - 1].1 += 1 } else { runs.append((kind, 1)) }
        }
        XCTAssertEqual(runs.map(\.0), ["P", "D", "P"], kinds)
        var starts: [Int] = []
        var index = 0
        for run in runs { starts.append(index); index += run.1 }
        XCTAssertEqual(frames.indices.filter { frames[$0].keyframe }, starts, kinds)
        XCTAssertTrue(frames.allSatisfy { $0.picture.width == w && $0.picture.height == h })
        XCTAssertEqual(frames.map(\.pts), frames.map(\.pts).sorted(), "one timeline")
        if let probe = try ffprobeFrames(ivf) {
            XCTAssertEqual(probe.count, frames.count)
            XCTAssertEqual(probe.errors, "")
        }
        XCTAssertEqual(call.log.filter { $0.contains("encoder created") }.count, 1, "never re-created")
    }

    /// Every handed case into one running call: it survives, delivers exactly the frames the case
    /// expects (counted per sender in its log), and serves the next sender.
    func testEveryHandedCaseIsServedAndTheCallSurvives() throws {
        let cases = try WireCase.load(from: TestPaths.sharedCases)
        let stats = folder.path("stats.json")
        // Debug: per-connection lines beyond the info-level rate limit's burst are logged there.
        let call = try startCall(["--stats-interval", "0", "--stats-file", stats, "--log-level", "debug"])
        var connection = 0
        var totals = (frames: 0, decoded: 0)
        for wireCase in cases {
            let dump = folder.path("\(wireCase.name).frames")
            try Data(wireCase.bytes).write(to: URL(fileURLWithPath: dump))
            try replay(dump, socket: socket, ["--as-fast-as-possible", "--wait", "5"])
            connection += 1
            guard let ended = call.waitForLine("screen sender ended connection=\(connection) ", timeout: 15) else {
                XCTFail("\(wireCase.name): no end of connection \(connection)\n\(call.logText)")
                break
            }
            let failed = wireCase.frames.filter(\.decodeError).count
            XCTAssertEqual(field("frames", in: ended), String(wireCase.frames.count), "\(wireCase.name): \(ended)")
            XCTAssertEqual(field("decoded", in: ended), String(wireCase.frames.count - failed), "\(wireCase.name): \(ended)")
            XCTAssertEqual(field("decode_failed", in: ended), String(failed), "\(wireCase.name): \(ended)")
            XCTAssertEqual(field("reason", in: ended), wireCase.end == "error" ? "error" : wireCase.end, "\(wireCase.name): \(ended)")
            XCTAssertTrue(call.process.isRunning, "\(wireCase.name): the call survives")
            totals.frames += wireCase.frames.count
            totals.decoded += wireCase.frames.count - failed
        }
        if cases.contains(where: { $0.name == "size-mismatch" }) {
            XCTAssertNotNil(call.log.first { $0.contains("JPEG size differs") && $0.contains("buffer=1280x720") && $0.contains("jpeg=640x360") })
        }
        call.signal(SIGTERM)
        XCTAssertEqual(call.waitForExit(timeout: 10), 0, call.logText)
        let json = try readStats(stats)
        XCTAssertEqual(number(json, "frames", "received"), totals.frames)
        XCTAssertEqual(number(json, "frames", "decoded"), totals.decoded)
        XCTAssertEqual(number(json, "dropped", "decodeError"), totals.frames - totals.decoded)
        XCTAssertEqual(number(json, "screen", "sendersTotal"), cases.filter { !$0.frames.isEmpty }.count, "those that sent a frame")
        XCTAssertEqual(number(json, "screen", "connections"), cases.count)
        XCTAssertEqual(number(json, "screen", "senders"), 0, "none connected at exit")
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket))
    }

    /// A static screen for 10 s (keepalives every 2 s): refinement re-encodes paced by the byte budget,
    /// then about one frame a second, each sharper or as sharp as the one before.
    func testAStaticStretchIsRefinedThenRepeatedAboutOnceASecond() throws {
        let picture = makeDesktop(width: 480, height: 272, variant: 7)
        let dump = folder.path("static.frames")
        try Data(try makeDump((0...5).map { DumpFrame(picture: picture, timestamp: 1_000_000 + UInt64($0) * 2_000_000) }))
            .write(to: URL(fileURLWithPath: dump))
        let ivf = folder.path("static.ivf")
        let stats = folder.path("stats.json")
        let call = try startCall(["--record-ivf", ivf, "--exit-when-source-ends", "--stats-interval", "0", "--stats-file", stats])
        try replay(dump, socket: socket)
        XCTAssertEqual(call.waitForExit(timeout: 20), 0, call.logText)

        let json = try readStats(stats)
        XCTAssertEqual(number(json, "frames", "received"), 6)
        XCTAssertEqual(number(json, "dropped", "unchanged"), 5, "keepalives are not new pictures")
        // Six refinement steps, each encoded or (the byte budget and libvpx's rate control hold the
        // 313-kbps default target) dropped by libvpx; then repeats about once a second.
        let refinements = try XCTUnwrap(number(json, "frames", "refinements"))
        let dropped = number(json, "dropped", "encoder") ?? 0
        XCTAssertEqual(refinements + dropped, 6, "refinements \(refinements), dropped by rate control \(dropped)")
        XCTAssertGreaterThanOrEqual(refinements, 3)
        let repeats = try XCTUnwrap(number(json, "frames", "repeats"))
        XCTAssertTrue((6...10).contains(repeats), "\(repeats) repeats in 10 s")

        let (_, frames) = try decodeIVF(ivf)
        XCTAssertEqual(frames.count, 1 + refinements + repeats)
        XCTAssertEqual(frames.filter(\.keyframe).count, 1)
        let quality = frames.map { lumaPSNR($0.picture, picture) }
        // Refinement: rising quality, paced by the budget (within 4 s at this target).
        XCTAssertGreaterThan(quality[refinements], quality[0] + 5, "\(quality)")
        XCTAssertTrue(zip(quality.dropFirst(), quality).allSatisfy { $0 >= $1 - 0.2 }, "never worse: \(quality)")
        XCTAssertLessThanOrEqual(frames[refinements].micros - frames[0].micros, 4_000_000, "refined within a few seconds")
        // Then about once a second.
        let gaps = zip(frames.dropFirst(refinements + 2), frames.dropFirst(refinements + 1)).map { Double($0.micros - $1.micros) / 1e6 }
        XCTAssertTrue(gaps.allSatisfy { (0.9...1.3).contains($0) }, "\(gaps)")
        print("idle: \(frames.count) frames, PSNR \(quality.map { String(format: "%.1f", $0) }), gaps \(gaps.map { String(format: "%.2f", $0) })")
    }
}
