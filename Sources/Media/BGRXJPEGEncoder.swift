internal import CTurboJPEG

/// Compresses BGRX pictures (screen captures) to baseline JPEG with libturbojpeg's `tjCompress2`
/// (`TJPF_BGRX`); the colour conversion and chroma subsampling happen inside libjpeg-turbo's SIMD code.
///
/// Owns one compressor handle and one worst-case output buffer (`tjBufSize`), both reused: encoding
/// same-sized frames allocates only the returned bytes (or nothing, with `encode(_:quality:subsampling:into:)`
/// and a buffer of sufficient capacity).
///
/// Measured on this project's machines: ≈5 ms for 1920×1080 at quality 80, 4:2:0.
///
/// One thread at a time: an encoder is not `Sendable`.
public final class BGRXJPEGEncoder {
    private let handle: tjhandle
    /// libturbojpeg-allocated output buffer (`tjAlloc`), `outputCapacity` bytes; nil until first use.
    private var output: UnsafeMutablePointer<UInt8>?
    private var outputCapacity = 0

    /// - Throws: `MediaError.handleCreationFailed` if libturbojpeg cannot allocate its handle.
    public init() throws(MediaError) {
        guard let handle = tjInitCompress() else {
            throw .handleCreationFailed(turboJPEGError(nil).message)
        }
        self.handle = handle
    }

    deinit {
        tjFree(output)
        tjDestroy(handle)
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
        let samp = subsampling.turboJPEG
        try reserveJPEGOutput(&output, capacity: &outputCapacity, width: pixels.width, height: pixels.height, subsampling: samp)
        var size = UInt(outputCapacity)
        let status = tjCompress2(
            handle, pixels.base.baseAddress!.assumingMemoryBound(to: UInt8.self),
            Int32(pixels.width), Int32(pixels.stride), Int32(pixels.height), Int32(TJPF_BGRX.rawValue),
            &output, &size, samp, Int32(quality), Int32(TJFLAG_NOREALLOC))
        guard status == 0, let output else {
            throw .jpegEncode(turboJPEGError(handle).message)
        }
        jpeg.removeAll(keepingCapacity: true)
        jpeg.append(contentsOf: UnsafeBufferPointer(start: output, count: Int(size)))
    }
}

/// An encoder holds a libturbojpeg handle and an output buffer: use it from one thread at a time.
@available(*, unavailable)
extension BGRXJPEGEncoder: Sendable {}
