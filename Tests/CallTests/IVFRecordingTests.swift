import Foundation
import Media
import TestSupport
import XCTest

/// `--record-ivf` files as ffprobe and ffmpeg (its ivf demuxer) read them: the timebase is one frame period
/// at `--max-fps` (what ffmpeg takes as the frame rate), the duration matches what was recorded, every frame
/// decodes, and `ffmpeg -i share.ivf -c:v libx264 share.mp4` finishes (issue 34: with a 1/90 000 timebase a
/// screen's irregular capture times read as 90 000 fps, and the conversion never ended).
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
        XCTAssertEqual(probe.timeBase, "1/30", "one period at --max-fps (30)")
        XCTAssertEqual(probe.framesDecoded, encoded, "ffprobe decodes every frame the call encoded")
        XCTAssertEqual(probe.packetTimes.count, encoded)
        XCTAssertEqual(probe.packetTimes.first, 0)
        // The source's truth: one pattern frame every 1/15 s, each one encoded (the encoder allows 30).
        let period = 1 / fps
        XCTAssertEqual(probe.duration, Double(encoded) * period, accuracy: period, "duration vs \(encoded) frames at 15 fps")
        XCTAssertEqual(probe.streamDuration, probe.duration, accuracy: 1e-6)
        // The header's length: the last pts plus one period of the timebase.
        let last = try XCTUnwrap(probe.packetTimes.last)
        XCTAssertEqual(probe.duration, last + 1.0 / 30, accuracy: 1e-6)
        XCTAssertLessThan(probe.duration, wallSeconds, "no longer than the call ran")
        XCTAssertEqual(Int(try decodeIVF(ivf).header.length), Int((probe.duration * 30).rounded()))
    }

    /// A screen's frames come when it changes, at capture times with no common step: 24 changes of a desktop
    /// at irregular gaps (40 ms to 1.1 s, 4.4 s in all) replayed into the call at their pace. ffprobe reads
    /// 30 fps (not 90 000), a duration that spans the changes, and each change at its own time (within a
    /// period and the replay's jitter); `ffmpeg -i … -c:v libx264 … .mp4` finishes in seconds, and the MP4 is
    /// 30 fps for the same duration (give or take the last frame's), its frame count 30 × that.
    func testAScreensIrregularFramesConvertWithFFmpeg() throws {
        let (width, height) = (160, 96)
        let gapsMillis: [UInt64] = [40, 370, 110, 55, 1_100, 45, 60, 250, 130, 41, 300, 75, 520, 90, 44, 210, 66, 170, 48, 35, 260, 95, 180]
        var times: [UInt64] = [10_000_000]
        for gap in gapsMillis { times.append(times.last! + gap * 1000) }
        let pictures = times.indices.map { makeDesktop(width: width, height: height, variant: $0) }
        let dump = folder.path("irregular.frames")
        try Data(try makeDump(zip(pictures, times).map { DumpFrame(picture: $0, timestamp: $1) })).write(to: URL(fileURLWithPath: dump))
        let ivf = folder.path("share.ivf")
        let call = try startCall(["--record-ivf", ivf, "--stats-interval", "0"])
        let started = Date()
        let replayed = try replay(dump, socket: socket)
        XCTAssertEqual(replayed.status, 0, replayed.stderr)
        usleep(300_000)
        call.signal(SIGINT)
        XCTAssertEqual(call.waitForExit(), 0, call.logText)
        let wallSeconds = Date().timeIntervalSince(started)
        let spanSeconds = Double(times.last! - times.first!) / 1e6

        let probe = try ffprobeTimeline(ivf)
        XCTAssertEqual(probe.errors, "")
        XCTAssertEqual(probe.timeBase, "1/30")
        XCTAssertEqual(probe.frameRate, "30/1", "the frame rate players and ffmpeg use")
        let (header, frames) = try decodeIVF(ivf)
        XCTAssertEqual(probe.framesDecoded, frames.count)
        // Every frame on the capture timeline: it shows a change (the nearest by PSNR) at a pts between that
        // change's capture time and the next one's (a refinement of a still picture carries its re-encode
        // time), within a period and 50 ms of jitter; most changes are at their own time.
        let nearest = frames.map { frame in
            pictures.indices.map { lumaPSNR(frame.picture, pictures[$0]) }.enumerated().max { $0.element < $1.element }!.offset
        }
        print("ivf: pts \(frames.map(\.pts)), nearest change \(nearest)")
        let slack = 1.0 / 30 + 0.05
        let seconds = times.map { Double($0 - times[0]) / 1e6 }
        for (frame, change) in zip(frames, nearest) {
            let at = Double(frame.pts) / 30, until = change + 1 < seconds.count ? seconds[change + 1] : wallSeconds
            XCTAssertTrue(at >= seconds[change] - slack && at <= until + slack,
                          "pts \(frame.pts) (\(at) s) shows change \(change), captured \(seconds[change]) s, next \(until) s")
        }
        let onTime = seconds.indices.filter { change in
            zip(frames, nearest).contains { $0.1 == change && abs(Double($0.0.pts) / 30 - seconds[change]) <= slack }
        }
        XCTAssertGreaterThanOrEqual(onTime.count, seconds.count * 2 / 3, "changes recorded at their capture time: \(onTime)")
        // The duration covers the changes (and any refinement after the last), and no more than the call ran.
        XCTAssertGreaterThanOrEqual(probe.duration, spanSeconds - 0.05)
        XCTAssertLessThan(probe.duration, wallSeconds)
        XCTAssertEqual(probe.duration, Double(frames.last!.pts + 1) / 30, accuracy: 1e-6)
        XCTAssertEqual(Int(header.length), Int(frames.last!.pts) + 1)

        // The conversion the README promises: a few seconds of work, not an endless stream of copies.
        let mp4 = folder.path("share.mp4")
        let clock = Date()
        let converted = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/ffmpeg"), [
            "-nostdin", "-v", "error", "-i", ivf, "-c:v", "libx264", "-preset", "ultrafast", mp4,
        ], timeout: 60)
        let convertSeconds = Date().timeIntervalSince(clock)
        XCTAssertEqual(converted.status, 0, converted.stderr)
        XCTAssertLessThan(convertSeconds, 20, "ffmpeg converted \(probe.duration) s of recording in \(convertSeconds) s")
        let out = try ffprobeTimeline(mp4)
        print("ivf: \(frames.count) frames, \(probe.duration) s at \(probe.frameRate); mp4: \(out.framesDecoded) frames, "
              + "\(out.streamDuration) s at \(out.frameRate), converted in \(String(format: "%.2f", convertSeconds)) s")
        XCTAssertEqual(out.frameRate, "30/1")
        // ffmpeg shows the last frame for about the gap before it (its guess of a frame's duration), at least
        // one period: the MP4 ends within that of the IVF's last pts.
        let lastGap = Double(frames.last!.pts - frames[frames.count - 2].pts) / 30
        XCTAssertGreaterThanOrEqual(out.streamDuration, probe.duration - 1.0 / 30 - 1e-6)
        XCTAssertLessThanOrEqual(out.streamDuration, probe.duration + lastGap + 1e-6)
        XCTAssertEqual(Double(out.framesDecoded), out.streamDuration * 30, accuracy: 1.5)
    }
}

/// What ffprobe reads from a video file (IVF, MP4): the stream's timebase and frame rate, the format and stream durations (seconds),
/// every packet's pts (seconds), the frames it decodes, and its error output.
struct FFprobeTimeline {
    var timeBase: String
    /// `r_frame_rate`: the frame rate ffmpeg guesses (and converts at), e.g. "30/1".
    var frameRate: String
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
        "-show_entries", "format=duration:stream=time_base,r_frame_rate,duration,nb_read_frames:packet=pts_time",
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
        frameRate: values["r_frame_rate"]?.first ?? "",
        duration: durations.last ?? -1,
        streamDuration: durations.first ?? -1,
        packetTimes: values["pts_time", default: []].compactMap(Double.init),
        framesDecoded: values["nb_read_frames"]?.first.flatMap { Int($0) } ?? -1,
        errors: result.stderr)
}
