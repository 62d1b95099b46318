import Media
import TestSupport
import XCTest

/// Non-reference VP8 frames (`VP8_EFLAG_NO_UPD_LAST | _GF | _ARF | VP8_EFLAG_NO_UPD_ENTROPY`) with real
/// libvpx, in memory: a decoder that skips them shows, at every frame it decodes, exactly what a decoder that
/// got everything shows, which is what lets a sender thin a slow viewer's frames without a keyframe.
final class VP8DroppableTests: XCTestCase {
    private static let (width, height) = (320, 240)

    /// A moving picture (`makeScreenPicture`: a window dragged 13 × 7 px a frame over text) encoded with one
    /// reference frame in `period` (nil: every frame a reference frame, as without the cadence;
    /// `errorResilient` then turns on what the first non-reference frame would).
    private func encodeSequence(
        frames: Int, period: Int?, bitrateKbps: Int = 600, quantizers: (min: Int, max: Int)? = nil,
        errorResilient: Bool = false
    ) throws -> [EncodedFrame] {
        var settings = VP8EncoderSettings(width: Self.width, height: Self.height, bitrateKbps: bitrateKbps)
        if let quantizers {
            settings.minQuantizer = quantizers.min
            settings.maxQuantizer = quantizers.max
        }
        let encoder = try VP8Encoder(settings: settings)
        if errorResilient { try encoder.setErrorResilient(true) }
        var out: [EncodedFrame] = []
        for index in 0..<frames {
            let picture = makeScreenPicture(width: Self.width, height: Self.height, phase: index)
            let reference = period.map { index % $0 == 0 } ?? true
            let frame = VideoFrame(picture: picture, captureTimestampMicros: 1_000_000 + UInt64(index) * 33_333)
            out.append(try XCTUnwrap(try encoder.encode(frame, allowDrop: false, updatesReferences: reference), "frame \(index)"))
        }
        return out
    }

    /// Decodes the frames at `indices` (in order) and returns each decoded picture's bytes by index.
    private func decode(_ frames: [EncodedFrame], only indices: [Int]) throws -> [Int: [UInt8]] {
        let decoder = try VP8Decoder()
        var picture = I420Buffer()
        var shown: [Int: [UInt8]] = [:]
        for index in indices {
            XCTAssertTrue(try decoder.decode(frames[index].bytes, into: &picture), "frame \(index) shows a picture")
            shown[index] = picture.bytes
        }
        return shown
    }

    /// 96 frames: libvpx's one-pass CBR refreshes its golden frame every 40 frames at 320×240 (frames 40 and
    /// 80 are non-reference with periods 3 and 6). Without error-resilient mode that refresh lands on a
    /// non-reference frame and frames 42, 45, … then decode differently when it is skipped (measured).
    func testSkippingNonReferenceFramesLeavesEveryOtherFrameBitExact() throws {
        for period in [2, 3, 6] {
            let frames = try encodeSequence(frames: 96, period: period)
            let all = try decode(frames, only: Array(frames.indices))
            let referenceIndices = frames.indices.filter { !frames[$0].isDroppable }
            XCTAssertEqual(referenceIndices, Array(stride(from: 0, to: 96, by: period)), "period \(period)")
            let thinned = try decode(frames, only: referenceIndices)
            let differing = referenceIndices.filter { thinned[$0] != all[$0] }
            XCTAssertEqual(differing, [], "period \(period): frames that differ when the droppable frames are skipped")
            // The skipped frames were real pictures of their own (the viewer that got them saw the motion).
            for index in frames.indices where frames[index].isDroppable {
                XCTAssertTrue(all[index] != all[index - 1], "period \(period): frame \(index) moved")
            }
        }
    }

    /// The control: the same skipping with every frame a reference frame corrupts what follows, so the
    /// comparison above would catch a frame that is referenced after all.
    func testSkippingReferenceFramesIsCaught() throws {
        let frames = try encodeSequence(frames: 24, period: nil)
        XCTAssertFalse(frames.contains(where: \.isDroppable))
        let all = try decode(frames, only: Array(frames.indices))
        let kept = Array(stride(from: 0, to: 24, by: 3))
        let thinned = try decode(frames, only: kept)
        let differing = kept.dropFirst().filter { thinned[$0] != all[$0] }
        XCTAssertEqual(differing, Array(kept.dropFirst()), "every frame after the first skip decodes differently")
    }

    func testNonReferenceFramesAreNeverKeyframesAndKeyframesNeverDroppable() throws {
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(width: 160, height: 96, bitrateKbps: 300))
        var kinds: [String] = []
        for index in 0..<8 {
            let picture = makeScreenPicture(width: 160, height: 96, phase: index)
            let frame = VideoFrame(picture: picture, captureTimestampMicros: UInt64(index) * 33_333)
            // Asked for non-reference every time: the first frame (a new context) and the forced keyframe stay
            // keyframes and reference frames.
            let out = try XCTUnwrap(try encoder.encode(frame, forceKeyframe: index == 4, updatesReferences: false))
            XCTAssertFalse(out.isKeyframe && out.isDroppable, "frame \(index)")
            kinds.append(out.isKeyframe ? "K" : out.isDroppable ? "d" : "R")
        }
        XCTAssertEqual(kinds.joined(), "KdddKddd")
        // A size change re-creates the context: its first frame is a keyframe whatever was asked.
        let resized = VideoFrame(picture: makeScreenPicture(width: 176, height: 96), captureTimestampMicros: 400_000)
        let first = try XCTUnwrap(try encoder.encode(resized, updatesReferences: false))
        XCTAssertTrue(first.isKeyframe)
        XCTAssertFalse(first.isDroppable)
        // And an EncodedFrame made by hand cannot be a droppable keyframe.
        XCTAssertFalse(EncodedFrame(bytes: [1], isKeyframe: true, captureTimestampMicros: 0, width: 1, height: 1, isDroppable: true).isDroppable)
    }

    func testWithTheCadenceOffNothingIsDroppable() throws {
        let frames = try encodeSequence(frames: 12, period: nil)
        XCTAssertEqual(frames.filter(\.isDroppable).count, 0)
        XCTAssertEqual(frames.filter(\.isKeyframe).count, 1)
    }

    /// What the cadence costs the viewers that get every frame: at a fixed quantizer (q 24 for every frame)
    /// the bytes of the same 48 moving frames with one reference frame in N, against none (printed; bounded).
    func testTheCadenceCostsBytesAtAFixedQuantizer() throws {
        let fixed = (min: 24, max: 24)
        let base = try encodeSequence(frames: 48, period: nil, bitrateKbps: 20_000, quantizers: fixed)
        let baseBytes = base.dropFirst().reduce(0) { $0 + $1.bytes.count }
        let resilient = try encodeSequence(frames: 48, period: nil, bitrateKbps: 20_000, quantizers: fixed, errorResilient: true)
        let resilientBytes = resilient.dropFirst().reduce(0) { $0 + $1.bytes.count }
        var rows = ["off: \(baseBytes) B", "error-resilient only: \(resilientBytes) B (×\(String(format: "%.2f", Double(resilientBytes) / Double(baseBytes))))"]
        for period in [2, 3, 6] {
            let frames = try encodeSequence(frames: 48, period: period, bitrateKbps: 20_000, quantizers: fixed)
            XCTAssertEqual(frames.map(\.quantizer).dropFirst().filter { $0 != 24 }, [], "a fixed quantizer")
            let bytes = frames.dropFirst().reduce(0) { $0 + $1.bytes.count }
            let ratio = Double(bytes) / Double(baseBytes)
            rows.append("1 in \(period): \(bytes) B (×\(String(format: "%.2f", ratio)))")
            XCTAssertGreaterThan(ratio, 1, "prediction from an older picture costs bytes")
            XCTAssertLessThan(ratio, 3, "period \(period)")
        }
        print("droppable cadence, 320x240 moving window, interframes at q24: \(rows.joined(separator: ", "))")
    }
}
