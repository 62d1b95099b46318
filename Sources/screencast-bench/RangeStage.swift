import CYUV
import Media

/// BT.601 full → limited range (the call's one colour conversion, after a JPEG decode; ms per frame), in
/// place on a whole I420 picture, three ways giving the same codes: what the call uses
/// (`I420Buffer.convertToLimitedRange`: libyuv's `ARGBPolynomial`, a linear map in floats, AVX2), a
/// 256-entry table pass with libyuv's `ARGBColorTable` (its x86 row function), and the same tables in a
/// plain Swift loop (what a debug build would pay without libyuv).
enum RangeStage {
    static func measure(runs: Int) throws -> [Measurement] {
        var results: [Measurement] = []
        for (label, width, height) in JPEGStages.sizes {
            var picture = SyntheticPictures.i420(width: width, height: height, colorSpace: .bt601Full)
            let call = try time(runs) {
                picture.colorSpace = .bt601Full  // the samples stay whatever they are: timing only
                try picture.convertToLimitedRange()
            }
            results.append(Measurement(stage: "full → limited range, ARGBPolynomial (the call's) \(label)", unit: "ms", values: call.map { $0 * 1e3 }))

            let luma = (0...255).map { YCbCrRangeConversion.limitedLuma(UInt8($0)) }
            let chroma = (0...255).map { YCbCrRangeConversion.limitedChroma(UInt8($0)) }
            let split = picture.uOffset
            let total = I420Buffer.byteCount(width: width, height: height)
            // ARGBColorTable takes 256 four-byte entries (B, G, R, A); every plane size here is a multiple of 4.
            let lumaQuads = luma.flatMap { [$0, $0, $0, $0] }, chromaQuads = chroma.flatMap { [$0, $0, $0, $0] }
            let table = time(runs) {
                picture.withUnsafeMutablePlanes { y, _, _ in
                    let base = y.baseAddress!  // the three planes are contiguous from here (I420Buffer's layout)
                    _ = ARGBColorTable(base, Int32(split), lumaQuads, 0, 0, Int32(split / 4), 1)
                    _ = ARGBColorTable(base + split, Int32(total - split), chromaQuads, 0, 0, Int32((total - split) / 4), 1)
                }
            }
            results.append(Measurement(stage: "full → limited range, ARGBColorTable \(label)", unit: "ms", values: table.map { $0 * 1e3 }))

            let loop = time(runs) {
                picture.withUnsafeMutablePlanes { y, _, _ in
                    let all = UnsafeMutableBufferPointer(start: y.baseAddress, count: total)
                    luma.withUnsafeBufferPointer { table in
                        for index in 0..<split { all[index] = table[Int(all[index])] }
                    }
                    chroma.withUnsafeBufferPointer { table in
                        for index in split..<total { all[index] = table[Int(all[index])] }
                    }
                }
            }
            results.append(Measurement(stage: "full → limited range, Swift table loop \(label)", unit: "ms", values: loop.map { $0 * 1e3 }))
        }
        return results
    }
}
