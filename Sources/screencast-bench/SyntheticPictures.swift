import Media

/// Pictures made in memory, for stages that run without an X display or a recorded dump. They compress
/// like a desktop (flat areas, sharp edges), not like noise.
enum SyntheticPictures {
    /// An I420 picture with gradients and a checkerboard of 8×8 blocks, labelled `colorSpace` (the samples
    /// span all codes either way: for timing, not for looking at).
    static func i420(width: Int, height: Int, colorSpace: YCbCrColorSpace) -> I420Buffer {
        var picture = I420Buffer(width: width, height: height, colorSpace: colorSpace)
        picture.withUnsafeMutablePlanes { y, u, v in
            for row in 0..<height {
                for col in 0..<width {
                    y[row * width + col] = UInt8(truncatingIfNeeded: (col / 8 + row / 8) % 2 == 0 ? col ^ row : 40)
                }
            }
            for index in 0..<u.count { u[index] = UInt8(truncatingIfNeeded: index / 7) }
            for index in 0..<v.count { v[index] = UInt8(truncatingIfNeeded: 255 - index / 11) }
        }
        return picture
    }

    /// A BGRX "desktop": a light background with rows of dark 6×11 glyph-like marks (text) and a few
    /// coloured panels.
    static func bgrx(width: Int, height: Int) -> BGRXImage {
        var image = BGRXImage(width: width, height: height)
        image.withUnsafeMutableBytes { bytes in
            let stride = width * 4
            for row in 0..<height {
                for col in 0..<width {
                    let offset = row * stride + col * 4
                    let panel = (col / 480 + row / 270) % 3
                    var (b, g, r): (UInt8, UInt8, UInt8) = panel == 0 ? (0xE3, 0xF6, 0xFD) : panel == 1 ? (0x8F, 0x6E, 0x3B) : (0xF0, 0xF0, 0xF0)
                    let line = row % 16, column = col % 7
                    if line < 11, column < 6, (col / 7 &* 31 &+ row / 16 &* 17) % 5 != 0, (line &* 3 &+ column &* 5 &+ col / 7) % 4 != 0 {
                        (b, g, r) = (0x22, 0x22, 0x22)
                    }
                    bytes[offset] = b
                    bytes[offset + 1] = g
                    bytes[offset + 2] = r
                    bytes[offset + 3] = 0
                }
            }
        }
        return image
    }
}
