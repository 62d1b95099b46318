import Foundation
import Media

/// A colour chart to show on a screen and find again in what a viewer decodes: 32 flat patches (8 columns ×
/// 4 rows of 80×96 pixels, 640×384 in all) — 14 grey steps including the codes range faults move first
/// (0, 16, 17, 235, 240, 254, 255), the six saturated primaries and secondaries, and mid colours.
///
/// Every patch edge falls on a multiple of 16 pixels (VP8 macroblocks, JPEG MCUs, 4:2:0 chroma pairs), so
/// a patch's centre is flat in every format on the way and a whole-picture PSNR measures colour, not edge
/// blur. Checks compare against these RGB values — what is on the screen — never against our own output.
public enum ColourChart {
    /// The chart's size in pixels.
    public static let width = 640
    public static let height = 384
    /// One patch's size in pixels.
    public static let patchWidth = 80
    public static let patchHeight = 96

    /// One patch: a name for failure messages and its colour (R′G′B′, 0…255).
    public struct Patch: Sendable {
        public var name: String
        public var r: Int, g: Int, b: Int
    }

    /// The patches, row by row, left to right.
    public static let patches: [Patch] = {
        let greys = [0, 16, 17, 32, 64, 96, 128, 160, 192, 221, 235, 240, 254, 255]
        var list = greys.map { Patch(name: "grey \($0)", r: $0, g: $0, b: $0) }
        let colours: [(String, Int, Int, Int)] = [
            ("red", 255, 0, 0), ("green", 0, 255, 0), ("blue", 0, 0, 255),
            ("yellow", 255, 255, 0), ("cyan", 0, 255, 255), ("magenta", 255, 0, 255),
            ("dodger blue", 30, 144, 255), ("brown", 128, 64, 32), ("steel", 64, 128, 192),
            ("skin", 224, 172, 140), ("purple", 100, 30, 120), ("dark green", 20, 80, 40),
            ("cream", 250, 232, 190), ("crimson", 180, 20, 60), ("olive", 128, 128, 0),
            ("teal", 0, 128, 128), ("navy", 16, 16, 96), ("orange", 255, 140, 0),
        ]
        list += colours.map { Patch(name: $0.0, r: $0.1, g: $0.2, b: $0.3) }
        return list
    }()

    /// The top-left corner of patch `index`.
    public static func origin(of index: Int) -> (x: Int, y: Int) {
        ((index % 8) * patchWidth, (index / 8) * patchHeight)
    }

    /// The chart as a BGRX picture (X 0), `width`×`height`.
    public static func image() -> BGRXImage {
        var image = BGRXImage(width: width, height: height)
        let stride = image.stride
        image.withUnsafeMutableBytes { bytes in
            for (index, patch) in patches.enumerated() {
                let (x0, y0) = origin(of: index)
                for y in y0..<(y0 + patchHeight) {
                    for x in x0..<(x0 + patchWidth) {
                        let offset = y * stride + x * 4
                        bytes[offset] = UInt8(patch.b)
                        bytes[offset + 1] = UInt8(patch.g)
                        bytes[offset + 2] = UInt8(patch.r)
                        bytes[offset + 3] = 0
                    }
                }
            }
        }
        return image
    }

    /// What a check of one decoded picture found.
    public struct Reading: Sendable, CustomStringConvertible {
        /// Per patch: the mean colour of its central 16×16 pixels and the largest channel difference
        /// from the patch's colour.
        public var patches: [(patch: Patch, seen: (r: Double, g: Double, b: Double), difference: Double)]
        /// PSNR over every R, G and B sample of the picture against the chart, dB.
        public var psnr: Double

        /// The largest difference of any patch, levels.
        public var worstDifference: Double { patches.map(\.difference).max() ?? .infinity }

        /// The patches more than `tolerance` levels off, one line each.
        public func offenders(tolerance: Double) -> [String] {
            patches.filter { $0.difference > tolerance }.map {
                "\($0.patch.name) (\($0.patch.r),\($0.patch.g),\($0.patch.b)) seen as "
                    + String(format: "(%.1f,%.1f,%.1f), %.1f off", $0.seen.r, $0.seen.g, $0.seen.b, $0.difference)
            }
        }

        public var description: String {
            String(format: "PSNR %.1f dB, worst patch %.1f levels off", psnr, worstDifference)
                + (offenders(tolerance: 4).isEmpty ? "" : "; over 4: " + offenders(tolerance: 4).joined(separator: "; "))
        }
    }

    /// Reads a decoded picture of the chart's size, given as a function from (x, y) to R′G′B′.
    public static func read(_ pixel: (Int, Int) -> (r: UInt8, g: UInt8, b: UInt8)) -> Reading {
        var found: [(patch: Patch, seen: (r: Double, g: Double, b: Double), difference: Double)] = []
        for (index, patch) in patches.enumerated() {
            let (x0, y0) = origin(of: index)
            let (cx, cy) = (x0 + patchWidth / 2 - 8, y0 + patchHeight / 2 - 8)
            var sum = (0.0, 0.0, 0.0)
            for y in cy..<(cy + 16) {
                for x in cx..<(cx + 16) {
                    let p = pixel(x, y)
                    sum = (sum.0 + Double(p.r), sum.1 + Double(p.g), sum.2 + Double(p.b))
                }
            }
            let seen = (r: sum.0 / 256, g: sum.1 / 256, b: sum.2 / 256)
            let difference = max(abs(seen.r - Double(patch.r)), abs(seen.g - Double(patch.g)), abs(seen.b - Double(patch.b)))
            found.append((patch, seen, difference))
        }
        let chart = image()
        var squares = 0.0
        for y in 0..<height {
            for x in 0..<width {
                let want = chart.rgb(x: x, y: y), got = pixel(x, y)
                for (a, b) in [(want.red, got.r), (want.green, got.g), (want.blue, got.b)] {
                    let d = Double(a) - Double(b)
                    squares += d * d
                }
            }
        }
        let mse = squares / Double(width * height * 3)
        return Reading(patches: found, psnr: mse == 0 ? .infinity : 10 * log10(255 * 255 / mse))
    }

    /// Reads a BGRX picture of the chart's size.
    public static func read(_ image: BGRXImage) -> Reading {
        precondition(image.width == width && image.height == height, "the chart is \(width)x\(height), not \(image.width)x\(image.height)")
        return read { x, y in
            let p = image.rgb(x: x, y: y)
            return (p.red, p.green, p.blue)
        }
    }

    /// Reads an I420 picture of the chart's size, shown in its own colour space by the exact BT.601
    /// formulas (``bt601RGB(y:cb:cr:range:)``), as a viewer shows a VP8 picture (limited range).
    public static func read(_ picture: I420Buffer) -> Reading {
        precondition(picture.width == width && picture.height == height, "the chart is \(width)x\(height)")
        let range = picture.colorSpace.range
        return read { x, y in
            bt601RGB(y: picture.bytes[picture.yOffset + y * picture.yStride + x],
                     cb: picture.bytes[picture.uOffset + y / 2 * picture.uvStride + x / 2],
                     cr: picture.bytes[picture.vOffset + y / 2 * picture.uvStride + x / 2], range: range)
        }
    }

    /// R′G′B′ of one BT.601 Y′CbCr sample, in floats and rounded (ITU-R BT.601-7 §2.5.2–2.5.3 for limited
    /// range, JFIF 1.02 §7 for full range), independent of libyuv: libyuv's fixed-point `I420ToARGB`
    /// shows saturated blue up to 4 levels dark, which is not what the stream carries.
    public static func bt601RGB(y: UInt8, cb: UInt8, cr: UInt8, range: YCbCrRange) -> (r: UInt8, g: UInt8, b: UInt8) {
        let (luma, u, v): (Double, Double, Double)
        switch range {
        case .limited: (luma, u, v) = ((Double(y) - 16) * 255 / 219, (Double(cb) - 128) * 255 / 224, (Double(cr) - 128) * 255 / 224)
        case .full: (luma, u, v) = (Double(y), Double(cb) - 128, Double(cr) - 128)
        }
        func clamp(_ value: Double) -> UInt8 { UInt8(max(0, min(255, value.rounded()))) }
        return (clamp(luma + 1.402 * v), clamp(luma - 0.344136 * u - 0.714136 * v), clamp(luma + 1.772 * u))
    }

    /// Reads packed pixels of the chart's size: `channels` bytes a pixel (3: RGB, 4: RGBA), R first.
    public static func read(packed bytes: [UInt8], channels: Int) -> Reading {
        precondition(bytes.count == width * height * channels, "\(bytes.count) bytes is not a \(width)x\(height) picture of \(channels) channels")
        return read { x, y in
            let offset = (y * width + x) * channels
            return (bytes[offset], bytes[offset + 1], bytes[offset + 2])
        }
    }
}
