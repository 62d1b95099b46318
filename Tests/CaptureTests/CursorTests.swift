import Capture
import Foundation
import Media
import XCTest
import XTestSupport

/// The XFIXES cursor is drawn at the pointer position minus its hotspot, only with `drawsCursor`.
final class CursorTests: XServerTestCase {
    private let background: UInt32 = 0x808080

    override func setUpWithError() throws {
        try super.setUpWithError()
        client.setRootColor(background)
    }

    /// The bounding box of pixels that differ clearly from the grey background.
    private func changedBox(_ jpeg: [UInt8]) throws -> CaptureRect? {
        let image = try TestImages.decode(jpeg)
        var (left, top, right, bottom) = (Int.max, Int.max, -1, -1)
        for y in 0..<image.height {
            for x in 0..<image.width {
                let p = image.rgb(x: x, y: y)
                if abs(Int(p.red) - 128) + abs(Int(p.green) - 128) + abs(Int(p.blue) - 128) > 90 {
                    (left, top, right, bottom) = (min(left, x), min(top, y), max(right, x), max(bottom, y))
                }
            }
        }
        return right < 0 ? nil : CaptureRect(x: left, y: top, width: right - left + 1, height: bottom - top + 1)
    }

    /// Where the cursor's clearly visible pixels (alpha > 127, far from grey) are, drawn at `position`.
    private func expectedBox(at position: (x: Int, y: Int)) -> CaptureRect? {
        let cursor = client.cursorImage()
        var (left, top, right, bottom) = (Int.max, Int.max, -1, -1)
        for y in 0..<cursor.height {
            for x in 0..<cursor.width {
                let argb = cursor.pixels[y * cursor.width + x]
                let (a, r, g, b) = (Int(argb >> 24), Int((argb >> 16) & 0xFF), Int((argb >> 8) & 0xFF), Int(argb & 0xFF))
                // Premultiplied over grey 128: the blended value is c + 128 * (255 - a) / 255.
                let blend = { (c: Int) in c + 128 * (255 - a) / 255 }
                if abs(blend(r) - 128) + abs(blend(g) - 128) + abs(blend(b) - 128) > 90 {
                    (left, top, right, bottom) = (min(left, x), min(top, y), max(right, x), max(bottom, y))
                }
            }
        }
        guard right >= 0 else { return nil }
        return CaptureRect(x: position.x - cursor.xhot + left, y: position.y - cursor.yhot + top,
                           width: right - left + 1, height: bottom - top + 1)
    }

    private func assertClose(_ a: CaptureRect?, _ b: CaptureRect?, file: StaticString = #filePath, line: UInt = #line) {
        guard let a, let b else { return XCTFail("missing box: \(String(describing: a)) vs \(String(describing: b))", file: file, line: line) }
        for (u, v) in [(a.x, b.x), (a.y, b.y), (a.width, b.width), (a.height, b.height)] {
            XCTAssertLessThanOrEqual(abs(u - v), 2, "\(a) vs expected \(b)", file: file, line: line)
        }
    }

    func testCursorIsDrawnAtThePointerWithItsHotspot() throws {
        try server.run("xdotool", ["mousemove", "100", "80"])
        XCTAssertEqual(client.pointer().x, 100)
        let expected = try XCTUnwrap(expectedBox(at: (100, 80)), "the server's cursor has no visible pixels")
        let frame = try captureOne(configuration { $0.drawsCursor = true; $0.quality = 95; $0.subsampling = .yuv444 })
        assertClose(try changedBox(frame.jpeg), expected)
    }

    func testCursorOffLeavesTheScreenUntouched() throws {
        try server.run("xdotool", ["mousemove", "100", "80"])
        let frame = try captureOne(configuration { $0.drawsCursor = false; $0.quality = 95; $0.subsampling = .yuv444 })
        XCTAssertNil(try changedBox(frame.jpeg))
    }

    func testMovingThePointerSendsAFrameWithTheCursorMoved() throws {
        try server.run("xdotool", ["mousemove", "50", "50"])
        let (capture, collector) = try startCapture(configuration { $0.drawsCursor = true; $0.quality = 95; $0.subsampling = .yuv444 })
        collector.wait(count: 1)
        try server.run("xdotool", ["mousemove", "250", "180"])
        let frames = collector.wait(timeout: 2) { $0.count(where: { $0.kind == .change }) >= 2 }
        capture.stop()
        XCTAssertEqual(capture.wait(timeout: 5), .stopped)
        let changes = frames.filter { $0.kind == .change }
        XCTAssertEqual(changes.count, 2, "one frame for the move: \(frames.map(\.kind))")
        guard changes.count >= 2 else { return }
        assertClose(try changedBox(changes[0].jpeg), expectedBox(at: (50, 50)))
        assertClose(try changedBox(changes[1].jpeg), expectedBox(at: (250, 180)))
    }
}
