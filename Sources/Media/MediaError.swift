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
    /// libturbojpeg failed while compressing. Carries its message.
    case jpegEncode(String)
    /// A caller passed an argument outside its documented range (a programming error, reported
    /// rather than trapped).
    case invalidArgument(String)
    /// libturbojpeg could not create a handle (out of memory).
    case handleCreationFailed(String)

    public var description: String {
        switch self {
        case .jpegHeader(let message): "JPEG header unreadable: \(message)"
        case .jpegDecode(let message): "JPEG decode failed: \(message)"
        case .jpegWarning(let message): "JPEG decoded only with a warning: \(message)"
        case .unsupportedSubsampling(let value): "unsupported JPEG chroma subsampling (TJSAMP \(value))"
        case .unsupportedColorspace(let colorspace): "unsupported JPEG colour space \(colorspace)"
        case .imageTooLarge(let width, let height, let limit):
            "JPEG of \(width)x\(height) exceeds the limit of \(limit) pixels per side"
        case .jpegEncode(let message): "JPEG encode failed: \(message)"
        case .invalidArgument(let message): "invalid argument: \(message)"
        case .handleCreationFailed(let message): "libturbojpeg handle creation failed: \(message)"
        }
    }
}
