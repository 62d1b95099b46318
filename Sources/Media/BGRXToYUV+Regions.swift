internal import CYUV

extension BGRXToYUV {
    /// Converts only `regions` of `pixels` into `frame`, which already holds the rest of the picture (the
    /// previous one, same size): each region from its top-left, BT.601 `range` (`ARGBToI420` / `ARGBToJ420`
    /// on the region's rows and columns). For a stream where only a little changes per frame (the frame
    /// wire's `Buffer-Damage`), the cost follows the changed pixels instead of the picture.
    ///
    /// - Parameter regions: `(x, y, width, height)` in pixels, each within the picture and with even `x`,
    ///   `y` (I420 chroma covers 2×2 blocks: an odd edge would half-update a chroma sample); an odd width or
    ///   height is allowed only where the region reaches the picture's right or bottom edge.
    /// - Throws: `MediaError.invalidArgument` when `frame` is not the picture's size and range, or a region
    ///   breaks those rules (nothing is converted then); `.libyuv` if libyuv refuses.
    public static func convertRegionsToI420(
        _ pixels: BGRXPixels, regions: [(x: Int, y: Int, width: Int, height: Int)], range: YCbCrRange, into frame: inout I420Buffer
    ) throws(MediaError) {
        try check(pixels)
        guard frame.width == pixels.width, frame.height == pixels.height, frame.colorSpace.range == range else {
            throw .invalidArgument("regions of a \(pixels.width)x\(pixels.height) picture into a \(frame.width)x\(frame.height) \(frame.colorSpace) one")
        }
        for r in regions {
            let fits = r.x >= 0 && r.y >= 0 && r.width >= 1 && r.height >= 1 && r.x <= pixels.width - r.width && r.y <= pixels.height - r.height
            let even = r.x % 2 == 0 && r.y % 2 == 0 && (r.width % 2 == 0 || r.x + r.width == pixels.width)
                && (r.height % 2 == 0 || r.y + r.height == pixels.height)
            guard fits, even else {
                throw .invalidArgument("region \(r.width)x\(r.height)+\(r.x)+\(r.y) is not an even-aligned part of \(pixels.width)x\(pixels.height)")
            }
        }
        let (yStride, uvStride, stride) = (frame.yStride, frame.uvStride, pixels.stride)
        let convert = range == .limited ? ARGBToI420 : ARGBToJ420
        let source = pixels.base.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let failed = frame.withUnsafeMutablePlanes { y, u, v -> Int32 in
            for r in regions {
                let chroma = (r.y / 2) * uvStride + r.x / 2
                let status = convert(
                    source + r.y * stride + r.x * BGRXImage.bytesPerPixel, Int32(stride),
                    y.baseAddress! + r.y * yStride + r.x, Int32(yStride),
                    u.baseAddress! + chroma, Int32(uvStride), v.baseAddress! + chroma, Int32(uvStride),
                    Int32(r.width), Int32(r.height))
                if status != 0 { return status }
            }
            return 0
        }
        guard failed == 0 else { throw .libyuv("region conversion to I420 refused (status \(failed))") }
    }
}
