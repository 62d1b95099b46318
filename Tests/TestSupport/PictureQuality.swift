import Foundation
import Media

/// Peak signal-to-noise ratio of two equally long 8-bit planes, dB (infinity when identical).
/// Precondition: equal, non-zero lengths.
public func psnr(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Double {
    precondition(a.count == b.count && !a.isEmpty, "planes must be equally long and non-empty")
    var sum = 0.0
    for (x, y) in zip(a, b) {
        let d = Double(x) - Double(y)
        sum += d * d
    }
    let mse = sum / Double(a.count)
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}

/// PSNR of the Y planes of two same-sized I420 pictures, dB (infinity when identical), in one range: when
/// one is full range and the other limited (a JPEG's picture and the VP8 picture made of it), the
/// full-range one's luma is first scaled to limited range (BT.601's 16 + 219/255 · Y, exact codes checked
/// in MediaTests.ColourRangeTests), so the comparison is of the same brightness.
public func lumaPSNR(_ a: I420Buffer, _ b: I420Buffer) -> Double {
    precondition(a.width == b.width && a.height == b.height, "sizes differ")
    guard a.colorSpace.range != b.colorSpace.range else { return psnr(a.y, b.y) }
    let full = a.colorSpace.range == .full ? a : b
    let limited = a.colorSpace.range == .full ? b : a
    return psnr(limited.y, full.y.map(YCbCrRangeConversion.limitedLuma))
}

/// PSNR over the R, G and B samples of two same-sized pictures, dB (infinity when identical).
public func rgbPSNR(_ a: BGRXImage, _ b: BGRXImage) -> Double {
    precondition(a.width == b.width && a.height == b.height, "sizes differ")
    var sum = 0.0
    for y in 0..<a.height {
        for x in 0..<a.width {
            let (p, q) = (a.rgb(x: x, y: y), b.rgb(x: x, y: y))
            for (u, v) in [(p.red, q.red), (p.green, q.green), (p.blue, q.blue)] {
                let d = Double(u) - Double(v)
                sum += d * d
            }
        }
    }
    let mse = sum / Double(a.width * a.height * 3)
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}

/// PSNR in RGB of two same-sized I420 pictures, each shown in its own colour space (libyuv BT.601
/// `I420ToARGB` / `J420ToARGB`): what a viewer sees of each, so pictures of different ranges compare fairly.
public func rgbPSNR(_ a: I420Buffer, _ b: I420Buffer) throws -> Double {
    var (x, y) = (BGRXImage(), BGRXImage())
    try BGRXToYUV.convertToBGRX(a, into: &x)
    try BGRXToYUV.convertToBGRX(b, into: &y)
    return rgbPSNR(x, y)
}
