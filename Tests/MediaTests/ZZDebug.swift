import CTurboJPEG
@testable import Media
import XCTest
final class ZZDebug: XCTestCase {
    func testDebug() throws {
        let (w, h) = (37, 23)
        let rgb = makeRGBPattern(width: w, height: h)
        let truth = jfifYCbCr(rgb: rgb, width: w, height: h)
        let tu = halve(truth.cb, width: w, height: h)
        let d = try JPEGDecoder()
        let a = try d.decodeI420(try compressRGB(rgb, width: w, height: h, subsampling: TJSAMP_420))
        let b = try d.decodeI420(try compressRGB(rgb, width: w, height: h, subsampling: TJSAMP_444))
        let cw = 19
        for r in 0..<12 {
            print("420", a.u[a.uOffset + r*cw ..< a.uOffset + r*cw + cw].map{String($0)}.joined(separator: " "))
            print("444", b.u[b.uOffset + r*cw ..< b.uOffset + r*cw + cw].map{String($0)}.joined(separator: " "))
            print("tru", tu[r*cw ..< r*cw + cw].map{String($0)}.joined(separator: " "))
        }
    }
}
