import Foundation
import Media
import TestSupport
@testable import VideoSource
import XCTest

/// The droppable cadence in the call's encoder loop (`EncoderReplay`: scheduler, rate policy, real libvpx,
/// virtual time) on a real screen recording: a viewer sent reference frames only decodes, at every frame it
/// gets, exactly what a viewer sent everything decodes — across new frames, refinements, repeats and keyframes.
final class DroppableCadenceTests: XCTestCase {
    /// window-drag (48 frames at 640×360, 15 fps, a terminal dragged across the screen), with an idle second
    /// and a half after frame 23 (the screen stops mid-drag: refinements and repeats happen there).
    private func dragWithPause() throws -> [VideoFrame] {
        var pictures = try EncoderReplay.pictures(
            fromDump: TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/window-drag.frames").path)
        for index in pictures.indices where index >= 24 { pictures[index].captureTimestampMicros += 1_500_000 }
        return pictures
    }

    private func configuration(kbps: Int, refinement: IdleRefinementPolicy = .standard) -> VideoSourceConfiguration {
        var configuration = VideoSourceConfiguration(socketPath: nil, bitrateKbps: kbps)
        configuration.refinement = refinement
        return configuration
    }

    /// Decodes `frames` at `indices` and returns the decoded picture bytes by index.
    private func decode(_ frames: [EncodedFrame], only indices: [Int]) throws -> [Int: [UInt8]] {
        let decoder = try VP8Decoder()
        var picture = I420Buffer()
        var shown: [Int: [UInt8]] = [:]
        for index in indices {
            try decoder.decode(frames[index].bytes, into: &picture)
            shown[index] = picture.bytes
        }
        return shown
    }

    /// The frames a thinned viewer gets: every reference frame; and that they decode as for everyone.
    private func assertThinnedViewerSeesTheSame(_ result: EncoderReplay.Result, _ context: String) throws {
        let frames = result.frames
        XCTAssertEqual(frames.count, result.records.count, context)
        let all = try decode(frames, only: Array(frames.indices))
        let references = frames.indices.filter { !frames[$0].isDroppable }
        let thinned = try decode(frames, only: references)
        let differing = references.filter { thinned[$0] != all[$0] }
        XCTAssertEqual(differing, [], "\(context): reference frames that decode differently without the droppable ones")
    }

    func testAThinnedViewerDecodesTheSamePicturesAcrossNewFramesRefinementsAndRepeats() throws {
        let pictures = try dragWithPause()
        let result = EncoderReplay.run(pictures: pictures, seconds: 10, configuration: configuration(kbps: 1000),
                                       events: [(0, .droppableCadence(3))], keepFrames: true)
        let records = result.records
        let droppable = records.filter(\.isDroppable)
        let kinds = Dictionary(grouping: records, by: \.kind).mapValues(\.count)
        let context = "\(records.count) frames \(kinds), \(droppable.count) droppable, period \(result.stats.droppablePeriod)"
        XCTAssertEqual(result.stats.droppablePeriod, 3, context)
        XCTAssertEqual(result.stats.droppable, droppable.count, context)
        XCTAssertGreaterThan(kinds[.refinement] ?? 0, 0, context)
        // Only new frames are droppable, never a keyframe; of 3 new frames in a row at most 2.
        XCTAssertTrue(droppable.allSatisfy { $0.kind == .newFrame && !$0.isKeyframe }, context)
        var run = 0
        for record in records {
            run = record.isDroppable ? run + 1 : 0
            XCTAssertLessThanOrEqual(run, 2, context)
        }
        let newFrames = records.filter { $0.kind == .newFrame }.count
        XCTAssertGreaterThanOrEqual(droppable.count, newFrames / 2, context)
        // Every pause ends on a reference frame: the thinned viewer gets the screen's last change.
        for (record, next) in zip(records, records.dropFirst()) where next.atMicros - record.atMicros >= 300_000 {
            XCTAssertFalse(record.isDroppable, "\(context): last frame before a pause at \(record.atMicros) µs")
        }
        try assertThinnedViewerSeesTheSame(result, context)
        print("cadence 1 in 3 on window-drag with a pause: \(context)")
    }

    func testWithoutRefinementAPauseAfterANonReferenceFrameGetsAReferenceRepeat() throws {
        let pictures = try dragWithPause()
        let result = EncoderReplay.run(pictures: pictures, seconds: 8, configuration: configuration(kbps: 1000, refinement: .off),
                                       events: [(0, .droppableCadence(4))], keepFrames: true)
        let records = result.records
        XCTAssertEqual(records.filter { $0.kind == .refinement }.count, 0)
        var pauses = 0
        for (record, next) in zip(records, records.dropFirst()) where next.atMicros - record.atMicros >= 300_000 {
            pauses += 1
            XCTAssertFalse(record.isDroppable, "last frame before a pause at \(record.atMicros) µs")
        }
        XCTAssertGreaterThan(pauses, 0)
        XCTAssertGreaterThan(records.filter { $0.kind == .repeatFrame }.count, 0, "the owed repeats")
        try assertThinnedViewerSeesTheSame(result, "refinement off, 1 in 4")
    }

    func testKeyframeRequestsAndTheCadenceGoingOffKeepTheStreamDecodable() throws {
        let pictures = try dragWithPause()
        let events: [(atMicros: UInt64, event: EncoderReplay.Event)] = [
            (0, .droppableCadence(6)), (2_100_000, .keyframeRequest), (5_000_000, .droppableCadence(nil)),
        ]
        let result = EncoderReplay.run(pictures: pictures, seconds: 8, configuration: configuration(kbps: 1000),
                                       events: events, keepFrames: true)
        let records = result.records
        XCTAssertGreaterThan(records.filter { $0.isDroppable && $0.atMicros < 5_000_000 }.count, 10)
        XCTAssertEqual(records.filter { $0.isDroppable && $0.atMicros >= 5_000_000 }.count, 0, "off from 5 s")
        XCTAssertEqual(result.stats.droppablePeriod, 0)
        XCTAssertGreaterThanOrEqual(records.filter(\.isKeyframe).count, 2)
        try assertThinnedViewerSeesTheSame(result, "1 in 6, a keyframe request, off at 5 s")
    }

    func testThePeriodKeepsTheFrameRateFloorForAThinnedViewer() throws {
        let pictures = try dragWithPause()
        // 640×360 at 0.05 bit per pixel: 350 kbps allows 30 fps (6 in 30 keeps 5 fps), 140 kbps about 12
        // (only 2 does); what the content is seen to cost may lower the cap further.
        for (kbps, asked) in [(350, 6), (140, 6), (1000, 9), (1000, 1)] {
            let result = EncoderReplay.run(pictures: pictures, seconds: 6, configuration: configuration(kbps: kbps),
                                           events: [(0, .droppableCadence(asked))])
            let cap = result.stats.fpsCap
            let expected = asked < 2 ? 0 : max(2, min(min(asked, 6), Int(cap / 5)))
            XCTAssertEqual(result.stats.droppablePeriod, expected, "\(kbps) kbps, asked \(asked), cap \(cap) fps")
            if kbps == 140 { XCTAssertEqual(result.stats.droppablePeriod, 2, "cap \(cap) fps") }
            if asked < 2 { XCTAssertEqual(result.records.filter(\.isDroppable).count, 0) }
        }
    }

    func testTheCadenceOffByDefault() throws {
        let pictures = try dragWithPause()
        let result = EncoderReplay.run(pictures: pictures, seconds: 3, configuration: configuration(kbps: 1000))
        XCTAssertEqual(result.records.filter(\.isDroppable).count, 0)
        XCTAssertEqual(result.stats.droppablePeriod, 0)
        XCTAssertEqual(result.stats.droppable, 0)
    }

    /// What the cadence costs the viewers that get every frame, on real content at the call's CBR targets:
    /// the same replay's bytes and the mean luma PSNR of its new frames (decoded against their source).
    func testWhatTheCadenceCostsOnRealContent() throws {
        let pictures = try EncoderReplay.pictures(
            fromDump: TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/window-drag.frames").path)
        var rows: [String] = []
        for kbps in [1000, 300] {
            var baseline: (bytes: Int, psnr: Double)?
            for period in [nil, 2, 3, 6] as [Int?] {
                let events: [(atMicros: UInt64, event: EncoderReplay.Event)] = period.map { [(0, .droppableCadence($0))] } ?? []
                let result = EncoderReplay.run(pictures: pictures, seconds: 6, configuration: configuration(kbps: kbps),
                                               events: events, keepFrames: true)
                let bytes = result.records.reduce(0) { $0 + $1.bytes }
                let psnr = try meanNewFramePSNR(result, pictures: pictures)
                if let baseline {
                    rows.append("\(kbps) kbps 1 in \(period!): \(bytes) B (×\(String(format: "%.3f", Double(bytes) / Double(baseline.bytes)))), "
                                + "\(String(format: "%.2f", psnr)) dB (\(String(format: "%+.2f", psnr - baseline.psnr)))")
                    // Below its target the encoder spends bytes to keep the quality (1000 kbps: measured ×1.24
                    // to ×1.47, same PSNR); at its target the quality goes (300 kbps: -3.3 to -5.8 dB).
                    XCTAssertLessThan(Double(bytes), Double(baseline.bytes) * 1.7, "\(kbps) kbps, 1 in \(period!)")
                    XCTAssertGreaterThan(psnr, baseline.psnr - 7, "\(kbps) kbps, 1 in \(period!)")
                } else {
                    baseline = (bytes, psnr)
                    rows.append("\(kbps) kbps off: \(bytes) B, \(String(format: "%.2f", psnr)) dB")
                }
            }
        }
        print("droppable cadence on window-drag 640x360, 6 s:\n  " + rows.joined(separator: "\n  "))
    }

    /// The mean luma PSNR of the replay's new frames against the pictures they were made from: the replay
    /// submits the pictures in a loop, in order, so each new frame's source is among the few after the last
    /// one matched (a picture the encoder skipped is passed over).
    private func meanNewFramePSNR(_ result: EncoderReplay.Result, pictures: [VideoFrame]) throws -> Double {
        let decoder = try VP8Decoder()
        var picture = I420Buffer()
        var sum = 0.0
        var count = 0
        var cursor = -1
        for (frame, record) in zip(result.frames, result.records) {
            try decoder.decode(frame.bytes, into: &picture)
            guard record.kind == .newFrame else { continue }
            var best = (index: (cursor + 1) % pictures.count, psnr: Self.lumaPSNR(picture, pictures[(cursor + 1) % pictures.count].picture))
            if best.psnr < 35 {
                for step in 2...4 {
                    let index = (cursor + step) % pictures.count
                    let psnr = Self.lumaPSNR(picture, pictures[index].picture)
                    if psnr > best.psnr { best = (index, psnr) }
                }
            }
            cursor = best.index
            sum += min(best.psnr, 99)
            count += 1
        }
        return count > 0 ? sum / Double(count) : 0
    }

    /// Luma PSNR over the visible samples, dB (TestSupport's `lumaPSNR` copies planes: too slow for hundreds
    /// of 640×360 pictures in a debug build).
    private static func lumaPSNR(_ a: I420Buffer, _ b: I420Buffer) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var sum = 0
        a.withUnsafePlanes { ay, _, _ in
            b.withUnsafePlanes { by, _, _ in
                for row in 0..<a.height {
                    let (pa, pb) = (ay.baseAddress! + row * a.yStride, by.baseAddress! + row * b.yStride)
                    for col in 0..<a.width {
                        let d = Int(pa[col]) - Int(pb[col])
                        sum += d * d
                    }
                }
            }
        }
        let mse = Double(sum) / Double(a.width * a.height)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }
}
