import Call
import Foundation
import Glibc
import Media
import ScreencastSupport
import Streaming
import TestSupport
import VideoSource
import XCTest

/// `--record FILE.mp4`: the H.264 encoding in fragmented MP4, beside an RTMP destination of the same encoding.
final class MP4RecordingTests: XCTestCase {
    private var folder: TemporaryDirectory!

    override func setUpWithError() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/ffprobe"), "ffmpeg is not installed (tools/setup)")
        folder = try TemporaryDirectory(prefix: "mp4")
    }

    override func tearDown() { folder?.remove() }

    /// ffprobe's duration is the span recorded within 0.5 s, ffmpeg decodes it without an error, and one H.264
    /// encoding fed both the file and a destination that never answered (which failed alone, after its retries).
    /// Beside them `--record FILE.webm`: the viewers' VP8 frames as they are, the same duration, seekable (Cues),
    /// a picture decoded after a seek, no decode error. The last frame of each shows the pattern's bars. The
    /// call plays silence: the WebM's Opus track holds the encoder's DTX packets (1–2 bytes), written, so the
    /// sound still lasts as long as the pictures.
    func testDurationWithinHalfASecondAndDecodesCleanly() throws {
        let path = folder.path("share.mp4")
        var configuration = CallConfiguration(source: VideoSourceConfiguration(
            socketPath: nil, fallback: .testPattern(TestPatternSettings(width: 320, height: 240, framesPerSecond: 30)), maxFramesPerSecond: 30))
        configuration.http = nil
        configuration.statsIntervalSeconds = 0
        configuration.streaming.recordMP4 = path
        let webm = folder.path("share.webm")
        configuration.streaming.recordWebM = webm
        configuration.streaming.rtmp = [try RTMPURL("rtmp://127.0.0.1:\(try RTMPServer.freePort())/live/nobody")]
        configuration.streaming.retries = 1
        let call = try Call(configuration: configuration, logger: Logger(component: "call", threshold: .error))
        try call.start()
        let outputs = call.outputList.compactMap { $0.output as? StreamOutput }
        let mp4 = try XCTUnwrap(outputs.first { $0.name == "mp4" }).writer
        let rtmp = try XCTUnwrap(outputs.first { $0.name == "rtmp-1" }).writer
        let deadline = Date().addingTimeInterval(5)
        while mp4.stats.framesSent == 0, Date() < deadline { usleep(10_000) }
        let started = Date()
        usleep(3_000_000)
        let outcome = call.stop()
        let span = Date().timeIntervalSince(started)
        XCTAssertEqual(rtmp.stats.state, .failed, "nobody listens: it gave up after --rtmp-retries 1")
        XCTAssertEqual(outcome.incomplete.map(\.output), ["rtmp-1"], "the recording is whole; the destination is reported")

        let stream = try Probe.stream(path)
        XCTAssertEqual(stream.codec, "h264")
        XCTAssertEqual(stream.width, 320)
        XCTAssertEqual(stream.duration, span, accuracy: 0.5)
        XCTAssertEqual(try Probe.decodeErrors(path), "")
        XCTAssertTrue(try Probe.frames(path).first?.key ?? false)
        Probe.assertPatternBars(try Probe.picture(path, at: stream.duration - 0.1), "the MP4's last frame")

        let vp8 = try Probe.stream(webm)
        XCTAssertEqual(vp8.codec, "vp8")
        XCTAssertEqual(vp8.width, 320)
        XCTAssertEqual(vp8.duration, span, accuracy: 0.5)
        XCTAssertEqual(try Probe.decodeErrors(webm), "")
        XCTAssertTrue(try Probe.frames(webm).first?.key ?? false, "a keyframe first")
        let bytes = [UInt8](FileManager.default.contents(atPath: webm) ?? Data())
        let cues: [UInt8] = [0x1C, 0x53, 0xBB, 0x6B]  // Matroska's Cues element ID: the seek index
        XCTAssertTrue(bytes.indices.dropLast(3).contains { bytes[$0] == cues[0] && Array(bytes[$0..<($0 + 4)]) == cues }, "Cues written")
        Probe.assertPatternBars(try Probe.picture(webm, at: 2.0), "the WebM's picture after seeking 2 s in")
        Probe.assertPatternBars(try Probe.picture(webm, at: vp8.duration - 0.1), "the WebM's last frame")
        let opus = try XCTUnwrap(try Probe.streams(webm).first { $0.type == "audio" })
        XCTAssertEqual(opus.codec, "opus")
        let sizes = try Probe.audioPacketSizes(webm)
        XCTAssertGreaterThan(sizes.filter { $0 <= 2 }.count, sizes.count / 2, "silence: mostly DTX packets, written: \(sizes.prefix(40))")
        XCTAssertEqual(Double(sizes.count) * 0.02, vp8.duration, accuracy: 0.3, "a 20-ms packet for all of the time, DTX or not")
        let silence = try Probe.audio(webm)
        XCTAssertEqual(Double(silence.count) / 2 / 48_000, vp8.duration, accuracy: 0.3, "the decoded sound lasts as long as the pictures")
        XCTAssertLessThan(SoundMeasure.rmsDBFS(silence), -60, "silence")
    }

    /// `screencast-call --audio-test-tone 1000 --record FILE.webm` for 3 s, stopped by SIGTERM: a VP8 and an Opus
    /// track (48 kHz, 2 channels, the OpusHead as CodecPrivate: ffmpeg decodes it), the duration within 0.5 s of
    /// the run, both decoded without an error, the blocks interleaved by time, the sound the tone: 1000 ± 5 Hz at
    /// −20 ± 1 dBFS for as long as the recording.
    func testTheWebMCarriesTheOpusSound() throws {
        let path = folder.path("tone.webm")
        let pipe = Pipe()
        let process = try ProcessRunner.start(TestPaths.executable("screencast-call"), [
            "--socket", folder.path("t.sock"), "--http", "off", "--source", "testpattern", "--pattern-size", "320x240",
            "--pattern-fps", "30", "--record", path, "--audio-test-tone", "1000",
        ], stderr: pipe)
        let lines = PipeLines(pipe)
        let deadline = Date().addingTimeInterval(10)
        while !lines.all.contains(where: { $0.contains("webm recording") }), Date() < deadline { usleep(10_000) }
        XCTAssertTrue(lines.all.contains { $0.contains("webm recording") }, lines.all.joined(separator: "\n"))
        let started = Date()
        usleep(3_000_000)
        XCTAssertFalse(ProcessRunner.terminate(process), "it stops on SIGTERM")
        let span = Date().timeIntervalSince(started)
        lines.waitUntilClosed()

        let streams = try Probe.streams(path)
        XCTAssertEqual(streams.map(\.codec).sorted(), ["opus", "vp8"], "\(streams)")
        let audio = try XCTUnwrap(streams.first { $0.type == "audio" })
        XCTAssertEqual(audio.sampleRate, 48_000)
        XCTAssertEqual(audio.channels, 2)
        XCTAssertEqual(try Probe.stream(path).duration, span, accuracy: 0.5)
        XCTAssertEqual(try Probe.decodeErrors(path), "")
        let times = try Probe.packetTimes(path)
        let back = zip(times, times.dropFirst()).map { $0 - $1 }.max() ?? 0
        XCTAssertLessThanOrEqual(back, 0.007, "blocks in time order across the tracks (within Opus's 6.5-ms CodecDelay)")
        let tone = try Probe.audio(path, from: 0.5)
        XCTAssertGreaterThan(tone.count, 48_000 * 2 * 2, "at least 2 s of sound")
        XCTAssertEqual(SoundMeasure.frequency(tone, channels: 2, rate: 48_000), 1000, accuracy: 5)
        XCTAssertEqual(SoundMeasure.rmsDBFS(tone), -20, accuracy: 1)
        XCTAssertEqual(Double(tone.count) / 2 / 48_000 + 0.5, span, accuracy: 0.5, "the sound lasts as long as the recording")
    }

    /// `kill -9` of `screencast-call --record FILE.mp4 --audio-test-tone 1000` 3 s in: the file still plays, both
    /// tracks, to within about 2 s of the kill.
    func testTheFileStillPlaysAfterKillNine() throws {
        let path = folder.path("killed.mp4")
        let pipe = Pipe()
        let process = try ProcessRunner.start(TestPaths.executable("screencast-call"), [
            "--socket", folder.path("a.sock"), "--http", "off", "--source", "testpattern", "--pattern-size", "320x240",
            "--pattern-fps", "30", "--record", path, "--audio-test-tone", "1000",
        ], stderr: pipe)
        let lines = PipeLines(pipe)
        let deadline = Date().addingTimeInterval(10)
        while !lines.all.contains(where: { $0.contains("mp4 recording") }), Date() < deadline { usleep(10_000) }
        XCTAssertTrue(lines.all.contains { $0.contains("mp4 recording") }, lines.all.joined(separator: "\n"))
        usleep(3_000_000)
        kill(process.processIdentifier, SIGKILL)
        _ = ProcessRunner.wait(for: process, timeout: 5)
        lines.waitUntilClosed()

        let stream = try Probe.stream(path)
        XCTAssertEqual(stream.codec, "h264")
        XCTAssertGreaterThan(stream.duration, 1.0, "at most ~2 s lost of 3")
        XCTAssertLessThan(stream.duration, 3.5)
        XCTAssertEqual(try Probe.streams(path).map(\.codec).sorted(), ["aac", "h264"], "both tracks")
        let frames = try Probe.frames(path)
        XCTAssertGreaterThan(frames.count, 30)
        XCTAssertEqual(try Probe.decodeErrors(path), "")
    }

    /// The library's seam: an H.264 output added to a running call that had none makes the H.264 encoding then
    /// (once: a second output shares it), starts with a keyframe, and closes its file whole when removed.
    func testAnOutputAddedWhileTheCallRunsMakesTheEncodingOnce() throws {
        var configuration = CallConfiguration(source: VideoSourceConfiguration(
            socketPath: nil, fallback: .testPattern(TestPatternSettings(width: 320, height: 240, framesPerSecond: 30)), maxFramesPerSecond: 30))
        configuration.http = nil
        configuration.statsIntervalSeconds = 0
        let lines = TimedLines()
        let call = try Call(configuration: configuration, logger: Logger(component: "call", output: LogOutput { lines.append($0) }))
        try call.start()
        defer { call.stop() }
        var ids: [OutputID] = []
        for name in ["a", "b"] {
            let context = try call.context(for: .videoH264, consumer: name)
            let output = StreamOutput(name: name, target: .mp4(path: folder.path("\(name).mp4")), context: context, targetBitsPerSecond: { 0 },
                                      logger: Logger(component: name, threshold: .error))
            ids.append(try call.add(output))
        }
        usleep(2_000_000)
        for id in ids { XCTAssertNotNil(try XCTUnwrap(call.remove(id)).isSuccess) }
        guard case .object(let fields) = call.statsJSON, case .object(let h264)? = fields.first(where: { $0.0 == "h264" })?.1 else {
            return XCTFail("no h264 in /stats")
        }
        XCTAssertEqual(h264.first { $0.0 == "size" }?.1, .string("320x240"))
        XCTAssertEqual(lines.withLock { $0.filter { $0.line.contains("H.264 encoder made") }.count }, 1, "one encoder for both outputs")
        for name in ["a", "b"] {
            let path = folder.path("\(name).mp4")
            XCTAssertEqual(try Probe.stream(path).codec, "h264")
            XCTAssertTrue(try Probe.frames(path).first?.key ?? false, "a keyframe first")
            XCTAssertEqual(try Probe.decodeErrors(path), "")
        }
    }

    /// `--record FILE.mp4` on a disk that fills 3-4 s in: the recording ends with a clear message (ENOSPC's
    /// words), is reported incomplete at the end, and what it wrote still plays (both tracks); the call went on.
    func testAFullDiskEndsTheRecordingClearlyAndLeavesAPlayableFile() throws {
        let disk = try SmallDisk(at: folder.path("disk"), kibibytes: 128)
        defer { disk.unmount() }
        let path = disk.path + "/full.mp4"
        var configuration = CallConfiguration(source: VideoSourceConfiguration(
            socketPath: nil, fallback: .testPattern(TestPatternSettings(width: 320, height: 240, framesPerSecond: 30)), maxFramesPerSecond: 30))
        configuration.http = nil
        configuration.statsIntervalSeconds = 0
        configuration.streaming.recordMP4 = path
        configuration.audio.idle = .tone(frequencyHz: 1000, levelDBFS: -20)
        let lines = TimedLines()
        let call = try Call(configuration: configuration, logger: Logger(component: "call", output: LogOutput { lines.append($0) }))
        try call.start()
        let mp4 = try XCTUnwrap(call.outputList.compactMap { $0.output as? StreamOutput }.first).writer
        let deadline = Date().addingTimeInterval(12)
        while mp4.stats.state != .failed, Date() < deadline { usleep(50_000) }
        XCTAssertEqual(mp4.stats.state, .failed, "the disk filled")
        let atFailure = call.statsJSON
        usleep(500_000)
        XCTAssertNotEqual(call.statsJSON, atFailure, "the share goes on")
        let outcome = call.stop()
        XCTAssertEqual(outcome.incomplete.map(\.output), ["mp4"])
        XCTAssertTrue(outcome.incomplete.first?.reason.contains("No space left on device") ?? false, outcome.incomplete.first?.reason ?? "-")
        XCTAssertTrue(lines.withLock { $0.map(\.line) }.contains { $0.contains("error mp4 recording failed") && $0.contains("No space left") })
        XCTAssertEqual(try Probe.streams(path).map(\.codec).sorted(), ["aac", "h264"])
        XCTAssertGreaterThan(try Probe.frames(path).count, 30, "what was written plays")
    }

    /// A bad URL is the command line's fault: exit 64 at start, with the reason.
    func testABadURLExitsWith64() throws {
        for arguments in [["--rtmp", "http://example.com/live/key"], ["--rtmp", "rtmp://host/onlyapp"], ["--record", folder.path("x.avi")],
                          ["--rtmp", "rtmp://h/app", "--rtmp-key-file", folder.path("missing")]] {
            let result = try ProcessRunner.run(TestPaths.executable("screencast-call"), ["--http", "off", "--socket", folder.path("b.sock")] + arguments, timeout: 10)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("--rtmp") || result.stderr.contains("--record"), result.stderr)
        }
    }
}

extension Result {
    var isSuccess: Bool? { if case .success = self { return true } else { return nil } }
}
