import Foundation
import Media
import TestSupport
@testable import VideoSource
import XCTest

/// What the call's encoder loop emits against its target on real screen recordings (Tests/Fixtures),
/// with real libvpx and virtual time (`EncoderReplay`): everything counted (new frames, refinements,
/// repeats, keyframes). The bench prints the same numbers (`screencast-bench --stage ratecontrol`).
final class RateControlTests: XCTestCase {
    static let fixtures = ["terminal-scroll", "window-drag", "static-desktop"]
    /// Over any 2-s window (the first keyframe left out), the output may exceed the target by this much.
    static let tolerance = 1.15

    /// The fixture at 1280×720 (the size the issue measured; the recordings are 640×360).
    private func pictures(_ name: String) throws -> [VideoFrame] {
        try EncoderReplay.pictures(fromDump: TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/\(name).frames").path,
                                   scaledTo: PictureSize(width: 1280, height: 720))
    }

    private func replay(
        _ pictures: [VideoFrame], kbps: Int, seconds: Double = 12, events: [(atMicros: UInt64, event: EncoderReplay.Event)] = []
    ) -> EncoderReplay.Result {
        EncoderReplay.run(pictures: pictures, seconds: seconds,
                          configuration: VideoSourceConfiguration(socketPath: nil, bitrateKbps: kbps), events: events)
    }

    func testEveryTargetIsHeldOnRealScreenContent() throws {
        for name in Self.fixtures {
            let pictures = try pictures(name)
            for kbps in [2000, 1000, 500, 300] {
                let analysis = EncodedRateAnalysis(replay(pictures, kbps: kbps))
                let context = "\(name) at \(kbps) kbps: mean \(Int(analysis.meanKbps)), worst 2 s \(Int(analysis.worstWindowKbps)), \(analysis.framesByKind)"
                XCTAssertLessThanOrEqual(analysis.worstWindowKbps, Double(kbps) * Self.tolerance, context)
                XCTAssertGreaterThan(analysis.framesByKind[.newFrame] ?? 0, 0, context)
            }
        }
    }

    func testRequestedKeyframesStayUnderTheirCap() throws {
        // A request every 100 ms: each keyframe after the first within `keyframeSeconds` of the target.
        let pictures = try pictures("terminal-scroll")
        for kbps in [2000, 1000, 500] {
            let storm = stride(from: 500_000, to: 10_000_000, by: 100_000).map { (atMicros: UInt64($0), event: EncoderReplay.Event.keyframeRequest) }
            let analysis = EncodedRateAnalysis(replay(pictures, kbps: kbps, seconds: 10, events: storm))
            let cap = Double(kbps) * 1000 / 8 * VP8RateControl.keyframeSeconds
            XCTAssertGreaterThan(analysis.keyframes, 4, "\(kbps) kbps")
            XCTAssertLessThanOrEqual(Double(analysis.largestLaterKeyframeBytes), cap, "\(kbps) kbps: \(analysis.keyframes) keyframes")
        }
    }

    func testAStormOfKeyframeRequestsYieldsAtMostOneKeyframeASecond() throws {
        let pictures = try pictures("window-drag")
        let storm = stride(from: 0, to: 10_000_000, by: 100_000).map { (atMicros: UInt64($0), event: EncoderReplay.Event.keyframeRequest) }
        XCTAssertEqual(storm.count, 100)
        let result = replay(pictures, kbps: 1000, seconds: 10, events: storm)
        let keyframes = result.records.filter(\.isKeyframe)
        // The first frame's keyframe, then at most one a second (the spacing may widen to 2 s, never shrink).
        XCTAssertLessThanOrEqual(keyframes.count, 1 + 10)
        XCTAssertGreaterThanOrEqual(keyframes.count, 1 + 4, "requests are served, not dropped")
        for (a, b) in zip(keyframes, keyframes.dropFirst()) {
            XCTAssertGreaterThanOrEqual(b.atMicros - a.atMicros, 1_000_000)
        }
        XCTAssertEqual(result.stats.keyframeRequests, 100)
        // Every request but those that made a keyframe was coalesced (the first, at 0 µs with the first
        // picture, made the first keyframe); the last one may still be waiting for its slot at the end.
        let coalesced = result.stats.keyframeRequestsCoalesced
        XCTAssertTrue([100 - keyframes.count, 100 - keyframes.count - 1].contains(coalesced), "\(keyframes.count) keyframes, \(coalesced) coalesced")
    }

    func testTheFrameRateFallsBeforeTheQuantizerFloorRises() throws {
        // window-drag moves at 13.5 new frames a second: the cap thins it as the target falls, with the
        // floor still at the configured 12; only far below does the floor rise, at 5 fps.
        let pictures = try pictures("window-drag")
        var rows: [(kbps: Int, fps: Double, stats: VideoSourceStats)] = []
        for kbps in [2000, 500, 300, 100] {
            let result = replay(pictures, kbps: kbps, seconds: 10)
            rows.append((kbps, EncodedRateAnalysis(result).newFramesPerSecond, result.stats))
        }
        let described = rows.map { "\($0.kbps): \($0.fps) fps, cap \($0.stats.fpsCap), q \($0.stats.minQuantizer)-\($0.stats.maxQuantizer)" }
        XCTAssertGreaterThanOrEqual(rows[0].fps, 13, "\(described)")
        XCTAssertEqual(rows[0].stats.fpsCap, 30)
        XCTAssertEqual(rows[1].stats.fpsCap, 10, "\(described)")  // 500 000 / (921 600 × 0.05)
        XCTAssertLessThanOrEqual(rows[1].fps, 10.1, "\(described)")
        XCTAssertEqual(rows[2].stats.fpsCap, 6, "\(described)")
        XCTAssertLessThanOrEqual(rows[2].fps, 6.1, "\(described)")
        XCTAssertEqual([rows[0], rows[1], rows[2]].map(\.stats.minQuantizer), [12, 12, 12], "\(described)")
        XCTAssertEqual(rows[3].stats.fpsCap, 5, "\(described)")
        XCTAssertGreaterThan(rows[3].stats.minQuantizer, 12, "\(described)")
        XCTAssertEqual(rows[3].stats.maxQuantizer, 63)
        XCTAssertGreaterThan(rows[3].fps, 3, "\(described)")
    }

    func testTheBudgetFollowsATargetThatFalls() throws {
        // 2000 kbps, then 300 from 6 s on: from 8 s (a 2-s window later) the output holds 300.
        let pictures = try pictures("terminal-scroll")
        let result = replay(pictures, kbps: 2000, seconds: 16, events: [(6_000_000, .bitrate(300))])
        let late = result.records.filter { $0.atMicros >= 8_000_000 }
        let kbps = Double(late.reduce(0) { $0 + $1.bytes }) * 8 / 1000 / 8
        XCTAssertLessThanOrEqual(kbps, 300 * Self.tolerance, "after the fall: \(kbps) kbps")
        XCTAssertGreaterThan(late.filter { $0.kind == .newFrame }.count, 0)
    }
}

