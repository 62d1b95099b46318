internal import CTurboJPEG

// Mappings between libturbojpeg's C constants and this module's Swift types, kept in one place.

extension JPEGSubsampling {
    /// Maps a `TJSAMP_*` value; nil for values this module does not know (such as 4:4:1 in libjpeg-turbo 3).
    init?(turboJPEG value: Int32) {
        switch value {
        case Int32(TJSAMP_444.rawValue): self = .yuv444
        case Int32(TJSAMP_422.rawValue): self = .yuv422
        case Int32(TJSAMP_420.rawValue): self = .yuv420
        case Int32(TJSAMP_GRAY.rawValue): self = .gray
        case Int32(TJSAMP_440.rawValue): self = .yuv440
        case Int32(TJSAMP_411.rawValue): self = .yuv411
        default: return nil
        }
    }

    var turboJPEG: Int32 {
        switch self {
        case .yuv444: Int32(TJSAMP_444.rawValue)
        case .yuv422: Int32(TJSAMP_422.rawValue)
        case .yuv420: Int32(TJSAMP_420.rawValue)
        case .gray: Int32(TJSAMP_GRAY.rawValue)
        case .yuv440: Int32(TJSAMP_440.rawValue)
        case .yuv411: Int32(TJSAMP_411.rawValue)
        }
    }
}

extension JPEGColorspace {
    /// Maps a `TJCS_*` value; nil for unknown values.
    init?(turboJPEG value: Int32) {
        switch value {
        case Int32(TJCS_RGB.rawValue): self = .rgb
        case Int32(TJCS_YCbCr.rawValue): self = .yCbCr
        case Int32(TJCS_GRAY.rawValue): self = .gray
        case Int32(TJCS_CMYK.rawValue): self = .cmyk
        case Int32(TJCS_YCCK.rawValue): self = .ycck
        default: return nil
        }
    }
}

/// The last error on `handle` as libturbojpeg words it, and whether it was only a warning.
func turboJPEGError(_ handle: tjhandle?) -> (message: String, isWarning: Bool) {
    let message = tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown libturbojpeg error"
    let isWarning = handle != nil && tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue)
    return (message, isWarning)
}

/// The checks every JPEG encode makes first: 1…65500 pixels a side (libjpeg's limit) and quality 1…100.
/// - Throws: `MediaError.invalidArgument` naming the bad value.
func checkJPEGEncodeParameters(width: Int, height: Int, quality: Int) throws(MediaError) {
    guard (1...65_500).contains(width), (1...65_500).contains(height) else {
        throw .invalidArgument("cannot encode a \(width)x\(height) picture as JPEG (1...65500 per side)")
    }
    guard (1...100).contains(quality) else {
        throw .invalidArgument("JPEG quality must be 1...100, got \(quality)")
    }
}

/// Grows a `tjAlloc` output buffer to the worst case for a picture (`tjBufSize`), so `tjCompress*` with
/// `TJFLAG_NOREALLOC` never reallocates; keeps a buffer that is already large enough.
/// - Throws: `MediaError.jpegEncode` when the size overflows or `tjAlloc` fails (then `capacity` is 0).
func reserveJPEGOutput(
    _ output: inout UnsafeMutablePointer<UInt8>?, capacity: inout Int, width: Int, height: Int, subsampling: Int32
) throws(MediaError) {
    let worstCase = tjBufSize(Int32(width), Int32(height), subsampling)
    guard worstCase != UInt.max, worstCase <= UInt(Int32.max) else {
        throw .jpegEncode(turboJPEGError(nil).message)
    }
    guard Int(worstCase) > capacity else { return }
    tjFree(output)
    output = tjAlloc(Int32(worstCase))
    capacity = output == nil ? 0 : Int(worstCase)
    guard output != nil else { throw .jpegEncode("tjAlloc of \(worstCase) bytes failed") }
}
