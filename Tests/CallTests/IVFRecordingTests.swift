import Foundation
import Media
import TestSupport
import XCTest

/// `--record-ivf` files as ffprobe (ffmpeg's ivf demuxer) reads them: the 90 kHz timebase, a duration
/// that matches the frames recorded, and every frame.
final class IVFRecordingTests: CallTestCase {
    /// A test pattern at 15 frames a second for about 2.5 s: ffprobe's duration is the frames' span at
    /// the pattern's own rate (frames / 15 s) within one frame, its frame count is the call's.
    func testFFprobeReadsTheDurationAndFrameCountRecorded() throws {
        let fps = 15.0
        let ivf = folder.path("pattern.ivf")
        let started = Date()
        let call = try startCall(["--source", "testpattern", "--pattern-size", "320x240", "--pattern-fps", "15",
                                  "--record-ivf", ivf, "--stats-interval", "0"])
        XCTAssertNotNil(call.waitForLine("encoder created"), call.logText)
        usleep(2_500_000)
        call.signal(SIGTERM)
        XCTAssertEqual(call.waitForExit(), 0, call.logText)
        let wallSeconds = Date().timeIntervalSince(started)
        let final = try XCTUnwrap(call.log.last { $0.contains("info stats final ") }, call.logText)
        let encoded = try XCTUnwrap(field("encoded", in: final).flatMap { Int($0) }, final)
        XCTAssertGreaterThan(encoded, 20, final)

        let probe = try ffprobeTimeline(ivf)
        XCTAssertEqual(probe.errors, "")
        XCTAssertEqual(probe.timeBase, "1/90000")
        XCTAssertEqual(probe.framesDecoded, encoded, "ffprobe decodes every frame the call encoded")
        XCTAssertEqual(probe.packetTimes.count, encoded)
        XCTAssertEqual(probe.packetTimes.first, 0)
        // The source's truth: one pattern frame every 1/15 s, each one encoded (the encoder allows 30).
        let period = 1 / fps
        XCTAssertEqual(probe.duration, Double(encoded) * period, accuracy: period, "duration vs \(encoded) frames at 15 fps")
        XCTAssertEqual(probe.streamDuration, probe.duration, accuracy: 1e-6)
        // ffmpeg's own reckoning (its ivf muxer): the last pts plus the mean step, to the 90 kHz tick.
        let last = try XCTUnwrap(probe.packetTimes.last)
        XCTAssertEqual(probe.duration, last * Double(encoded) / Double(encoded - 1), accuracy: 2.0 / 90_000)
        XCTAssertLessThan(probe.duration, wallSeconds, "no longer than the call ran")
        XCTAssertEqual(Int(try decodeIVF(ivf).header.length), Int((probe.duration * 90_000).rounded()))
    }
}

/// What ffprobe reads from an IVF file: the stream's timebase, the format and stream durations (seconds),
/// every packet's pts (seconds), the frames it decodes, and its error output.
struct FFprobeTimeline {
    var timeBase: String
    var duration: Double
    var streamDuration: Double
    var packetTimes: [Double]
    var framesDecoded: Int
    var errors: String
}

/// Runs ffprobe (Debian's ffmpeg, which tools/setup installs) on `path`; fails the test when it is missing.
func ffprobeTimeline(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws -> FFprobeTimeline {
    let ffprobe = "/usr/bin/ffprobe"
    guard FileManager.default.isExecutableFile(atPath: ffprobe) else {
        XCTFail("\(ffprobe) is missing: tools/setup installs the ffmpeg package", file: file, line: line)
        throw CocoaError(.fileNoSuchFile)
    }
    let result = try ProcessRunner.run(URL(fileURLWithPath: ffprobe), [
        "-v", "error", "-count_frames", "-select_streams", "v:0",
        "-show_entries", "format=duration:stream=time_base,duration,nb_read_frames:packet=pts_time",
        "-of", "default=noprint_wrappers=1", path,
    ], timeout: 60)
    var values: [String: [String]] = [:]
    for entry in result.stdout.split(separator: "\n") {
        guard let equals = entry.firstIndex(of: "=") else { continue }
        values[String(entry[..<equals]), default: []].append(String(entry[entry.index(after: equals)...]))
    }
    // Packets come first, then the stream's entries, then the format's (ffprobe's section order).
    let durations = values["duration", default: []].compactMap(Double.init)
    return FFprobeTimeline(
        timeBase: values["time_base"]?.first ?? "",
        duration: durations.last ?? -1,
        streamDuration: durations.first ?? -1,
        packetTimes: values["pts_time", default: []].compactMap(Double.init),
        framesDecoded: values["nb_read_frames"]?.first.flatMap { Int($0) } ?? -1,
        errors: result.stderr)
}
