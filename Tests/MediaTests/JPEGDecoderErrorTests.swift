import CTurboJPEG
import Media
import TestSupport
import XCTest

/// Bad input is a typed error, never a crash; a warning counts as a failure.
final class JPEGDecoderErrorTests: XCTestCase {
    private func sampleJPEG(width: Int = 120, height: Int = 80) throws -> [UInt8] {
        try JPEGEncoder().encode(makeI420Pattern(width: width, height: height), quality: 90)
    }

    func testJPEGCutInHalfFailsWithAWarning() throws {
        let jpeg = try sampleJPEG()
        let half = Array(jpeg.prefix(jpeg.count / 2))
        let decoder = try JPEGDecoder()
        XCTAssertEqual(try decoder.readHeader(half).width, 120, "the header alone is still readable")
        var frame = I420Buffer()
        let error = assertThrowsMediaError { () throws(MediaError) in try decoder.decodeI420(half, into: &frame) }
        guard case .jpegWarning(let message) = error else {
            return XCTFail("expected jpegWarning, got \(String(describing: error))")
        }
        XCTAssertTrue(message.lowercased().contains("premature end"), message)
        // The decoder is still usable afterwards.
        XCTAssertNoThrow(try decoder.decodeI420(jpeg, into: &frame))
    }

    func testEveryTruncationFails() throws {
        let jpeg = try sampleJPEG(width: 64, height: 40)
        let decoder = try JPEGDecoder()
        var frame = I420Buffer()
        var cuts = Array(stride(from: 0, to: jpeg.count, by: max(1, jpeg.count / 40)))
        cuts.append(contentsOf: [1, 2, 3, jpeg.count - 2, jpeg.count - 1])
        for cut in cuts {
            let prefix = Array(jpeg.prefix(cut))
            XCTAssertNotNil(
                assertThrowsMediaError { () throws(MediaError) in try decoder.decodeI420(prefix, into: &frame) },
                "cut at \(cut) of \(jpeg.count)")
        }
        XCTAssertNoThrow(try decoder.decodeI420(jpeg, into: &frame))
    }

    func testEmptyAndRandomBytesFailAtTheHeader() throws {
        let decoder = try JPEGDecoder()
        var frame = I420Buffer()
        guard case .jpegHeader = assertThrowsMediaError({ () throws(MediaError) in
            try decoder.decodeI420([], into: &frame)
        }) else { return XCTFail("empty input should be jpegHeader") }

        var random = SeededGenerator(seed: 42)
        for length in [1, 2, 7, 100, 4096, 65536] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            guard case .jpegHeader = assertThrowsMediaError({ () throws(MediaError) in
                try decoder.decodeI420(bytes, into: &frame)
            }) else { return XCTFail("\(length) random bytes should be jpegHeader") }
        }
    }

    func testSOIFollowedByGarbageFails() throws {
        let decoder = try JPEGDecoder()
        var frame = I420Buffer()
        var random = SeededGenerator(seed: 7)
        for length in [0, 10, 1000] {
            let bytes = [0xFF, 0xD8] + (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            XCTAssertNotNil(assertThrowsMediaError { () throws(MediaError) in try decoder.decodeI420(bytes, into: &frame) })
        }
    }

    func testCorruptedEntropyDataNeverCrashes() throws {
        // Flipped bytes may or may not be detectable; what matters is: a typed error or a picture of the
        // right size, never a crash.
        let jpeg = try sampleJPEG()
        let decoder = try JPEGDecoder()
        var frame = I420Buffer()
        var random = SeededGenerator(seed: 99)
        for _ in 0..<50 {
            var bad = jpeg
            for _ in 0..<8 {
                bad[Int.random(in: 200..<(bad.count - 2), using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            do {
                let info = try decoder.decodeI420(bad, into: &frame)
                XCTAssertEqual([info.width, info.height, frame.width, frame.height], [120, 80, 120, 80])
            } catch {
                _ = error.description
            }
        }
    }

    func testImageLargerThanTheLimitIsRefusedBeforeAllocation() throws {
        let jpeg = try sampleJPEG(width: 64, height: 40)
        let decoder = try JPEGDecoder(maximumDimension: 63)
        var frame = I420Buffer()
        let error = assertThrowsMediaError { () throws(MediaError) in try decoder.decodeI420(jpeg, into: &frame) }
        XCTAssertEqual(error, .imageTooLarge(width: 64, height: 40, maximumDimension: 63))
        XCTAssertEqual(frame.bytes.count, 0, "nothing was allocated")
        XCTAssertEqual(try JPEGDecoder(maximumDimension: 64).decodeI420(jpeg).width, 64)
        guard case .invalidArgument = assertThrowsMediaError({ () throws(MediaError) in
            try JPEGDecoder(maximumDimension: 0)
        }) else { return XCTFail("maximumDimension 0 should be invalidArgument") }
    }

    func testRGBColorspaceJPEGIsRefused() throws {
        // A 4:4:4 JPEG turned into an RGB-colour-space one: drop the JFIF APP0 segment and name the
        // components 'R', 'G', 'B' (libjpeg's rule for 3 components without JFIF or Adobe markers).
        let rgb = makeRGBPattern(width: 16, height: 16)
        var jpeg = try compressRGB(rgb, width: 16, height: 16, subsampling: TJSAMP_444)
        XCTAssertEqual(Array(jpeg[2..<4]), [0xFF, 0xE0], "tjCompress2 writes JFIF APP0 first")
        let app0Length = Int(jpeg[4]) << 8 | Int(jpeg[5])
        jpeg.removeSubrange(2..<(4 + app0Length))
        let names: [UInt8] = [0x52, 0x47, 0x42]
        var index = 2
        while index + 4 <= jpeg.count, jpeg[index] == 0xFF {
            let marker = jpeg[index + 1]
            let length = Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3])
            if marker == 0xC0 {  // SOF0: … Nf, then (Ci, HV, Tq) × Nf
                for c in 0..<3 { jpeg[index + 10 + 3 * c] = names[c] }
            } else if marker == 0xDA {  // SOS: Ns, then (Cs, TdTa) × Ns
                for c in 0..<3 { jpeg[index + 5 + 2 * c] = names[c] }
                break
            }
            index += 2 + length
        }
        let decoder = try JPEGDecoder()
        XCTAssertEqual(try decoder.readHeader(jpeg).colorspace, .rgb)
        let error = assertThrowsMediaError { () throws(MediaError) in try decoder.decodeI420(jpeg) }
        XCTAssertEqual(error, .unsupportedColorspace(.rgb))
    }

    func testErrorsDescribeThemselves() {
        XCTAssertEqual(MediaError.jpegWarning("Premature end of JPEG file").description,
                       "JPEG decoded only with a warning: Premature end of JPEG file")
        XCTAssertTrue(MediaError.unsupportedColorspace(.cmyk).description.contains("CMYK"))
    }
}
