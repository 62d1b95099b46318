internal import CTurboJPEG

/// Compresses BGRX pictures (screen captures) to baseline JPEG (JFIF: BT.601, full range).
///
/// - 4:2:0, 4:2:2 and gray: libyuv converts the pixels into reused scratch planes (`ARGBToJ420`,
///   `ARGBToJ422`, `ARGBToJ400`: full-range "J" matrices, see ``BGRXToYUV``), then libturbojpeg compresses
///   the planes (`tjCompressFromYUVPlanes`). Measured on this machine at 1080p q80 4:2:0: `ARGBToJ420` ≈1 ms;
///   on text-heavy screens Huffman coding dominates, so the whole encode gains only 5–15 % over `tjCompress2`
///   from BGRX (a scrolling xterm: 6.7 → 5.9–6.6 ms; a 640×360 capture: 0.82 → 0.70 ms).
/// - 4:4:4 (the paint-over refresh): `tjCompress2` with `TJPF_BGRX`, because this libyuv has no full-range
///   4:4:4 conversion (its `ARGBToI444` is limited range and would shift the colours).
///
/// Scratch planes (`Y` padded to whole chroma samples as libturbojpeg reads it — `tjPlaneWidth` ×
/// `tjPlaneHeight` — then Cb and Cr) are grown, never shrunk. Owns one compressor handle and one worst-case
/// output buffer (`tjBufSize`), both reused: encoding same-sized frames allocates only the returned bytes (or
/// nothing, with `encode(_:quality:subsampling:into:)` and a buffer of sufficient capacity).
///
/// One thread at a time: an encoder is not `Sendable`.
public final class BGRXJPEGEncoder {
    private let compressor: TurboJPEGCompressor
    /// Y (padded), Cb, Cr for the libyuv path; grown, never shrunk.
    private var scratch: [UInt8] = []

    /// - Throws: `MediaError.handleCreationFailed` if libturbojpeg cannot allocate its handle.
    public init() throws(MediaError) {
        compressor = try TurboJPEGCompressor()
    }

    /// Compresses `pixels` to a JPEG of the same size.
    /// - Parameters:
    ///   - quality: 1 (worst) … 100 (best).
    ///   - subsampling: `.yuv420` (default), `.yuv422`, `.yuv444` (full chroma: crisp coloured text) or
    ///     `.gray`.
    /// - Throws: `MediaError.invalidArgument` for an empty picture, one wider or taller than JPEG's 65500,
    ///   a quality outside 1…100 or an unsupported subsampling; `.jpegEncode` if libturbojpeg fails.
    public func encode(
        _ pixels: BGRXPixels, quality: Int, subsampling: JPEGSubsampling = .yuv420
    ) throws(MediaError) -> [UInt8] {
        var bytes: [UInt8] = []
        try encode(pixels, quality: quality, subsampling: subsampling, into: &bytes)
        return bytes
    }

    /// Compresses `image`; see `encode(_:quality:subsampling:)` for the parameters.
    public func encode(
        _ image: BGRXImage, quality: Int, subsampling: JPEGSubsampling = .yuv420
    ) throws(MediaError) -> [UInt8] {
        try image.withPixels { (pixels) throws(MediaError) -> [UInt8] in
            try encode(pixels, quality: quality, subsampling: subsampling)
        }
    }

    /// Compresses `pixels` into `jpeg`, replacing its contents (its capacity is kept); see
    /// `encode(_:quality:subsampling:)`.
    public func encode(
        _ pixels: BGRXPixels, quality: Int, subsampling: JPEGSubsampling = .yuv420, into jpeg: inout [UInt8]
    ) throws(MediaError) {
        try checkJPEGEncodeParameters(width: pixels.width, height: pixels.height, quality: quality)
        guard [.yuv420, .yuv422, .yuv444, .gray].contains(subsampling) else {
            throw .invalidArgument("BGRX input encodes as 4:2:0, 4:2:2, 4:4:4 or gray, not \(subsampling)")
        }
        guard pixels.stride <= Int(Int32.max) else {
            throw .invalidArgument("BGRX stride \(pixels.stride) is too large")
        }
        if BGRXToYUV.supports(subsampling) {
            try compressThroughPlanes(pixels, quality: quality, subsampling: subsampling, into: &jpeg)
        } else {
            try compressor.compressBGRX(pixels, samp: subsampling.turboJPEG, quality: quality, into: &jpeg)
        }
    }

    /// libyuv converts into the scratch planes, libturbojpeg compresses them (`tjCompressFromYUVPlanes`).
    private func compressThroughPlanes(
        _ pixels: BGRXPixels, quality: Int, subsampling: JPEGSubsampling, into jpeg: inout [UInt8]
    ) throws(MediaError) {
        try BGRXToYUV.check(pixels)
        let samp = subsampling.turboJPEG
        let (width, height) = (pixels.width, pixels.height)
        // libturbojpeg reads whole chroma samples: a luma plane padded to even width (and height, for 4:2:0),
        // whose padding repeats the edge pixels as libjpeg pads. The chroma planes libyuv writes,
        // ((width+1)/2 wide), are exactly libturbojpeg's.
        let lumaWidth = Int(tjPlaneWidth(0, Int32(width), samp))
        let lumaHeight = Int(tjPlaneHeight(0, Int32(height), samp))
        let isGray = subsampling == .gray
        let chromaWidth = isGray ? 0 : Int(tjPlaneWidth(1, Int32(width), samp))
        let chromaHeight = isGray ? 0 : Int(tjPlaneHeight(1, Int32(height), samp))
        guard lumaWidth >= width, lumaHeight >= height, chromaWidth >= 0, chromaHeight >= 0 else {
            throw .jpegEncode(turboJPEGError(nil).message)
        }
        let lumaCount = lumaWidth * lumaHeight
        let chromaCount = chromaWidth * chromaHeight
        if scratch.count < lumaCount + 2 * chromaCount {
            // Not zeroed: every byte read is written first (libyuv, then the padding below).
            let count = lumaCount + 2 * chromaCount
            scratch = [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
        }
        try scratch.withUnsafeMutableBufferPointer { (planes) throws(MediaError) in
            let y = planes.baseAddress!
            let (u, v) = (y + lumaCount, y + lumaCount + chromaCount)
            let converted = BGRXToYUV.convert(
                pixels, subsampling: subsampling,
                y: (y, lumaWidth), u: (isGray ? nil : u, chromaWidth), v: (isGray ? nil : v, chromaWidth))
            guard converted == 0 else {
                throw .libyuv("BGRX to \(subsampling) planes refused \(width)x\(height) (status \(converted))")
            }
            if lumaWidth > width {
                for row in 0..<height {
                    let line = y + row * lumaWidth
                    (line + width).update(repeating: line[width - 1], count: lumaWidth - width)
                }
            }
            for row in height..<lumaHeight {
                (y + row * lumaWidth).update(from: y + (height - 1) * lumaWidth, count: lumaWidth)
            }
            try compressor.compressPlanes(
                y: y, yStride: lumaWidth, u: isGray ? nil : UnsafePointer(u), v: isGray ? nil : UnsafePointer(v),
                uvStride: chromaWidth, width: width, height: height, samp: samp, quality: quality, into: &jpeg)
        }
    }
}

/// An encoder holds a libturbojpeg handle and an output buffer: use it from one thread at a time.
@available(*, unavailable)
extension BGRXJPEGEncoder: Sendable {}
