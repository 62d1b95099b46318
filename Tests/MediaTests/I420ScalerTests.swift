import Media
import XCTest

/// `PictureSize.downscaled(toFit:)` (the encode limit's arithmetic) and `I420Buffer.scaled` (libyuv).
final class I420ScalerTests: XCTestCase {
    private func size(_ w: Int, _ h: Int) -> PictureSize { PictureSize(width: w, height: h) }
    private let uhd = PictureSize(width: 3840, height: 2160)

    func testPicturesWithinTheLimitAreLeftAlone() {
        for (w, h) in [(3840, 2160), (1920, 1080), (2160, 3840), (585, 1266), (3839, 2159), (1, 1)] {
            XCTAssertNil(size(w, h).downscaled(toFit: uhd), "\(w)x\(h)")
        }
    }

    func testLargerPicturesFitKeepingTheirAspectRatioAtEvenSizes() {
        let cases: [((Int, Int), (Int, Int))] = [
            ((7680, 4320), (3840, 2160)),    // 8K: exactly half
            ((16383, 16383), (2160, 2160)),  // the wire's largest: square
            ((4320, 7680), (2160, 3840)),    // portrait fits the limit turned
            ((5001, 3001), (3598, 2160)),    // 5001/3001 ≈ 1.666 < 16/9: the height decides, width rounded down to even
            ((5120, 1440), (3840, 1080)),    // super-wide: the width decides
            ((16384, 1), (3840, 2)),         // one row: at least 2
            ((3841, 2160), (3840, 2158)),    // just over: 3840 wide needs 2159.4 rows, rounded down to even
        ]
        for ((w, h), (ew, eh)) in cases {
            let fitted = size(w, h).downscaled(toFit: uhd)
            XCTAssertEqual(fitted, size(ew, eh), "\(w)x\(h)")
            if let fitted {
                XCTAssertEqual(fitted.width % 2, 0)
                XCTAssertEqual(fitted.height % 2, 0)
                XCTAssertLessThanOrEqual(max(fitted.width, fitted.height), 3840)
                XCTAssertLessThanOrEqual(min(fitted.width, fitted.height), 2160)
                // The aspect ratio is kept within the rounding of one pixel per side (not for the 1-row case).
                if min(w, h) > 100 {
                    XCTAssertEqual(Double(fitted.width) / Double(fitted.height), Double(w) / Double(h), accuracy: 0.01, "\(w)x\(h)")
                }
            }
        }
        XCTAssertEqual(size(1280, 720).downscaled(toFit: size(640, 360)), size(640, 360))
        XCTAssertEqual(size(1280, 720).downscaled(toFit: size(360, 640)), size(640, 360), "the limit is orientation-free")
    }

    func testParsing() {
        XCTAssertEqual(PictureSize(parsing: "3840x2160"), uhd)
        XCTAssertEqual(PictureSize(parsing: "1048576x1048576")?.pixels, 1 << 40, "the largest sides parse, the product fits")
        for bad in ["3840", "3840x", "x2160", "0x10", "10x-1", "axb", "1x2x3", "", "+5x+5", " 5x5", "5x5 ",
                    "1048577x1", "4294967296x4294967296", "99999999999999999999x1"] {
            XCTAssertNil(PictureSize(parsing: bad), bad)
        }
        XCTAssertEqual(uhd.description, "3840x2160")
        XCTAssertEqual(uhd.pixels, 8_294_400)
    }

    /// Four flat quadrants, each with its own Y, U and V.
    private func quadrants(width: Int, height: Int) -> I420Buffer {
        var picture = I420Buffer(width: width, height: height, colorSpace: .bt601Limited)
        let (ys, uvs, cw, ch) = (picture.yStride, picture.uvStride, picture.chromaWidth, picture.chromaHeight)
        picture.withUnsafeMutablePlanes { y, u, v in
            for r in 0..<height { for c in 0..<width { y[r * ys + c] = UInt8(40 + (r < height / 2 ? 0 : 100) + (c < width / 2 ? 0 : 50)) } }
            for r in 0..<ch {
                for c in 0..<cw {
                    u[r * uvs + c] = r < ch / 2 ? 90 : 170
                    v[r * uvs + c] = c < cw / 2 ? 100 : 200
                }
            }
        }
        return picture
    }

    func testScalingDownKeepsFlatAreasAndTakesTheAskedSize() throws {
        let source = quadrants(width: 640, height: 360)
        for filter in [ScaleFilter.box, .bilinear] {
            var out = I420Buffer()
            try source.scaled(to: size(320, 180), filter: filter, into: &out)
            XCTAssertEqual([out.width, out.height], [320, 180])
            XCTAssertEqual(out.bytes.count, I420Buffer.byteCount(width: 320, height: 180))
            // Away from the edges between quadrants every sample is its quadrant's value.
            func y(_ r: Int, _ c: Int) -> UInt8 { out.bytes[r * out.yStride + c] }
            func u(_ r: Int, _ c: Int) -> UInt8 { out.bytes[out.uOffset + r * out.uvStride + c] }
            func v(_ r: Int, _ c: Int) -> UInt8 { out.bytes[out.vOffset + r * out.uvStride + c] }
            XCTAssertEqual([y(10, 10), y(10, 300), y(170, 10), y(170, 300)], [40, 90, 140, 190], "\(filter)")
            XCTAssertEqual([u(5, 5), u(80, 5)], [90, 170], "\(filter)")
            XCTAssertEqual([v(5, 5), v(5, 150)], [100, 200], "\(filter)")
        }
    }

    func testOddSizesAndReuseOfTheDestination() throws {
        var out = I420Buffer()
        try quadrants(width: 1923, height: 1083).scaled(to: size(960, 540), into: &out)
        XCTAssertEqual([out.width, out.height], [960, 540])
        let storage = out.bytes.withUnsafeBufferPointer { $0.baseAddress }
        try quadrants(width: 501, height: 377).scaled(to: size(960, 540), into: &out)  // up works too
        XCTAssertEqual(out.bytes.withUnsafeBufferPointer { $0.baseAddress }, storage, "same size: no new allocation")
        try quadrants(width: 33, height: 17).scaled(to: size(5, 3), into: &out)
        XCTAssertEqual([out.width, out.height], [5, 3])
    }

    func testEmptyPicturesAndSizesAreRefused() {
        var out = I420Buffer()
        XCTAssertThrowsError(try I420Buffer().scaled(to: size(2, 2), into: &out))
        XCTAssertThrowsError(try I420Buffer(width: 4, height: 4, colorSpace: .bt601Limited).scaled(to: size(0, 2), into: &out))
    }
}
