import FrameWire
import Glibc
import Media
import ScreencastSupport
@testable import VideoSource
import XCTest

/// The call's pipeline with `BGRX-SHM` frames (Protocol/frame-wire.md §2.8): the slot converted once to BT.601
/// limited range (checked against the BT.601 formulas), rotated; a slot rewritten before or while it is read
/// is dropped as stale; a frame without its mapping is refused.
final class SharedPicturePipelineTests: XCTestCase {
    private let logger = Logger(component: "test", threshold: .error)
    /// Four 16-pixel-wide vertical bars: white, black, red, mid grey (R, G, B).
    private let bars: [(UInt8, UInt8, UInt8)] = [(255, 255, 255), (0, 0, 0), (255, 0, 0), (128, 128, 128)]

    private func writer() throws -> SharedPicture {
        let picture = try SharedPicture.create(width: 64, height: 32, generation: 3)
        for slot in 0..<2 {
            let odd = picture.beginWrite(slot: slot)
            let pixels = picture.mutablePixels(slot: slot)
            for y in 0..<32 {
                for x in 0..<64 {
                    let (r, g, b) = bars[x / 16]
                    let offset = y * 256 + x * 4
                    (pixels[offset], pixels[offset + 1], pixels[offset + 2], pixels[offset + 3]) = (b, g, r, 0)
                }
            }
            XCTAssertEqual(picture.endWrite(slot: slot, began: odd), 2)
        }
        return picture
    }

    private func frame(_ reader: SharedPicture?, slot: Int = 0, version: UInt64 = 2, orientation: Int = 1) -> Frame {
        Frame(header: FrameHeader(contentLength: 1, bufferWidth: 64, bufferHeight: 32, orientation: orientation, format: .sharedBGRX,
                                  memory: .init(generation: 3, slot: slot, version: version)), body: [0x0A], sharedPicture: reader)
    }

    func testTheSlotIsConvertedOnceToLimitedRange() throws {
        let written = try writer()
        let reader = try SharedPicture.map(descriptor: dup(written.descriptor), generation: 3, width: 64, height: 32)
        let pipeline = try WireFramePipeline(pool: FramePool(), logger: logger, maximumDimension: 16384, maximumDecodePixels: 1 << 24)
        for slot in 0..<2 {
            guard case .success(let video) = pipeline.process(frame(reader, slot: slot), captureTimestampMicros: 7) else {
                return XCTFail("shared frame refused")
            }
            XCTAssertEqual(video.captureTimestampMicros, 7)
            XCTAssertEqual([video.picture.width, video.picture.height], [64, 32])
            XCTAssertEqual(video.picture.colorSpace, .bt601Limited)
            for (index, (r, g, b)) in bars.enumerated() {
                // BT.601-7 §2.5.3: Y = 16 + 219·E'Y, Cb/Cr = 128 + 224·E'Cb/Cr.
                let (rf, gf, bf) = (Double(r) / 255, Double(g) / 255, Double(b) / 255)
                let luma = 0.299 * rf + 0.587 * gf + 0.114 * bf
                let expected = (16 + 219 * luma, 128 + 224 * (bf - luma) / 1.772, 128 + 224 * (rf - luma) / 1.402)
                let x = index * 16 + 8
                let y = Double(video.picture.bytes[16 * 64 + x])
                let u = Double(video.picture.bytes[64 * 32 + 8 * 32 + x / 2])
                let v = Double(video.picture.bytes[64 * 32 + 32 * 16 + 8 * 32 + x / 2])
                XCTAssertEqual(y, expected.0, accuracy: 1.5, "bar \(index) Y")
                XCTAssertEqual(u, expected.1, accuracy: 1.5, "bar \(index) Cb")
                XCTAssertEqual(v, expected.2, accuracy: 1.5, "bar \(index) Cr")
            }
        }
        // Orientation 6: turned 270° like any other frame.
        guard case .success(let turned) = pipeline.process(frame(reader, orientation: 6), captureTimestampMicros: 8) else {
            return XCTFail("turned frame refused")
        }
        XCTAssertEqual([turned.picture.width, turned.picture.height], [32, 64])
    }

    func testRewrittenSlotsAreStaleAndFramesWithoutMemoryRefused() throws {
        let written = try writer()
        let reader = try SharedPicture.map(descriptor: dup(written.descriptor), generation: 3, width: 64, height: 32)
        let pipeline = try WireFramePipeline(pool: FramePool(), logger: logger, maximumDimension: 16384, maximumDecodePixels: 1 << 24)
        // Mid-write (the version is odd), then rewritten (another even version): never converted.
        let odd = written.beginWrite(slot: 0)
        XCTAssertEqual(pipeline.process(frame(reader), captureTimestampMicros: 1).failure, .staleSharedPicture)
        _ = written.endWrite(slot: 0, began: odd)
        XCTAssertEqual(pipeline.process(frame(reader), captureTimestampMicros: 1).failure, .staleSharedPicture)
        guard case .success = pipeline.process(frame(reader, version: 4), captureTimestampMicros: 1) else {
            return XCTFail("the newer version is fine")
        }
        XCTAssertEqual(pipeline.process(frame(nil), captureTimestampMicros: 1).failure, .noSharedMemory)
        // The decode budget applies as to any picture.
        let small = try WireFramePipeline(pool: FramePool(), logger: logger, maximumDimension: 16384, maximumDecodePixels: 64 * 31)
        XCTAssertEqual(small.process(frame(reader, version: 4), captureTimestampMicros: 1).failure,
                       .tooLarge(width: 64, height: 32, budget: 64 * 31))
    }
}

private extension Result {
    var failure: Failure? { if case .failure(let error) = self { error } else { nil } }
}
