import CTurboJPEG
import Media
import TestSupport
import XCTest

/// A synthetic I420 test picture: smooth gradients plus flat 8×8-aligned blocks with hard edges, in BT.601
/// full range (JPEG material).
func makeI420Pattern(width: Int, height: Int) -> I420Buffer {
    var frame = I420Buffer(width: width, height: height, colorSpace: .bt601Full)
    let (cw, ch) = (frame.chromaWidth, frame.chromaHeight)
    let (yStride, uvStride) = (frame.yStride, frame.uvStride)
    frame.withUnsafeMutablePlanes { y, u, v in
        for row in 0..<height {
            for col in 0..<width {
                var value = 16 + (col * 200) / max(width, 1) + (row * 30) / max(height, 1)
                if (col / 32 + row / 32) % 3 == 0 { value = ((col / 32) % 2 == 0) ? 235 : 40 }
                y[row * yStride + col] = UInt8(clamping: value)
            }
        }
        for row in 0..<ch {
            for col in 0..<cw {
                var cb = 64 + (row * 128) / max(ch, 1)
                var cr = 192 - (col * 128) / max(cw, 1)
                if (col / 16 + row / 16) % 4 == 1 { cb = 200; cr = 60 }
                u[row * uvStride + col] = UInt8(clamping: cb)
                v[row * uvStride + col] = UInt8(clamping: cr)
            }
        }
    }
    return frame
}

/// A packed RGB picture (3 bytes a pixel): smooth colour gradients plus a few flat blocks.
func makeRGBPattern(width: Int, height: Int) -> [UInt8] {
    var rgb = [UInt8](repeating: 0, count: width * height * 3)
    for row in 0..<height {
        for col in 0..<width {
            let i = (row * width + col) * 3
            var (r, g, b) = (
                20 + col * 215 / max(width, 1),
                30 + row * 200 / max(height, 1),
                200 - (col + row) * 150 / max(width + height, 1)
            )
            if (col / 16 + row / 16) % 5 == 2 { (r, g, b) = (230, 200, 40) }
            rgb[i] = UInt8(clamping: r)
            rgb[i + 1] = UInt8(clamping: g)
            rgb[i + 2] = UInt8(clamping: b)
        }
    }
    return rgb
}

/// The full-range (JFIF) YCbCr of packed RGB, each plane at full resolution.
func jfifYCbCr(rgb: [UInt8], width: Int, height: Int) -> (y: [UInt8], cb: [UInt8], cr: [UInt8]) {
    var (y, cb, cr) = ([UInt8](), [UInt8](), [UInt8]())
    for i in 0..<(width * height) {
        let (r, g, b) = (Double(rgb[3 * i]), Double(rgb[3 * i + 1]), Double(rgb[3 * i + 2]))
        y.append(UInt8(clamping: Int((0.299 * r + 0.587 * g + 0.114 * b).rounded())))
        cb.append(UInt8(clamping: Int((128 - 0.168736 * r - 0.331264 * g + 0.5 * b).rounded())))
        cr.append(UInt8(clamping: Int((128 + 0.5 * r - 0.418688 * g - 0.081312 * b).rounded())))
    }
    return (y, cb, cr)
}

/// A full-resolution plane averaged over 2×2 blocks (edges clamped), as I420 chroma.
func halve(_ plane: [UInt8], width: Int, height: Int) -> [UInt8] {
    var out: [UInt8] = []
    for row in stride(from: 0, to: height, by: 2) {
        for col in stride(from: 0, to: width, by: 2) {
            let (c1, r1) = (min(col + 1, width - 1), min(row + 1, height - 1))
            let sum = Int(plane[row * width + col]) + Int(plane[row * width + c1])
                + Int(plane[r1 * width + col]) + Int(plane[r1 * width + c1])
            out.append(UInt8((sum + 2) / 4))
        }
    }
    return out
}

/// Compresses packed RGB with libturbojpeg's `tjCompress2` at the given `TJSAMP_*` subsampling
/// (how the tests make 4:4:4, 4:2:2, 4:4:0, 4:1:1 and grayscale JPEGs, without fixture files).
func compressRGB(_ rgb: [UInt8], width: Int, height: Int, subsampling: TJSAMP, quality: Int32 = 95) throws -> [UInt8] {
    let handle = try XCTUnwrap(tjInitCompress())
    defer { tjDestroy(handle) }
    var output: UnsafeMutablePointer<UInt8>?
    var size: UInt = 0
    let status = rgb.withUnsafeBufferPointer { src in
        tjCompress2(handle, src.baseAddress, Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue),
                    &output, &size, Int32(subsampling.rawValue), quality, 0)
    }
    defer { tjFree(output) }
    guard status == 0, let output else {
        // A fixture that cannot be made is a failure, never a skip.
        struct CompressFailed: Error, CustomStringConvertible { var description: String }
        throw CompressFailed(description: "tjCompress2 failed: \(String(cString: tjGetErrorStr2(handle)))")
    }
    return Array(UnsafeBufferPointer(start: output, count: Int(size)))
}

/// Asserts that `body` throws a `MediaError` and returns it (nil, with a test failure, otherwise).
@discardableResult
func assertThrowsMediaError<T>(
    _ body: () throws(MediaError) -> T, file: StaticString = #filePath, line: UInt = #line
) -> MediaError? {
    do {
        _ = try body()
        XCTFail("expected a MediaError, got success", file: file, line: line)
        return nil
    } catch {
        return error
    }
}
