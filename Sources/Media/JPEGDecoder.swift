internal import CTurboJPEG
public import FoundationEssentials

/// Decodes JPEG pictures straight to I420, with libturbojpeg and no RGB round trip.
///
/// Colours: the YCbCr samples come out as the JPEG holds them, BT.601 full range (JFIF 1.02 §7), and the
/// picture is labelled ``YCbCrColorSpace/bt601Full``; the call converts them to limited range
/// (``I420Buffer/convertToLimitedRange()``) before VP8.
///
/// Owns one libturbojpeg decompressor handle (created in `init`, destroyed in `deinit`) and a scratch
/// buffer (non-4:2:0 chroma, padded luma of odd sizes), both reused from frame to frame: decoding a stream
/// of same-sized JPEGs into the same `I420Buffer` allocates nothing of ours after the first frame.
///
/// One thread at a time: a decoder is not `Sendable`; give each thread (or task) its own.
///
/// - 4:2:0 JPEGs are decoded by `tjDecompressToYUVPlanes` directly into the I420 planes (at odd sizes the
///   luma goes through scratch, because libturbojpeg writes a luma plane padded to even size).
/// - Grayscale JPEGs decode into the Y plane; U and V are set to 128 (no colour).
/// - 4:4:4, 4:2:2, 4:4:0 and 4:1:1 JPEGs decode Y the same way and their chroma into scratch planes,
///   which `downsampleChromaToI420` converts (to be replaced by libyuv in the call-process issue).
/// - RGB, CMYK and YCCK JPEGs are refused (`MediaError.unsupportedColorspace`).
/// - A JPEG that decodes only with a libjpeg warning (a premature end, corrupt data) is a failure
///   (`MediaError.jpegWarning`): decoding stops at the first warning (`TJFLAG_STOPONWARNING`).
/// - Progressive JPEGs with an unreasonable number of scans are refused (`TJFLAG_LIMITSCANS`).
public final class JPEGDecoder {
    /// The largest width or height accepted; larger JPEGs are refused before anything is allocated.
    public let maximumDimension: Int

    /// Replaced after every libjpeg failure: libturbojpeg 2.1 can leave a failed handle in a state where the
    /// next `tjDecompressHeader3` "succeeds" without reading anything (seen with a JPEG cut inside its headers).
    private var handle: tjhandle
    /// Padded luma of odd-sized JPEGs, then chroma of non-4:2:0 JPEGs (Cb, Cr); grown, never shrunk.
    private var scratch: [UInt8] = []
    /// The three plane pointers and strides passed to libturbojpeg, kept so a decode allocates nothing.
    private let planePointers: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>
    private let planeStrides: UnsafeMutablePointer<Int32>

    private static let decodeFlags = Int32(TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS)

    /// - Parameter maximumDimension: the largest width or height to decode (default 16384, the wire
    ///   protocol's limit for Buffer-Width/Height); must be at least 1.
    /// - Throws: `MediaError.invalidArgument` for a bad limit, `.handleCreationFailed` if libturbojpeg
    ///   cannot allocate its handle.
    public init(maximumDimension: Int = 16384) throws(MediaError) {
        guard maximumDimension >= 1 else {
            throw .invalidArgument("maximumDimension must be at least 1, got \(maximumDimension)")
        }
        guard let handle = tjInitDecompress() else {
            throw .handleCreationFailed(turboJPEGError(nil).message)
        }
        self.maximumDimension = maximumDimension
        self.handle = handle
        // Allocated only once nothing can throw any more, so a failed init leaks nothing.
        planePointers = .allocate(capacity: 3)
        planeStrides = .allocate(capacity: 3)
    }

    deinit {
        tjDestroy(handle)
        planePointers.deallocate()
        planeStrides.deallocate()
    }

    /// Reads the JPEG's header: size, chroma subsampling and colour space. Decodes no pixels.
    /// - Throws: `MediaError.jpegHeader` if the bytes are empty or not a readable JPEG header,
    ///   `.unsupportedSubsampling` for a subsampling libturbojpeg reports but this module does not know.
    public func readHeader(_ jpeg: UnsafeRawBufferPointer) throws(MediaError) -> JPEGInfo {
        guard let base = jpeg.baseAddress, jpeg.count > 0 else {
            throw .jpegHeader("empty input")
        }
        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = -1
        var colorspace: Int32 = -1
        let status = tjDecompressHeader3(
            handle, base.assumingMemoryBound(to: UInt8.self), UInt(jpeg.count),
            &width, &height, &subsampling, &colorspace)
        guard status == 0 else {
            let message = turboJPEGError(handle).message
            renewHandle()
            throw .jpegHeader(message)
        }
        guard let sampling = JPEGSubsampling(turboJPEG: subsampling) else {
            throw .unsupportedSubsampling(Int(subsampling))
        }
        guard let space = JPEGColorspace(turboJPEG: colorspace) else {
            throw .jpegHeader("unknown colour space (TJCS \(colorspace))")
        }
        return JPEGInfo(width: Int(width), height: Int(height), subsampling: sampling, colorspace: space)
    }

    /// Decodes the whole JPEG into `frame`, which takes the JPEG's size (its allocation is reused when
    /// the byte count matches) and the colour space BT.601 full range.
    ///
    /// On a throw, `frame` may already have the JPEG's size and hold a partial picture; do not show it.
    /// - Returns: the JPEG's header information.
    /// - Throws: `MediaError.jpegHeader`, `.unsupportedSubsampling`, `.unsupportedColorspace`,
    ///   `.imageTooLarge`, `.jpegDecode` (fatal libjpeg error) or `.jpegWarning` (decodes only with a
    ///   warning, such as a premature end: counted as a failure).
    @discardableResult
    public func decodeI420(_ jpeg: UnsafeRawBufferPointer, into frame: inout I420Buffer) throws(MediaError) -> JPEGInfo {
        let info = try readHeader(jpeg)
        switch info.colorspace {
        case .yCbCr, .gray: break
        case .rgb, .cmyk, .ycck: throw .unsupportedColorspace(info.colorspace)
        }
        guard info.width >= 1, info.height >= 1,
              info.width <= maximumDimension, info.height <= maximumDimension else {
            throw .imageTooLarge(width: info.width, height: info.height, maximumDimension: maximumDimension)
        }
        guard jpeg.count >= info.minimumEncodedBytes else {
            throw .implausiblySmall(width: info.width, height: info.height, bytes: jpeg.count, minimum: info.minimumEncodedBytes)
        }
        // readHeader succeeded, so the buffer is non-empty.
        let jpegBase = jpeg.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let jpegSize = UInt(jpeg.count)

        frame.resize(width: info.width, height: info.height)
        frame.colorSpace = .bt601Full  // JFIF: YCbCr (and gray) JPEGs are BT.601 full range
        let (width, height) = (info.width, info.height)
        let (yStride, uvStride) = (frame.yStride, frame.uvStride)
        let (uOffset, vOffset) = (frame.uOffset, frame.vOffset)

        // libturbojpeg's YUV planes are padded to whole chroma samples (`tjPlaneWidth`/`tjPlaneHeight`:
        // a 37x23 4:2:0 JPEG has a 38x24 luma plane) and it writes every padded row and column. Where the
        // padded plane is larger than the I420 plane it goes to scratch and is copied (odd sizes only);
        // writing it in place would run past the Y plane into U (or past the buffer).
        let samp = info.subsampling.turboJPEG
        let lumaPlaneWidth = Int(tjPlaneWidth(0, Int32(width), samp))
        let lumaPlaneHeight = Int(tjPlaneHeight(0, Int32(height), samp))
        let chromaPlaneWidth = info.subsampling == .gray ? 0 : Int(tjPlaneWidth(1, Int32(width), samp))
        let chromaPlaneHeight = info.subsampling == .gray ? 0 : Int(tjPlaneHeight(1, Int32(height), samp))
        guard lumaPlaneWidth >= width, lumaPlaneHeight >= height, chromaPlaneWidth >= 0, chromaPlaneHeight >= 0 else {
            throw .jpegDecode(turboJPEGError(nil).message)
        }
        let lumaInPlace = lumaPlaneWidth == width && lumaPlaneHeight == height
        // 4:2:0 chroma planes are exactly I420's; every other subsampling is converted from scratch.
        let chromaInPlace = info.subsampling == .gray
            || (chromaPlaneWidth == frame.chromaWidth && chromaPlaneHeight == frame.chromaHeight)
        let lumaScratchSize = lumaInPlace ? 0 : lumaPlaneWidth * lumaPlaneHeight
        let chromaScratchSize = chromaInPlace ? 0 : chromaPlaneWidth * chromaPlaneHeight
        if scratch.count < lumaScratchSize + 2 * chromaScratchSize {
            // Not zeroed: libturbojpeg writes every byte before it is read, and pages a failed decode never
            // reaches cost no memory.
            let count = lumaScratchSize + 2 * chromaScratchSize
            scratch = [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
        }
        let factors = info.subsampling.chromaFactors
        let isGray = info.subsampling == .gray

        let status = frame.bytes.withUnsafeMutableBufferPointer { all in
            scratch.withUnsafeMutableBufferPointer { spare in
                let base = all.baseAddress!
                let (u, v) = (base + uOffset, base + vOffset)
                let spareLuma = spare.baseAddress ?? base  // unused when no scratch is needed
                let spareCb = spareLuma + lumaScratchSize
                let spareCr = spareCb + chromaScratchSize
                let status = decompressToPlanes(
                    jpegBase, jpegSize, width: width, height: height,
                    y: lumaInPlace ? (base, yStride) : (spareLuma, lumaPlaneWidth),
                    cb: chromaInPlace ? (u, uvStride) : (spareCb, chromaPlaneWidth),
                    cr: chromaInPlace ? (v, uvStride) : (spareCr, chromaPlaneWidth))
                guard status == 0 else { return status }
                if !lumaInPlace {
                    for row in 0..<height {
                        (base + row * yStride).update(from: spareLuma + row * lumaPlaneWidth, count: width)
                    }
                }
                if isGray {
                    UnsafeMutableBufferPointer(rebasing: all[uOffset...]).update(repeating: 128)
                } else if !chromaInPlace {
                    downsampleChromaToI420(
                        source: spareCb, sourceStride: chromaPlaneWidth, factors: factors,
                        lumaWidth: width, lumaHeight: height, destination: u, destinationStride: uvStride)
                    downsampleChromaToI420(
                        source: spareCr, sourceStride: chromaPlaneWidth, factors: factors,
                        lumaWidth: width, lumaHeight: height, destination: v, destinationStride: uvStride)
                }
                return status
            }
        }
        guard status == 0 else { throw decodeError() }
        return info
    }

    /// Runs `tjDecompressToYUVPlanes` into the given planes; returns its status (0 on success).
    private func decompressToPlanes(
        _ jpeg: UnsafePointer<UInt8>, _ size: UInt, width: Int, height: Int,
        y: (UnsafeMutablePointer<UInt8>, Int),
        cb: (UnsafeMutablePointer<UInt8>, Int),
        cr: (UnsafeMutablePointer<UInt8>, Int)
    ) -> Int32 {
        planePointers[0] = y.0
        planePointers[1] = cb.0
        planePointers[2] = cr.0
        planeStrides[0] = Int32(y.1)
        planeStrides[1] = Int32(cb.1)
        planeStrides[2] = Int32(cr.1)
        return tjDecompressToYUVPlanes(
            handle, jpeg, size, planePointers, Int32(width), planeStrides, Int32(height), Self.decodeFlags)
    }

    /// The libturbojpeg error after a failed decompression, as a warning or a fatal error.
    private func decodeError() -> MediaError {
        let (message, isWarning) = turboJPEGError(handle)
        renewHandle()
        return isWarning ? .jpegWarning(message) : .jpegDecode(message)
    }

    /// Swaps the handle for a fresh one after a libjpeg failure (keeps the old one if none can be made).
    private func renewHandle() {
        guard let fresh = tjInitDecompress() else { return }
        tjDestroy(handle)
        handle = fresh
    }
}

// MARK: - Conveniences

extension JPEGDecoder {
    /// Reads the header of a JPEG held in an array.
    public func readHeader(_ jpeg: [UInt8]) throws(MediaError) -> JPEGInfo {
        try jpeg.withUnsafeBufferPointer { (buffer) throws(MediaError) -> JPEGInfo in
            try readHeader(UnsafeRawBufferPointer(buffer))
        }
    }

    /// Reads the header of a JPEG held in any contiguous bytes (`Data`, `ArraySlice<UInt8>`, …).
    public func readHeader(_ jpeg: some ContiguousBytes) throws(MediaError) -> JPEGInfo {
        let result = jpeg.withUnsafeBytes { raw in
            Result { () throws(MediaError) -> JPEGInfo in try readHeader(raw) }
        }
        return try result.get()
    }

    /// Decodes a JPEG held in an array into `frame`; see `decodeI420(_:into:)`.
    @discardableResult
    public func decodeI420(_ jpeg: [UInt8], into frame: inout I420Buffer) throws(MediaError) -> JPEGInfo {
        try jpeg.withUnsafeBufferPointer { (buffer) throws(MediaError) -> JPEGInfo in
            try decodeI420(UnsafeRawBufferPointer(buffer), into: &frame)
        }
    }

    /// Decodes a JPEG held in any contiguous bytes into `frame`; see `decodeI420(_:into:)`.
    @discardableResult
    public func decodeI420(_ jpeg: some ContiguousBytes, into frame: inout I420Buffer) throws(MediaError) -> JPEGInfo {
        let result = jpeg.withUnsafeBytes { raw in
            Result { () throws(MediaError) -> JPEGInfo in try decodeI420(raw, into: &frame) }
        }
        return try result.get()
    }

    /// Decodes a JPEG into a new buffer (allocates per call; use `decodeI420(_:into:)` for streams).
    public func decodeI420(_ jpeg: [UInt8]) throws(MediaError) -> I420Buffer {
        var frame = I420Buffer()
        try decodeI420(jpeg, into: &frame)
        return frame
    }
}

/// A decoder holds a libturbojpeg handle and scratch state: use it from one thread at a time.
@available(*, unavailable)
extension JPEGDecoder: Sendable {}
