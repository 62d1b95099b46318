import Media

/// The eight colour bars of the call's test pattern (Y, Cb, Cr), left to right (TestPatternPainter).
public let testPatternBars: [(y: Int, u: Int, v: Int)] = [
    (235, 128, 128), (210, 16, 146), (170, 166, 16), (145, 54, 34), (106, 202, 222), (81, 90, 240), (41, 240, 110), (16, 128, 128),
]

/// A bar's colour as a browser shows it: BT.601 limited range to RGB (exact formulas).
public func rgb(ofBar bar: (y: Int, u: Int, v: Int)) -> (r: Int, g: Int, b: Int) {
    let shown = ColourChart.bt601RGB(y: UInt8(bar.y), cb: UInt8(bar.u), cr: UInt8(bar.v), range: .limited)
    return (Int(shown.r), Int(shown.g), Int(shown.b))
}

/// Where to sample each bar in a `width`×`height` test pattern: the bar's centre, between the moving box
/// (the middle fifth of the height) and the grey ramp (the bottom quarter).
public func barSamplePoints(width: Int, height: Int) -> [(x: Int, y: Int)] {
    let box = max(8, height / 5) & ~1
    let y = (height / 2 + box / 2 + height * 3 / 4) / 2
    return (0..<8).map { (Int((Double($0) + 0.5) * Double(width) / 8), y) }
}

/// How many of the test pattern's eight bars a `width`×`height` picture shows (Y, U and V each within 8
/// levels at the bar's sample point): 8 for the pattern, about 0 for noise (a chance match of all three is
/// ~1/4000 a bar).
public func testPatternBarsShown(in picture: I420Buffer) -> Int {
    barSamplePoints(width: picture.width, height: picture.height).enumerated().filter { index, point in
        let bar = testPatternBars[index]
        let y = Int(picture.bytes[picture.yOffset + point.y * picture.yStride + point.x])
        let u = Int(picture.bytes[picture.uOffset + point.y / 2 * picture.uvStride + point.x / 2])
        let v = Int(picture.bytes[picture.vOffset + point.y / 2 * picture.uvStride + point.x / 2])
        return abs(y - bar.y) <= 8 && abs(u - bar.u) <= 8 && abs(v - bar.v) <= 8
    }.count
}

/// How many of the eight bars RGB pixels read at ``barSamplePoints(width:height:)`` (as a browser shows
/// them, `[[r, g, b]]` or `[[r, g, b, a]]`) match, each channel within `tolerance` levels.
public func testPatternBarsShown(rgb pixels: [[Int]], tolerance: Int = 12) -> Int {
    zip(pixels, testPatternBars).filter { pixel, bar in
        let expected = rgb(ofBar: bar)
        return pixel.count >= 3 && abs(pixel[0] - expected.r) <= tolerance && abs(pixel[1] - expected.g) <= tolerance
            && abs(pixel[2] - expected.b) <= tolerance
    }.count
}

/// Bytes from lower- or upper-case hex text (two digits a byte; a trailing odd digit is ignored).
public func bytes(hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var index = hex.startIndex
    while let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), index < hex.endIndex {
        out.append(UInt8(hex[index..<next], radix: 16) ?? 0)
        index = next
    }
    return out
}
