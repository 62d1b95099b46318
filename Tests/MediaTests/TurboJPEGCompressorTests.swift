@testable import Media
import XCTest

/// The libturbojpeg compressor shared by the JPEG encoders: what it writes decodes (libturbojpeg's decoder,
/// through ``JPEGDecoder``) to the picture it was given, in the subsampling asked for, and its reused output
/// buffer carries nothing from one picture into the next.
final class TurboJPEGCompressorTests: XCTestCase {
    /// TJSAMP_444, TJSAMP_420, TJSAMP_GRAY.
    private let samp444: Int32 = 0, samp420: Int32 = 2, sampGray: Int32 = 3

    /// A BGRX picture of four flat grey quadrants: 16, 96, 176, 240 (B = G = R, so JFIF Y is the grey level).
    private func quadrants(width: Int, height: Int) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let level: UInt8 = [16, 96, 176, 240][(y < height / 2 ? 0 : 2) + (x < width / 2 ? 0 : 1)]
                let i = (y * width + x) * 4
                pixels[i] = level; pixels[i + 1] = level; pixels[i + 2] = level; pixels[i + 3] = 0xFF
            }
        }
        return pixels
    }

    /// The decoded luma at the middle of each quadrant.
    private func quadrantLuma(_ frame: I420Buffer) -> [Int] {
        let (w, h) = (frame.width, frame.height)
        return [(w / 4, h / 4), (3 * w / 4, h / 4), (w / 4, 3 * h / 4), (3 * w / 4, 3 * h / 4)].map { x, y in
            Int(frame.y[frame.y.startIndex + y * frame.yStride + x])
        }
    }

    func testBGRXCompressesToTheGreysItWasGivenIn420() throws {
        let (width, height) = (64, 48)
        let pixels = quadrants(width: width, height: height)
        var jpeg: [UInt8] = []
        let compressor = try TurboJPEGCompressor()
        try pixels.withUnsafeBytes { raw in
            try compressor.compressBGRX(BGRXPixels(base: raw, width: width, height: height, stride: width * 4), samp: samp420, quality: 95, into: &jpeg)
        }
        XCTAssertEqual(Array(jpeg.prefix(2)), [0xFF, 0xD8], "a JPEG's SOI")
        XCTAssertEqual(Array(jpeg.suffix(2)), [0xFF, 0xD9], "and its EOI")
        var frame = I420Buffer()
        let info = try JPEGDecoder().decodeI420(jpeg, into: &frame)
        XCTAssertEqual(info.subsampling, .yuv420)
        XCTAssertEqual(info.width, width)
        XCTAssertEqual(info.height, height)
        for (got, want) in zip(quadrantLuma(frame), [16, 96, 176, 240]) { XCTAssertEqual(Double(got), Double(want), accuracy: 2) }
        let u = frame.u[frame.u.startIndex + (height / 8) * frame.uvStride + width / 8]
        XCTAssertEqual(Double(u), 128, accuracy: 2, "grey has neutral chroma")
    }

    func testGreyPlanesCompressAsAGreyJPEGAndTheBufferIsReused() throws {
        let (width, height) = (40, 30)
        var luma = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height { for x in 0..<width { luma[y * width + x] = x < width / 2 ? 50 : 200 } }
        let compressor = try TurboJPEGCompressor()
        var jpeg: [UInt8] = []
        for round in 0..<2 {
            try luma.withUnsafeBufferPointer { y in
                try compressor.compressPlanes(
                    y: y.baseAddress!, yStride: width, u: nil, v: nil, uvStride: 0, width: width, height: height,
                    samp: sampGray, quality: 90, into: &jpeg)
            }
            var frame = I420Buffer()
            let info = try JPEGDecoder().decodeI420(jpeg, into: &frame)
            XCTAssertEqual(info.subsampling, .gray, "round \(round)")
            let (left, right): (Double, Double) = round == 0 ? (50, 200) : (205, 55)
            XCTAssertEqual(Double(frame.y[frame.y.startIndex + 15 * frame.yStride + 5]), left, accuracy: 2, "round \(round)")
            XCTAssertEqual(Double(frame.y[frame.y.startIndex + 15 * frame.yStride + 35]), right, accuracy: 2, "round \(round)")
            luma = luma.map { 255 - $0 }  // the second picture is the negative: nothing of the first may remain
            if round == 0 { XCTAssertGreaterThan(jpeg.capacity, 0) }
        }
    }

    func testASmallerPictureAfterALargerOneIsWholeAndExact() throws {
        let compressor = try TurboJPEGCompressor()
        var jpeg: [UInt8] = []
        for (width, height) in [(320, 240), (16, 16), (33, 17)] {
            let pixels = quadrants(width: width, height: height)
            try pixels.withUnsafeBytes { raw in
                try compressor.compressBGRX(BGRXPixels(base: raw, width: width, height: height, stride: width * 4), samp: samp444, quality: 100, into: &jpeg)
            }
            var frame = I420Buffer()
            let info = try JPEGDecoder().decodeI420(jpeg, into: &frame)
            XCTAssertEqual([info.width, info.height], [width, height])
            XCTAssertEqual(info.subsampling, .yuv444)
            for (got, want) in zip(quadrantLuma(frame), [16, 96, 176, 240]) { XCTAssertEqual(Double(got), Double(want), accuracy: 2, "\(width)x\(height)") }
        }
    }
}
