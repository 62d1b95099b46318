import FrameWire
import Media
import ScreencastSupport
import TestSupport
@testable import VideoSource
import XCTest

/// The colour chart (TestSupport's `ColourChart`) through the call's own path in-process — the agent's
/// conversions, the wire, `WireFramePipeline` (decode, rotation, the range conversion), downscaling,
/// libvpx — and back out of libvpx's decoder shown as BT.601 limited range, as every viewer shows VP8:
/// every patch within 4 levels of the chart in RGB, PSNR ≥ 38 dB, for JPEG (the agent's change frames and
/// its paint-over), the raw I420 wire, a rotated sender and a downscaled picture. The test pattern ends
/// in its bars' RGB the same way.
final class ColourPipelineTests: XCTestCase {
    private let logger = Logger(component: "test", threshold: .error)

    /// `picture` encoded as the call does and refined (six re-encodes under falling quantizer ceilings, as
    /// `IdleRefinementPolicy.standard`), then decoded by libvpx: the last picture a viewer shows.
    private func throughVP8(_ picture: I420Buffer) throws -> I420Buffer {
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(
            width: picture.width, height: picture.height,
            bitrateKbps: VP8EncoderSettings.defaultBitrateKbps(width: picture.width, height: picture.height, framesPerSecond: 30)))
        let decoder = try VP8Decoder()
        var decoded = I420Buffer()
        var time: UInt64 = 0
        for ceiling in [nil, 40, 32, 24, 18, 14, 12] as [Int?] {
            if let frame = try encoder.encode(VideoFrame(picture: picture, captureTimestampMicros: time), forceKeyframe: time == 0, quantizerCeiling: ceiling) {
                try decoder.decode(frame.bytes, into: &decoded)
            }
            time += 150_000
        }
        return decoded
    }

    /// A wire frame through the call's pipeline, then VP8 (after the encoder thread's downscale when the
    /// picture is above `maximumEncodeSize`, as `EncoderLoop` does).
    private func throughTheCall(_ frame: Frame, maximumEncodeSize: PictureSize? = nil) throws -> I420Buffer {
        let pipeline = try WireFramePipeline(pool: FramePool(), logger: logger, maximumDimension: 16384, maximumDecodePixels: 1 << 24)
        guard case .success(let video) = pipeline.process(frame, captureTimestampMicros: 1) else {
            XCTFail("the pipeline refused the frame")
            return I420Buffer()
        }
        XCTAssertEqual(video.picture.colorSpace, .bt601Limited, "the pipeline hands the encoder limited range")
        var picture = video.picture
        if let limit = maximumEncodeSize, let target = PictureSize(width: picture.width, height: picture.height).downscaled(toFit: limit) {
            var scaled = I420Buffer()
            try picture.scaled(to: target, filter: .box, into: &scaled)
            picture = scaled
        }
        return try throughVP8(picture)
    }

    private func jpegFrame(_ image: BGRXImage, quality: Int, subsampling: JPEGSubsampling, orientation: Int = 1) throws -> Frame {
        let jpeg = try BGRXJPEGEncoder().encode(image, quality: quality, subsampling: subsampling)
        return Frame(header: FrameHeader(contentLength: jpeg.count, bufferWidth: image.width, bufferHeight: image.height, orientation: orientation),
                     body: jpeg)
    }

    private func check(_ decoded: I420Buffer, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual([decoded.width, decoded.height], [ColourChart.width, ColourChart.height], what, file: file, line: line)
        guard decoded.width == ColourChart.width, decoded.height == ColourChart.height else { return }
        let reading = ColourChart.read(decoded)
        print("colour chart, \(what): \(reading)")
        XCTAssertLessThanOrEqual(reading.worstDifference, 4, "\(what): \(reading.offenders(tolerance: 4))", file: file, line: line)
        XCTAssertGreaterThanOrEqual(reading.psnr, 38, "\(what): \(reading)", file: file, line: line)
    }

    /// The agent's JPEGs (q80 4:2:0 change frames, q95 4:4:4 paint-over) end in the chart's colours.
    func testJPEGFramesEndInTheScreensColours() throws {
        let chart = ColourChart.image()
        check(try throughTheCall(try jpegFrame(chart, quality: 80, subsampling: .yuv420)), "JPEG q80 4:2:0")
        check(try throughTheCall(try jpegFrame(chart, quality: 95, subsampling: .yuv444)), "JPEG q95 4:4:4 (paint-over)")
    }

    /// A raw I420 frame (full range, as the agent sent before the range was on the wire) ends in the same
    /// colours.
    func testI420FramesEndInTheScreensColours() throws {
        var picture = I420Buffer()
        try BGRXToYUV.convertToI420(ColourChart.image(), range: .full, into: &picture)
        let frame = Frame(header: FrameHeader(contentLength: picture.bytes.count, bufferWidth: picture.width, bufferHeight: picture.height,
                                              format: .i420), body: picture.bytes)
        check(try throughTheCall(frame), "I420 wire, full range")
    }

    /// A sender that sends the chart turned 90° counter-clockwise with orientation 8 (the reader turns it
    /// back): the same colours, upright.
    func testARotatedSenderEndsInTheScreensColours() throws {
        let chart = ColourChart.image()
        var turned = BGRXImage(width: chart.height, height: chart.width)
        let (source, stride) = (chart.bytes, chart.stride)
        turned.withUnsafeMutableBytes { out in
            for y in 0..<chart.width {
                for x in 0..<chart.height {
                    // turned(x, y) = chart(W − 1 − y, x): the chart's top-right corner lands top-left.
                    let from = x * stride + (chart.width - 1 - y) * 4
                    let to = (y * chart.height + x) * 4
                    for channel in 0..<4 { out[to + channel] = source[from + channel] }
                }
            }
        }
        check(try throughTheCall(try jpegFrame(turned, quality: 90, subsampling: .yuv420, orientation: 8)), "JPEG rotated 90°")
    }

    /// The chart at twice its size (every pixel doubled), downscaled by the encoder thread's box filter to
    /// fit the encode limit: the same colours.
    func testADownscaledPictureEndsInTheScreensColours() throws {
        let chart = ColourChart.image()
        var large = BGRXImage(width: chart.width * 2, height: chart.height * 2)
        let (source, stride) = (chart.bytes, chart.stride)
        large.withUnsafeMutableBytes { out in
            for y in 0..<(chart.height * 2) {
                for x in 0..<(chart.width * 2) {
                    let (from, to) = ((y / 2) * stride + (x / 2) * 4, (y * chart.width * 2 + x) * 4)
                    for channel in 0..<4 { out[to + channel] = source[from + channel] }
                }
            }
        }
        let decoded = try throughTheCall(try jpegFrame(large, quality: 90, subsampling: .yuv420),
                                         maximumEncodeSize: PictureSize(width: ColourChart.width, height: ColourChart.height))
        check(decoded, "JPEG at 2×, downscaled")
    }

    /// The test pattern, painted in limited range, through VP8: each bar's centre within 4 levels of its
    /// RGB (100 % bars: every channel 0 or 255).
    func testTheTestPatternEndsInItsBarsColours() throws {
        let painter = TestPatternPainter(width: 640, height: 360)
        var picture = I420Buffer()
        painter.paint(frameNumber: 0, timestampMicros: 0, into: &picture)
        XCTAssertEqual(picture.colorSpace, .bt601Limited)
        let decoded = try throughVP8(picture)
        let bars: [(Int, Int, Int)] = [(255, 255, 255), (255, 255, 0), (0, 255, 255), (0, 255, 0), (255, 0, 255), (255, 0, 0), (0, 0, 255), (0, 0, 0)]
        let y = 360 * 5 / 8  // between the moving box (the middle fifth) and the ramp (the bottom quarter)
        for (index, bar) in bars.enumerated() {
            let x = (2 * index + 1) * 640 / 16
            let shown = ColourChart.bt601RGB(
                y: decoded.bytes[decoded.yOffset + y * decoded.yStride + x], cb: decoded.bytes[decoded.uOffset + y / 2 * decoded.uvStride + x / 2],
                cr: decoded.bytes[decoded.vOffset + y / 2 * decoded.uvStride + x / 2], range: decoded.colorSpace.range)
            let difference = max(abs(Int(shown.r) - bar.0), abs(Int(shown.g) - bar.1), abs(Int(shown.b) - bar.2))
            XCTAssertLessThanOrEqual(difference, 4, "bar \(index): \(shown) vs \(bar)")
        }
    }
}
