internal import CTurboJPEG

/// Compresses I420 pictures to baseline JPEG with libturbojpeg (`tjCompressFromYUVPlanes`, no RGB step).
///
/// Owns one libturbojpeg compressor handle and one worst-case output buffer (`tjBufSize`), both reused:
/// encoding same-sized frames allocates only the returned bytes. Used by tests and the golden-stream
/// generator now; the agent will add BGRX input (`tjCompress2`) here.
///
/// One thread at a time: an encoder is not `Sendable`.
public final class JPEGEncoder {
    private let compressor: TurboJPEGCompressor
    /// Luma padded to even size (edge pixels repeated) for odd-sized 4:2:0 frames; grown, never shrunk.
    private var paddedLuma: [UInt8] = []

    /// - Throws: `MediaError.handleCreationFailed` if libturbojpeg cannot allocate its handle.
    public init() throws(MediaError) {
        compressor = try TurboJPEGCompressor()
    }

    /// Compresses `frame`, a BT.601 full-range picture (JFIF's colours), to a JPEG.
    /// - Parameters:
    ///   - quality: 1 (worst) … 100 (best).
    ///   - subsampling: `.yuv420` (default; the chroma planes are used as they are) or `.gray` (only the
    ///     Y plane is written, as a one-component JPEG).
    /// - Throws: `MediaError.wrongColorSpace` for a picture not in BT.601 full range (a limited-range
    ///   picture would shift every colour), `.invalidArgument` for an empty frame or one wider or taller than JPEG's 65500,
    ///   a quality outside 1…100 or another subsampling; `.jpegEncode` if libturbojpeg fails.
    public func encode(
        _ frame: I420Buffer, quality: Int, subsampling: JPEGSubsampling = .yuv420
    ) throws(MediaError) -> [UInt8] {
        var bytes: [UInt8] = []
        try encode(frame, quality: quality, subsampling: subsampling, into: &bytes)
        return bytes
    }

    /// Compresses `frame` into `jpeg`, replacing its contents (its capacity is kept); see
    /// `encode(_:quality:subsampling:)`.
    public func encode(
        _ frame: I420Buffer, quality: Int, subsampling: JPEGSubsampling = .yuv420, into jpeg: inout [UInt8]
    ) throws(MediaError) {
        try checkJPEGEncodeParameters(width: frame.width, height: frame.height, quality: quality)
        guard frame.colorSpace == .bt601Full else {
            throw .wrongColorSpace(operation: "JPEG encoding (JFIF)", expected: .bt601Full, got: frame.colorSpace)
        }
        guard subsampling == .yuv420 || subsampling == .gray else {
            throw .invalidArgument("I420 input encodes as 4:2:0 or gray, not \(subsampling)")
        }
        let samp = subsampling.turboJPEG

        // libturbojpeg reads a luma plane padded to whole chroma samples (`tjPlaneWidth`/`tjPlaneHeight`:
        // 38x24 for a 37x23 4:2:0 frame). For odd sizes the frame's Y plane is copied into a padded one
        // with its edge pixels repeated (as libjpeg pads), instead of letting it read the U plane.
        let (width, height) = (frame.width, frame.height)
        let lumaPlaneWidth = Int(tjPlaneWidth(0, Int32(width), samp))
        let lumaPlaneHeight = Int(tjPlaneHeight(0, Int32(height), samp))
        guard lumaPlaneWidth >= width, lumaPlaneHeight >= height else {
            throw .jpegEncode(turboJPEGError(nil).message)
        }
        let lumaInPlace = lumaPlaneWidth == width && lumaPlaneHeight == height
        if !lumaInPlace, paddedLuma.count < lumaPlaneWidth * lumaPlaneHeight {
            paddedLuma = [UInt8](repeating: 0, count: lumaPlaneWidth * lumaPlaneHeight)
        }

        try frame.withUnsafePlanes { (y, u, v) throws(MediaError) in
            try paddedLuma.withUnsafeMutableBufferPointer { (padded) throws(MediaError) in
                var luma = y.baseAddress!
                var lumaStride = frame.yStride
                if !lumaInPlace, let out = padded.baseAddress {
                    for row in 0..<lumaPlaneHeight {
                        let source = y.baseAddress! + min(row, height - 1) * frame.yStride
                        let target = out + row * lumaPlaneWidth
                        target.update(from: source, count: width)
                        (target + width).update(repeating: source[width - 1], count: lumaPlaneWidth - width)
                    }
                    luma = UnsafePointer(out)
                    lumaStride = lumaPlaneWidth
                }
                try compressor.compressPlanes(
                    y: luma, yStride: lumaStride, u: subsampling == .gray ? nil : u.baseAddress,
                    v: subsampling == .gray ? nil : v.baseAddress, uvStride: frame.uvStride,
                    width: width, height: height, samp: samp, quality: quality, into: &jpeg)
            }
        }
    }
}

/// An encoder holds a libturbojpeg handle and an output buffer: use it from one thread at a time.
@available(*, unavailable)
extension JPEGEncoder: Sendable {}
