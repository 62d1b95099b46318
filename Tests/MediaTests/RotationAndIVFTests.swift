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
    /// The header's timebase is one frame period at the writer's frame rate (what ffmpeg's ivf demuxer takes
    /// as the time base, and its inverse as the frame rate); pts count periods since the first frame, rounded
    /// to the nearest, forced to increase; the length is the last pts + 1.
    func testWriterLayoutReadsBackAndMatchesTheSpec() throws {
        var writer = IVFWriter()
        XCTAssertEqual([writer.timebaseNumerator, writer.timebaseDenominator], [1, 30], "the default: 30 fps")
        var file = writer.fileHeader(width: 640, height: 360)
        XCTAssertEqual(Array(file.prefix(16)), [
            0x44, 0x4B, 0x49, 0x46, 0, 0, 32, 0, 0x56, 0x50, 0x38, 0x30, 0x80, 0x02, 0x68, 0x01,
        ])
        // Timebase 1/30 (rate 30 = 0x1E, scale 1), length 0 while recording, unused 0.
        XCTAssertEqual(Array(file[16..<32]), [0x1E, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(writer.length, 0, "no frame")
        var header: [UInt8] = []
        // Capture times (µs): the first frame; one period later (33 333 µs = 0.99999 periods: 1); 1.5 periods
        // (rounds up: 2); 1.53 periods (rounds to 2, taken: 3); before the first (4); 9 periods (its own, 9).
        let captures: [UInt64] = [5_000_000, 5_033_333, 5_050_000, 5_051_000, 4_000_000, 5_300_000]
        for (index, micros) in captures.enumerated() {
            let frame = EncodedFrame(bytes: [UInt8](repeating: UInt8(index), count: index + 1), isKeyframe: index == 0,
                                     captureTimestampMicros: micros, width: 640, height: 360)
            writer.frameHeader(for: frame, into: &header)
            XCTAssertEqual(header.count, 12)
            file += header + frame.bytes
            if index == 0 { XCTAssertEqual(writer.length, 1, "one frame: one period") }
        }
        let reader = try IVFReader(bytes: file)
        XCTAssertEqual(reader.header, IVFFileHeader(width: 640, height: 360))
        XCTAssertEqual(reader.frames.map(\.pts), [0, 1, 2, 3, 4, 9])
        XCTAssertEqual(Array(file[36..<44]), [0, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(Array(file[49..<57]), [1, 0, 0, 0, 0, 0, 0, 0], "pts 1 little-endian")
        XCTAssertEqual(reader.frames.map(\.bytes), (0..<6).map { [UInt8](repeating: UInt8($0), count: $0 + 1) })
        XCTAssertEqual(writer.frameCount, 6)
        // Length: the last pts (9) + 1 = 10 periods, 333 333 µs; read back from byte 24.
        XCTAssertEqual(writer.length, 10)
        XCTAssertEqual(writer.lengthMicros, 333_333)
        let finished = writer.fileHeader(width: 640, height: 360, length: writer.length)
        XCTAssertEqual(Array(finished[24..<28]), [10, 0, 0, 0])
        XCTAssertEqual(try IVFFileHeader(parsing: finished[...]).length, 10)

        XCTAssertThrowsError(try IVFReader(bytes: Array(file.dropLast())))
        XCTAssertThrowsError(try IVFReader(bytes: Array("DKIX".utf8) + Array(file.dropFirst(4))))
        XCTAssertThrowsError(try IVFReader(bytes: Array(file.prefix(20))))
    }

    /// `--max-fps` values as the header's rate/scale, reduced; a fractional rate's periods and pts.
    func testFrameRatesBecomeReducedRateAndScale() {
        XCTAssertTrue(IVF.rateAndScale(framesPerSecond: 30) == (30, 1))
        XCTAssertTrue(IVF.rateAndScale(framesPerSecond: 240) == (240, 1))
        XCTAssertTrue(IVF.rateAndScale(framesPerSecond: 7.5) == (15, 2))
        XCTAssertTrue(IVF.rateAndScale(framesPerSecond: 29.97) == (2997, 100))
        XCTAssertTrue(IVF.rateAndScale(framesPerSecond: 0.1) == (1, 10))
        XCTAssertTrue(IVF.rateAndScale(framesPerSecond: 0) == (1, 1000), "clamped to 0.001")
        var writer = IVFWriter(framesPerSecond: 7.5)
        XCTAssertEqual(Array(writer.fileHeader(width: 2, height: 2)[16..<24]), [15, 0, 0, 0, 2, 0, 0, 0])
        var header: [UInt8] = []
        for micros: UInt64 in [0, 1_000_000] {
            writer.frameHeader(for: EncodedFrame(bytes: [0], isKeyframe: true, captureTimestampMicros: micros,
                                                 width: 2, height: 2), into: &header)
        }
        // 1 s at 7.5 fps = 7.5 periods, rounded up to 8; 9 periods of 2/15 s = 1.2 s.
        XCTAssertEqual(Array(header[4..<12]), [8, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(writer.length, 9)
        XCTAssertEqual(writer.lengthMicros, 1_200_000)
        XCTAssertEqual(writer.micros(ofPts: 8), 1_066_666)
    }

    /// The 32-bit length field holds 2³² − 1 periods (4.5 years at 30 fps): a longer recording's header
    /// says that much, and its pts (64-bit) go on.
    func testTheLengthStopsAtItsLimitAndPtsGoOn() {
        var writer = IVFWriter()
        var header: [UInt8] = []
        let periodMicros = 1_000_000.0 / 30
        let limitMicros = UInt64((Double(IVF.maximumLength) * periodMicros).rounded())
        for micros in [0, limitMicros / 2, limitMicros + 1_000_000] {
            writer.frameHeader(for: EncodedFrame(bytes: [0], isKeyframe: true, captureTimestampMicros: micros,
                                                 width: 2, height: 2), into: &header)
        }
        XCTAssertEqual(Array(header[4..<12]), withUnsafeBytes(of: (IVF.maximumLength + 30).littleEndian, Array.init))
        XCTAssertEqual(writer.length, UInt32.max)
        XCTAssertEqual(IVF.maximumLength, 4_294_967_295)
    }
}
