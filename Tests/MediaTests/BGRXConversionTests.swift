import CTurboJPEG
import Media
import TestSupport
import XCTest

/// The agent's BGRX paths: libyuv's conversions (`BGRXToYUV`, full range for JPEG, limited range for the
/// raw I420 wire) and the BGRX JPEG encoder built on the full-range one, checked against the JFIF formulas and against libturbojpeg's own conversion (`tjCompress2`, the
/// encoder's previous path), with real pixels.
final class BGRXConversionTests: XCTestCase {
    /// BGRX bytes (B, G, R, 0) of a packed RGB picture.
    private func bgrx(_ rgb: [UInt8], width: Int, height: Int) throws -> BGRXImage {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        for i in 0..<(width * height) {
            bytes[4 * i] = rgb[3 * i + 2]
            bytes[4 * i + 1] = rgb[3 * i + 1]
            bytes[4 * i + 2] = rgb[3 * i]
        }
        return try BGRXImage(width: width, height: height, stride: width * 4, bytes: bytes)
    }

    /// `convertToI420` is full-range BT.601 (JFIF): Y within 1 of the formula everywhere, chroma the 2×2
    /// average of the formula's within 2; black is Y 0, white Y 255, grey chroma 128.
    func testConvertToI420IsFullRangeBT601() throws {
        for (width, height) in [(64, 48), (37, 23), (1, 1), (2, 3)] {
            let rgb = makeRGBPattern(width: width, height: height)
            let truth = jfifYCbCr(rgb: rgb, width: width, height: height)
            var frame = I420Buffer()
            try BGRXToYUV.convertToI420(try bgrx(rgb, width: width, height: height), range: .full, into: &frame)
            XCTAssertEqual(frame.width, width)
            XCTAssertEqual(frame.height, height)
            XCTAssertEqual(frame.bytes.count, I420Buffer.byteCount(width: width, height: height))
            XCTAssertEqual(frame.colorSpace, .bt601Full)
            let yDiff = zip(frame.y, truth.y).map { abs(Int($0) - Int($1)) }.max() ?? 0
            XCTAssertLessThanOrEqual(yDiff, 1, "\(width)x\(height) Y")
            let u = halve(truth.cb, width: width, height: height)
            let v = halve(truth.cr, width: width, height: height)
            XCTAssertLessThanOrEqual(zip(frame.u, u).map { abs(Int($0) - Int($1)) }.max() ?? 0, 2, "\(width)x\(height) U")
            XCTAssertLessThanOrEqual(zip(frame.v, v).map { abs(Int($0) - Int($1)) }.max() ?? 0, 2, "\(width)x\(height) V")
        }
        // Extremes: full range, not 16…235.
        let black = try BGRXImage(width: 4, height: 2, stride: 16, bytes: [UInt8](repeating: 0, count: 32))
        let white = try BGRXImage(width: 4, height: 2, stride: 16, bytes: [UInt8](repeating: 255, count: 32))
        var frame = I420Buffer()
        try BGRXToYUV.convertToI420(black, range: .full, into: &frame)
        XCTAssertEqual(Set(frame.y), [0])
        XCTAssertEqual(Set(frame.u + frame.v), [128])
        try BGRXToYUV.convertToI420(white, range: .full, into: &frame)
        XCTAssertEqual(Set(frame.y), [255])
        XCTAssertEqual(Set(frame.u + frame.v), [128])
    }

    /// Same-sized conversions reuse the buffer's storage.
    func testConvertToI420ReusesTheBuffer() throws {
        let image = try bgrx(makeRGBPattern(width: 64, height: 48), width: 64, height: 48)
        var frame = I420Buffer()
        try BGRXToYUV.convertToI420(image, range: .limited, into: &frame)
        let first = frame.bytes.withUnsafeBufferPointer { $0.baseAddress }
        try BGRXToYUV.convertToI420(image, range: .limited, into: &frame)
        XCTAssertEqual(frame.bytes.withUnsafeBufferPointer { $0.baseAddress }, first)
    }

    /// The libyuv → `tjCompressFromYUVPlanes` path decodes to the same picture as `tjCompress2` from the
    /// same pixels (the encoder's previous path) and to the JFIF truth, for every subsampling, odd sizes too.
    func testEncoderMatchesLibjpegConversion() throws {
        let encoder = try BGRXJPEGEncoder()
        let decoder = try JPEGDecoder()
        let cases: [(JPEGSubsampling, TJSAMP)] = [(.yuv420, TJSAMP_420), (.yuv422, TJSAMP_422), (.yuv444, TJSAMP_444), (.gray, TJSAMP_GRAY)]
        for (width, height) in [(64, 48), (37, 23), (320, 181), (1, 1)] {
            let rgb = makeRGBPattern(width: width, height: height)
            let truth = jfifYCbCr(rgb: rgb, width: width, height: height)
            let image = try bgrx(rgb, width: width, height: height)
            for (subsampling, samp) in cases {
                let context = "\(width)x\(height) \(subsampling)"
                let jpeg = try encoder.encode(image, quality: 90, subsampling: subsampling)
                let info = try decoder.readHeader(jpeg)
                XCTAssertEqual(info.subsampling, subsampling, context)
                XCTAssertEqual(info.width, width, context)
                let ours = try decoder.decodeI420(jpeg)
                let old = try decoder.decodeI420(try compressRGB(rgb, width: width, height: height, subsampling: samp, quality: 90))
                XCTAssertGreaterThanOrEqual(psnr(ours.y, truth.y), 35, "\(context): Y vs the screen")
                XCTAssertGreaterThanOrEqual(psnr(ours.y, old.y), 40, "\(context): Y vs tjCompress2")
                if subsampling != .gray {
                    XCTAssertGreaterThanOrEqual(psnr(ours.u, old.u), 40, "\(context): U vs tjCompress2")
                    XCTAssertGreaterThanOrEqual(psnr(ours.v, old.v), 40, "\(context): V vs tjCompress2")
                    XCTAssertGreaterThanOrEqual(psnr(ours.u, halve(truth.cb, width: width, height: height)), 35, context)
                    XCTAssertGreaterThanOrEqual(psnr(ours.v, halve(truth.cr, width: width, height: height)), 35, context)
                }
            }
        }
    }

    /// A stride wider than the row (a sub-rectangle of a larger capture) is honoured.
    func testEncoderHonoursStride() throws {
        let (width, height) = (40, 30)
        let rgb = makeRGBPattern(width: width, height: height)
        let tight = try bgrx(rgb, width: width, height: height)
        let stride = width * 4 + 24
        var padded = [UInt8](repeating: 0xAB, count: stride * height)
        for row in 0..<height {
            padded.replaceSubrange((row * stride)..<(row * stride + width * 4), with: tight.bytes[(row * width * 4)..<((row + 1) * width * 4)])
        }
        let wide = try BGRXImage(width: width, height: height, stride: stride, bytes: padded)
        let encoder = try BGRXJPEGEncoder()
        XCTAssertEqual(try encoder.encode(wide, quality: 85), try encoder.encode(tight, quality: 85))
    }
}
