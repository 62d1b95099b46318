internal import CYUV

/// Converts one chroma plane from a JPEG's own subsampling to I420's (half width, half height).
///
/// Each I420 chroma sample covers a 2×2 block of luma pixels; it becomes the rounded average of the
/// source chroma under those four pixels (the source plane nearest-upsampled to luma resolution), with the
/// block clamped at the right and bottom edges of odd-sized pictures. For 4:4:4 that is a 2×2 box filter,
/// for 4:2:2 a vertical pair average, for 4:4:0 a horizontal pair average, for 4:1:1 a horizontal repeat.
///
/// 4:4:4 at even sizes (the agent's `--subsampling 444` and its paint-over frames) goes through libyuv's
/// `ScalePlane` with `kFilterBox`, whose exact 2:1 path (`ScaleRowDown2Box`, SIMD) computes the same
/// `(a + b + c + d + 2) >> 2`; everything else uses the plain-Swift loop below, which is also the reference
/// the tests compare libyuv with.
///
/// - Parameters:
///   - source: the JPEG's chroma plane, `sourceStride` bytes per row.
///   - factors: luma samples per chroma sample, horizontally (1, 2 or 4) and vertically (1 or 2).
///   - lumaWidth, lumaHeight: the picture size (≥ 1).
///   - destination: the I420 chroma plane, `((lumaWidth+1)/2) × ((lumaHeight+1)/2)`, `destinationStride`
///     bytes per row.
func downsampleChromaToI420(
    source: UnsafePointer<UInt8>, sourceStride: Int,
    factors: (horizontal: Int, vertical: Int),
    lumaWidth: Int, lumaHeight: Int,
    destination: UnsafeMutablePointer<UInt8>, destinationStride: Int
) {
    if factors == (1, 1), lumaWidth % 2 == 0, lumaHeight % 2 == 0 {
        ScalePlane(source, Int32(sourceStride), Int32(lumaWidth), Int32(lumaHeight),
                   destination, Int32(destinationStride), Int32(lumaWidth / 2), Int32(lumaHeight / 2), kFilterBox)
        return
    }
    downsampleChromaToI420Reference(
        source: source, sourceStride: sourceStride, factors: factors, lumaWidth: lumaWidth, lumaHeight: lumaHeight,
        destination: destination, destinationStride: destinationStride)
}

/// The plain-Swift conversion `downsampleChromaToI420` describes, for every subsampling and size.
func downsampleChromaToI420Reference(
    source: UnsafePointer<UInt8>, sourceStride: Int,
    factors: (horizontal: Int, vertical: Int),
    lumaWidth: Int, lumaHeight: Int,
    destination: UnsafeMutablePointer<UInt8>, destinationStride: Int
) {
    let hShift = factors.horizontal.trailingZeroBitCount
    let vShift = factors.vertical.trailingZeroBitCount
    let chromaWidth = (lumaWidth + 1) / 2
    let chromaHeight = (lumaHeight + 1) / 2
    for dy in 0..<chromaHeight {
        let ly0 = 2 * dy
        let ly1 = min(ly0 + 1, lumaHeight - 1)
        let row0 = source + (ly0 >> vShift) * sourceStride
        let row1 = source + (ly1 >> vShift) * sourceStride
        let out = destination + dy * destinationStride
        for dx in 0..<chromaWidth {
            let lx0 = 2 * dx
            let lx1 = min(lx0 + 1, lumaWidth - 1)
            let sx0 = lx0 >> hShift
            let sx1 = lx1 >> hShift
            let sum = Int(row0[sx0]) + Int(row0[sx1]) + Int(row1[sx0]) + Int(row1[sx1])
            out[dx] = UInt8(truncatingIfNeeded: (sum + 2) >> 2)
        }
    }
}
