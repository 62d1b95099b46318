internal import CYUV

/// BT.601 full range (JFIF, all codes 0…255) to BT.601 limited range (ITU-R BT.601-7 §2.5.3: Y 16…235,
/// Cb/Cr 16…240): the one conversion between what a JPEG decodes to and what VP8 carries.
///
///     Y′ = 16  + round(Y · 219 / 255)            0 → 16, 128 → 126, 255 → 235
///     C′ = 128 + round((C − 128) · 224 / 255)    0 → 16, 128 → 128, 255 → 240   (Cb and Cr alike)
///
/// The matrix stays BT.601, so this is a per-sample linear map, one for luma and one for chroma. libyuv
/// has no YUV range conversion; its `ARGBPolynomial` applies `c0 + c1·x` to every byte (AVX2, in floats,
/// truncated: `c0` carries the + 0.5 of rounding, and no code of either formula falls within 1/510 of a
/// half, so floats give exactly the formula's codes — checked for all 256 codes by the tests). A plane
/// is handed over as one row of four-byte "pixels"; the last bytes beyond an even number of pixels
/// (fewer than 8) go through the 256-entry tables here. Measured against a 256-entry table pass
/// (`ARGBColorTable`) and a Swift loop: `screencast-bench --stage range`, BENCHMARKS.md.
public enum YCbCrRangeConversion {
    /// The limited-range code of full-range luma `y`: 16 + round(y · 219 / 255).
    public static func limitedLuma(_ y: UInt8) -> UInt8 {
        UInt8(16 + (Double(y) * 219 / 255).rounded())
    }

    /// The limited-range code of full-range chroma (Cb or Cr) `c`: 128 + round((c − 128) · 224 / 255).
    public static func limitedChroma(_ c: UInt8) -> UInt8 {
        UInt8(128 + ((Double(c) - 128) * 224 / 255).rounded())
    }

    /// ``limitedLuma(_:)`` of every code.
    static let lumaTable: [UInt8] = (0...255).map { limitedLuma(UInt8($0)) }
    /// ``limitedChroma(_:)`` of every code.
    static let chromaTable: [UInt8] = (0...255).map { limitedChroma(UInt8($0)) }

    /// `ARGBPolynomial`'s 4×4 coefficients (constant, x, x², x³; each for B, G, R, A) of `c0 + c1·x`.
    static func polynomial(offset: Float, slope: Float) -> [Float] {
        [Float](repeating: offset, count: 4) + [Float](repeating: slope, count: 4) + [Float](repeating: 0, count: 8)
    }

    /// Y′ = 16.5 + Y · 219/255, truncated.
    static let lumaPolynomial = polynomial(offset: 16.5, slope: 219.0 / 255)
    /// C′ = 128 − 128 · 224/255 + 0.5 + C · 224/255, truncated.
    static let chromaPolynomial = polynomial(offset: 128 - 128 * 224.0 / 255 + 0.5, slope: 224.0 / 255)

    /// Maps every byte of `samples` in place: `ARGBPolynomial` over whole pairs of four-byte "pixels" (its
    /// AVX2 row takes two at a time), `table` for the rest.
    /// - Throws: `MediaError.libyuv` if `ARGBPolynomial` refuses (it does not for a region below 8 GiB).
    static func apply(_ polynomial: [Float], _ table: [UInt8], to samples: UnsafeMutableBufferPointer<UInt8>) throws(MediaError) {
        guard let base = samples.baseAddress, !samples.isEmpty else { return }
        // Rows of at most 2^28 four-byte "pixels" (1 GiB), so widths and strides stay within Int32.
        let pixels = samples.count / 8 * 2
        let rowPixels = 1 << 28
        var status: Int32 = 0
        var done = 0
        polynomial.withUnsafeBufferPointer { coefficients in
            while done < pixels, status == 0 {
                let count = min(rowPixels, pixels - done)
                let row = base + done * 4
                status = ARGBPolynomial(row, Int32(count * 4), row, Int32(count * 4), coefficients.baseAddress, Int32(count), 1)
                done += count
            }
        }
        for index in (pixels * 4)..<samples.count {
            samples[index] = table[Int(samples[index])]
        }
        guard status == 0 else { throw .libyuv("ARGBPolynomial refused \(samples.count) bytes (status \(status))") }
    }
}

extension I420Buffer {
    /// Converts the picture to BT.601 limited range in place (``YCbCrRangeConversion``) and labels it so;
    /// a picture already in limited range is left as it is. Allocates nothing.
    ///
    /// Cost at 1920×1080 (3.1 MB of samples): see `screencast-bench --stage range` and BENCHMARKS.md.
    /// - Throws: `MediaError.libyuv` if libyuv refuses (not for any picture this type can hold).
    public mutating func convertToLimitedRange() throws(MediaError) {
        guard colorSpace.range == .full else { return }
        let chromaStart = uOffset
        try bytes.withUnsafeMutableBufferPointer { (all) throws(MediaError) in
            try YCbCrRangeConversion.apply(
                YCbCrRangeConversion.lumaPolynomial, YCbCrRangeConversion.lumaTable, to: UnsafeMutableBufferPointer(rebasing: all[..<chromaStart]))
            // U and V are adjacent (I420Buffer's layout) and map alike: one pass over both.
            try YCbCrRangeConversion.apply(
                YCbCrRangeConversion.chromaPolynomial, YCbCrRangeConversion.chromaTable, to: UnsafeMutableBufferPointer(rebasing: all[chromaStart...]))
        }
        colorSpace.range = .limited
    }

    /// Writes a copy of this picture (size, colour space, samples) into `destination`, whose allocation is
    /// kept when the byte count matches.
    public func copy(into destination: inout I420Buffer) {
        destination.resize(width: width, height: height)
        destination.colorSpace = colorSpace
        destination.bytes.withUnsafeMutableBufferPointer { out in
            _ = bytes.withUnsafeBufferPointer { source in out.update(fromContentsOf: source) }
        }
    }
}
