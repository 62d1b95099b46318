import FrameWire
import Glibc
import Media
import ScreencastSupport
@testable import VideoSource
import XCTest

/// The call's pipeline with `Buffer-Damage` on `BGRX-SHM` frames (Protocol/frame-wire.md §2.9): only the
/// damaged rectangles converted into a copy of the last picture when the frame is the very next
/// `Buffer-Sequence` — and the result always byte for byte the whole slot's conversion; a gap, another
/// generation, absent or malformed damage convert the whole slot; a malformed value is counted.
final class SharedPictureDamageTests: XCTestCase {
    private let logger = Logger(component: "test", threshold: .error)
    private let (width, height) = (64, 32)

    /// Writes `slot` with a seeded pattern, and `change` (pixels of another seed) inside each rectangle.
    private func paint(_ memory: SharedPicture, slot: Int, seed: Int, changes: [(DamageRect, Int)] = []) {
        let odd = memory.beginWrite(slot: slot)
        let pixels = memory.mutablePixels(slot: slot)
        for y in 0..<height {
            for x in 0..<width {
                let s = changes.first { $0.0.contains(DamageRect(x: x, y: y, width: 1, height: 1)) }?.1 ?? seed
                let offset = y * width * 4 + x * 4
                (pixels[offset], pixels[offset + 1], pixels[offset + 2], pixels[offset + 3]) =
                    (UInt8(truncatingIfNeeded: x * 7 + s * 31), UInt8(truncatingIfNeeded: y * 11 + s * 3), UInt8(truncatingIfNeeded: (x ^ y) + s * 57), 0)
            }
        }
        _ = memory.endWrite(slot: slot, began: odd)
    }

    private func frame(_ reader: SharedPicture, slot: Int, sequence: UInt64, damage: [DamageRect]?, generation: UInt64 = 3,
                       fault: BufferDamageError? = nil) -> Frame {
        Frame(header: FrameHeader(contentLength: 1, bufferWidth: width, bufferHeight: height, orientation: 1, sequence: sequence,
                                  format: .sharedBGRX, memory: .init(generation: generation, slot: slot, version: reader.version(slot: slot)),
                                  damage: damage, damageFault: fault), body: [0x0A], sharedPicture: reader)
    }

    /// The whole slot converted, to compare with.
    private func whole(_ memory: SharedPicture, slot: Int) throws -> [UInt8] {
        var picture = I420Buffer()
        try BGRXToYUV.convertToI420(BGRXPixels(base: memory.pixels(slot: slot), width: width, height: height, stride: memory.stride),
                                    range: .limited, into: &picture)
        return picture.bytes
    }

    func testDamageConvertsOnlyTheNamedRectanglesWhenTheLastPictureIsTheFrameBefore() throws {
        for recycling in [false, true] {
            let memory = try SharedPicture.create(width: width, height: height, generation: 3)
            let reader = try SharedPicture.map(descriptor: dup(memory.descriptor), generation: 3, width: width, height: height)
            let pool = FramePool()
            let pipeline = try WireFramePipeline(pool: pool, logger: logger, maximumDimension: 16384, maximumDecodePixels: 1 << 24)
            func process(_ frame: Frame, slot: Int, _ context: String) throws {
                guard case .success(let video) = pipeline.process(frame, captureTimestampMicros: 1) else { return XCTFail("\(context): refused") }
                XCTAssertTrue(video.picture.bytes == (try whole(memory, slot: slot)), "\(context) (recycling \(recycling)): the whole slot's conversion")
                if recycling { pool.recycle(video.picture) }
            }
            paint(memory, slot: 0, seed: 1)
            try process(frame(reader, slot: 0, sequence: 10, damage: nil), slot: 0, "first")
            XCTAssertEqual(pipeline.partialConversions, 0)
            // Odd edges from another writer are grown to even ones.
            let change = DamageRect(x: 9, y: 5, width: 11, height: 7)
            paint(memory, slot: 1, seed: 1, changes: [(change, 2)])
            try process(frame(reader, slot: 1, sequence: 11, damage: [change]), slot: 1, "damaged")
            XCTAssertEqual(pipeline.partialConversions, 1)
            // Two rectangles, one reaching the picture's corner.
            let corner = DamageRect(x: 50, y: 20, width: 14, height: 12)
            paint(memory, slot: 0, seed: 1, changes: [(change, 2), (DamageRect(x: 0, y: 0, width: 4, height: 2), 3), (corner, 4)])
            try process(frame(reader, slot: 0, sequence: 12, damage: [DamageRect(x: 0, y: 0, width: 4, height: 2), corner]), slot: 0, "two")
            XCTAssertEqual(pipeline.partialConversions, 2)
            // A keepalive: nothing to convert.
            try process(frame(reader, slot: 0, sequence: 13, damage: []), slot: 0, "keepalive")
            XCTAssertEqual(pipeline.partialConversions, 3)
            // More than half the picture damaged: the whole slot (cheaper than copy + convert).
            let most = DamageRect(x: 0, y: 0, width: 40, height: 32)
            paint(memory, slot: 1, seed: 1, changes: [(most, 8)])
            try process(frame(reader, slot: 1, sequence: 14, damage: [most]), slot: 1, "mostly damaged")
            XCTAssertEqual(pipeline.partialConversions, 3)
            let half = DamageRect(x: 0, y: 0, width: 32, height: 32)
            paint(memory, slot: 0, seed: 1, changes: [(half, 9), (most, 8)])
            try process(frame(reader, slot: 0, sequence: 15, damage: [half]), slot: 0, "half damaged")
            XCTAssertEqual(pipeline.partialConversions, 4)
            // A gap in the sequence (a frame dropped on the way): the damage would lie, so the whole slot.
            paint(memory, slot: 1, seed: 5)
            try process(frame(reader, slot: 1, sequence: 17, damage: [change]), slot: 1, "after a gap")
            XCTAssertEqual(pipeline.partialConversions, 4)
            // Another generation: the whole slot; then absent damage: the whole slot.
            paint(memory, slot: 0, seed: 6)
            try process(frame(reader, slot: 0, sequence: 18, damage: [change], generation: 4), slot: 0, "new generation")
            paint(memory, slot: 1, seed: 7)
            try process(frame(reader, slot: 1, sequence: 19, damage: nil), slot: 1, "no damage")
            XCTAssertEqual(pipeline.partialConversions, 4)
            XCTAssertEqual(pipeline.damageFaults, 0)
        }
    }

    func testMalformedDamageIsCountedAndTheFrameTakenWhole() throws {
        let memory = try SharedPicture.create(width: width, height: height, generation: 3)
        let reader = try SharedPicture.map(descriptor: dup(memory.descriptor), generation: 3, width: width, height: height)
        let pipeline = try WireFramePipeline(pool: FramePool(), logger: logger, maximumDimension: 16384, maximumDecodePixels: 1 << 24)
        paint(memory, slot: 0, seed: 1)
        guard case .success = pipeline.process(frame(reader, slot: 0, sequence: 1, damage: nil), captureTimestampMicros: 1) else { return XCTFail() }
        paint(memory, slot: 1, seed: 2)
        let fault = BufferDamageError.outsideBuffer(index: 0, value: "\"0,0,65,1\"", width: 64, height: 32)
        guard case .success(let video) = pipeline.process(frame(reader, slot: 1, sequence: 2, damage: nil, fault: fault), captureTimestampMicros: 1)
        else { return XCTFail("a malformed damage must not fail the frame") }
        XCTAssertTrue(video.picture.bytes == (try whole(memory, slot: 1)))
        XCTAssertEqual(pipeline.damageFaults, 1)
        XCTAssertEqual(pipeline.partialConversions, 0)
    }
}

/// `/stats` `screen.damage` (Protocol/frame-wire.md §2.9): frames with damage, the mean share changed,
/// faults and partial conversions, as counted by the recorder.
final class DamageStatsTests: XCTestCase {
    func testScreenDamageInTheStatsJSON() throws {
        let recorder = StatsRecorder(fallback: nil, startedAt: 0)
        let before = recorder.snapshot(now: 1, queueDepth: 0)
        XCTAssertNil(before.meanDamagedFraction)
        XCTAssertTrue(before.json.serialized.contains("\"damage\":{\"frames\":0,\"meanFraction\":null,\"faults\":0,\"partialConversions\":0}"),
                      before.json.serialized)
        recorder.received(capture: nil, damagedFraction: 0.25)
        recorder.received(capture: nil, damagedFraction: 0.0)
        recorder.received(capture: nil)  // damage unknown: not in the mean
        recorder.damage(faults: 1, partialConversions: 2)
        let stats = recorder.snapshot(now: 2, queueDepth: 0)
        XCTAssertEqual(stats.received, 3)
        XCTAssertEqual(stats.damageFrames, 2)
        XCTAssertEqual(stats.meanDamagedFraction, 0.125)
        XCTAssertTrue(stats.json.serialized.contains("\"damage\":{\"frames\":2,\"meanFraction\":0.125,\"faults\":1,\"partialConversions\":2}"),
                      stats.json.serialized)
    }
}
