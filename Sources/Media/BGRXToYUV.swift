internal import CYUV

/// Converts BGRX pictures (screen captures) to planar YCbCr with libyuv's full-range "J" functions:
/// BT.601 coefficients, full range (Y, Cb, Cr all 0…255, black Y 0, grey chroma 128) — the colours a JPEG
/// (JFIF) holds, and so exactly what the call's JPEG decode hands to VP8. A picture converted here and one
/// that went through JPEG show the same colours.
///
/// libyuv's "ARGB" is the little-endian word `0xAARRGGBB`, bytes B, G, R, A in memory: our BGRX as it is.
///
/// Chroma is the rounded average of the pixels each sample covers (a 2×2 block for 4:2:0, a horizontal
/// pair for 4:2:2; at odd sizes the last column/row averages what is there). libyuv (the Debian
/// 0.0~git20230123 build) has no full-range 4:4:4 conversion (`ARGBToI444` is limited range), so 4:4:4 is
/// not offered here.
public enum BGRXToYUV {
    /// Converts `pixels` into `frame` with `ARGBToJ420`; `frame` takes the picture's size (its allocation is
    /// kept when the byte count does not change, so a stream of same-sized pictures allocates nothing).
    ///
    /// Output layout (``I420Buffer``, tightly packed, full range): Y `width × height`, then U and V, each
    /// `((width + 1) / 2) × ((height + 1) / 2)`.
    /// - Throws: `MediaError.invalidArgument` for an empty picture, one above 32767 per side or with a
    ///   stride beyond `Int32`; `.libyuv` if libyuv refuses the arguments.
    public static func convertToI420(_ pixels: BGRXPixels, into frame: inout I420Buffer) throws(MediaError) {
        try check(pixels)
        frame.resize(width: pixels.width, height: pixels.height)
        let (yStride, uvStride) = (frame.yStride, frame.uvStride)
        let status = frame.withUnsafeMutablePlanes { y, u, v in
            ARGBToJ420(
                pixels.base.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(pixels.stride),
                y.baseAddress, Int32(yStride), u.baseAddress, Int32(uvStride), v.baseAddress, Int32(uvStride),
                Int32(pixels.width), Int32(pixels.height))
        }
        guard status == 0 else { throw .libyuv("ARGBToJ420 refused \(pixels.width)x\(pixels.height) (status \(status))") }
    }

    /// Converts `image` into `frame`; see ``convertToI420(_:into:)``.
    public static func convertToI420(_ image: BGRXImage, into frame: inout I420Buffer) throws(MediaError) {
        try image.withPixels { (pixels) throws(MediaError) in try convertToI420(pixels, into: &frame) }
    }

    /// True when ``convert(_:subsampling:y:u:v:)`` handles `subsampling`: 4:2:0 (`ARGBToJ420`),
    /// 4:2:2 (`ARGBToJ422`) and gray (`ARGBToJ400`).
    static func supports(_ subsampling: JPEGSubsampling) -> Bool {
        subsampling == .yuv420 || subsampling == .yuv422 || subsampling == .gray
    }

    /// Converts into caller-owned planes (pointer, stride in bytes). Y gets `width × height` samples; for
    /// 4:2:0 U and V get `((width+1)/2) × ((height+1)/2)`, for 4:2:2 `((width+1)/2) × height`; for gray U
    /// and V are not touched (may be nil). Returns libyuv's status (0 on success, -1 for an unsupported
    /// subsampling).
    static func convert(
        _ pixels: BGRXPixels, subsampling: JPEGSubsampling,
        y: (UnsafeMutablePointer<UInt8>, Int), u: (UnsafeMutablePointer<UInt8>?, Int), v: (UnsafeMutablePointer<UInt8>?, Int)
    ) -> Int32 {
        let source = pixels.base.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let (stride, width, height) = (Int32(pixels.stride), Int32(pixels.width), Int32(pixels.height))
        switch subsampling {
        case .yuv420:
            return ARGBToJ420(source, stride, y.0, Int32(y.1), u.0, Int32(u.1), v.0, Int32(v.1), width, height)
        case .yuv422:
            return ARGBToJ422(source, stride, y.0, Int32(y.1), u.0, Int32(u.1), v.0, Int32(v.1), width, height)
        case .gray:
            return ARGBToJ400(source, stride, y.0, Int32(y.1), width, height)
        default:
            return -1
        }
    }

    /// 1…32767 pixels a side (libyuv works in `int`), stride within `Int32`.
    static func check(_ pixels: BGRXPixels) throws(MediaError) {
        guard (1...32_767).contains(pixels.width), (1...32_767).contains(pixels.height), pixels.stride <= Int(Int32.max) else {
            throw .invalidArgument("cannot convert a \(pixels.width)x\(pixels.height) BGRX picture (stride \(pixels.stride))")
        }
    }
}
