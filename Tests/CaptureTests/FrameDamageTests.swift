import Capture
import Foundation
import FrameWire
import Media
import XCTest
import XTestSupport
internal import CXCB

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
        self.collector = collector
        var made: xcb_window_t = 0
        let drawn = try changes {
            made = client.createWindow(x: window.x, y: window.y, width: window.width, height: window.height, color: paint)
        }
        try checkCovers(drawn, [window], format)
        try checkPixels(drawn.last!, windowsAt: [window], format)
        // Moved: the old place and the new one changed, nothing else.
        let target = DamageRect(x: 201, y: 151, width: window.width, height: window.height)
        let moved = try changes { client.move(made, x: target.x, y: target.y) }
        try checkCovers(moved, [window, target], format)
        try checkPixels(moved.last!, windowsAt: [target], format)
        // Another window elsewhere: only it changed; the shared slot written now held the frame before the
        // last, so it also needs the last frame's rectangles.
        let other = DamageRect(x: 20, y: 180, width: 30, height: 20)
        let added = try changes { _ = client.createWindow(x: other.x, y: other.y, width: other.width, height: other.height, color: paint) }
        try checkCovers(added, [other], format)
        try checkPixels(added.last!, windowsAt: [target, other], format)
    }

    private var collector: FrameCollector?

    /// The change frames that `act` causes: from the first after it until 0.3 s without another.
    private func changes(_ act: () -> Void) throws -> [CapturedFrame] {
        let collector = try XCTUnwrap(collector)
        Thread.sleep(forTimeInterval: 0.3)
        let before = collector.all.count
        act()
        _ = collector.wait(timeout: 5) { $0.dropFirst(before).contains { $0.kind == .change } }
        var count = 0
        repeat {
            count = collector.all.count
            Thread.sleep(forTimeInterval: 0.3)
        } while collector.all.count != count
        let frames = collector.all.dropFirst(before).filter { $0.kind == .change }
        XCTAssertFalse(frames.isEmpty, "no frame after the change")
        return Array(frames)
    }

    /// Together the frames' damage covers each of `rects` wholly, every rectangle lies within 8 pixels of
    /// their bounding box (the X server reports the bounding box of what changed: a move is one box from the
    /// old place to the new), and each is even-aligned.
    private func checkCovers(_ frames: [CapturedFrame], _ rects: [DamageRect], _ format: CaptureFormat) throws {
        var damage: [DamageRect] = []
        for frame in frames { damage += try XCTUnwrap(frame.damage, "\(format): damage known") }
        for rect in rects {
            XCTAssertEqual(BufferDamage.coveredPixels(damage.map { $0.intersection(rect) }), rect.area, "\(format): \(damage) covers \(rect)")
        }
        let box = rects.dropFirst().reduce(rects[0]) { $0.union($1) }
        let near = [DamageRect(x: box.x - 8, y: box.y - 8, width: box.width + 16, height: box.height + 16)]
        for r in damage {
            XCTAssertTrue(near.contains { $0.contains(r) }, "\(format): \(r) is far from \(rects)")
            XCTAssertTrue(r.x % 2 == 0 && r.y % 2 == 0, "\(format): \(r) even-aligned")
        }
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
