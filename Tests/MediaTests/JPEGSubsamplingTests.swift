import CTurboJPEG
@testable import Media
import TestSupport
import XCTest

/// JPEGs that are not 4:2:0 (made from RGB with tjCompress2) decode to correct I420.
final class JPEGSubsamplingTests: XCTestCase {
    private let cases: [(TJSAMP, JPEGSubsampling)] = [
        (TJSAMP_444, .yuv444), (TJSAMP_422, .yuv422), (TJSAMP_440, .yuv440),
        (TJSAMP_411, .yuv411), (TJSAMP_GRAY, .gray), (TJSAMP_420, .yuv420),
    ]

    func testEverySubsamplingDecodesToI420MatchingTheSource() throws {
        let decoder = try JPEGDecoder()
        var frame = I420Buffer()
        for (width, height) in [(64, 48), (37, 23), (1, 1), (3, 5), (585, 126)] {
            let rgb = makeRGBPattern(width: width, height: height)
            let truth = jfifYCbCr(rgb: rgb, width: width, height: height)
            let truthU = halve(truth.cb, width: width, height: height)
            let truthV = halve(truth.cr, width: width, height: height)
            for (samp, expected) in cases {
                let label = "\(expected) \(width)x\(height)"
                let jpeg = try compressRGB(rgb, width: width, height: height, subsampling: samp)
                let info = try decoder.decodeI420(jpeg, into: &frame)
                XCTAssertEqual(info.subsampling, expected, label)
                XCTAssertEqual(info.colorspace, expected == .gray ? .gray : .yCbCr, label)
                XCTAssertEqual([frame.width, frame.height], [width, height], label)

                let lumaDB = psnr(frame.y, truth.y)
                XCTAssertGreaterThanOrEqual(lumaDB, 35, "\(label): luma PSNR \(lumaDB) dB")
                if expected == .gray {
                    XCTAssertTrue(frame.u.allSatisfy { $0 == 128 }, "\(label): U is neutral")
                    XCTAssertTrue(frame.v.allSatisfy { $0 == 128 }, "\(label): V is neutral")
                } else if expected == .yuv411 && width < 16 {
                    // 4:1:1 keeps one chroma column in four: these tiny gradients carry more colour detail
                    // than it can hold, so only the size and luma are checked.
                } else {
                    // 4:1:1 throws away more chroma at encode time, so its bar is lower.
                    let bar = expected == .yuv411 ? 28.0 : 33.0
                    let uDB = psnr(frame.u, truthU)
                    let vDB = psnr(frame.v, truthV)
                    XCTAssertGreaterThanOrEqual(uDB, bar, "\(label): U PSNR \(uDB) dB")
                    XCTAssertGreaterThanOrEqual(vDB, bar, "\(label): V PSNR \(vDB) dB")
                }
            }
        }
    }

    /// libturbojpeg writes luma planes padded to whole chroma samples (38x24 for a 37x23 4:2:0 JPEG); a
    /// flat white picture with flat chroma shows at once whether any of that padding lands in U or V.
    func testOddSizesKeepLumaOutOfTheChromaPlanes() throws {
        let decoder = try JPEGDecoder()
        let encoder = try JPEGEncoder()
        var frame = I420Buffer()
        for (width, height) in [(37, 23), (3, 5), (1, 1), (585, 1266), (16, 1), (1, 16), (2, 3), (5, 2)] {
            var source = I420Buffer(width: width, height: height, colorSpace: .bt601Full)
            source.withUnsafeMutablePlanes { y, u, v in
                y.update(repeating: 255)
                u.update(repeating: 64)
                v.update(repeating: 192)
            }
            // (name, JPEG, expected Y, U, V)
            var jpegs = [("I420 4:2:0", try encoder.encode(source, quality: 95), 255, 64, 192)]
            // Pale yellow RGB (255, 255, 200): Y ≈ 249, Cb ≈ 100, Cr ≈ 132 in every subsampling.
            let rgb = [UInt8]((0..<(width * height)).flatMap { _ in [255, 255, 200] as [UInt8] })
            for (samp, name) in cases.map({ ($0.0, "\($0.1)") }) where samp != TJSAMP_GRAY {
                jpegs.append(("RGB \(name)", try compressRGB(rgb, width: width, height: height, subsampling: samp), 249, 100, 132))
            }
            for (name, jpeg, y, u, v) in jpegs {
                try decoder.decodeI420(jpeg, into: &frame)
                let label = "\(name) \(width)x\(height)"
                XCTAssertTrue(frame.y.allSatisfy { abs(Int($0) - y) <= 2 }, "\(label): Y \(Array(frame.y.prefix(8)))")
                XCTAssertTrue(frame.u.allSatisfy { abs(Int($0) - u) <= 2 }, "\(label): U \(Array(frame.u.prefix(8)))")
                XCTAssertTrue(frame.v.allSatisfy { abs(Int($0) - v) <= 2 }, "\(label): V \(Array(frame.v.prefix(8)))")
            }
        }
    }

    func testProgressiveJPEGDecodes() throws {
        let (width, height) = (50, 30)
        let rgb = makeRGBPattern(width: width, height: height)
        let handle = try XCTUnwrap(tjInitCompress())
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = rgb.withUnsafeBufferPointer { src in
            tjCompress2(handle, src.baseAddress, Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue),
                        &output, &size, Int32(TJSAMP_444.rawValue), 90, Int32(TJFLAG_PROGRESSIVE))
        }
        defer { tjFree(output) }
        XCTAssertEqual(status, 0)
        let jpeg = Array(UnsafeBufferPointer(start: try XCTUnwrap(output), count: Int(size)))
        let frame = try JPEGDecoder().decodeI420(jpeg)
        XCTAssertGreaterThanOrEqual(psnr(frame.y, jfifYCbCr(rgb: rgb, width: width, height: height).y), 35)
    }

    /// The stand-in chroma downsampler, checked sample by sample on tiny planes.
    func testChromaDownsampleAveragesTheTwoByTwoBlockWithClampedEdges() {
        // 4:4:4, 3×3: the last column and row of I420 chroma cover one luma column / row.
        let full: [UInt8] = [
            10, 20, 30,
            40, 50, 60,
            70, 80, 91,
        ]
        XCTAssertEqual(downsample(full, stride: 3, factors: (1, 1), width: 3, height: 3), [
            30, 45, // (10+20+40+50+2)/4, (30+30+60+60+2)/4
            75, 91, // (70+80+70+80+2)/4, 91
        ])
        // 4:2:2, 4×2 luma: chroma is 2×2 and only rows are averaged.
        XCTAssertEqual(downsample([0, 100, 51, 200], stride: 2, factors: (2, 1), width: 4, height: 2), [
            26, 150,
        ])
        // 4:4:0, 2×4 luma: chroma is 2×2 and only columns are averaged.
        XCTAssertEqual(downsample([0, 101, 10, 20], stride: 2, factors: (1, 2), width: 2, height: 4), [51, 15])
        // 4:1:1, 8×2 luma: chroma is 2×2; each I420 sample repeats a quarter-width one, rows averaged.
        XCTAssertEqual(downsample([0, 200, 100, 0], stride: 2, factors: (4, 1), width: 8, height: 2), [
            50, 50, 100, 100,
        ])
    }

    private func downsample(
        _ source: [UInt8], stride: Int, factors: (horizontal: Int, vertical: Int), width: Int, height: Int
    ) -> [UInt8] {
        let (cw, ch) = ((width + 1) / 2, (height + 1) / 2)
        var out = [UInt8](repeating: 0, count: cw * ch)
        source.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                downsampleChromaToI420(
                    source: src.baseAddress!, sourceStride: stride, factors: factors,
                    lumaWidth: width, lumaHeight: height,
                    destination: dst.baseAddress!, destinationStride: cw)
            }
        }
        return out
    }
}
