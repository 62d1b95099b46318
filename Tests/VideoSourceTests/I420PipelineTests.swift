import FrameWire
import Media
import ScreencastSupport
import TestSupport
@testable import VideoSource
import XCTest

/// The call's frame pipeline with raw I420 bodies (`Buffer-Format: I420`): used without a copy, rotated,
/// refused above the decode budget, dropped when the body's length is wrong.
final class I420PipelineTests: XCTestCase {
    private let logger = Logger(component: "test", threshold: .error)

    /// `picture` as a raw I420 frame; `Buffer-Color-Range` says the picture's range unless `sayRange` is false
    /// (an older agent's frame: full range).
    private func frame(_ picture: I420Buffer, orientation: Int = 1, body: [UInt8]? = nil, sayRange: Bool = true) -> Frame {
        let bytes = body ?? picture.bytes
        let range: BufferColorRange? = sayRange ? (picture.colorSpace.range == .limited ? .limited : .full) : nil
        return Frame(header: FrameHeader(contentLength: bytes.count, bufferWidth: picture.width, bufferHeight: picture.height,
                                         orientation: orientation, format: .i420, colorRange: range), body: bytes)
    }

    /// A limited-range picture, as our agent sends it.
    private func limitedDesktop(width: Int, height: Int, variant: Int) throws -> I420Buffer {
        var picture = makeDesktop(width: width, height: height, variant: variant)
        try picture.convertToLimitedRange()
        return picture
    }

    /// A limited-range I420 body (`Buffer-Color-Range: limited`, what our agent sends) is the picture: no
    /// copy, no conversion.
    func testALimitedRangeI420BodyBecomesThePictureWithoutACopy() throws {
        let pipeline = try WireFramePipeline(pool: FramePool(), logger: logger, maximumDimension: 16384, maximumDecodePixels: 1 << 24)
        let picture = try limitedDesktop(width: 101, height: 57, variant: 3)
        let input = frame(picture)
        guard case .success(let video) = pipeline.process(input, captureTimestampMicros: 42) else { return XCTFail("I420 frame refused") }
        XCTAssertEqual(video.picture, picture)
        XCTAssertEqual(video.captureTimestampMicros, 42)
        XCTAssertEqual(video.picture.bytes.withUnsafeBufferPointer { $0.baseAddress },
                       input.body.withUnsafeBufferPointer { $0.baseAddress }, "the body's storage is the picture's")
    }

    /// A full-range I420 body (`Buffer-Color-Range: full`, or no field: an older agent) is converted to
    /// limited range in a pooled copy; the frame's body stays as it was.
    func testAFullRangeI420BodyIsConvertedInACopy() throws {
        let pipeline = try WireFramePipeline(pool: FramePool(), logger: logger, maximumDimension: 16384, maximumDecodePixels: 1 << 24)
        let picture = makeDesktop(width: 101, height: 57, variant: 3)
        var expected = picture
        try expected.convertToLimitedRange()
        for input in [frame(picture), frame(picture, sayRange: false)] {
            guard case .success(let video) = pipeline.process(input, captureTimestampMicros: 42) else { return XCTFail("I420 frame refused") }
            XCTAssertEqual(video.picture, expected)
            XCTAssertEqual(video.captureTimestampMicros, 42)
            XCTAssertEqual(input.body, picture.bytes, "the frame's body is not written")
            XCTAssertNotEqual(video.picture.bytes.withUnsafeBufferPointer { $0.baseAddress },
                              input.body.withUnsafeBufferPointer { $0.baseAddress })
        }
    }

    /// Rotation as for JPEG, for limited-range bodies and (converted after the turn) full-range ones.
    func testRotationAppliesAsForJPEG() throws {
        let pipeline = try WireFramePipeline(pool: FramePool(), logger: logger, maximumDimension: 16384, maximumDecodePixels: 1 << 24)
        for picture in [makeDesktop(width: 64, height: 36, variant: 1), try limitedDesktop(width: 64, height: 36, variant: 1)] {
            for (orientation, degrees) in [(6, 270), (8, 90), (3, 180)] {
                guard case .success(let video) = pipeline.process(frame(picture, orientation: orientation), captureTimestampMicros: 1) else {
                    return XCTFail("orientation \(orientation)")
                }
                XCTAssertEqual(video.appliedRotation.degrees, degrees)
                var expected = I420Buffer()
                try picture.rotated(by: try XCTUnwrap(PictureRotation(degrees: degrees)), into: &expected)
                try expected.convertToLimitedRange()
                XCTAssertEqual(video.picture, expected, "orientation \(orientation), \(picture.colorSpace)")
            }
        }
    }

    func testBudgetAndWrongLengthAreRefused() throws {
        let picture = makeDesktop(width: 64, height: 48, variant: 2)
        let tight = try WireFramePipeline(pool: FramePool(), logger: logger, maximumDimension: 16384, maximumDecodePixels: 1000)
        guard case .failure(.tooLarge(64, 48, 1000)) = tight.process(frame(picture), captureTimestampMicros: 1) else {
            return XCTFail("budget")
        }
        let narrow = try WireFramePipeline(pool: FramePool(), logger: logger, maximumDimension: 40, maximumDecodePixels: 1 << 24)
        guard case .failure(.tooLarge) = narrow.process(frame(picture), captureTimestampMicros: 1) else { return XCTFail("dimension") }
        let pipeline = try WireFramePipeline(pool: FramePool(), logger: logger, maximumDimension: 16384, maximumDecodePixels: 1 << 24)
        let short = Array(picture.bytes.dropLast())
        guard case .failure(.rawLength(64, 48, 4608, 4607)) = pipeline.process(frame(picture, body: short), captureTimestampMicros: 1) else {
            return XCTFail("length")
        }
        // And the next good frame goes through.
        guard case .success = pipeline.process(frame(picture), captureTimestampMicros: 2) else { return XCTFail("after") }
    }
}
