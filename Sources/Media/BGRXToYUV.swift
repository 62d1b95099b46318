internal import CYUV

/// Converts BGRX pictures (screen captures) to planar YCbCr with libyuv, BT.601 in either range:
///
/// - limited (`ARGBToI420`: Y 16…235, Cb/Cr 16…240): what VP8 carries, so what the agent's raw I420 wire
///   sends (the call encodes it without a conversion);
/// - full (libyuv's "J" functions `ARGBToJ420`, `ARGBToJ422`, `ARGBToJ400`: all 0…255, black Y 0): what a
///   JPEG (JFIF) holds, so what the agent's JPEG encoder compresses (``BGRXJPEGEncoder``).
///
/// libyuv's "ARGB" is the little-endian word `0xAARRGGBB`, bytes B, G, R, A in memory: our BGRX as it is.
///
/// Chroma is the rounded average of the pixels each sample covers (a 2×2 block for 4:2:0, a horizontal
/// pair for 4:2:2; at odd sizes the last column/row averages what is there). libyuv (the Debian
/// 0.0~git20230123 build) has no full-range 4:4:4 conversion (`ARGBToI444` is limited range), so 4:4:4 is
/// not offered here.
public enum BGRXToYUV {
    /// Converts `pixels` into `frame` in BT.601 `range` (`ARGBToI420` for limited, `ARGBToJ420` for full)
    /// and labels `frame` so; `frame` takes the picture's size (its allocation is kept when the byte count
    /// does not change, so a stream of same-sized pictures allocates nothing).
    ///
    /// Output layout (``I420Buffer``, tightly packed): Y `width × height`, then U and V, each
    /// `((width + 1) / 2) × ((height + 1) / 2)`.
    /// - Throws: `MediaError.invalidArgument` for an empty picture, one above 32767 per side or with a
    ///   stride beyond `Int32`; `.libyuv` if libyuv refuses the arguments.
    public static func convertToI420(_ pixels: BGRXPixels, range: YCbCrRange, into frame: inout I420Buffer) throws(MediaError) {
        try check(pixels)
        frame.resize(width: pixels.width, height: pixels.height)
        frame.colorSpace = YCbCrColorSpace(range: range)
        let (yStride, uvStride) = (frame.yStride, frame.uvStride)
        let convert = range == .limited ? ARGBToI420 : ARGBToJ420
        let status = frame.withUnsafeMutablePlanes { y, u, v in
            convert(
                pixels.base.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(pixels.stride),
                y.baseAddress, Int32(yStride), u.baseAddress, Int32(uvStride), v.baseAddress, Int32(uvStride),
                Int32(pixels.width), Int32(pixels.height))
        }
        guard status == 0 else {
            let name = range == .limited ? "ARGBToI420" : "ARGBToJ420"
            throw .libyuv("\(name) refused \(pixels.width)x\(pixels.height) (status \(status))")
        }
    }

    /// Converts `image` into `frame`; see ``convertToI420(_:range:into:)``.
    public static func convertToI420(_ image: BGRXImage, range: YCbCrRange, into frame: inout I420Buffer) throws(MediaError) {
        try image.withPixels { (pixels) throws(MediaError) in try convertToI420(pixels, range: range, into: &frame) }
    }

    /// Converts `picture` back to BGRX (X = 255) in its own colour space: libyuv `I420ToARGB` for BT.601
    /// limited range, `J420ToARGB` for full range. `image` takes the picture's size. For checks (tests,
    /// the dump tool): what a viewer's decoder would show.
    /// - Throws: `MediaError.invalidArgument` for an empty picture or one above 32767 per side, `.libyuv`
    ///   if libyuv refuses.
    public static func convertToBGRX(_ picture: I420Buffer, into image: inout BGRXImage) throws(MediaError) {
        guard (1...32_767).contains(picture.width), (1...32_767).contains(picture.height) else {
            throw .invalidArgument("cannot convert a \(picture.width)x\(picture.height) I420 picture")
        }
        image.resize(width: picture.width, height: picture.height)
        let stride = image.stride
        let convert = picture.colorSpace.range == .limited ? I420ToARGB : J420ToARGB
        let status = picture.withUnsafePlanes { y, u, v in
            image.withUnsafeMutableBytes { out in
                convert(y.baseAddress, Int32(picture.yStride), u.baseAddress, Int32(picture.uvStride),
                        v.baseAddress, Int32(picture.uvStride), out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        Int32(stride), Int32(picture.width), Int32(picture.height))
            }
        }
        guard status == 0 else { throw .libyuv("I420 to ARGB (\(picture.colorSpace)) refused (status \(status))") }
    }

    /// True when ``convert(_:subsampling:y:u:v:)`` (full range, for JPEG) handles `subsampling`: 4:2:0 (`ARGBToJ420`),
    /// 4:2:2 (`ARGBToJ422`) and gray (`ARGBToJ400`).
    static func supports(_ subsampling: JPEGSubsampling) -> Bool {
        subsampling == .yuv420 || subsampling == .yuv422 || subsampling == .gray
    }

    /// Converts into caller-owned planes (pointer, stride in bytes), BT.601 full range (JFIF: the JPEG
    /// encoder's input). Y gets `width × height` samples; for
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
