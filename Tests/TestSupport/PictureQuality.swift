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

/// PSNR of the Y planes of two same-sized I420 pictures, dB (infinity when identical).
public func lumaPSNR(_ a: I420Buffer, _ b: I420Buffer) -> Double {
    precondition(a.width == b.width && a.height == b.height, "sizes differ")
    return psnr(a.y, b.y)
}
