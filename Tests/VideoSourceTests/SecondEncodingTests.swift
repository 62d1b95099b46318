import Foundation
import Media
import TestSupport
@testable import VideoSource
import XCTest

/// The second, lower-rate encoding (issue 12) with real libvpx on a real screen recording: it encodes the
/// same pictures as the main encoder, scaled down, on its own thread; its output decodes to the scaled source.
final class SecondEncodingTests: VideoSourceTestCase {
    private let dump = TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/window-drag.frames").path

    private func source() throws -> VideoSource {
        try VideoSource(configuration: VideoSourceConfiguration(socketPath: nil, fallback: .file(path: dump, loop: true), bitrateKbps: 3000),
                        logger: logger())
    }

    /// Mean absolute difference of two pictures' Y planes (same size).
    private func lumaDistance(_ a: I420Buffer, _ b: I420Buffer) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var sum = 0
        a.withUnsafePlanes { ay, _, _ in
            b.withUnsafePlanes { by, _, _ in
                for row in 0..<a.height {
                    for col in 0..<a.width { sum += abs(Int(ay[row * a.yStride + col]) - Int(by[row * b.yStride + col])) }
                }
            }
        }
        return Double(sum) / Double(a.width * a.height)
    }

    func testTheSecondEncodingDecodesToTheHalfSizeSourceBesideTheMainOne() throws {
        // The recording's pictures (640×360), scaled as the second encoding scales them (box, half each side).
        let originals = try EncoderReplay.pictures(fromDump: dump)
        let scaled = try originals.map { frame -> I420Buffer in
            var out = I420Buffer()
            try frame.picture.scaled(to: PictureSize(width: 320, height: 180), filter: .box, into: &out)
            return out
        }
        let source = try source()
        let main = CollectingSink(), low = CollectingSink()
        source.addSink(main)
        let second = SecondEncoding(source: source, bitrateKbps: 1500, divisor: 2, logger: logger())
        second.addSink(low)
        try source.start()
        second.start()
        XCTAssertTrue(waitUntil(timeout: 20) { low.frames.count >= 40 }, "second encoding frames: \(low.frames.count)")
        second.stop()
        let lowCount = low.frames.count
        usleep(300_000)
        XCTAssertEqual(low.frames.count, lowCount, "no frame after stop()")
        XCTAssertGreaterThan(main.frames.count, 0)
        source.stop()

        let frames = low.frames
        XCTAssertEqual(frames.first?.isKeyframe, true)
        XCTAssertEqual(Set(frames.map { "\($0.width)x\($0.height)" }), ["320x180"])
        XCTAssertEqual(Set(main.frames.map { "\($0.width)x\($0.height)" }), ["640x360"], "the main encoding keeps its size")
        // The same pictures as the main encoder: every new frame's capture time is one the main encoder encoded.
        let mainTimes = Set(main.frames.map(\.captureTimestampMicros))
        let shared = frames.filter { mainTimes.contains($0.captureTimestampMicros) }.count
        XCTAssertGreaterThanOrEqual(shared, frames.count * 3 / 4, "low frames with a main frame's capture time")
        // Each decoded picture is one of the scaled source pictures, within a small error (best match).
        let decoder = try VP8Decoder()
        var picture = I420Buffer()
        var worst = 0.0
        for frame in frames {
            XCTAssertTrue(try decoder.decode(frame.bytes, into: &picture))
            let best = scaled.map { lumaDistance(picture, $0) }.min() ?? .infinity
            worst = max(worst, best)
        }
        print("second encoding: \(frames.count) frames, \(frames.filter(\.isKeyframe).count) keyframes, worst mean |ΔY| \(worst)")
        XCTAssertLessThan(worst, 1.0, "decoded low frames match the scaled source")
        let stats = second.stats
        XCTAssertEqual([stats.width, stats.height], [320, 180])
        XCTAssertEqual(stats.encoded, frames.count)
        XCTAssertEqual(stats.bitrateKbps, 1500)
    }

    func testKeyframesDivisorAndBitrateFollowRequests() throws {
        let source = try source()
        let low = CollectingSink()
        let second = SecondEncoding(source: source, bitrateKbps: 400, divisor: 2, logger: logger())
        second.addSink(low)
        try source.start()
        second.start()
        defer {
            second.stop()
            source.stop()
        }
        XCTAssertTrue(waitUntil(timeout: 10) { low.frames.count >= 5 })
        second.setBitrate(kbps: 300)
        second.requestKeyframe()
        let before = low.frames.count
        XCTAssertTrue(waitUntil(timeout: 5) { low.frames.dropFirst(before).contains(where: \.isKeyframe) }, "a requested keyframe")
        XCTAssertTrue(waitUntil(timeout: 5) { second.stats.bitrateKbps == 300 })
        second.setDivisor(1)
        XCTAssertTrue(waitUntil(timeout: 5) { low.frames.last?.width == 640 }, "full size after setDivisor(1)")
        let firstFull = try XCTUnwrap(low.frames.first { $0.width == 640 })
        XCTAssertTrue(firstFull.isKeyframe, "a new size starts with a keyframe")
    }
}
