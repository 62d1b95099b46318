/// The page's icon, served at `GET /favicon.ico` (browsers ask for it whether or not a page names it).
///
/// An ICO file (Microsoft's icon format: `ICONDIR`, one `ICONDIRENTRY`, then the image) holding one
/// 16×16 32-bit BMP image: a `BITMAPINFOHEADER` whose height counts the colour rows and the AND-mask rows
/// (2 × 16), the colour rows bottom-up as little-endian BGRA, then a 1-bit AND mask (rows padded to 4 bytes,
/// all 0: the alpha channel decides). All fields little-endian. The picture: a blue screen with a light
/// frame on a transparent background.
public enum Favicon {
    /// Width and height of the icon, pixels.
    public static let side = 16
    /// The icon's frame colour and fill, BGRA.
    static let frame: [UInt8] = [0xEE, 0xEE, 0xEE, 0xFF]
    static let fill: [UInt8] = [0xFF, 0x90, 0x1E, 0xFF]  // #1e90ff

    /// The whole `.ico` file, 1150 bytes.
    public static let ico: [UInt8] = {
        let side = Self.side
        let maskRowBytes = 4  // 16 bits, padded to a 32-bit boundary
        let imageBytes = 40 + side * side * 4 + side * maskRowBytes
        var out: [UInt8] = []
        out.reserveCapacity(6 + 16 + imageBytes)
        func le16(_ value: Int) { out += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        func le32(_ value: Int) { le16(value & 0xFFFF); le16(value >> 16 & 0xFFFF) }
        // ICONDIR: reserved, type 1 (icon), one image.
        le16(0); le16(1); le16(1)
        // ICONDIRENTRY: width, height, colours (0: no palette), reserved, planes, bit count, size, offset.
        out += [UInt8(side), UInt8(side), 0, 0]
        le16(1); le16(32); le32(imageBytes); le32(6 + 16)
        // BITMAPINFOHEADER: size, width, height (colour + mask), planes, bit count, no compression, ….
        le32(40); le32(side); le32(side * 2); le16(1); le16(32); le32(0)
        le32(side * side * 4); le32(0); le32(0); le32(0); le32(0)
        for row in (0..<side).reversed() {  // bottom-up
            for column in 0..<side { out += pixel(column: column, row: row) }
        }
        out += [UInt8](repeating: 0, count: side * maskRowBytes)
        return out
    }()

    /// The BGRA pixel at (`column`, `row`), row 0 at the top: a 14×10 screen from (1, 3) framed one pixel
    /// wide, a 6×1 stand below it, transparent elsewhere.
    static func pixel(column: Int, row: Int) -> [UInt8] {
        let screen = (1...14).contains(column) && (3...12).contains(row)
        let inner = (2...13).contains(column) && (4...11).contains(row)
        let stand = (5...10).contains(column) && row == 14
        if inner { return fill }
        if screen || stand { return frame }
        return [0, 0, 0, 0]
    }
}
