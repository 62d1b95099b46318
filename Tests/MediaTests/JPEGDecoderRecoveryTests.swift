import Media
import XCTest

/// After a JPEG cut inside its headers, the next valid JPEG still decodes (libturbojpeg 2.1 left the failed
/// handle reporting a stale header; the decoder now takes a fresh handle after every libjpeg failure).
final class JPEGDecoderRecoveryTests: XCTestCase {
    func testAFailureDoesNotSpoilTheNextFrame() throws {
        let good = try JPEGEncoder().encode(I420Buffer(width: 64, height: 48, colorSpace: .bt601Full), quality: 80)
        let sos = try XCTUnwrap((0..<(good.count - 1)).first { good[$0] == 0xFF && good[$0 + 1] == 0xDA })
        let cutInHeaders = Array(good[..<(sos - 10)])
        let decoder = try JPEGDecoder()
        var picture = I420Buffer()
        for _ in 0..<3 {
            XCTAssertThrowsError(try decoder.decodeI420(cutInHeaders, into: &picture))
            let info = try decoder.decodeI420(good, into: &picture)
            XCTAssertEqual(info.width, 64)
            XCTAssertEqual(info.height, 48)
            XCTAssertThrowsError(try decoder.readHeader(Array(cutInHeaders.prefix(20))))
            XCTAssertEqual(try decoder.readHeader(good).width, 64)
        }
    }

    /// Growing a buffer back after a big picture is one allocation, not a byte-by-byte fill.
    func testResizeBetweenSizes() {
        var buffer = I420Buffer(width: 4096, height: 4096, colorSpace: .bt601Full)
        buffer.resize(width: 64, height: 48)
        XCTAssertEqual(buffer.bytes.count, I420Buffer.byteCount(width: 64, height: 48))
        buffer.resize(width: 2048, height: 2048)
        XCTAssertEqual(buffer.bytes.count, I420Buffer.byteCount(width: 2048, height: 2048))
        XCTAssertEqual(buffer.width, 2048)
    }
}
