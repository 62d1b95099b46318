import Glibc
public import Media

/// Paints the test pattern: eight colour bars, a box that moves one step per frame, and a banner with
/// the frame counter and the capture time (`FRAME 000123  T 000042.137`) in a 5×7 pixel font, scaled.
///
/// Painted directly in BT.601 limited range (what VP8 carries; no conversion on the way to the encoder):
/// the bars are the 100 % colour bars of ITU-R BT.601 codes (white Y 235, black Y 16), the banner is
/// Y 16 with Y 235 text, the ramp runs from Y 16 to 235.
///
/// The static part is painted once per size into a template; each frame copies it and paints the box and
/// the banner with row fills (`memcpy`/`memset`), so a frame costs a few copies of the picture, also in a
/// debug build.
public struct TestPatternPainter: Sendable {
    /// Picture width in pixels.
    public let width: Int
    /// Picture height in pixels.
    public let height: Int
    private let template: I420Buffer
    /// Font scale: one font pixel is `scale`×`scale` picture pixels.
    let scale: Int

    /// - Precondition: width and height are at least 16.
    public init(width: Int, height: Int) {
        precondition(width >= 16 && height >= 16, "test pattern needs at least 16x16")
        self.width = width
        self.height = height
        scale = max(1, min(width / 160, height / 60))
        template = Self.makeTemplate(width: width, height: height)
    }

    /// The banner text of a frame.
    public static func bannerText(frameNumber: Int, timestampMicros: UInt64) -> String {
        let frameText = String(frameNumber % 1_000_000)
        let seconds = timestampMicros / 1_000_000 % 1_000_000
        let millis = timestampMicros / 1000 % 1000
        func pad(_ text: String, _ count: Int) -> String { String(repeating: "0", count: max(0, count - text.count)) + text }
        return "FRAME \(pad(frameText, 6))  T \(pad(String(seconds), 6)).\(pad(String(millis), 3))"
    }

    /// Where the banner's text starts and how big a font pixel is (tests read the digits back).
    public var bannerOrigin: (x: Int, y: Int, scale: Int) { (2 * scale, 2 * scale, scale) }

    /// Paints frame `frameNumber`, captured at `timestampMicros`, into `picture` (resized to the
    /// pattern's size, its storage reused; labelled BT.601 limited range).
    public func paint(frameNumber: Int, timestampMicros: UInt64, into picture: inout I420Buffer) {
        picture.resize(width: width, height: height)
        picture.colorSpace = template.colorSpace
        let count = template.bytes.count
        template.bytes.withUnsafeBytes { source in
            picture.withUnsafeMutablePlanes { y, _, _ in
                // The three planes are contiguous from y.baseAddress (I420Buffer's layout).
                _ = memcpy(y.baseAddress!, source.baseAddress!, count)
            }
        }
        // The moving box: one box-width every 30 frames, left to right, wrapping. Its luma (190) is none of
        // the bars': a change of chroma alone can hide under libvpx's static threshold.
        let box = max(8, height / 5) & ~1
        let travel = max(1, width - box)
        let step = max(2, (box / 30) & ~1)
        let x = ((frameNumber * step) % travel) & ~1
        let y = (height / 2 - box / 2) & ~1
        fill(&picture, x: x, y: y, width: box, height: box, luma: 190, u: 90, v: 240)
        // The banner.
        let text = Self.bannerText(frameNumber: frameNumber, timestampMicros: timestampMicros)
        let origin = bannerOrigin
        let bannerWidth = min(width - origin.x, (text.count * 6 + 1) * scale)
        fill(&picture, x: 0, y: 0, width: bannerWidth + origin.x + scale, height: min(height, 11 * scale), luma: 16, u: 128, v: 128)
        draw(text, &picture, x: origin.x, y: origin.y)
    }

    /// Fills a rectangle (clipped) with one colour; chroma covers the luma rectangle's 2×2 blocks.
    private func fill(_ picture: inout I420Buffer, x: Int, y: Int, width w: Int, height h: Int, luma: UInt8, u: UInt8, v: UInt8) {
        let x0 = max(0, x), y0 = max(0, y)
        let x1 = min(width, x + w), y1 = min(height, y + h)
        guard x1 > x0, y1 > y0 else { return }
        let (ys, uvs) = (picture.yStride, picture.uvStride)
        picture.withUnsafeMutablePlanes { yp, up, vp in
            for row in y0..<y1 { _ = memset(yp.baseAddress! + row * ys + x0, Int32(luma), x1 - x0) }
            let (cx0, cx1) = (x0 / 2, (x1 + 1) / 2)
            for row in (y0 / 2)..<((y1 + 1) / 2) {
                _ = memset(up.baseAddress! + row * uvs + cx0, Int32(u), cx1 - cx0)
                _ = memset(vp.baseAddress! + row * uvs + cx0, Int32(v), cx1 - cx0)
            }
        }
    }

    /// Draws `text` in white at (x, y): each glyph 5×7 font pixels plus one of spacing.
    private func draw(_ text: String, _ picture: inout I420Buffer, x: Int, y: Int) {
        let ys = picture.yStride
        let (w, h, s) = (width, height, scale)
        picture.withUnsafeMutablePlanes { yp, _, _ in
            var penX = x
            for character in text.utf8 {
                let rows = Self.glyph(character)
                for (r, bits) in rows.enumerated() {
                    for c in 0..<5 where bits & (0x10 >> UInt8(c)) != 0 {
                        let px = penX + c * s, py = y + r * s
                        guard px + s <= w, py + s <= h else { continue }
                        for dy in 0..<s { _ = memset(yp.baseAddress! + (py + dy) * ys + px, 235, s) }
                    }
                }
                penX += 6 * s
            }
        }
    }

    /// The 5×7 glyph of an ASCII character: seven rows, bit 4 is the leftmost column.
    public static func glyph(_ character: UInt8) -> [UInt8] {
        switch character {
        case UInt8(ascii: "0"): [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E]
        case UInt8(ascii: "1"): [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E]
        case UInt8(ascii: "2"): [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F]
        case UInt8(ascii: "3"): [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E]
        case UInt8(ascii: "4"): [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02]
        case UInt8(ascii: "5"): [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E]
        case UInt8(ascii: "6"): [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E]
        case UInt8(ascii: "7"): [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08]
        case UInt8(ascii: "8"): [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E]
        case UInt8(ascii: "9"): [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C]
        case UInt8(ascii: "F"): [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10]
        case UInt8(ascii: "R"): [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11]
        case UInt8(ascii: "A"): [0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11]
        case UInt8(ascii: "M"): [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11]
        case UInt8(ascii: "E"): [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F]
        case UInt8(ascii: "T"): [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04]
        case UInt8(ascii: "."): [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C]
        default: [0, 0, 0, 0, 0, 0, 0]
        }
    }

    /// Eight vertical bars (white, yellow, cyan, green, magenta, red, blue, black; 100 % bars in BT.601
    /// limited range: R′G′B′ 0 or 255 each) over a grey ramp (Y 16…235) in the bottom quarter.
    private static func makeTemplate(width: Int, height: Int) -> I420Buffer {
        let bars: [(UInt8, UInt8, UInt8)] = [
            (235, 128, 128), (210, 16, 146), (170, 166, 16), (145, 54, 34),
            (106, 202, 222), (81, 90, 240), (41, 240, 110), (16, 128, 128),
        ]
        var picture = I420Buffer(width: width, height: height, colorSpace: .bt601Limited)
        let (ys, uvs, cw, ch) = (picture.yStride, picture.uvStride, picture.chromaWidth, picture.chromaHeight)
        picture.withUnsafeMutablePlanes { y, u, v in
            let rampStart = height * 3 / 4
            for col in 0..<width {
                y[col] = bars[col * 8 / width].0
                y[rampStart * ys + col] = UInt8(16 + col * 219 / max(1, width - 1))
            }
            for row in 1..<height where row != rampStart {
                let sourceRow = row < rampStart ? 0 : rampStart
                _ = memcpy(y.baseAddress! + row * ys, y.baseAddress! + sourceRow * ys, width)
            }
            let chromaRamp = rampStart / 2
            for col in 0..<cw {
                let bar = bars[min(7, col * 2 * 8 / width)]
                u[col] = bar.1
                v[col] = bar.2
            }
            for row in 1..<ch {
                if row < chromaRamp {
                    _ = memcpy(u.baseAddress! + row * uvs, u.baseAddress!, cw)
                    _ = memcpy(v.baseAddress! + row * uvs, v.baseAddress!, cw)
                } else {
                    _ = memset(u.baseAddress! + row * uvs, 128, cw)
                    _ = memset(v.baseAddress! + row * uvs, 128, cw)
                }
            }
        }
        return picture
    }
}
