@testable import Media
import XCTest

/// The libyuv path of the chroma downsampler gives exactly what the plain-Swift reference gives.
final class ChromaDownsampleLibyuvTests: XCTestCase {
    func testLibyuvBoxFilterMatchesTheReferenceSampleForSample() {
        var seed: UInt32 = 7
        for (width, height, stride) in [(2, 2, 2), (64, 48, 64), (1920, 1080, 1920), (38, 22, 45), (130, 6, 131)] {
            let source = (0..<(stride * height)).map { _ -> UInt8 in
                seed = seed &* 1_664_525 &+ 1_013_904_223
                return UInt8(truncatingIfNeeded: seed >> 24)
            }
            let (cw, ch) = (width / 2, height / 2)
            var fast = [UInt8](repeating: 0, count: cw * ch)
            var reference = fast
            source.withUnsafeBufferPointer { src in
                fast.withUnsafeMutableBufferPointer { dst in
                    downsampleChromaToI420(source: src.baseAddress!, sourceStride: stride, factors: (1, 1),
                                           lumaWidth: width, lumaHeight: height, destination: dst.baseAddress!, destinationStride: cw)
                }
                reference.withUnsafeMutableBufferPointer { dst in
                    downsampleChromaToI420Reference(source: src.baseAddress!, sourceStride: stride, factors: (1, 1),
                                                    lumaWidth: width, lumaHeight: height, destination: dst.baseAddress!, destinationStride: cw)
                }
            }
            XCTAssertEqual(fast, reference, "\(width)x\(height) stride \(stride)")
        }
    }
}
