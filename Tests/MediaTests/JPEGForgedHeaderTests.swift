import Media
import XCTest

/// A small body whose header claims a huge picture is refused before any plane is allocated
/// (found by the break-it trial: an 867-byte body claiming 16384×16384 cost 936 MB before failing).
final class JPEGForgedHeaderTests: XCTestCase {
    /// A real 16×16 JPEG with its SOF0 size fields rewritten to `width`×`height` (ITU-T T.81 §B.2.2:
    /// FFC0, Lf (2), P (1), Y (2), X (2), …; big-endian).
    private func forged(width: Int, height: Int) throws -> [UInt8] {
        var jpeg = try JPEGEncoder().encode(I420Buffer(width: 16, height: 16, colorSpace: .bt601Full), quality: 80)
        let sof = try XCTUnwrap((0..<(jpeg.count - 1)).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg[sof + 5] = UInt8(height >> 8); jpeg[sof + 6] = UInt8(height & 0xFF)
        jpeg[sof + 7] = UInt8(width >> 8); jpeg[sof + 8] = UInt8(width & 0xFF)
        return jpeg
    }

    func testHugeClaimInATinyBodyIsRefusedBeforeDecoding() throws {
        let jpeg = try forged(width: 16384, height: 16384)
        let decoder = try JPEGDecoder()
        XCTAssertEqual(try decoder.readHeader(jpeg).width, 16384, "the header itself reads fine")
        var picture = I420Buffer()
        XCTAssertThrowsError(try decoder.decodeI420(jpeg, into: &picture)) { error in
            XCTAssertEqual(error as? MediaError,
                           .implausiblySmall(width: 16384, height: 16384, bytes: jpeg.count, minimum: 524_288))
        }
        XCTAssertEqual(picture.bytes.count, 0, "nothing allocated for the claimed size")
    }

    func testTheBoundNeverRefusesARealJPEG() throws {
        // A flat black picture is the cheapest real content there is: it still clears the bound.
        for (width, height) in [(1, 1), (17, 9), (640, 360), (1920, 1080)] {
            let jpeg = try JPEGEncoder().encode(I420Buffer(width: width, height: height, colorSpace: .bt601Full), quality: 10)
            let picture = try JPEGDecoder().decodeI420(jpeg)
            XCTAssertEqual(picture.width, width)
            XCTAssertGreaterThanOrEqual(jpeg.count, JPEGDecoderInfo.minimum(width, height))
        }
    }
}

private enum JPEGDecoderInfo {
    static func minimum(_ width: Int, _ height: Int) -> Int { (((width + 7) / 8) * ((height + 7) / 8) + 7) / 8 }
}
