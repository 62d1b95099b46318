import Media
import VideoSource
import XCTest

final class TestPatternTests: XCTestCase {
    /// Reads the banner back from the pixels, glyph by glyph.
    private func readBanner(_ picture: I420Buffer, painter: TestPatternPainter, characters: Int) -> String {
        let (x0, y0, s) = painter.bannerOrigin
        let alphabet = Array("0123456789FRAMET. ".utf8)
        var text = ""
        for index in 0..<characters {
            var rows = [UInt8](repeating: 0, count: 7)
            for r in 0..<7 {
                for c in 0..<5 {
                    let x = x0 + index * 6 * s + c * s + s / 2
                    let y = y0 + r * s + s / 2
                    if picture.bytes[y * picture.yStride + x] > 128 { rows[r] |= 0x10 >> UInt8(c) }
                }
            }
            let match = alphabet.first { TestPatternPainter.glyph($0) == rows }
            text.append(match.map { Character(UnicodeScalar($0)) } ?? "?")
        }
        return text
    }

    func testTheFrameCounterAndTimestampAreVisible() {
        let painter = TestPatternPainter(width: 640, height: 360)
        var picture = I420Buffer()
        for (frame, micros) in [(0, UInt64(0)), (123, 42_137_000), (999_999, 987_654_321_000)] {
            painter.paint(frameNumber: frame, timestampMicros: micros, into: &picture)
            let expected = TestPatternPainter.bannerText(frameNumber: frame, timestampMicros: micros)
            XCTAssertEqual(readBanner(picture, painter: painter, characters: expected.count), expected)
        }
        XCTAssertEqual(TestPatternPainter.bannerText(frameNumber: 123, timestampMicros: 42_137_000), "FRAME 000123  T 000042.137")
    }

    func testThePatternMovesAndKeepsItsSize() {
        for (width, height) in [(1280, 720), (320, 240), (33, 17)] {
            let painter = TestPatternPainter(width: width, height: height)
            var a = I420Buffer()
            var b = I420Buffer()
            painter.paint(frameNumber: 10, timestampMicros: 0, into: &a)
            painter.paint(frameNumber: 11, timestampMicros: 0, into: &b)
            XCTAssertEqual([a.width, a.height], [width, height])
            // Only the box moved (same timestamp): the pictures differ below the banner.
            let bannerRows = min(height, 11 * max(1, min(width / 160, height / 60)))
            let start = bannerRows * a.yStride
            XCTAssertNotEqual(Array(a.y[start...]), Array(b.y[start...]), "\(width)x\(height)")
        }
    }
}
