internal import CYUV

/// Scales BGRX pictures with libyuv's `ARGBScale` (box filter: every source pixel contributes when
/// shrinking, so one-pixel text strokes do not vanish or flicker).
///
/// libyuv's "ARGB" is the little-endian word `0xAARRGGBB`, i.e. bytes B, G, R, A in memory: the same
/// layout as BGRX, so no conversion is needed.
public enum BGRXScaler {
    /// The output size for `scale` (e.g. 0.5 halves, as the iOS sender does): each side rounded to the
    /// nearest whole pixel, at least 1.
    public static func scaledSize(width: Int, height: Int, scale: Double) -> (width: Int, height: Int) {
        (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }

    /// The largest size with the aspect ratio of `width`×`height` that fits in `maxWidth`×`maxHeight`,
    /// never larger than the input (no upscaling); each side at least 1.
    public static func fittedSize(width: Int, height: Int, maxWidth: Int, maxHeight: Int) -> (width: Int, height: Int) {
        guard width > maxWidth || height > maxHeight, width > 0, height > 0 else { return (width, height) }
        let factor = min(Double(maxWidth) / Double(width), Double(maxHeight) / Double(height))
        return (min(maxWidth, max(1, Int((Double(width) * factor).rounded()))),
                min(maxHeight, max(1, Int((Double(height) * factor).rounded()))))
    }

    /// Scales `source` to `width`×`height` into `destination` (resized to fit, allocation kept).
    /// - Throws: `MediaError.invalidArgument` when either size is empty or above 32767 per side, or when
    ///   libyuv refuses the arguments.
    public static func scale(
        _ source: BGRXPixels, toWidth width: Int, height: Int, into destination: inout BGRXImage
    ) throws(MediaError) {
        let limit = 1...32_767
        guard limit.contains(source.width), limit.contains(source.height), limit.contains(width), limit.contains(height),
            source.stride <= Int(Int32.max)
        else {
            throw .invalidArgument("cannot scale \(source.width)x\(source.height) to \(width)x\(height)")
        }
        destination.resize(width: width, height: height)
        let stride = destination.stride
        let status = destination.withUnsafeMutableBytes { out in
            ARGBScale(
                source.base.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(source.stride),
                Int32(source.width), Int32(source.height),
                out.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(stride), Int32(width), Int32(height),
                kFilterBox)
        }
        guard status == 0 else {
            throw .invalidArgument("ARGBScale refused \(source.width)x\(source.height) → \(width)x\(height) (status \(status))")
        }
    }
}
