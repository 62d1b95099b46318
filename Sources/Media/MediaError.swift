/// Every error the `Media` module throws.
///
/// Decoding errors describe input that came from the wire; they are never fatal to the process:
/// the caller drops the frame, counts it, and goes on with the next one.
public enum MediaError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes do not start with a readable JPEG header (empty, not a JPEG, header cut short).
    /// Carries libturbojpeg's message.
    case jpegHeader(String)
    /// libjpeg stopped with a fatal error while decoding the body. Carries libturbojpeg's message.
    case jpegDecode(String)
    /// The body decoded only with a libjpeg warning (such as "Premature end of JPEG file"). The picture
    /// may be partly grey or garbage, so this counts as a failed decode. Carries libturbojpeg's message.
    case jpegWarning(String)
    /// The JPEG uses a chroma subsampling this module cannot map to I420 (libturbojpeg's `TJSAMP` value).
    case unsupportedSubsampling(Int)
    /// The JPEG's colour space is not YCbCr or grayscale (RGB, CMYK and YCCK JPEGs are refused rather than
    /// decoded to wrong colours; screen senders do not produce them).
    case unsupportedColorspace(JPEGColorspace)
    /// The JPEG claims a size above the decoder's `maximumDimension` (checked before any allocation).
    case imageTooLarge(width: Int, height: Int, maximumDimension: Int)
    /// The body is too short to hold the picture its header claims (a forged or cut-off header): refused
    /// before the planes are allocated (see `JPEGInfo.minimumEncodedBytes`).
    case implausiblySmall(width: Int, height: Int, bytes: Int, minimum: Int)
    /// libturbojpeg failed while compressing. Carries its message.
    case jpegEncode(String)
    /// A caller passed an argument outside its documented range (a programming error, reported
    /// rather than trapped).
    case invalidArgument(String)
    /// libturbojpeg could not create a handle (out of memory).
    case handleCreationFailed(String)
    /// libvpx refused to create, configure or run the VP8 encoder. Carries the operation and libvpx's
    /// message (`vpx_codec_error` plus `vpx_codec_error_detail`).
    case vp8Encoder(String)
    /// libvpx could not create the VP8 decoder or decode a frame (corrupt or truncated VP8 data). Carries
    /// libvpx's message.
    case vp8Decoder(String)
    /// Bytes that are not a well-formed IVF file (bad signature, header or frame length).
    case malformedIVF(String)
    /// libyuv reported a failure (rotation or conversion with arguments it refused).
    case libyuv(String)
    /// A picture in a colour space the operation does not take: the VP8 encoder takes BT.601 limited range
    /// only (what VP8 means), the JPEG encoder BT.601 full range only (what JFIF means). Carries the
    /// operation, what it takes and what it got.
    case wrongColorSpace(operation: String, expected: YCbCrColorSpace, got: YCbCrColorSpace)

    public var description: String {
        switch self {
        case .jpegHeader(let message): "JPEG header unreadable: \(message)"
        case .jpegDecode(let message): "JPEG decode failed: \(message)"
        case .jpegWarning(let message): "JPEG decoded only with a warning: \(message)"
        case .unsupportedSubsampling(let value): "unsupported JPEG chroma subsampling (TJSAMP \(value))"
        case .unsupportedColorspace(let colorspace): "unsupported JPEG colour space \(colorspace)"
        case .imageTooLarge(let width, let height, let limit):
            "JPEG of \(width)x\(height) exceeds the limit of \(limit) pixels per side"
        case .implausiblySmall(let width, let height, let bytes, let minimum):
            "JPEG of \(bytes) bytes cannot hold the \(width)x\(height) picture its header claims (needs at least \(minimum))"
        case .jpegEncode(let message): "JPEG encode failed: \(message)"
        case .invalidArgument(let message): "invalid argument: \(message)"
        case .handleCreationFailed(let message): "libturbojpeg handle creation failed: \(message)"
        case .vp8Encoder(let message): "VP8 encoder: \(message)"
        case .vp8Decoder(let message): "VP8 decoder: \(message)"
        case .malformedIVF(let message): "malformed IVF: \(message)"
        case .libyuv(let message): "libyuv: \(message)"
        case .wrongColorSpace(let operation, let expected, let got):
            "\(operation) takes \(expected) pictures, got \(got)"
        }
    }
}
