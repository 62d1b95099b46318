import Media
import TestSupport
import XCTest

/// The colour model: BT.601 full range (JPEG) → limited range (VP8), its table, who labels what, and the
/// encoders that refuse the wrong range.
final class ColourRangeTests: XCTestCase {
    /// The limited-range codes, from ITU-R BT.601's scaling written out in integers here (219/255 of the
    /// luma span above 16, 224/255 of the chroma span around 128), for all 256 codes; and the codes where
    /// a range fault shows first, by value.
    func testTheConversionTableMatchesBT601AtEveryCode() {
        for code in 0...255 {
            // round(x) = floor(x + 1/2), exact in integers: floor((2·n·k + d) / 2d); chroma may be negative.
            let luma = 16 + (2 * code * 219 + 255) / 510
            let offset = (code - 128) * 224 * 2 + 255
            let chroma = 128 + (offset >= 0 ? offset / 510 : -((-offset + 509) / 510))
            XCTAssertEqual(Int(YCbCrRangeConversion.limitedLuma(UInt8(code))), luma, "luma \(code)")
            XCTAssertEqual(Int(YCbCrRangeConversion.limitedChroma(UInt8(code))), chroma, "chroma \(code)")
        }
        let lumaCodes: [(UInt8, UInt8)] = [(0, 16), (1, 17), (16, 30), (17, 31), (128, 126), (235, 218), (240, 222), (254, 234), (255, 235)]
        for (full, limited) in lumaCodes { XCTAssertEqual(YCbCrRangeConversion.limitedLuma(full), limited, "Y \(full)") }
        let chromaCodes: [(UInt8, UInt8)] = [(0, 16), (1, 16), (16, 30), (127, 127), (128, 128), (129, 129), (240, 226), (254, 239), (255, 240)]
        for (full, limited) in chromaCodes { XCTAssertEqual(YCbCrRangeConversion.limitedChroma(full), limited, "C \(full)") }
    }

    /// `convertToLimitedRange` maps every sample of every plane through the table, in place (no new
    /// allocation), for sizes whose planes end in a partial group of bytes too, and relabels the picture;
    /// a picture already in limited range is left alone.
    func testConvertToLimitedRangeMapsEverySampleInPlace() throws {
        for (width, height) in [(1, 1), (2, 2), (3, 3), (5, 3), (37, 23), (64, 48), (640, 360)] {
            let count = I420Buffer.byteCount(width: width, height: height)
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 251) }
            // Its own storage (not shared with `bytes`), so writing it copies nothing.
            var picture = try I420Buffer(width: width, height: height, bytes: bytes.map { $0 }, colorSpace: .bt601Full)
            let address = picture.bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
            try picture.convertToLimitedRange()
            XCTAssertEqual(picture.colorSpace, .bt601Limited)
            XCTAssertEqual(picture.bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }, address, "in place")
            let split = width * height
            let expected = bytes.enumerated().map { index, value in
                index < split ? YCbCrRangeConversion.limitedLuma(value) : YCbCrRangeConversion.limitedChroma(value)
            }
            XCTAssertEqual(picture.bytes, expected, "\(width)x\(height)")
            try picture.convertToLimitedRange()
            XCTAssertEqual(picture.bytes, expected, "a limited-range picture is not converted again")
        }
    }

    /// `convertToI420(range: .limited)` (libyuv `ARGBToI420`) is BT.601 limited range: black Y 16, white
    /// Y 235, saturated colours at their BT.601 codes (within 1 of the formula; chroma within 2).
    func testBGRXToLimitedRangeI420() throws {
        let colours: [(r: Double, g: Double, b: Double)] = [(0, 0, 0), (255, 255, 255), (255, 0, 0), (0, 255, 0), (0, 0, 255), (128, 64, 32)]
        for colour in colours {
            var image = BGRXImage(width: 4, height: 2)
            image.withUnsafeMutableBytes { bytes in
                for pixel in 0..<8 {
                    bytes[pixel * 4] = UInt8(colour.b)
                    bytes[pixel * 4 + 1] = UInt8(colour.g)
                    bytes[pixel * 4 + 2] = UInt8(colour.r)
                }
            }
            var picture = I420Buffer()
            try BGRXToYUV.convertToI420(image, range: .limited, into: &picture)
            XCTAssertEqual(picture.colorSpace, .bt601Limited)
            let y = 16 + (65.481 * colour.r + 128.553 * colour.g + 24.966 * colour.b) / 255
            let cb = 128 + (-37.797 * colour.r - 74.203 * colour.g + 112 * colour.b) / 255
            let cr = 128 + (112 * colour.r - 93.786 * colour.g - 18.214 * colour.b) / 255
            for sample in picture.y { XCTAssertEqual(Double(sample), y, accuracy: 1, "Y of \(colour)") }
            for sample in picture.u { XCTAssertEqual(Double(sample), cb, accuracy: 2, "Cb of \(colour)") }
            for sample in picture.v { XCTAssertEqual(Double(sample), cr, accuracy: 2, "Cr of \(colour)") }
        }
    }

    /// The chart converted to limited-range I420 (`ARGBToI420`) and shown again by BT.601 is the chart within
    /// 2 levels on every patch; through full range (`ARGBToJ420`) too; and through full range then
    /// `convertToLimitedRange` (the call's path after a JPEG decode) within 3 (two roundings: one chroma
    /// code is up to 2 levels of blue). libyuv's own way back
    /// (`convertToBGRX`) agrees within 4 (its fixed point darkens saturated blue).
    func testTheChartSurvivesEveryRangePath() throws {
        let chart = ColourChart.image()
        var picture = I420Buffer()
        try BGRXToYUV.convertToI420(chart, range: .limited, into: &picture)
        let limited = ColourChart.read(picture)
        XCTAssertLessThanOrEqual(limited.worstDifference, 2, "\(limited)")
        try BGRXToYUV.convertToI420(chart, range: .full, into: &picture)
        let full = ColourChart.read(picture)
        XCTAssertLessThanOrEqual(full.worstDifference, 2, "\(full)")
        try picture.convertToLimitedRange()
        let converted = ColourChart.read(picture)
        print("chart through limited: \(limited); full: \(full); full then converted: \(converted)")
        XCTAssertLessThanOrEqual(converted.worstDifference, 3, "\(converted)")
        var shown = BGRXImage()
        try BGRXToYUV.convertToBGRX(picture, into: &shown)
        let viaLibyuv = ColourChart.read(shown)
        XCTAssertLessThanOrEqual(viaLibyuv.worstDifference, 4, "\(viaLibyuv)")
        XCTAssertGreaterThanOrEqual(viaLibyuv.psnr, 45, "\(viaLibyuv)")
        // Shown as if it were limited range without the conversion (the old fault): far off.
        try BGRXToYUV.convertToI420(chart, range: .full, into: &picture)
        picture.colorSpace = .bt601Limited
        let mislabelled = ColourChart.read(picture)
        XCTAssertGreaterThan(mislabelled.worstDifference, 15, "the fault this guards against is visible: \(mislabelled)")
    }

    /// Producers label their pictures: JPEG decodes to full range, VP8 to limited; rotation and scaling
    /// keep the source's colour space.
    func testProducersLabelTheirPictures() throws {
        let source = makeI420Pattern(width: 64, height: 48)
        let jpeg = try JPEGEncoder().encode(source, quality: 90)
        var decoded = I420Buffer()
        try JPEGDecoder().decodeI420(jpeg, into: &decoded)
        XCTAssertEqual(decoded.colorSpace, .bt601Full)
        var rotated = I420Buffer()
        try decoded.rotated(by: .clockwise90, into: &rotated)
        XCTAssertEqual(rotated.colorSpace, .bt601Full)
        var scaled = I420Buffer()
        try decoded.scaled(to: PictureSize(width: 32, height: 24), into: &scaled)
        XCTAssertEqual(scaled.colorSpace, .bt601Full)

        var limited = decoded
        try limited.convertToLimitedRange()
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(width: 64, height: 48, bitrateKbps: 300))
        let vp8 = try XCTUnwrap(try encoder.encode(VideoFrame(picture: limited, captureTimestampMicros: 0)))
        var picture = I420Buffer(width: 2, height: 2, colorSpace: .bt601Full)
        XCTAssertTrue(try VP8Decoder().decode(vp8.bytes, into: &picture))
        XCTAssertEqual(picture.colorSpace, .bt601Limited)
    }

    /// The VP8 encoder takes BT.601 limited range only, the JPEG encoder full range only: the other range
    /// is a typed error, and nothing is encoded.
    func testEncodersRefuseTheWrongRange() throws {
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(width: 64, height: 48, bitrateKbps: 300))
        let full = makeI420Pattern(width: 64, height: 48)
        let error = assertThrowsMediaError { () throws(MediaError) in try encoder.encode(VideoFrame(picture: full, captureTimestampMicros: 0)) }
        XCTAssertEqual(error, .wrongColorSpace(operation: "VP8 encoding", expected: .bt601Limited, got: .bt601Full))
        XCTAssertEqual(error?.description, "VP8 encoding takes BT.601 limited range pictures, got BT.601 full range")
        XCTAssertEqual(encoder.framesSubmitted, 0)

        var limited = full
        try limited.convertToLimitedRange()
        let jpegEncoder = try JPEGEncoder()
        let jpegError = assertThrowsMediaError { () throws(MediaError) in try jpegEncoder.encode(limited, quality: 80) }
        XCTAssertEqual(jpegError, .wrongColorSpace(operation: "JPEG encoding (JFIF)", expected: .bt601Full, got: .bt601Limited))
    }
}
