@testable import Capture
import CPipeWire
import Media
import PipeWireCursor
import ScreencastSupport
import XCTest

/// The portal's cursor mode METADATA: SPA_META_Cursor regions laid out with SPA's own structs (`spa_meta_cursor`,
/// `spa_meta_bitmap` as imported from `spa/buffer/meta.h`), read by ``PointerState`` (bounds-checked), and the
/// pointer drawn by ``CursorOverlay``'s blend, checked by pixels.
final class PointerMetadataTests: XCTestCase {
    private let cursorSize = MemoryLayout<spa_meta_cursor>.size
    private let bitmapSize = MemoryLayout<spa_meta_bitmap>.size

    /// A meta region of `size` bytes: a spa_meta_cursor and, with `bitmap`, a spa_meta_bitmap right after it
    /// whose pixels follow its header (`stride` bytes a row, from `pixel(x, y)` as 4 bytes in memory order).
    private func region(
        size: Int? = nil, id: UInt32 = 1, position: (Int32, Int32), hotspot: (Int32, Int32) = (0, 0),
        bitmapOffset: UInt32? = nil, format: UInt32 = SPA_VIDEO_FORMAT_RGBA.rawValue, width: UInt32 = 0, height: UInt32 = 0,
        stride: Int32? = nil, pixelOffset: UInt32? = nil, pixel: (Int, Int) -> [UInt8] = { _, _ in [0, 0, 0, 0] }
    ) -> [UInt8] {
        let rowBytes = Int(stride ?? Int32(width * 4))
        let total = size ?? cursorSize + bitmapSize + rowBytes * Int(height)
        var bytes = [UInt8](repeating: 0xEE, count: total)
        let offset = bitmapOffset ?? UInt32(cursorSize)
        bytes.withUnsafeMutableBytes { raw in
            let cursor = spa_meta_cursor(id: id, flags: 0, position: spa_point(x: position.0, y: position.1),
                                         hotspot: spa_point(x: hotspot.0, y: hotspot.1), bitmap_offset: offset)
            raw.storeBytes(of: cursor, toByteOffset: 0, as: spa_meta_cursor.self)
            guard offset != 0, Int(offset) + bitmapSize <= raw.count else { return }
            let header = pixelOffset ?? UInt32(bitmapSize)
            let bitmap = spa_meta_bitmap(format: format, size: spa_rectangle(width: width, height: height),
                                         stride: Int32(rowBytes), offset: header)
            raw.storeBytes(of: bitmap, toByteOffset: Int(offset), as: spa_meta_bitmap.self)
            guard header >= UInt32(bitmapSize) else { return }  // no pixels (0) or a bad offset: only the header
            for y in 0..<Int(height) {
                for x in 0..<Int(width) {
                    let at = Int(offset) + Int(header) + y * rowBytes + x * 4
                    guard at + 4 <= raw.count else { continue }
                    for (i, byte) in pixel(x, y).enumerated() { raw[at + i] = byte }
                }
            }
        }
        return bytes
    }

    private func apply(_ state: inout PointerState, _ bytes: [UInt8]) throws -> Bool {
        try bytes.withUnsafeBytes { raw in try state.apply(raw) }
    }

    private func refusal(_ state: inout PointerState, _ bytes: [UInt8]) -> PipeWireCursorError? {
        bytes.withUnsafeBytes { raw in
            do throws(PipeWireCursorError) {
                try state.apply(raw)
                return nil
            } catch {
                return error
            }
        }
    }

    func testAPictureInEachByteOrderBecomesPremultipliedARGBWords() throws {
        // Pixel (x, y) has R = 10x+1, G = 20y+2, B = 3, A = 200; stride padded past the row.
        let channels: (Int, Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) = { x, y in (UInt8(10 * x + 1), UInt8(20 * y + 2), 3, 200) }
        let orders: [(UInt32, (UInt8, UInt8, UInt8, UInt8) -> [UInt8])] = [
            (SPA_VIDEO_FORMAT_RGBA.rawValue, { [$0, $1, $2, $3] }), (SPA_VIDEO_FORMAT_BGRA.rawValue, { [$2, $1, $0, $3] }),
            (SPA_VIDEO_FORMAT_ARGB.rawValue, { [$3, $0, $1, $2] }), (SPA_VIDEO_FORMAT_ABGR.rawValue, { [$3, $2, $1, $0] }),
        ]
        for (format, layout) in orders {
            var state = PointerState()
            let bytes = region(position: (100, 50), hotspot: (1, 2), format: format, width: 3, height: 2, stride: 16) { x, y in
                let c = channels(x, y)
                return layout(c.r, c.g, c.b, c.a)
            }
            XCTAssertTrue(try apply(&state, bytes))
            XCTAssertEqual(state.width, 3)
            XCTAssertEqual(state.height, 2)
            XCTAssertEqual(state.position?.x, 100)
            XCTAssertEqual(state.position?.y, 50)
            let bounds = try XCTUnwrap(state.bounds)
            XCTAssertEqual([bounds.x, bounds.y, bounds.width, bounds.height], [99, 48, 3, 2], "top-left = position − hotspot")
            for y in 0..<2 {
                for x in 0..<3 {
                    let c = channels(x, y)
                    let word = UInt32(c.a) << 24 | UInt32(c.r) << 16 | UInt32(c.g) << 8 | UInt32(c.b)
                    XCTAssertEqual(state.pixels[y * 3 + x], word, "format \(format) pixel \(x),\(y)")
                }
            }
        }
    }

    func testNoBitmapKeepsTheShapeIdZeroHidesAnEmptyBitmapDrawsNothing() throws {
        var state = PointerState()
        XCTAssertTrue(try apply(&state, region(position: (10, 10), hotspot: (2, 2), width: 2, height: 2) { _, _ in [255, 0, 0, 255] }))
        let shape = state.pixels
        XCTAssertTrue(try apply(&state, region(position: (20, 30), bitmapOffset: 0)), "a move")
        XCTAssertEqual(state.pixels, shape, "bitmap_offset 0 keeps the picture")
        XCTAssertEqual(state.bounds.map { [$0.x, $0.y] }, [18, 28], "and the hotspot")
        XCTAssertFalse(try apply(&state, region(position: (20, 30), bitmapOffset: 0)), "the same place: no change")
        XCTAssertFalse(try apply(&state, region(position: (20, 30), format: 0, width: 5, height: 5)), "format 0: no news")
        XCTAssertEqual(state.pixels, shape, "a bitmap of format 0 keeps the picture")
        XCTAssertTrue(try apply(&state, region(id: 0, position: (0, 0), bitmapOffset: 0)))
        XCTAssertNil(state.bounds, "id 0: hidden")
        XCTAssertFalse(try apply(&state, region(id: 0, position: (0, 0), bitmapOffset: 0)), "still hidden: no change")
        XCTAssertTrue(try apply(&state, region(position: (5, 5), bitmapOffset: 0)))
        XCTAssertEqual(state.pixels, shape, "shown again with the picture kept")
        XCTAssertTrue(try apply(&state, region(position: (5, 5), width: 4, height: 4, pixelOffset: 0)))
        XCTAssertNil(state.bounds, "a bitmap offset of 0: an empty picture")
    }

    func testTheLargestPictureFitsTheNegotiatedRegionAndNothingLargerIsTaken() throws {
        let side = PointerState.maxSide
        XCTAssertEqual(side, 256)
        var state = PointerState()
        let full = region(position: (0, 0), width: UInt32(side), height: UInt32(side)) { _, _ in [1, 2, 3, 255] }
        XCTAssertEqual(full.count, Int(cursorSize + bitmapSize + side * side * 4), "CPW_CURSOR_META_SIZE(256)")
        XCTAssertTrue(try apply(&state, full))
        XCTAssertEqual(state.pixels.count, side * side)
        XCTAssertEqual(refusal(&state, region(position: (0, 0), width: UInt32(side + 1), height: 1)),
                       .tooLarge(width: UInt32(side + 1), height: 1))
    }

    func testOutOfBoundsRegionsAreRefusedAndChangeNothing() throws {
        var state = PointerState()
        XCTAssertTrue(try apply(&state, region(position: (7, 8), width: 1, height: 1) { _, _ in [9, 9, 9, 255] }))
        let before = (state.pixels, state.position!.x, state.position!.y)
        let bad: [([UInt8], PipeWireCursorError)] = [
            (Array(region(position: (0, 0), bitmapOffset: 0).prefix(cursorSize - 1)), .regionTooSmall(cursorSize - 1)),
            (region(size: cursorSize + bitmapSize - 1, position: (0, 0)),
             .bitmapOutsideRegion(offset: UInt32(cursorSize), region: cursorSize + bitmapSize - 1)),
            (region(size: 64, position: (0, 0), bitmapOffset: 4), .bitmapOutsideRegion(offset: 4, region: 64)),
            (region(size: 64, position: (0, 0), bitmapOffset: UInt32.max), .bitmapOutsideRegion(offset: UInt32.max, region: 64)),
            (region(size: cursorSize + bitmapSize + 15, position: (0, 0), width: 2, height: 2),
             .pixelsOutsideRegion(offset: UInt32(bitmapSize), stride: 8, height: 2, available: bitmapSize + 15)),
            (region(size: cursorSize + bitmapSize + 64, position: (0, 0), width: 2, height: 2, pixelOffset: UInt32.max),
             .pixelsOutsideRegion(offset: UInt32.max, stride: 8, height: 2, available: bitmapSize + 64)),
            (region(size: cursorSize + bitmapSize + 64, position: (0, 0), width: 2, height: 2, pixelOffset: 4),
             .pixelsOutsideRegion(offset: 4, stride: 8, height: 2, available: bitmapSize + 64)),
            (region(size: cursorSize + bitmapSize + 64, position: (0, 0), width: 4, height: 2, stride: 12), .badStride(stride: 12, width: 4)),
            (region(size: cursorSize + bitmapSize + 64, position: (0, 0), width: 1, height: 1, stride: -4), .badStride(stride: -4, width: 1)),
            (region(position: (0, 0), format: SPA_VIDEO_FORMAT_I420.rawValue, width: 1, height: 1),
             .unsupportedFormat(SPA_VIDEO_FORMAT_I420.rawValue)),
        ]
        for (bytes, expected) in bad {
            XCTAssertEqual(refusal(&state, bytes), expected)
            XCTAssertFalse(expected.description.isEmpty)
        }
        XCTAssertEqual(state.pixels, before.0, "refusals leave the picture")
        XCTAssertEqual(state.position?.x, before.1)
        XCTAssertEqual(state.position?.y, before.2)
    }

    // MARK: - Drawing

    /// A 4×4 arrow, opaque red on and below the diagonal (x ≤ y), transparent above it; hotspot at its tip (0, 0).
    private func arrow(at position: (Int32, Int32)) throws -> PointerState {
        var state = PointerState()
        XCTAssertTrue(try apply(&state, region(position: position, width: 4, height: 4) { x, y in x <= y ? [255, 0, 0, 255] : [0, 0, 0, 0] }))
        return state
    }

    /// A BGRx frame of `width × height` (one gray), a stride with 8 bytes of padding, and 64 guard bytes after it.
    private func frame(width: Int, height: Int) -> (bytes: [UInt8], stride: Int) {
        let stride = width * 4 + 8
        return ([UInt8](repeating: 0x40, count: stride * height + 64), stride)
    }

    private func draw(_ state: PointerState, into bytes: inout [UInt8], width: Int, height: Int, stride: Int) {
        guard let b = state.bounds else { return }  // as PortalCaptureLoop: nothing drawn without bounds
        bytes.withUnsafeMutableBytes { raw in
            state.pixels.withUnsafeBufferPointer { cursor in
                CursorOverlay.blend(cursor, width: b.width, at: CaptureRect(x: b.x, y: b.y, width: b.width, height: b.height),
                                    into: raw.baseAddress!, width: width, height: height, stride: stride,
                                    showing: CaptureRect(x: 0, y: 0, width: width, height: height))
            }
        }
    }

    /// The pixels (x, y) whose bytes differ from the background.
    private func changed(_ bytes: [UInt8], width: Int, height: Int, stride: Int) -> [[Int]] {
        var out: [[Int]] = []
        for y in 0..<height {
            for x in 0..<width where bytes[(y * stride + x * 4)..<(y * stride + x * 4 + 3)] != [0x40, 0x40, 0x40] {
                out.append([x, y])
            }
        }
        return out
    }

    func testTheArrowIsDrawnAtItsHotspotAndNothingElseChanges() throws {
        var (bytes, stride) = frame(width: 16, height: 12)
        draw(try arrow(at: (5, 3)), into: &bytes, width: 16, height: 12, stride: stride)
        var expected: [[Int]] = []
        for y in 0..<4 { for x in 0...y { expected.append([5 + x, 3 + y]) } }
        XCTAssertEqual(changed(bytes, width: 16, height: 12, stride: stride), expected.sorted { ($0[1], $0[0]) < ($1[1], $1[0]) })
        let at = 4 * stride + 6 * 4
        XCTAssertEqual(Array(bytes[at..<(at + 3)]), [0, 0, 255], "opaque red over the frame: B, G, R = 0, 0, 255")
        XCTAssertTrue(bytes[(stride * 12)...].allSatisfy { $0 == 0x40 }, "nothing past the frame")
        for y in 0..<12 { XCTAssertTrue(bytes[(y * stride + 64)..<(y * stride + 72)].allSatisfy { $0 == 0x40 }, "row padding untouched") }
    }

    func testTheArrowIsClippedAtTheRightAndBottomEdges() throws {
        var (bytes, stride) = frame(width: 16, height: 12)
        draw(try arrow(at: (14, 10)), into: &bytes, width: 16, height: 12, stride: stride)
        // Arrow cells (x ≤ y) that land inside 16 × 12: (0,0), (0,1), (1,1).
        XCTAssertEqual(changed(bytes, width: 16, height: 12, stride: stride), [[14, 10], [14, 11], [15, 11]])
        XCTAssertTrue(bytes[(stride * 12)...].allSatisfy { $0 == 0x40 }, "nothing written below the frame")
        for y in 0..<12 { XCTAssertTrue(bytes[(y * stride + 64)..<(y * stride + 72)].allSatisfy { $0 == 0x40 }, "nor right of it") }
        var (offLeft, _) = frame(width: 16, height: 12)
        draw(try arrow(at: (-2, -1)), into: &offLeft, width: 16, height: 12, stride: stride)
        XCTAssertEqual(changed(offLeft, width: 16, height: 12, stride: stride), [[0, 1], [0, 2], [1, 2]], "and at the top-left")
    }

    func testAHiddenPointerDrawsNothing() throws {
        var state = try arrow(at: (5, 3))
        XCTAssertTrue(try apply(&state, region(id: 0, position: (5, 3), bitmapOffset: 0)))
        var (bytes, stride) = frame(width: 16, height: 12)
        draw(state, into: &bytes, width: 16, height: 12, stride: stride)
        XCTAssertTrue(bytes.allSatisfy { $0 == 0x40 })
    }

    /// Where the pointer was drawn is copied back from the clean picture at the next take (the portal loop's
    /// restore), and reported as changed.
    func testTheStagingRestoresWhereThePointerWasDrawn() throws {
        let staging = try PortalStaging()
        let (width, height) = (16, 12)
        let picture = [UInt8](repeating: 0x40, count: width * height * 4)
        picture.withUnsafeBytes { raw in
            staging.put(PipeWirePicture(pixels: BGRXPixels(base: raw, width: width, height: height, stride: width * 4),
                                        damage: nil, receivedMicros: 1))
        }
        staging.putPointer(try arrow(at: (5, 3)))
        var work: [UInt8] = []
        let first = staging.take(into: &work)
        XCTAssertNil(first.changed)
        XCTAssertEqual(first.pointer?.bounds.map { [$0.x, $0.y, $0.width, $0.height] }, [5, 3, 4, 4])
        draw(first.pointer!, into: &work, width: width, height: height, stride: width * 4)
        XCTAssertNotEqual(work, picture)
        let second = staging.take(into: &work, restoring: CaptureRect(x: 5, y: 3, width: 4, height: 4))
        XCTAssertEqual(second.changed, [CaptureRect(x: 5, y: 3, width: 4, height: 4)])
        XCTAssertEqual(work, picture, "the pointer's old place is clean again")
        _ = staging.take(into: &work, restoring: CaptureRect(x: 14, y: 10, width: 4, height: 4))
        XCTAssertEqual(work, picture, "a restore past the edge is clipped")
    }

    /// The portal's capture loop over a staged picture: the first frame shows the pointer; a move alone (no new
    /// picture) makes a frame whose damage covers where it was and is, with the old place clean again.
    func testThePortalLoopDrawsThePointerAndRestoresItsOldPlace() throws {
        let (width, height) = (64, 48)
        let staging = try PortalStaging()
        let gray = [UInt8](repeating: 0x40, count: width * height * 4)
        gray.withUnsafeBytes { raw in
            staging.put(PipeWirePicture(pixels: BGRXPixels(base: raw, width: width, height: height, stride: width * 4),
                                        damage: nil, receivedMicros: 1))
        }
        // A 16×16 arrow (x ≤ y opaque red), hotspot at its tip.
        func arrow(at position: (Int32, Int32)) throws -> PointerState {
            var state = PointerState()
            XCTAssertTrue(try apply(&state, region(position: position, width: 16, height: 16) { x, y in x <= y ? [255, 0, 0, 255] : [0, 0, 0, 0] }))
            return state
        }
        staging.putPointer(try arrow(at: (5, 3)))
        let loop = try PortalCaptureLoop(configuration: CaptureConfiguration(), staging: staging,
                                         logger: Logger(component: "capture", threshold: .warning))
        let stop = try WakeSignal()
        var frames: [CapturedFrame] = []
        let moved = try arrow(at: (30, 20))
        let exit = loop.run(stop: stop, deliver: { frame in
            frames.append(frame)
            if frames.count == 1 { staging.putPointer(moved) } else { stop.request() }
        }, publish: { _ in })
        XCTAssertEqual(exit, .outcome(.stopped))
        XCTAssertEqual(frames.count, 2)
        XCTAssertNil(frames[0].damage, "the first frame is whole")
        let damage = try XCTUnwrap(frames[1].damage)
        for spot in [CaptureRect(x: 5, y: 3, width: 16, height: 16), CaptureRect(x: 30, y: 20, width: 16, height: 16)] {
            let missed = (spot.y..<min(spot.y + spot.height, height)).flatMap { y in
                (spot.x..<min(spot.x + spot.width, width)).filter { x in
                    !damage.contains { x >= $0.x && x < $0.x + $0.width && y >= $0.y && y < $0.y + $0.height }
                }
            }
            XCTAssertEqual(missed.count, 0, "damage \(damage) misses part of \(spot)")
        }
        func rgb(_ image: BGRXImage, _ x: Int, _ y: Int) -> [Int] {
            let at = y * image.stride + x * 4
            return [Int(image.bytes[at + 2]), Int(image.bytes[at + 1]), Int(image.bytes[at])]
        }
        func near(_ pixel: [Int], _ expected: [Int]) -> Bool { zip(pixel, expected).allSatisfy { abs($0 - $1) <= 12 } }
        let first = try TestImages.decode(frames[0].body)
        let second = try TestImages.decode(frames[1].body)
        // Points well inside the arrows (x ≤ y − 3) and well outside (x ≥ y + 4), away from JPEG's edge ringing.
        XCTAssertTrue(near(rgb(first, 5 + 2, 3 + 10), [255, 0, 0]), "the pointer in frame 1: \(rgb(first, 7, 13))")
        XCTAssertTrue(near(rgb(first, 5 + 12, 3 + 2), [0x40, 0x40, 0x40]), "its transparent part: \(rgb(first, 17, 5))")
        XCTAssertTrue(near(rgb(second, 5 + 2, 3 + 10), [0x40, 0x40, 0x40]), "the old place clean: \(rgb(second, 7, 13))")
        XCTAssertTrue(near(rgb(second, 30 + 2, 20 + 10), [255, 0, 0]), "the pointer moved: \(rgb(second, 32, 30))")
        XCTAssertTrue(near(rgb(second, 60, 2), [0x40, 0x40, 0x40]))
    }
}
