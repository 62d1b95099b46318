import Foundation
import FrameSocket
import FrameWire
import Glibc
import Media
import ScreencastSupport
import TestSupport
@testable import VideoSource
import XCTest

/// What the robustness pass fixed: giant pictures (decode budget, encode limit), memory that was never
/// given back, empty connections that forced keyframes, and log lines that could flood.
final class VideoSourceLimitsTests: VideoSourceTestCase {
    private func pattern(_ width: Int = 160, _ height: Int = 120, fps: Double = 30) -> FallbackSource {
        .testPattern(TestPatternSettings(width: width, height: height, framesPerSecond: fps))
    }

    /// A real JPEG whose SOF claims `width`×`height` (the header reads fine; the data is far too short).
    private func forged(width: Int, height: Int) throws -> [UInt8] {
        var jpeg = try JPEGEncoder().encode(makeDesktop(width: 64, height: 48, variant: 1), quality: 80)
        let sof = try XCTUnwrap((0..<jpeg.count - 9).first { jpeg[$0] == 0xFF && (jpeg[$0 + 1] == 0xC0 || jpeg[$0 + 1] == 0xC2) })
        jpeg[sof + 5] = UInt8(height >> 8)
        jpeg[sof + 6] = UInt8(height & 0xFF)
        jpeg[sof + 7] = UInt8(width >> 8)
        jpeg[sof + 8] = UInt8(width & 0xFF)
        return FrameEncoder.encode(header: FrameHeader(contentLength: jpeg.count, bufferWidth: width, bufferHeight: height), body: jpeg)
    }

    // MARK: - Giant pictures

    func testTheLimitsDefaultTo8KDecodeAnd4KEncode() {
        let configuration = VideoSourceConfiguration(socketPath: nil)
        XCTAssertEqual(configuration.maximumDecodePixels, 7680 * 4320)
        XCTAssertEqual(configuration.maximumEncodeSize, PictureSize(width: 3840, height: 2160))
        for bad in [
            VideoSourceConfiguration(socketPath: nil, maximumDecodePixels: 0),
            VideoSourceConfiguration(socketPath: nil, maximumEncodeSize: PictureSize(width: 8, height: 720)),
            VideoSourceConfiguration(socketPath: nil, maximumEncodeSize: PictureSize(width: 1280, height: 20000)),
        ] {
            XCTAssertThrowsError(try bad.validate())
        }
    }

    /// A valid 16383×16383 JPEG header (allowed on the wire) is refused from its header: counted as
    /// `tooLarge`, not decoded, not switching the source, logged once per refused size.
    func testPicturesAboveTheDecodeBudgetAreRefusedFromTheirHeader() throws {
        let capture = LogCapture()
        // A small budget, so that a real (not forged) JPEG can be over it too.
        let configuration = VideoSourceConfiguration(socketPath: socketPath, maximumDecodePixels: 100 * 100)
        let source = try VideoSource(configuration: configuration, logger: logger(capture))
        let sink = CollectingSink()
        source.addSink(sink)
        try source.start()
        let sender = try sender()
        let giant = try forged(width: 16383, height: 16383)
        let plan = [
            giant, giant,
            try message(makeDesktop(width: 160, height: 120, variant: 1)),  // 19 200 pixels: over the budget
            try message(makeDesktop(width: 96, height: 64, variant: 2)),    // 6 144: decoded
            try forged(width: 8000, height: 8000),
        ]
        for bytes in plan { try sender.send(bytes) }
        // Generous bounds (they only end a wait): under a sanitizer on a busy machine 3 s were not enough.
        XCTAssertTrue(sender.flush(timeout: .seconds(10)))
        XCTAssertTrue(waitUntil(timeout: 10) { source.stats.received == plan.count })
        XCTAssertTrue(waitUntil(timeout: 10) { sink.frames.count >= 1 })
        sender.close()
        XCTAssertTrue(waitUntil(timeout: 3) { capture.count("screen sender ended") == 1 })
        source.stop()
        let stats = source.stats
        XCTAssertEqual(stats.dropped(.tooLarge), 4)
        XCTAssertEqual(stats.dropped(.decodeError), 0, "refused before decoding, not failed while decoding")
        XCTAssertEqual(stats.decoded, 1)
        XCTAssertTrue(sink.frames.allSatisfy { $0.width == 96 && $0.height == 64 })
        XCTAssertEqual(capture.count("exceeds the decode budget"), 3, "16383x16383, 160x120, 8000x8000:\n" + capture.all.joined(separator: "\n"))
        let ended = try XCTUnwrap(capture.all.first { $0.contains("screen sender ended") })
        XCTAssertTrue(ended.contains("frames=5 decoded=1 decode_failed=0 too_large=4"), ended)
        XCTAssertEqual(stats.json.serialized.contains("\"tooLarge\":4"), true, stats.json.serialized)
    }

    /// Pictures above the encode limit are downscaled (libyuv) before encoding, keeping their aspect ratio
    /// (portrait ones fit the limit turned); logged once per size change.
    func testPicturesAboveTheEncodeLimitAreDownscaledBeforeEncoding() throws {
        let capture = LogCapture()
        let configuration = VideoSourceConfiguration(
            socketPath: socketPath, refinement: .off, maximumEncodeSize: PictureSize(width: 160, height: 90))
        let source = try VideoSource(configuration: configuration, logger: logger(capture))
        let sink = CollectingSink()
        source.addSink(sink)
        try source.start()
        let sender = try sender()
        let landscape = (0..<3).map { makeDesktop(width: 320, height: 180, variant: $0) }
        let portrait = makeDesktop(width: 180, height: 320, variant: 5)
        let small = makeDesktop(width: 128, height: 72, variant: 6)
        let pictures = landscape + [portrait, small]
        // Each picture is encoded before the next is sent: on a loaded machine a picture sent while the encoder
        // is still busy would be superseded by the next (newest wins), and the sizes below would be short.
        for (index, picture) in pictures.enumerated() {
            try sender.send(try message(picture))
            XCTAssertTrue(waitUntil(timeout: 10) { source.stats.decoded == index + 1 }, "picture \(index) not decoded")
            XCTAssertTrue(waitUntil(timeout: 10) { sink.frames.count == index + 1 }, "picture \(index): \(sink.frames.count) encoded")
            usleep(80_000)  // frames a few intervals apart, as a screen sends them: libvpx keeps its quality
        }
        sender.close()
        source.stop()
        XCTAssertEqual(sink.frames.map { "\($0.width)x\($0.height)" }, ["160x90", "160x90", "160x90", "90x160", "128x72"])
        XCTAssertEqual(source.stats.downscaled, 4)
        XCTAssertEqual(capture.count("picture above the encode limit; downscaled"), 2, capture.all.joined(separator: "\n"))
        XCTAssertEqual(capture.count("picture within the encode limit again"), 1)
        // The encoded picture is the downscaled one.
        let decoder = try VP8Decoder()
        var decoded = I420Buffer()
        var expected = I420Buffer()
        for (frame, picture) in zip(sink.frames, pictures) {
            try decoder.decode(frame.bytes, into: &decoded)
            if picture.width > 160 || picture.height > 160 {
                try picture.scaled(to: PictureSize(width: frame.width, height: frame.height), into: &expected)
            } else {
                expected = picture
            }
            let psnr = lumaPSNR(decoded, expected)
            XCTAssertGreaterThan(psnr, 24, "\(frame.width)x\(frame.height)")
        }
    }

    // MARK: - Memory

    func testThePoolFreesBuffersFarLargerThanThePictures() {
        let pool = FramePool()
        var big = pool.take(width: 1920, height: 1080)
        big.resize(width: 1920, height: 1080)
        pool.recycle(big)
        let bigBytes = I420Buffer.byteCount(width: 1920, height: 1080)
        XCTAssertGreaterThanOrEqual(pool.retainedBytes, bigBytes)
        // Small pictures follow: the big buffer is reused at first (sizes may alternate), then freed.
        for _ in 0..<10 {
            var small = pool.take(width: 160, height: 120)
            small.resize(width: 160, height: 120)
            pool.recycle(small)
        }
        XCTAssertLessThan(pool.retainedBytes, 2 * I420Buffer.byteCount(width: 160, height: 120) + FramePool.oversizeFloorBytes)
        XCTAssertEqual(pool.releasedBuffers, 1)

        // Sizes that alternate (1080p and 720p, 2.25x the bytes) keep their buffers.
        let alternating = FramePool()
        for _ in 0..<20 {
            var a = alternating.take(width: 1920, height: 1080)
            a.resize(width: 1920, height: 1080)
            var b = alternating.take(width: 1280, height: 720)
            b.resize(width: 1280, height: 720)
            alternating.recycle(a)
            alternating.recycle(b)
        }
        XCTAssertEqual(alternating.releasedBuffers, 0)
        XCTAssertEqual(alternating.available, 2)
    }

    /// After a large picture, once only small ones come, the pipeline re-makes its JPEG decoder (whose
    /// scratch planes were sized for the large one) and its buffers come from the pool.
    func testThePipelineRenewsItsDecoderAfterALargePicture() throws {
        let pool = FramePool()
        let pipeline = try WireFramePipeline(pool: pool, logger: logger(), maximumDimension: 16384, maximumDecodePixels: 7680 * 4320)
        func frame(_ picture: I420Buffer, orientation: Int = 1) throws -> Frame {
            var frames: [Frame] = []
            var decoder = FrameDecoder()
            decoder.feed(try message(picture, orientation: orientation)) { if case .frame(let f) = $0 { frames.append(f) } }
            return try XCTUnwrap(frames.first)
        }
        let large = try frame(makeDesktop(width: 1281, height: 801, variant: 0), orientation: 6)  // odd: luma through scratch
        guard case .success(let big) = pipeline.process(large, captureTimestampMicros: 1) else { return XCTFail("large") }
        XCTAssertEqual([big.width, big.height], [801, 1281])
        pool.recycle(big.picture)
        let small = try frame(makeDesktop(width: 64, height: 48, variant: 1))
        for index in 0..<9 {
            guard case .success(let picture) = pipeline.process(small, captureTimestampMicros: 2 + UInt64(index)) else { return XCTFail("small") }
            pool.recycle(picture.picture)
        }
        XCTAssertEqual(pipeline.decoderRenewals, 1)
        XCTAssertLessThan(pool.retainedBytes, FramePool.oversizeFloorBytes * 4, "the large buffers are gone from the pool too")
        // Refused from the header: nothing is decoded, nothing taken from the pool.
        let tight = try WireFramePipeline(pool: pool, logger: logger(), maximumDimension: 16384, maximumDecodePixels: 1000)
        guard case .failure(.tooLarge(64, 48, 1000)) = tight.process(small, captureTimestampMicros: 20) else { return XCTFail("budget") }
    }

    /// One big picture, then small ones: the pool's retained bytes (`poolBytes`, "pool.bytes") fall back.
    func testAfterOneBigPictureThePoolGivesItsMemoryBack() throws {
        let source = try VideoSource(configuration: VideoSourceConfiguration(socketPath: socketPath), logger: logger())
        let sink = CollectingSink()
        source.addSink(sink)
        try source.start()
        let sender = try sender()
        try sender.send(try message(makeDesktop(width: 1920, height: 1080, variant: 0), quality: 50))
        XCTAssertTrue(waitUntil(timeout: 5) { sink.frames.count == 1 })
        for variant in 1...14 {
            try sender.send(try message(makeDesktop(width: 160, height: 120, variant: variant)))
            XCTAssertTrue(waitUntil(timeout: 3) { source.stats.decoded == variant + 1 })
            usleep(40_000)
        }
        // Every picture is encoded, replaced while the encoder was busy, or dropped by libvpx's rate control
        // (the big keyframe overspent the target); on a loaded machine a pause can also bring a refinement
        // re-encode, which is not a picture of its own.
        XCTAssertTrue(waitUntil(timeout: 10) {
            let stats = source.stats
            return sink.frames.count - stats.refinements - stats.repeats + stats.dropped(.stale) + stats.dropped(.encoder) == 15
        }, "encoded \(sink.frames.count), stats \(source.stats.json)")
        sender.close()
        XCTAssertTrue(waitUntil(timeout: 3) { !source.stats.screenConnected })
        // Without the limit the 1080p allocation went round the pool for ever (a small picture reuses a
        // buffer's storage, keeping its capacity).
        let bigBytes = I420Buffer.byteCount(width: 1920, height: 1080)
        XCTAssertLessThan(source.stats.poolBytes, bigBytes, "freed once only small pictures came")
        XCTAssertLessThanOrEqual(source.stats.poolBytes, 4 * 2 * I420Buffer.byteCount(width: 160, height: 120) + 4 * FramePool.oversizeFloorBytes)
        XCTAssertEqual(number(source.stats.json, "pool", "bytes"), source.stats.poolBytes)
        source.stop()
    }

    /// Senders that each bring one picture and leave, in a loop: every one takes over and hands back (and
    /// is counted), but the info log holds a burst of their switch and end lines, the rest at debug.
    func testOnePictureSendersInALoopDoNotFloodTheInfoLog() throws {
        let capture = LogCapture()
        let source = try VideoSource(
            configuration: VideoSourceConfiguration(socketPath: socketPath, fallback: pattern()), logger: logger(capture))
        try source.start()
        let picture = try message(makeDesktop(width: 64, height: 48, variant: 2))
        let count = 30
        for index in 1...count {
            let client = try RawClient(path: socketPath.string)
            client.send(picture)
            XCTAssertTrue(waitUntil(timeout: 3) { source.stats.decoded == index }, "sender \(index)")
        }
        XCTAssertTrue(waitUntil(timeout: 3) { source.stats.sendersTotal == count && !source.stats.screenConnected })
        XCTAssertEqual(source.stats.senders, 0, "none connected now")
        XCTAssertEqual(source.stats.connections, count)
        source.stop()
        func lines(_ level: String, _ text: String) -> Int { capture.all.filter { $0.hasPrefix(level) && $0.contains(text) }.count }
        for text in ["screen takes over", "screen left; falling back", "screen sender ended"] {
            XCTAssertLessThanOrEqual(lines("info", text), 9, text)
            XCTAssertEqual(lines("info", text) + lines("debug", text), count, "\(text): every one logged at one level or the other")
        }
    }

    // MARK: - Empty connections

    /// Connections that bring no picture neither switch the source nor cost keyframes; their log lines
    /// are rate-limited. A sender that does bring pictures still takes over and hands back.
    func testEmptyConnectionsNeitherSwitchTheSourceNorCostKeyframes() throws {
        let capture = LogCapture()
        let source = try VideoSource(
            configuration: VideoSourceConfiguration(socketPath: socketPath, fallback: pattern()), logger: logger(capture))
        let sink = CollectingSink()
        source.addSink(sink)
        try source.start()
        XCTAssertTrue(waitUntil(timeout: 5) { sink.frames.count >= 5 })
        let count = 40
        for index in 1...count {
            do {
                let client = try RawClient(path: socketPath.string)
                if index % 4 == 0 {
                    // Some send a frame that does not decode: still no picture, still no switch.
                    client.send(FrameEncoder.encode(header: FrameHeader(contentLength: 64, bufferWidth: 8, bufferHeight: 8),
                                                    body: [UInt8](repeating: 0x33, count: 64)))
                }
                XCTAssertTrue(waitUntil(timeout: 2) { source.stats.connections == index }, "connection \(index)")
            }
            XCTAssertTrue(waitUntil(timeout: 2) { !source.stats.screenConnected }, "connection \(index) ended")
        }
        // Only the connections that sent a (bad) frame count as senders; none is connected now.
        XCTAssertEqual(source.stats.sendersTotal, count / 4)
        XCTAssertEqual(source.stats.senders, 0)
        let framesBefore = sink.frames.count
        XCTAssertTrue(waitUntil(timeout: 3) { sink.frames.count >= framesBefore + 5 })
        XCTAssertEqual(source.activeSource, .testPattern)
        XCTAssertEqual(sink.frames.filter(\.isKeyframe).count, 1, "no keyframe for \(count) empty connections")
        XCTAssertEqual(capture.count("screen takes over"), 0)
        XCTAssertEqual(capture.count("source switched"), 0)
        XCTAssertEqual(source.stats.dropped(.decodeError), count / 4)
        let endLines = capture.all.filter { $0.hasPrefix("info") && $0.contains("screen sender ended") }.count
        // 30 empty ones and 10 that sent a broken frame, under one limit: 8 at once, then one per 5 s.
        XCTAssertLessThanOrEqual(endLines, 9, capture.all.joined(separator: "\n"))

        // A sender with a picture takes over (a keyframe) and hands back when it leaves (another).
        let sender = try sender()
        try sender.send(try message(makeDesktop(width: 160, height: 120, variant: 3)))
        XCTAssertTrue(waitUntil(timeout: 3) { source.activeSource == .screen })
        XCTAssertTrue(waitUntil(timeout: 3) { sink.frames.filter(\.isKeyframe).count == 2 }, "the screen's picture is encoded")
        sender.close()
        XCTAssertTrue(waitUntil(timeout: 3) { source.activeSource == .testPattern })
        let afterBack = sink.frames.count
        XCTAssertTrue(waitUntil(timeout: 3) { sink.frames.count >= afterBack + 3 })
        source.stop()
        XCTAssertEqual(sink.frames.filter(\.isKeyframe).count, 3)
        XCTAssertEqual(capture.count("screen takes over"), 1)
    }

    // MARK: - Log floods

    func testTheRateLimiterLetsABurstThroughThenOneLinePerInterval() {
        var limiter = LogRateLimiter(burst: 3, intervalMicros: 5_000_000)
        let start: UInt64 = 100_000_000
        XCTAssertEqual((0..<3).map { limiter.admit(now: start + UInt64($0)) }, [0, 0, 0])
        XCTAssertEqual((0..<50).compactMap { limiter.admit(now: start + 10 + UInt64($0) * 1000) }, [], "held back")
        XCTAssertNil(limiter.admit(now: start + 4_900_000))
        XCTAssertEqual(limiter.admit(now: start + 5_000_100), 51, "the next line carries the count")
        XCTAssertNil(limiter.admit(now: start + 5_000_200))
        // A quiet spell refills the burst.
        XCTAssertEqual((0..<3).map { limiter.admit(now: start + 60_000_000 + UInt64($0)) }, [1, 0, 0])
        XCTAssertNil(limiter.admit(now: start + 60_000_010))
        // `level`: the asked level while admitted (with the count), debug while held back.
        var levels = LogRateLimiter(burst: 1, intervalMicros: 5_000_000)
        XCTAssertTrue(levels.level(.warning, now: start) == (.warning, 0))
        XCTAssertTrue(levels.level(.warning, now: start + 1) == (.debug, 0))
        XCTAssertTrue(levels.level(.warning, now: start + 2) == (.debug, 0))
        XCTAssertTrue(levels.level(.warning, now: start + 5_000_000) == (.warning, 2))
    }

    /// Sizes and rotations that alternate on every frame: the "once per change" lines stay a handful.
    func testAlternatingSizesAndRotationsDoNotFloodTheLog() throws {
        let capture = LogCapture()
        let source = try VideoSource(configuration: VideoSourceConfiguration(socketPath: socketPath), logger: logger(capture))
        try source.start()
        let sender = try sender()
        let picture = makeDesktop(width: 64, height: 48, variant: 0)
        let frames = 40
        for index in 0..<frames {
            let lie = index % 2 == 0
            try sender.send(try message(picture, bufferWidth: lie ? 128 : 64, bufferHeight: lie ? 96 : 48,
                                        orientation: index % 2 == 0 ? 1 : 6))
        }
        XCTAssertTrue(sender.flush(timeout: .seconds(2)))
        XCTAssertTrue(waitUntil(timeout: 5) { source.stats.decoded == frames })
        sender.close()
        source.stop()
        XCTAssertEqual(source.stats.sizeMismatches, frames / 2, "every mismatch is still counted")
        let sizeLines = capture.count("JPEG size differs") + capture.count("matches Buffer-Width/Height again")
        // 3 at once, one more per 5 s (the test takes well under that; 4 allows for a slow machine).
        XCTAssertTrue((3...4).contains(sizeLines), capture.all.joined(separator: "\n"))
        XCTAssertTrue((3...4).contains(capture.count("rotation degrees=")), capture.all.joined(separator: "\n"))
    }

    // MARK: - Files that are no dump

    func testAFileSourceThatIsNoRegularFileSaysWhatItIs() throws {
        let fifo = folder.path("fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let empty = folder.path("empty.frames")
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: Data()))
        let cases: [(String, String)] = [
            (folder.path(""), "Is a directory"),
            (fifo, "not a regular file (a FIFO)"),
            ("/dev/null", "not a regular file (a device)"),
            (folder.path("missing.frames"), "No such file or directory"),
            (empty, "the file is empty"),
        ]
        for (path, reason) in cases {
            let started = Date()
            XCTAssertThrowsError(try VideoSource(
                configuration: VideoSourceConfiguration(socketPath: nil, fallback: .file(path: path, loop: true)), logger: logger())
            ) { error in
                XCTAssertEqual(error as? VideoSourceError, .unreadableDump(path: path, reason: reason))
                XCTAssertEqual("\(error)", "cannot read dump \(path): \(reason)")
            }
            XCTAssertLessThan(Date().timeIntervalSince(started), 2, "\(path): a FIFO must not block")
        }
    }

    // MARK: - Recording failures

    func testARecordingThatCannotBeWrittenReportsItsFailure() throws {
        let frame = EncodedFrame(bytes: [UInt8](repeating: 0x10, count: 100), isKeyframe: true, captureTimestampMicros: 1_000, width: 64, height: 48)
        let full = try IVFRecorder(path: "/dev/full", logger: logger())
        full.consume(frame)
        full.consume(frame)
        full.finish()
        XCTAssertEqual(full.failure, "No space left on device")
        XCTAssertEqual(full.framesWritten, 0)

        let good = try IVFRecorder(path: folder.path("good.ivf"), logger: logger())
        good.consume(frame)
        good.finish()
        XCTAssertNil(good.failure)
        XCTAssertEqual(good.framesWritten, 1)
    }
}

/// A number inside a `JSONValue` object, by key path.
private func number(_ value: JSONValue, _ path: String...) -> Int? {
    var current = value
    for key in path {
        guard case .object(let fields) = current, let next = fields.first(where: { $0.0 == key })?.1 else { return nil }
        current = next
    }
    if case .int(let n) = current { return Int(n) }
    return nil
}
