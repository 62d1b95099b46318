import Media
import TestSupport
import XCTest

/// I420 → JPEG (JPEGEncoder, 4:2:0) → I420 (JPEGDecoder) keeps the size and the picture.
final class JPEGRoundTripTests: XCTestCase {
    func testQuality95RoundTripKeepsSizeAndPSNR() throws {
        let encoder = try JPEGEncoder()
        let decoder = try JPEGDecoder()
        let sizes = [(640, 480), (585, 1266), (1, 1), (3, 5), (2, 2), (17, 9), (1280, 720), (16, 1), (1, 16)]
        for (width, height) in sizes {
            let source = makeI420Pattern(width: width, height: height)
            let jpeg = try encoder.encode(source, quality: 95)
            XCTAssertEqual(Array(jpeg.prefix(2)), [0xFF, 0xD8], "\(width)x\(height): starts with SOI")

            let header = try decoder.readHeader(jpeg)
            XCTAssertEqual(header, JPEGInfo(width: width, height: height, subsampling: .yuv420, colorspace: .yCbCr))

            var decoded = I420Buffer()
            let info = try decoder.decodeI420(jpeg, into: &decoded)
            XCTAssertEqual(info, header)
            XCTAssertEqual(decoded.width, width)
            XCTAssertEqual(decoded.height, height)
            XCTAssertEqual(decoded.bytes.count, I420Buffer.byteCount(width: width, height: height))
            for (name, a, b) in [("Y", source.y, decoded.y), ("U", source.u, decoded.u), ("V", source.v, decoded.v)] {
                let db = psnr(a, b)
                XCTAssertGreaterThanOrEqual(db, 35, "\(width)x\(height) plane \(name): PSNR \(db) dB")
            }
        }
    }

    func testDecodingSameSizeReusesTheBuffer() throws {
        let encoder = try JPEGEncoder()
        let decoder = try JPEGDecoder()
        let first = try encoder.encode(makeI420Pattern(width: 96, height: 64), quality: 80)
        let second = try encoder.encode(I420Buffer(width: 96, height: 64, colorSpace: .bt601Full), quality: 80)
        var frame = I420Buffer()
        try decoder.decodeI420(first, into: &frame)
        let address = frame.bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        try decoder.decodeI420(second, into: &frame)
        try decoder.decodeI420(first, into: &frame)
        XCTAssertEqual(frame.bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }, address)
        XCTAssertEqual(frame, try decoder.decodeI420(first), "reused buffer decodes the same as a fresh one")
    }

    func testSizeChangeResizesTheBuffer() throws {
        let encoder = try JPEGEncoder()
        let decoder = try JPEGDecoder()
        var frame = I420Buffer()
        for (width, height) in [(64, 48), (33, 17), (64, 48), (48, 64)] {
            let jpeg = try encoder.encode(makeI420Pattern(width: width, height: height), quality: 90)
            try decoder.decodeI420(jpeg, into: &frame)
            XCTAssertEqual([frame.width, frame.height], [width, height])
            XCTAssertEqual(frame.bytes.count, I420Buffer.byteCount(width: width, height: height))
        }
    }

    func testContiguousBytesOverloadsMatchArrayOverloads() throws {
        let encoder = try JPEGEncoder()
        let decoder = try JPEGDecoder()
        let jpeg = try encoder.encode(makeI420Pattern(width: 40, height: 30), quality: 90)
        let slice: ArraySlice<UInt8> = jpeg[...]
        XCTAssertEqual(try decoder.readHeader(slice), try decoder.readHeader(jpeg))
        var viaSlice = I420Buffer()
        try decoder.decodeI420(slice, into: &viaSlice)
        XCTAssertEqual(viaSlice, try decoder.decodeI420(jpeg))
        let viaRaw = try jpeg.withUnsafeBytes { raw in try decoder.readHeader(raw) }
        XCTAssertEqual(viaRaw.width, 40)
    }

    func testGrayscaleEncodingKeepsLumaAndDecodesWithNeutralChroma() throws {
        let encoder = try JPEGEncoder()
        let decoder = try JPEGDecoder()
        let source = makeI420Pattern(width: 35, height: 21)
        let jpeg = try encoder.encode(source, quality: 95, subsampling: .gray)
        let frame = try decoder.decodeI420(jpeg)
        XCTAssertEqual(try decoder.readHeader(jpeg).subsampling, .gray)
        XCTAssertGreaterThanOrEqual(psnr(source.y, frame.y), 35)
        XCTAssertTrue(frame.u.allSatisfy { $0 == 128 } && frame.v.allSatisfy { $0 == 128 })
    }

    func testEncoderRejectsBadArguments() throws {
        let encoder = try JPEGEncoder()
        let frame = I420Buffer(width: 8, height: 8, colorSpace: .bt601Full)
        for quality in [0, 101, -5] {
            guard case .invalidArgument = assertThrowsMediaError({ () throws(MediaError) in
                try encoder.encode(frame, quality: quality)
            }) else { return XCTFail("quality \(quality) should be invalidArgument") }
        }
        guard case .invalidArgument = assertThrowsMediaError({ () throws(MediaError) in
            try encoder.encode(I420Buffer(), quality: 90)
        }) else { return XCTFail("empty frame should be invalidArgument") }
        guard case .invalidArgument = assertThrowsMediaError({ () throws(MediaError) in
            try encoder.encode(frame, quality: 90, subsampling: .yuv444)
        }) else { return XCTFail("4:4:4 from I420 should be invalidArgument") }
    }
}
