import Call
import Foundation
import Glibc
import Media
import ScreencastSupport
import Streaming
import Synchronization
import TestSupport
import VideoSource
import XCTest

/// The call publishing its test pattern over RTMP to an nginx-rtmp of the test's own, which records each publish
/// to an FLV: what ffprobe and ffmpeg read there, and what happens when nginx is killed and comes back.
final class RTMPPublishTests: XCTestCase {
    private var folder: TemporaryDirectory!
    private let lines = TimedLines()

    override func setUpWithError() throws {
        try XCTSkipUnless(RTMPServer.available, "nginx with libnginx-mod-rtmp is not installed (tools/setup)")
        folder = try TemporaryDirectory(prefix: "rtmp")
    }

    override func tearDown() { if ProcessInfo.processInfo.environment["KEEP_RTMP"] == nil { folder?.remove() } else { print("kept", folder.url.path) } }

    private var logger: Logger {
        Logger(component: "call", threshold: .info, output: LogOutput { [lines] line in lines.append(line) })
    }

    /// A 320x240 test pattern at 30 fps, no agent, no HTTP server, publishing to `urls` (and recording to `mp4`).
    private func makeCall(
        rtmp urls: [String], mp4: String? = nil, toneHz: Double? = nil, retries: Int = 5, width: Int = 320, height: Int = 240,
        statsSeconds: Double = 0
    ) throws -> Call {
        var configuration = CallConfiguration(source: VideoSourceConfiguration(
            socketPath: nil, fallback: .testPattern(TestPatternSettings(width: width, height: height, framesPerSecond: 30)), maxFramesPerSecond: 30))
        configuration.http = nil
        configuration.statsIntervalSeconds = statsSeconds
        configuration.streaming.rtmp = try urls.map { try RTMPURL($0) }
        configuration.streaming.recordMP4 = mp4
        configuration.streaming.retries = retries
        if let toneHz { configuration.audio.idle = .tone(frequencyHz: toneHz, levelDBFS: -20) }
        return try Call(configuration: configuration, logger: logger)
    }

    private func writer(_ call: Call, _ name: String) throws -> StreamWriter {
        try XCTUnwrap(call.outputList.compactMap { $0.output as? StreamOutput }.first { $0.name == name }).writer
    }

    private func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    /// ffprobe reads H.264 at the pattern's size, keyframes 2 s apart by their pts, and the bars decode within
    /// 6 levels of the pattern's BT.601 codes; /stats has the destination publishing.
    func testPublishesThePatternAsH264WithKeyframesEveryTwoSeconds() throws {
        let server = try RTMPServer(folder: folder.path("nginx"))
        let call = try makeCall(rtmp: [server.url("pattern")])
        try call.start()
        let rtmp = try writer(call, "rtmp-1")
        XCTAssertTrue(waitUntil(5) { rtmp.stats.state == .publishing }, lines.withLock { $0.map(\.line).joined(separator: "\n") })
        usleep(4_300_000)
        let stats = rtmp.stats
        XCTAssertEqual(stats.reconnects, 0)
        XCTAssertGreaterThan(stats.framesSent, 100)
        XCTAssertGreaterThan(stats.sentKbps, 0)
        XCTAssertEqual(stats.targetKbps, 184, "320 x 240 x 30 x 0.08")
        let text = call.statsText
        XCTAssertTrue(text.contains("rtmp-1: publishing, rtmp://127.0.0.1:\(server.port)/live/***; queue "), text)
        XCTAssertTrue(text.contains(" of 184 kbps, ") && text.contains(" reconnects, up "), text)
        guard case .object(let fields) = call.statsJSON, let entry = fields.first(where: { $0.0 == "rtmp-1" })?.1,
              case .object(let rtmpFields) = entry else { return XCTFail("no rtmp-1 in /stats") }
        XCTAssertEqual(rtmpFields.first { $0.0 == "state" }?.1, .string("publishing"))
        XCTAssertEqual(rtmpFields.first { $0.0 == "destination" }?.1, .string("rtmp://127.0.0.1:\(server.port)/live/***"))
        call.stop()
        server.stop()

        let file = try XCTUnwrap(server.recordings.first)
        let stream = try Probe.stream(file)
        XCTAssertEqual(stream.codec, "h264")
        XCTAssertEqual(stream.width, 320)
        XCTAssertEqual(stream.height, 240)
        let frames = try Probe.frames(file)
        XCTAssertGreaterThan(frames.count, 120)
        XCTAssertTrue(frames.first?.key ?? false, "the sequence header, then a keyframe first")
        let keys = frames.filter(\.key).map(\.pts)
        XCTAssertGreaterThanOrEqual(keys.count, 3)
        for (a, b) in zip(keys, keys.dropFirst()) { XCTAssertEqual(b - a, 2.0, accuracy: 0.1, "keyframes \(keys)") }
        XCTAssertEqual(try Probe.decodeErrors(file), "")

        // The bars below the moving box, against the pattern's own codes (BT.601 limited range).
        Probe.assertPatternBars(try Probe.picture(file, at: 1.0))
    }

    /// The call's test tone beside the pattern, to nginx and to an MP4 at once: the FLV has H.264 and AAC-LC
    /// 48 kHz stereo starting together, and the tone decodes from it at 1000 ± 5 Hz and -20 dBFS; the MP4 has
    /// both tracks, the span recorded within 0.5 s, decodes without an error, and carries the same tone.
    func testPublishesTheToneAsAACBesideH264AndRecordsBothTracks() throws {
        let server = try RTMPServer(folder: folder.path("nginx"))
        let mp4 = folder.path("both.mp4")
        let call = try makeCall(rtmp: [server.url("tone")], mp4: mp4, toneHz: 1000, statsSeconds: 1)
        try call.start()
        let rtmp = try writer(call, "rtmp-1")
        let file = try writer(call, "mp4")
        XCTAssertTrue(waitUntil(5) { rtmp.stats.state == .publishing && file.stats.framesSent > 0 }, lines.withLock { $0.map(\.line).joined(separator: "\n") })
        let started = Date()
        usleep(3_000_000)
        let stats = rtmp.stats
        XCTAssertGreaterThan(stats.audioFramesSent, 100, "46.9 AAC frames a second")
        XCTAssertEqual(stats.droppedAudio, 0)
        XCTAssertEqual(stats.encoderFps, 30, accuracy: 3)
        XCTAssertEqual(stats.sentFps, 30, accuracy: 3)
        // The stats line per destination, every interval (1 s here; 5 s by default).
        let statsLines = lines.withLock { $0.map(\.line) }.filter { $0.contains("rtmp-1 stats ") }
        XCTAssertGreaterThanOrEqual(statsLines.count, 2)
        for field in ["state=publishing", "queue.frames=", "queue.ms=", "kbps=", "kbps.target=184", "fps.encoder=", "dropped=0",
                      "reconnects=0", "uptime.s="] {
            XCTAssertTrue(statsLines.last?.contains(field) ?? false, "\(field) in \(statsLines.last ?? "-")")
        }
        XCTAssertTrue(lines.withLock { $0.map(\.line) }.contains { $0.contains("mp4 stats ") })
        call.stop()
        let span = Date().timeIntervalSince(started)
        server.stop()

        let flv = try XCTUnwrap(server.recordings.first)
        let streams = try Probe.streams(flv)
        XCTAssertEqual(streams.map(\.codec).sorted(), ["aac", "h264"], "\(streams)")
        let audio = try XCTUnwrap(streams.first { $0.type == "audio" })
        XCTAssertEqual(audio.sampleRate, 48_000)
        XCTAssertEqual(audio.channels, 2)
        let video = try XCTUnwrap(streams.first { $0.type == "video" })
        XCTAssertEqual(audio.startTime, video.startTime, accuracy: 0.1, "one session clock for both")
        let tone = try Probe.audio(flv, from: 0.5)
        XCTAssertGreaterThan(tone.count, 48_000 * 2 * 2, "at least 2 s of sound")
        XCTAssertEqual(SoundMeasure.frequency(tone, channels: 2, rate: 48_000), 1000, accuracy: 5)
        XCTAssertEqual(SoundMeasure.rmsDBFS(tone), -20, accuracy: 0.5)
        XCTAssertEqual(try Probe.decodeErrors(flv), "")

        let tracks = try Probe.streams(mp4)
        XCTAssertEqual(tracks.map(\.codec).sorted(), ["aac", "h264"], "\(tracks)")
        XCTAssertEqual(try Probe.stream(mp4).duration, span, accuracy: 0.5)
        XCTAssertEqual(try Probe.decodeErrors(mp4), "")
        let recorded = try Probe.audio(mp4, from: 0.5)
        XCTAssertEqual(SoundMeasure.frequency(recorded, channels: 2, rate: 48_000), 1000, accuracy: 5)
        XCTAssertEqual(Double(recorded.count) / 2 / 48_000 + 0.5, span, accuracy: 0.5, "the sound lasts as long as the recording")
    }

    /// nginx SIGSTOPped for 10 s behind a relay that stops reading with it (``TCPStallRelay``: on loopback a
    /// stopped nginx alone takes the pattern's ~170 kbit/s for many seconds into a receive buffer Linux grows):
    /// the send queue stays bounded and drops pictures and their sound, counted (a write blocked past 5 s counts
    /// as a failure and a new connection is tried); after SIGCONT the destination publishes again and the delay
    /// waiting at the sender is back under 2 s within 5 s. The adaptive bitrate steps the shared H.264 target
    /// down on the way.
    func testAStoppedServerMakesTheQueueDropAndTheDelayRecovers() throws {
        let server = try RTMPServer(folder: folder.path("nginx"))
        let relay = try TCPStallRelay(to: UInt16(server.port))
        defer { relay.stop() }
        let call = try makeCall(rtmp: ["rtmp://127.0.0.1:\(relay.port)/live/stall"], toneHz: 440)
        try call.start()
        let rtmp = try writer(call, "rtmp-1")
        XCTAssertTrue(waitUntil(5) { rtmp.stats.state == .publishing })
        usleep(1_000_000)
        server.pause()
        relay.pause()
        let stoppedAt = Date()
        var longest = 0
        while Date().timeIntervalSince(stoppedAt) < 10 {
            longest = max(longest, rtmp.stats.queueFrames)
            usleep(50_000)
        }
        let duringStop = rtmp.stats
        server.resume()
        relay.resume()
        let resumedAt = Date()
        XCTAssertLessThanOrEqual(longest, 31, "bounded: more than 30 waiting drops the stale ones")
        XCTAssertGreaterThan(duringStop.dropped, 30, "pictures dropped while the server read nothing: \(duringStop)")
        XCTAssertGreaterThan(duringStop.droppedAudio, 0, "the sound of their time with them")
        let log = lines.withLock { $0.map(\.line) }
        XCTAssertTrue(log.contains { $0.contains("rtmp-1 bitrate step fraction=0.75") }, "one step down past 500 ms of delay")
        XCTAssertTrue(log.contains { $0.contains("h264 H.264 target changed kbps=138") }, "the shared encoder follows: 184 x 0.75")
        let sentAtResume = rtmp.stats.framesSent
        let recovered = waitUntil(5) {
            let s = rtmp.stats
            return s.state == .publishing && s.queueMillis < 2000 && s.framesSent > sentAtResume + 10
        }
        let took = Date().timeIntervalSince(resumedAt)
        XCTAssertTrue(recovered, "\(rtmp.stats) " + lines.withLock { $0.map(\.line).joined(separator: "\n") })
        print("rtmp-1 recovered \(String(format: "%.1f", took)) s after SIGCONT; dropped \(rtmp.stats.dropped) pictures, \(rtmp.stats.droppedAudio) AAC frames; reconnects \(rtmp.stats.reconnects)")
        call.stop()
        server.stop()
    }

    /// Two ways a server refuses: an application it does not know (nginx-rtmp closes the connection without a
    /// word: the message says what it most likely refused), and a stream name already published (its own
    /// words, "Already publishing"); each destination follows the retry rules (at once, then 2 s) up to
    /// --rtmp-retries and then fails alone, loudly, while the destination that was accepted goes on.
    func testARefusingServerIsReportedInItsWordsAndTheRetryRulesApply() throws {
        let server = try RTMPServer(folder: folder.path("nginx"))
        let wrongApp = "rtmp://127.0.0.1:\(server.port)/nope/key"
        let call = try makeCall(rtmp: [server.url("taken"), wrongApp, server.url("taken")], retries: 2)
        try call.start()
        let first = try writer(call, "rtmp-1")
        let unknown = try writer(call, "rtmp-2")
        let second = try writer(call, "rtmp-3")
        XCTAssertTrue(waitUntil(8) { unknown.stats.state == .failed && [first, second].contains { $0.stats.state == .failed } },
                      lines.withLock { $0.map(\.line).joined(separator: "\n") })
        let (accepted, refused) = first.stats.state == .failed ? (second, first) : (first, second)
        XCTAssertEqual(accepted.stats.state, .publishing, "a destination that fails never stops the others")
        XCTAssertTrue(unknown.stats.lastReason?.contains("does not know the application 'nope'") ?? false, unknown.stats.lastReason ?? "-")
        XCTAssertTrue(refused.stats.lastReason?.contains("Already publishing") ?? false, refused.stats.lastReason ?? "-")
        let log = lines.withLock { $0 }
        for name in ["rtmp-2", refused.name] {
            let attempts = log.filter { $0.line.contains("\(name) connecting") || $0.line.contains("\(name) reconnecting") }
            XCTAssertEqual(attempts.count, 3, "the first, at once, then after 2 s: --rtmp-retries 2")
            if attempts.count == 3 { XCTAssertEqual(attempts[2].at.timeIntervalSince(attempts[1].at), 2.0, accuracy: 0.5) }
            XCTAssertTrue(log.contains { $0.line.contains("error \(name) destination failed: no more attempts (--rtmp-retries)") })
        }
        let outcome = call.stop()
        XCTAssertEqual(Set(outcome.incomplete.map(\.output)), ["rtmp-2", refused.name])
        server.stop()
    }

    /// nginx SIGKILLed and back 3 s later (the issue's case): the destination tries again at once and 2 s later
    /// (both refused), then 5 s after that (publishing: within 6 s of the server's return), each attempt logged
    /// with its reason; the second recording starts with a keyframe and
    /// decodes cleanly; the viewers' VP8 encoder never stopped.
    func testReconnectsOnTheScheduleAfterTheServerIsKilled() throws {
        let server = try RTMPServer(folder: folder.path("nginx"))
        let call = try makeCall(rtmp: [server.url("again")])
        try call.start()
        let rtmp = try writer(call, "rtmp-1")
        XCTAssertTrue(waitUntil(5) { rtmp.stats.state == .publishing })
        usleep(2_000_000)
        let encodedBefore = call.statsJSON
        server.kill()
        let killedAt = Date()
        usleep(3_000_000)
        try server.start()
        let returnedAt = Date()
        XCTAssertTrue(waitUntil(6) { rtmp.stats.state == .publishing && rtmp.stats.reconnects > 0 }, lines.withLock { $0.map(\.line).joined(separator: "\n") })
        print("rtmp-1 publishing again \(String(format: "%.1f", Date().timeIntervalSince(returnedAt))) s after nginx came back")
        usleep(2_000_000)
        call.stop()
        server.stop()

        let log = lines.withLock { $0 }.filter { $0.line.contains("rtmp-1") }
        let attempts = log.filter { $0.line.contains("rtmp-1 reconnecting") }
        XCTAssertEqual(attempts.count, 3, log.map(\.line).joined(separator: "\n"))
        if attempts.count == 3 {
            XCTAssertEqual(attempts[2].at.timeIntervalSince(attempts[1].at), 5.0, accuracy: 0.5, "then after 5 s")
            XCTAssertLessThan(attempts[0].at.timeIntervalSince(killedAt), 1.0, "at once")
            XCTAssertEqual(attempts[1].at.timeIntervalSince(attempts[0].at), 2.0, accuracy: 0.5, "then after 2 s")
            XCTAssertTrue(attempts.allSatisfy { $0.line.contains("reason=") && !$0.line.contains("reason=-") }, "each with its reason")
        }
        XCTAssertTrue(log.contains { $0.line.contains("next attempt") && $0.line.contains("in_ms=2000") })
        XCTAssertEqual(log.filter { $0.line.contains("rtmp-1 publishing") }.count, 2)
        XCTAssertNotEqual(call.statsJSON, encodedBefore)

        let files = server.recordings
        XCTAssertEqual(files.count, 2, "one recording per publish")
        let second = try XCTUnwrap(files.last)
        let stream = try Probe.stream(second)
        XCTAssertEqual(stream.codec, "h264", "the sequence header came first")
        XCTAssertEqual(try Probe.streams(second).map(\.codec).sorted(), ["aac", "h264"], "both sequence headers again")
        XCTAssertEqual(stream.width, 320)
        let frames = try Probe.frames(second)
        XCTAssertGreaterThan(frames.count, 30)
        XCTAssertTrue(frames.first?.key ?? false, "a keyframe first after reconnecting")
        let before = try Probe.frames(try XCTUnwrap(files.first))
        XCTAssertGreaterThan(frames.first?.pts ?? 0, (before.last?.pts ?? .infinity) + 0.8, "time went on across the reconnect, never back")
        XCTAssertEqual(try Probe.decodeErrors(second), "")
    }
}

/// Log lines with the time each was written.
final class TimedLines: Sendable {
    private let lines = Mutex<[(at: Date, line: String)]>([])
    func append(_ line: String) { lines.withLock { $0.append((Date(), line)) } }
    func withLock<R>(_ body: ([(at: Date, line: String)]) -> R) -> R { lines.withLock { body($0) } }
}
