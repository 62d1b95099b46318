import Media
import XCTest

final class PictureRotationTests: XCTestCase {
    /// A picture whose every sample encodes its own position, so a rotation can be checked exactly.
    private func positional(width: Int, height: Int) -> I420Buffer {
        var picture = I420Buffer(width: width, height: height, colorSpace: .bt601Limited)
        let (ys, uvs, cw, ch) = (picture.yStride, picture.uvStride, picture.chromaWidth, picture.chromaHeight)
        picture.withUnsafeMutablePlanes { y, u, v in
            for r in 0..<height { for c in 0..<width { y[r * ys + c] = UInt8((r * 16 + c) & 0xFF) } }
            for r in 0..<ch {
                for c in 0..<cw {
                    u[r * uvs + c] = UInt8((r * 8 + c) & 0xFF)
                    v[r * uvs + c] = UInt8((255 - r * 8 - c) & 0xFF)
                }
            }
        }
        return picture
    }

    private func sample(_ p: I420Buffer, _ r: Int, _ c: Int) -> UInt8 { p.bytes[r * p.yStride + c] }

    func testClockwiseRotationsMovePixelsWhereTheyBelong() throws {
        for (width, height) in [(8, 6), (7, 5), (1, 3)] {
            let source = positional(width: width, height: height)
            var out = I420Buffer()
            for rotation in PictureRotation.allCases {
                try source.rotated(by: rotation, into: &out)
                let size = rotation.rotatedSize(width: width, height: height)
                XCTAssertEqual([out.width, out.height], [size.width, size.height], "\(rotation)")
                for r in 0..<height {
                    for c in 0..<width {
                        // Where source (r, c) lands, clockwise.
                        let (dr, dc): (Int, Int) = switch rotation {
                        case .none: (r, c)
                        case .clockwise90: (c, height - 1 - r)
                        case .clockwise180: (height - 1 - r, width - 1 - c)
                        case .clockwise270: (width - 1 - c, r)
                        }
                        XCTAssertEqual(sample(out, dr, dc), sample(source, r, c), "\(rotation) \(width)x\(height) (\(r),\(c))")
                    }
                }
            }
        }
    }

    func testFourQuarterTurnsGiveTheSamePicture() throws {
        var picture = positional(width: 37, height: 23)
        let original = picture
        var scratch = I420Buffer()
        for _ in 0..<4 {
            try picture.rotated(by: .clockwise90, into: &scratch)
            swap(&picture, &scratch)
        }
        XCTAssertEqual(picture, original)
        XCTAssertEqual(PictureRotation(degrees: 270), .clockwise270)
        XCTAssertNil(PictureRotation(degrees: -90))
        XCTAssertThrowsError(try I420Buffer().rotated(by: .clockwise90, into: &scratch))
    }
}

final class IVFTests: XCTestCase {
    func testWriterLayoutReadsBackAndMatchesTheSpec() throws {
        var writer = IVFWriter()
        var file = writer.fileHeader(width: 640, height: 360)
        XCTAssertEqual(Array(file.prefix(16)), [
            0x44, 0x4B, 0x49, 0x46, 0, 0, 32, 0, 0x56, 0x50, 0x38, 0x30, 0x80, 0x02, 0x68, 0x01,
        ])
        // Timebase 1/90 000 (rate 90 000 = 0x015F90, scale 1), length 0 while recording, unused 0.
        XCTAssertEqual(Array(file[16..<32]), [0x90, 0x5F, 0x01, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(writer.lengthTicks, 0, "no frame")
        var header: [UInt8] = []
        for (index, micros) in [5_000_000, 5_033_333, 5_033_333, 4_000_000].enumerated() {
            let frame = EncodedFrame(bytes: [UInt8](repeating: UInt8(index), count: index + 1), isKeyframe: index == 0,
                                     captureTimestampMicros: UInt64(micros), width: 640, height: 360)
            writer.frameHeader(for: frame, into: &header)
            XCTAssertEqual(header.count, 12)
            file += header + frame.bytes
            if index == 0 { XCTAssertEqual(writer.lengthTicks, 0, "one frame: no step known") }
        }
        let reader = try IVFReader(bytes: file)
        XCTAssertEqual(reader.header, IVFFileHeader(width: 640, height: 360))
        // pts: 90 kHz ticks since the first frame (33 333 µs = 2 999.97 ticks, truncated), forced to increase.
        XCTAssertEqual(reader.frames.map(\.pts), [0, 2_999, 3_000, 3_001])
        XCTAssertEqual(Array(file[36..<44]), [0, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(Array(file[49..<57]), [0xB7, 0x0B, 0, 0, 0, 0, 0, 0], "2 999 little-endian")
        XCTAssertEqual(reader.frames.map(\.bytes), [[0], [1, 1], [2, 2, 2], [3, 3, 3, 3]])
        XCTAssertEqual(writer.frameCount, 4)
        // Length: 3 001 + the mean step 3 001 / 3 = 4 001.33 → 4 001 ticks; read back from byte 24.
        XCTAssertEqual(writer.lengthTicks, 4_001)
        let finished = writer.fileHeader(width: 640, height: 360, length: writer.lengthTicks)
        XCTAssertEqual(Array(finished[24..<28]), [0xA1, 0x0F, 0, 0])
        XCTAssertEqual(try IVFFileHeader(parsing: finished[...]).length, 4_001)

        XCTAssertThrowsError(try IVFReader(bytes: Array(file.dropLast())))
        XCTAssertThrowsError(try IVFReader(bytes: Array("DKIX".utf8) + Array(file.dropFirst(4))))
        XCTAssertThrowsError(try IVFReader(bytes: Array(file.prefix(20))))
    }

    /// The 32-bit length field holds 2³² − 1 ticks (13 h 15 min 21 s at 90 kHz): a longer recording's
    /// header says that much, and its pts (64-bit) go on.
    func testTheLengthStopsAtItsLimitAndPtsGoOn() {
        var writer = IVFWriter()
        var header: [UInt8] = []
        let limitMicros = IVF.maximumLengthTicks * 100 / 9
        for micros in [0, limitMicros / 2, limitMicros + 1_000_000] {
            writer.frameHeader(for: EncodedFrame(bytes: [0], isKeyframe: true, captureTimestampMicros: micros,
                                                 width: 2, height: 2), into: &header)
        }
        XCTAssertEqual(Array(header[4..<12]), withUnsafeBytes(of: ((limitMicros + 1_000_000) * 9 / 100).littleEndian, Array.init))
        XCTAssertEqual(writer.lengthTicks, UInt32.max)
        XCTAssertEqual(IVF.maximumLengthTicks, 4_294_967_295)
    }
}
