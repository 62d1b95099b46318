import FrameSocket
import FrameWire
import Media
import ScreencastSupport
import TestSupport
@testable import VideoSource
import XCTest

/// The shared source running for real (threads, libvpx, the socket), with short settings.
final class VideoSourceLiveTests: VideoSourceTestCase {
    private func pattern(_ width: Int = 160, _ height: Int = 120, fps: Double = 30) -> FallbackSource {
        .testPattern(TestPatternSettings(width: width, height: height, framesPerSecond: fps))
    }

    func testDefaultsAreTheIssues() {
        let configuration = VideoSourceConfiguration(socketPath: nil)
        XCTAssertEqual(configuration.watchdogSeconds, 5)
        XCTAssertEqual(configuration.keyframeMinSpacingSeconds, 1)
        XCTAssertEqual(configuration.minFramesPerSecond, 5)
        XCTAssertNil(configuration.keyframeIntervalSeconds)
        XCTAssertNil(configuration.bitrateKbps)
        let settings = configuration.encoderSettings(width: 1280, height: 720)
        XCTAssertEqual([settings.cpuUsed, settings.minQuantizer, settings.maxQuantizer, settings.threads], [-6, 12, 56, 1])
        XCTAssertEqual([settings.screenContentMode, settings.staticThreshold], [2, 100])
        XCTAssertEqual(settings.bitrateKbps, 2212)
        XCTAssertThrowsError(try VideoSource(configuration: VideoSourceConfiguration(socketPath: nil, cpuUsed: 3), logger: logger()))
        XCTAssertThrowsError(try VideoSource(configuration: VideoSourceConfiguration(socketPath: nil, minFramesPerSecond: 0.05), logger: logger()))
        // A --max-fps below the default --min-fps is kept: the policy's lowest rate is then the maximum.
        XCTAssertNoThrow(try VideoSourceConfiguration(socketPath: nil, maxFramesPerSecond: 2).validate())
        XCTAssertEqual(EncoderLoop.rateLimits(for: VideoSourceConfiguration(socketPath: nil, maxFramesPerSecond: 2)).minFramesPerSecond, 2)
    }

    /// The low-rate policy live (issue 31): 1280x720 at 60 kbit/s cannot carry 5 fps (230 kbit/s would), so after
    /// the first keyframe the pictures are encoded at 640x360 (a keyframe at the new size first), and decode; with
    /// `--scale-down off` they stay 1280x720.
    func testAStarvedTargetEncodesThePictureSmallerUnlessScalingIsOff() throws {
        for scaling in [true, false] {
            var configuration = VideoSourceConfiguration(socketPath: nil, fallback: pattern(1280, 720, fps: 10), bitrateKbps: 60)
            configuration.scaleDownWhenStarved = scaling
            let source = try VideoSource(configuration: configuration, logger: logger())
            let sink = CollectingSink()
            source.addSink(sink)
            try source.start()
            XCTAssertTrue(waitUntil(timeout: 10) { sink.frames.count >= 4 }, "scaling \(scaling): \(sink.frames.count) frames")
            source.stop()
            let sizes = sink.frames.map { "\($0.width)x\($0.height)" }
            if scaling {
                XCTAssertEqual(sizes.first, "1280x720", "the first picture before the policy has weighed the target")
                XCTAssertEqual(Array(sizes.dropFirst()), Array(repeating: "640x360", count: sizes.count - 1))
                XCTAssertEqual(sink.frames.dropFirst().first?.isKeyframe, true, "a keyframe at the new size")
                XCTAssertEqual(source.stats.scale, 0.5)
            } else {
                XCTAssertEqual(Set(sizes), ["1280x720"])
                XCTAssertEqual(source.stats.scale, 1)
            }
            let decoder = try VP8Decoder()
            var picture = I420Buffer()
            for frame in sink.frames { try decoder.decode(frame.bytes, into: &picture) }
            XCTAssertEqual(picture.width, scaling ? 640 : 1280)
        }
    }

    func testTheTestPatternFeedsEverySinkStartingWithAKeyframe() throws {
        let source = try VideoSource(configuration: VideoSourceConfiguration(socketPath: nil, fallback: pattern()), logger: logger())
        let (a, b) = (CollectingSink(), CollectingSink())
        source.addSink(a)
        source.addSink(b)
        try source.start()
        XCTAssertTrue(waitUntil(timeout: 5) { a.frames.count >= 10 })
        source.stop()
        XCTAssertEqual(a.frames, b.frames)
        XCTAssertEqual([a.finishCount, b.finishCount], [1, 1])
        XCTAssertEqual(a.frames.first?.isKeyframe, true)
        XCTAssertEqual(a.frames.filter(\.isKeyframe).count, 1)
        let decoder = try VP8Decoder()
        var picture = I420Buffer()
        for frame in a.frames {
            XCTAssertEqual([frame.width, frame.height], [160, 120])
            try decoder.decode(frame.bytes, into: &picture)
        }
        let stamps = a.frames.map(\.captureTimestampMicros)
        XCTAssertEqual(stamps, stamps.sorted())
        XCTAssertEqual(Set(stamps).count, stamps.count, "capture timestamps increase")
        XCTAssertEqual(source.stats.source, .testPattern)
        XCTAssertEqual(source.stats.encoded, a.frames.count)
    }

    func testASlowEncoderSideDropsStaleFramesAndNeverQueues() throws {
        let configuration = VideoSourceConfiguration(socketPath: nil, fallback: pattern(fps: 100), maxFramesPerSecond: 240)
        let source = try VideoSource(configuration: configuration, logger: logger())
        let slow = CollectingSink(delayMicros: 80_000)
        source.addSink(slow)
        try source.start()
        var depths: Set<Int> = []
        for _ in 0..<100 {
            depths.insert(source.stats.queueDepth)
            usleep(10_000)
        }
        source.stop()
        let stats = source.stats
        XCTAssertTrue(depths.isSubset(of: [0, 1]), "\(depths)")
        XCTAssertGreaterThan(stats.dropped(.stale), stats.encoded, "most frames are replaced while the encoder waits on the sink")
        XCTAssertLessThanOrEqual(slow.frames.count, 15)
        // Every submitted frame is accounted for: encoded, or dropped as stale (nothing waits after stop).
        XCTAssertEqual(stats.submitted, stats.encoded - stats.refinements - stats.repeats + stats.dropped(.stale)
                       + stats.dropped(.unchanged) + stats.dropped(.encoder) + stats.dropped(.encodeError))
    }

    func testKeyframeRequestsAreCoalescedAndSpacedByAtLeastOneSecond() throws {
        let source = try VideoSource(configuration: VideoSourceConfiguration(socketPath: nil, fallback: pattern()), logger: logger())
        let sink = CollectingSink()
        source.addSink(sink)
        try source.start()
        XCTAssertTrue(waitUntil(timeout: 5) { sink.frames.count >= 5 })
        for _ in 0..<20 {
            source.requestKeyframe()
            usleep(10_000)
        }
        usleep(1_600_000)
        let stats = source.stats
        source.stop()
        let frames = sink.frames
        let arrivals = sink.arrivals
        let keyIndexes = frames.indices.filter { frames[$0].isKeyframe }
        // The first frame, then 20 requests over 200 ms: one keyframe a second after the first, the other
        // 19 requests coalesced into it (counted).
        XCTAssertEqual(keyIndexes.count, 2, "keyframes at \(keyIndexes)")
        for (a, b) in zip(keyIndexes, keyIndexes.dropFirst()) {
            XCTAssertGreaterThanOrEqual(arrivals[b] - arrivals[a], 980_000, "keyframes \(a) and \(b)")
        }
        XCTAssertEqual(stats.keyframeRequests, 20)
        XCTAssertEqual(stats.keyframeRequestsCoalesced, 20 - (keyIndexes.count - 1))
        XCTAssertGreaterThan(frames.count - keyIndexes.count, 10, "deltas keep flowing in between")
    }

    func testTheBitrateChangesAtRunTimeWithoutANewEncoder() throws {
        let capture = LogCapture()
        let source = try VideoSource(
            configuration: VideoSourceConfiguration(socketPath: nil, fallback: pattern(320, 240)), logger: logger(capture))
        let sink = CollectingSink()
        source.addSink(sink)
        try source.start()
        XCTAssertTrue(waitUntil(timeout: 5) { sink.frames.count >= 5 })
        XCTAssertEqual(source.stats.bitrateKbps, 184)  // 320 × 240 × 30 × 0.08 bits
        source.setBitrate(kbps: 600)
        XCTAssertTrue(waitUntil(timeout: 2) { source.stats.bitrateKbps == 600 })
        let countAtChange = sink.frames.count
        XCTAssertTrue(waitUntil(timeout: 5) { sink.frames.count >= countAtChange + 5 })
        source.stop()
        XCTAssertEqual(sink.frames.filter(\.isKeyframe).count, 1, "no new encoder, no new keyframe")
        XCTAssertEqual(capture.count("encoder created"), 1)
        XCTAssertEqual(capture.count("bitrate changed"), 1)
    }

    func testScreenTakesOverAndTheSourceFallsBackWithAKeyframeAtEachSwitch() throws {
        let capture = LogCapture()
        let configuration = VideoSourceConfiguration(socketPath: socketPath, fallback: pattern())
        let source = try VideoSource(configuration: configuration, logger: logger(capture))
        let sink = CollectingSink()
        source.addSink(sink)
        try source.start()
        XCTAssertTrue(waitUntil(timeout: 5) { sink.frames.count >= 5 })

        let sender = try sender()
        for variant in 0..<5 {
            try sender.send(try message(makeDesktop(width: 160, height: 120, variant: variant)))
            usleep(60_000)
        }
        XCTAssertTrue(sender.flush(timeout: .seconds(2)))
        XCTAssertTrue(waitUntil(timeout: 3) { source.stats.decoded == 5 })
        XCTAssertEqual(source.activeSource, .screen)
        sender.close()
        XCTAssertTrue(waitUntil(timeout: 3) { source.activeSource == .testPattern })
        let before = sink.frames.count
        XCTAssertTrue(waitUntil(timeout: 3) { sink.frames.count >= before + 5 })
        source.stop()

        // Tell pattern frames from desktop frames by which reference each decoded picture is nearer to.
        let decoder = try VP8Decoder()
        var picture = I420Buffer()
        var patternReference = I420Buffer()
        TestPatternPainter(width: 160, height: 120).paint(frameNumber: 0, timestampMicros: 0, into: &patternReference)
        let desktopReference = makeDesktop(width: 160, height: 120, variant: 2)
        func distance(_ a: I420Buffer, _ b: I420Buffer) -> Int {
            zip(a.y, b.y).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        }
        var kinds: [Character] = []
        for frame in sink.frames {
            try decoder.decode(frame.bytes, into: &picture)
            kinds.append(distance(picture, patternReference) < distance(picture, desktopReference) ? "P" : "D")
        }
        let runs = kinds.reduce(into: [(Character, Int)]()) { runs, kind in
            if runs.last?.0 == kind { runs[runs.count - 1].1 += 1 } else { runs.append((kind, 1)) }
        }
        XCTAssertEqual(runs.map(\.0), ["P", "D", "P"], "\(String(kinds))")
        // A keyframe at the start and at each switch, and nowhere else (the size never changes).
        var runStarts: [Int] = []
        var index = 0
        for run in runs { runStarts.append(index); index += run.1 }
        let keyIndexes = sink.frames.indices.filter { sink.frames[$0].isKeyframe }
        XCTAssertEqual(keyIndexes, runStarts, "\(String(kinds))")
        XCTAssertEqual(capture.count("encoder created"), 1, "switching never re-creates the encoder")
        XCTAssertEqual(sink.finishCount, 1)
    }

    func testUndecodableBodiesAreDroppedAndCountedAndTheStreamGoesOn() throws {
        let source = try VideoSource(configuration: VideoSourceConfiguration(socketPath: socketPath), logger: logger())
        let sink = CollectingSink()
        source.addSink(sink)
        try source.start()
        let sender = try sender()
        let good = try message(makeDesktop(width: 96, height: 64, variant: 1))
        let garbage = FrameEncoder.encode(header: FrameHeader(contentLength: 500, bufferWidth: 96, bufferHeight: 64),
                                          body: [UInt8](repeating: 0x5A, count: 500))
        var jpegCut = try JPEGEncoder().encode(makeDesktop(width: 96, height: 64, variant: 2), quality: 90)
        jpegCut.removeLast(jpegCut.count / 2)
        let truncated = FrameEncoder.encode(header: FrameHeader(contentLength: jpegCut.count, bufferWidth: 96, bufferHeight: 64),
                                            body: jpegCut)
        for bytes in [good, garbage, truncated, try message(makeDesktop(width: 96, height: 64, variant: 3))] {
            try sender.send(bytes)
            usleep(50_000)
        }
        XCTAssertTrue(waitUntil(timeout: 3) { source.stats.received == 4 })
        XCTAssertTrue(source.stats.screenConnected, "the connection stays up")
        sender.close()
        XCTAssertTrue(waitUntil(timeout: 3) { !source.stats.screenConnected })
        source.stop()
        let stats = source.stats
        XCTAssertEqual([stats.received, stats.decoded, stats.dropped(.decodeError)], [4, 2, 2])
        XCTAssertGreaterThanOrEqual(sink.frames.count, 2)
    }

    func testASizeMismatchIsLoggedOncePerChange() throws {
        let capture = LogCapture()
        let source = try VideoSource(configuration: VideoSourceConfiguration(socketPath: socketPath), logger: logger(capture))
        try source.start()
        let sender = try sender()
        let picture = makeDesktop(width: 80, height: 48, variant: 0)
        let plan: [(Int, Int)] = [(160, 96), (160, 96), (160, 96), (80, 48), (80, 48), (320, 200), (320, 200)]
        for (width, height) in plan {
            try sender.send(try message(picture, bufferWidth: width, bufferHeight: height))
        }
        XCTAssertTrue(sender.flush(timeout: .seconds(2)))
        XCTAssertTrue(waitUntil(timeout: 3) { source.stats.decoded == plan.count })
        sender.close()
        source.stop()
        XCTAssertEqual(capture.count("JPEG size differs"), 2, capture.all.joined(separator: "\n"))
        XCTAssertEqual(capture.count("matches Buffer-Width/Height again"), 1)
        XCTAssertEqual(source.stats.sizeMismatches, 5)
    }

    func testTheWatchdogDropsASilentSenderButNotAStaticScreenWithKeepalives() throws {
        let capture = LogCapture()
        let configuration = VideoSourceConfiguration(socketPath: socketPath, watchdogSeconds: 1)
        let source = try VideoSource(configuration: configuration, logger: logger(capture))
        try source.start()

        // A sender that connects and sends half a header, then nothing.
        let silent = try RawClient(path: socketPath.string)
        silent.send(Array("HTTP/1.1 200 OK\r\nContent-Len".utf8))
        let connectedAt = Date()
        XCTAssertTrue(silent.waitForClose(timeout: 3), "dropped")
        let after = Date().timeIntervalSince(connectedAt)
        XCTAssertGreaterThanOrEqual(after, 0.9)
        XCTAssertLessThan(after, 2.0)
        // The socket closes before the drop is reported: wait for the report rather than race it.
        XCTAssertTrue(waitUntil(timeout: 2) { source.stats.watchdogDrops == 1 })
        XCTAssertTrue(waitUntil(timeout: 2) { capture.count("sender dropped: no complete frame in time") == 1 })

        // The socket still serves: a static screen sending a keepalive every 0.4 s stays for 2.5 s.
        let keepalive = try message(makeDesktop(width: 96, height: 64, variant: 4))
        let sender = try sender()
        XCTAssertTrue(waitUntil(timeout: 3) { source.stats.connections == 2 }, "connected")
        XCTAssertEqual(source.stats.sendersTotal, 0, "the silent one sent no complete frame")
        for _ in 0..<7 {
            sender.offer(keepalive)
            usleep(400_000)
        }
        XCTAssertEqual(source.stats.received, 7)
        // The last keepalive may still be on its way through the encoder thread (a busy machine).
        XCTAssertTrue(waitUntil(timeout: 2) { source.stats.dropped(.unchanged) == 6 }, "keepalives repeat the picture")
        XCTAssertEqual(source.stats.watchdogDrops, 1)
        XCTAssertTrue(source.stats.screenConnected)
        XCTAssertEqual(source.stats.senders, 1, "one sender connected now")
        XCTAssertEqual(source.stats.sendersTotal, 1)
        // The encoder thread takes the last keepalive after it is counted received (a loaded machine: later).
        XCTAssertTrue(waitUntil(timeout: 3) { source.stats.dropped(.unchanged) == 6 },
                      "keepalives repeat the picture: \(source.stats.dropped(.unchanged)) unchanged")
        sender.close()
        source.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: socketPath.string), "socket file removed")
    }

    func testAFileSourcePlaysItsDumpLoopingOrOnce() throws {
        var dump: [UInt8] = []
        for index in 0..<3 {
            dump += try message(makeDesktop(width: 64, height: 48, variant: index), timestamp: 1_000_000 + UInt64(index) * 50_000)
        }
        let path = folder.path("three.frames")
        try Data(dump).write(to: URL(fileURLWithPath: path))

        let looping = try VideoSource(
            configuration: VideoSourceConfiguration(socketPath: nil, fallback: .file(path: path, loop: true)), logger: logger())
        try looping.start()
        XCTAssertTrue(waitUntil(timeout: 5) { looping.stats.received >= 7 }, "loops")
        looping.stop()
        XCTAssertEqual(looping.stats.source, .file)

        let ended = DispatchSemaphore(value: 0)
        let once = try VideoSource(
            configuration: VideoSourceConfiguration(socketPath: nil, fallback: .file(path: path, loop: true), endWhenSourceEnds: true),
            logger: logger()) { event in if case .sourceEnded = event { ended.signal() } }
        let sink = CollectingSink()
        once.addSink(sink)
        try once.start()
        XCTAssertEqual(ended.wait(timeout: .now() + 5), .success)
        once.stop()
        XCTAssertEqual(once.stats.received, 3)
        XCTAssertEqual(once.stats.decoded, 3)
        XCTAssertGreaterThanOrEqual(sink.frames.count, 3, "the last frame is flushed at stop")

        XCTAssertThrowsError(try VideoSource(
            configuration: VideoSourceConfiguration(socketPath: nil, fallback: .file(path: folder.path("none"), loop: true)),
            logger: logger()))
        try Data("not a dump".utf8).write(to: URL(fileURLWithPath: folder.path("bad.frames")))
        XCTAssertThrowsError(try VideoSource(
            configuration: VideoSourceConfiguration(socketPath: nil, fallback: .file(path: folder.path("bad.frames"), loop: true)),
            logger: logger()))
    }

    /// With an injected clock, capture and RTP timestamps are exactly the clock's: a replay is exact.
    func testAnInjectedClockMakesTimestampsExact() throws {
        var dump: [UInt8] = []
        for index in 0..<3 {
            dump += try message(makeDesktop(width: 64, height: 48, variant: index), timestamp: 5_000_000 + UInt64(index) * 50_000)
        }
        let path = folder.path("three.frames")
        try Data(dump).write(to: URL(fileURLWithPath: path))
        let clock = ManualVideoClock(startMicros: 10_000_000)
        let configuration = VideoSourceConfiguration(
            socketPath: nil, fallback: .file(path: path, loop: false), refinement: .off, endWhenSourceEnds: true)
        let source = try VideoSource(configuration: configuration, clock: clock, logger: logger())
        let sink = CollectingSink()
        source.addSink(sink)
        try source.start()
        for step in 1...3 {
            XCTAssertTrue(waitUntil(timeout: 3) { sink.frames.count == step }, "frame \(step)")
            usleep(150_000)  // nothing else happens while the clock stands still
            XCTAssertEqual(sink.frames.count, step)
            clock.advance(by: 50_000)
        }
        source.stop()
        XCTAssertEqual(sink.frames.map(\.captureTimestampMicros), [10_000_000, 10_050_000, 10_100_000])
        XCTAssertEqual(sink.frames.map(\.rtpTimestamp), [900_000, 904_500, 909_000])
    }

    func testASocketInUseIsAnErrorAndLeavesNothingRunning() throws {
        let first = try VideoSource(configuration: VideoSourceConfiguration(socketPath: socketPath), logger: logger())
        try first.start()
        let second = try VideoSource(configuration: VideoSourceConfiguration(socketPath: socketPath, fallback: pattern()), logger: logger())
        XCTAssertThrowsError(try second.start()) { error in
            guard case VideoSourceError.socket(.inUse) = error else { return XCTFail("\(error)") }
        }
        first.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: socketPath.string))
    }
}
