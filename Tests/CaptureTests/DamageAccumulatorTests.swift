@testable import Capture
import FrameWire
import XCTest

/// The sans-I/O damage bookkeeping of the capture: screen reports → a frame's `Buffer-Damage` rectangles
/// (offset, scaled outwards, even-aligned, bounded), and which parts of a shared slot a frame must write.
final class DamageAccumulatorTests: XCTestCase {
    private let area = CaptureRect(x: 100, y: 50, width: 640, height: 360)

    func testUnknownAtFirstThenTheReportsOfEachFrame() {
        var changes = DamageAccumulator()
        changes.add(CaptureRect(x: 110, y: 60, width: 4, height: 4), area: area)
        XCTAssertNil(changes.take(area: area, frameWidth: 640, frameHeight: 360), "the first frame is whole")
        XCTAssertEqual(changes.take(area: area, frameWidth: 640, frameHeight: 360), [], "nothing reported: nothing changed")
        changes.add(CaptureRect(x: 111, y: 61, width: 5, height: 3), area: area)
        changes.add(CaptureRect(x: 0, y: 0, width: 50, height: 50), area: area)  // outside the area: ignored
        changes.add(CaptureRect(x: 700, y: 400, width: 100, height: 100), area: area)  // clipped to it
        XCTAssertEqual(changes.take(area: area, frameWidth: 640, frameHeight: 360),
                       [DamageRect(x: 10, y: 10, width: 6, height: 4), DamageRect(x: 600, y: 350, width: 40, height: 10)])
        changes.add(CaptureRect(x: 110, y: 60, width: 4, height: 4), area: area)
        changes.invalidate()
        XCTAssertNil(changes.take(area: area, frameWidth: 640, frameHeight: 360), "after invalidate: whole")
    }

    func testScaledFramesGrowTheRectanglesByTheFilterReach() {
        var changes = DamageAccumulator()
        _ = changes.take(area: area, frameWidth: 320, frameHeight: 180)
        changes.add(CaptureRect(x: 100 + 101, y: 50 + 33, width: 10, height: 10), area: area)
        // 101/2 = 50 − 2 = 48; (111·320 + 639)/640 = 56 + 2 = 58; 33/2 = 16 − 2 = 14; (43·180 + 359)/360 = 22 + 2 = 24.
        XCTAssertEqual(changes.take(area: area, frameWidth: 320, frameHeight: 180), [DamageRect(x: 48, y: 14, width: 10, height: 10)])
    }

    func testManyReportsBecomeTheirBoundingBox() {
        var changes = DamageAccumulator()
        _ = changes.take(area: area, frameWidth: 640, frameHeight: 360)
        for index in 0...DamageAccumulator.maxPending {
            changes.add(CaptureRect(x: 100 + index * 8, y: 50 + index % 3, width: 2, height: 2), area: area)
        }
        XCTAssertEqual(changes.take(area: area, frameWidth: 640, frameHeight: 360),
                       [DamageRect(x: 0, y: 0, width: DamageAccumulator.maxPending * 8 + 2, height: 4)])
        // Within the limit but beyond the header's 16 rectangles: their bounding box too.
        for index in 0...BufferDamage.maxRectangles { changes.add(CaptureRect(x: 100 + index * 8, y: 50, width: 2, height: 2), area: area) }
        XCTAssertEqual(changes.take(area: area, frameWidth: 640, frameHeight: 360),
                       [DamageRect(x: 0, y: 0, width: BufferDamage.maxRectangles * 8 + 2, height: 2)])
    }

    func testSharedSlotsGetWhatTheyLack() {
        var refresh = SharedSlotRefresh()
        let a = DamageRect(x: 0, y: 0, width: 4, height: 4), b = DamageRect(x: 10, y: 10, width: 2, height: 2)
        XCTAssertNil(refresh.regions(slot: 0, damage: nil, width: 64, height: 32), "slot 0 empty")
        XCTAssertNil(refresh.regions(slot: 1, damage: [a], width: 64, height: 32), "slot 1 empty")
        XCTAssertEqual(refresh.regions(slot: 0, damage: [b], width: 64, height: 32), [a, b], "the last frame's and this one's")
        XCTAssertEqual(refresh.regions(slot: 1, damage: [], width: 64, height: 32), [b])
        XCTAssertNil(refresh.regions(slot: 0, damage: [DamageRect(x: 0, y: 0, width: 40, height: 32)], width: 64, height: 32),
                     "more than half the picture: the whole slot")
        XCTAssertNil(refresh.regions(slot: 1, damage: [a], width: 64, height: 32), "after a whole-slot frame the last damage is too large")
        refresh.reset()
        XCTAssertNil(refresh.regions(slot: 0, damage: [a], width: 64, height: 32), "a new memory: empty slots")
    }
}
