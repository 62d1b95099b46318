import Capture
import Foundation
import FrameWire
import Media
import XCTest
import XTestSupport

/// `Buffer-Damage` from a real Xvfb (Protocol/frame-wire.md §2.9): a window mapped into a known rectangle
/// gives a frame whose damage covers it and nothing far from it, on every format; the I420 frame made by
/// converting only the damage, and the shared slot written only there, hold exactly the screen.
final class FrameDamageTests: XServerTestCase {
    private let root: UInt32 = 0x336699
    private let paint: UInt32 = 0xFFCC00
    private let window = DamageRect(x: 101, y: 61, width: 40, height: 30)

    func testJPEGFramesNameTheDrawnRectangle() throws { try checkDamage(.jpeg) }
    func testI420FramesNameTheDrawnRectangleAndHoldTheScreen() throws { try checkDamage(.i420) }
    func testSharedFramesNameTheDrawnRectangleAndHoldTheScreen() throws { try checkDamage(.shm) }

    private func checkDamage(_ format: CaptureFormat) throws {
        client.setRootColor(root)
        let (capture, collector) = try startCapture(configuration { $0.format = format; $0.paintOver = nil })
        defer {
            capture.stop()
            XCTAssertEqual(capture.wait(timeout: 5), .stopped)
        }
        let first = try XCTUnwrap(collector.wait(count: 1).first)
        XCTAssertNil(first.damage, "the first frame is whole (written as the whole buffer)")
        Thread.sleep(forTimeInterval: 0.3)
        let before = collector.all.count
        let made = client.createWindow(x: window.x, y: window.y, width: window.width, height: window.height, color: paint)
        let drawn = try XCTUnwrap(collector.wait(timeout: 5) { $0.count > before && $0.dropFirst(before).contains { $0.kind == .change } }
            .dropFirst(before).first { $0.kind == .change })
        try checkCovers(drawn, window, format)
        try checkPixels(drawn, windowsAt: [window], format)

        // Moved: the old place and the new one changed, nothing else.
        Thread.sleep(forTimeInterval: 0.3)
        let count = collector.all.count
        client.move(made, x: 201, y: 151)
        let moved = try XCTUnwrap(collector.wait(timeout: 5) { $0.count > count && $0.dropFirst(count).contains { $0.kind == .change } }
            .dropFirst(count).first { $0.kind == .change })
        let target = DamageRect(x: 201, y: 151, width: window.width, height: window.height)
        let damage = try XCTUnwrap(moved.damage, "\(format): damage known after a move")
        XCTAssertEqual(BufferDamage.coveredPixels(damage.map { $0.intersection(target) }), target.area, "\(format): covers the new place \(damage)")
        XCTAssertEqual(BufferDamage.coveredPixels(damage.map { $0.intersection(window) }), window.area, "\(format): covers the old place \(damage)")
        try checkPixels(moved, windowsAt: [target], format)

        // Another window elsewhere: only it changed; the shared slot written now held the frame before the
        // move, so it also needs the move's rectangles.
        Thread.sleep(forTimeInterval: 0.3)
        let third = collector.all.count
        let other = DamageRect(x: 20, y: 180, width: 30, height: 20)
        _ = client.createWindow(x: other.x, y: other.y, width: other.width, height: other.height, color: paint)
        let added = try XCTUnwrap(collector.wait(timeout: 5) { $0.count > third && $0.dropFirst(third).contains { $0.kind == .change } }
            .dropFirst(third).first { $0.kind == .change })
        try checkCovers(added, other, format)
        try checkPixels(added, windowsAt: [target, other], format)
    }

    /// The damage covers `rect` wholly, and every rectangle of it lies within 8 pixels of `rect`.
    private func checkCovers(_ frame: CapturedFrame, _ rect: DamageRect, _ format: CaptureFormat) throws {
        let damage = try XCTUnwrap(frame.damage, "\(format): damage known")
        XCTAssertFalse(damage.isEmpty, "\(format)")
        XCTAssertEqual(BufferDamage.coveredPixels(damage.map { $0.intersection(rect) }), rect.area, "\(format): \(damage) covers \(rect)")
        let near = DamageRect(x: rect.x - 8, y: rect.y - 8, width: rect.width + 16, height: rect.height + 16)
        for r in damage { XCTAssertTrue(near.contains(r), "\(format): \(r) is far from \(rect)") }
        for r in damage { XCTAssertTrue(r.x % 2 == 0 && r.y % 2 == 0, "\(format): \(r) even-aligned") }
    }

    /// The frame's picture is the screen: the root colour with `paint` at `rects` (raw formats, exact).
    private func checkPixels(_ frame: CapturedFrame, windowsAt rects: [DamageRect], _ format: CaptureFormat) throws {
        var screen = BGRXImage(width: screenSize.width, height: screenSize.height)
        screen.withUnsafeMutableBytes { bytes in
            for y in 0..<screenSize.height {
                for x in 0..<screenSize.width {
                    let inside = rects.contains { $0.contains(DamageRect(x: x, y: y, width: 1, height: 1)) }
                    let rgb = inside ? paint : root
                    let at = (y * screenSize.width + x) * 4
                    (bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]) = (UInt8(rgb & 0xFF), UInt8(rgb >> 8 & 0xFF), UInt8(rgb >> 16), 0)
                }
            }
        }
        switch format {
        case .jpeg:
            break
        case .i420:
            var expected = I420Buffer()
            try BGRXToYUV.convertToI420(screen, range: .limited, into: &expected)
            XCTAssertTrue(frame.body == expected.bytes, "the I420 frame made from the damage is the whole screen's conversion")
        case .shm:
            let shared = try XCTUnwrap(frame.shared)
            let slot = shared.picture.pixels(slot: shared.reference.slot)
            var mismatches = 0
            screen.withUnsafeBytes { bytes in
                for i in stride(from: 0, to: bytes.count, by: 4) where slot[i] != bytes[i] || slot[i + 1] != bytes[i + 1] || slot[i + 2] != bytes[i + 2] {
                    mismatches += 1
                }
            }
            XCTAssertEqual(mismatches, 0, "pixels of the shared slot that are not the screen")
        }
    }
}
