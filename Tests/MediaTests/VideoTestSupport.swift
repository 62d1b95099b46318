import Media
import TestSupport
import XCTest

/// Screen-like test content: a light background, dark "text" glyph rows, a coloured title bar and a
/// window whose position depends on `phase` (so consecutive phases differ the way a dragged window does).
/// BT.601 limited range (VP8 material).
func makeScreenPicture(width: Int, height: Int, phase: Int = 0) -> I420Buffer {
    var picture = I420Buffer(width: width, height: height, colorSpace: .bt601Limited)
    let (yStride, uvStride) = (picture.yStride, picture.uvStride)
    let (cw, ch) = (picture.chromaWidth, picture.chromaHeight)
    var seed: UInt32 = 42
    let glyphs = (0..<64).map { _ -> UInt16 in
        seed = seed &* 1_664_525 &+ 1_013_904_223  // Numerical Recipes LCG: fixed glyphs every run
        return UInt16(truncatingIfNeeded: seed >> 8)
    }
    picture.withUnsafeMutablePlanes { y, u, v in
        for row in 0..<height {
            for col in 0..<width {
                var value: UInt8 = 235
                if row < 16 { value = 80 }  // title bar
                let line = (row - 20) / 12
                let inLine = (row - 20) % 12
                if row >= 20, inLine < 8, col >= 8, col < width - 8, line % 5 != 4 {
                    let glyph = glyphs[(line * 7 + col / 6) % glyphs.count]
                    let bit = (inLine / 2) * 4 + (col % 6) / 2 % 4
                    if (col % 6) < 5, glyph & (1 << UInt16(bit % 16)) != 0 { value = 30 }
                }
                // A "window" that moves with the phase.
                let wx = (phase * 13) % max(1, width / 2)
                let wy = (phase * 7) % max(1, height / 2)
                if col >= wx, col < wx + width / 3, row >= wy, row < wy + height / 3 {
                    value = UInt8(60 + ((col - wx) * 120) / max(1, width / 3))
                }
                y[row * yStride + col] = value
            }
        }
        for row in 0..<ch {
            for col in 0..<cw {
                let titleBar = row < 8
                u[row * uvStride + col] = titleBar ? 170 : 128
                v[row * uvStride + col] = titleBar ? 100 : 128
            }
        }
    }
    return picture
}

