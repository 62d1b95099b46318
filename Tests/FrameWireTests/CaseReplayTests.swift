import FrameWire
import TestSupport
import XCTest

/// Replays every handed case (../shared/cases) and every golden stream (Protocol/golden) through the
/// decoder with every chunking, comparing each wire field of each frame, the end and the error kind.
/// (JPEG fields — jpegWidth/jpegHeight/decodeError — are compared by DumpToolTests through `inspect --json`.)
final class CaseReplayTests: XCTestCase {
    func testHandedCases() throws {
        let cases = try WireCase.load(from: TestPaths.sharedCases)
        for wireCase in cases { check(wireCase) }
    }

    func testGoldenStreams() throws {
        let cases = try WireCase.load(from: TestPaths.golden)
        XCTAssertGreaterThanOrEqual(cases.count, 5)
        for wireCase in cases { check(wireCase) }
    }

    /// Golden streams marked canonical are byte for byte what our encoder writes.
    func testCanonicalGoldenStreamsRoundTripThroughTheEncoder() throws {
        let canonical = try WireCase.load(from: TestPaths.golden).filter(\.canonical)
        XCTAssertGreaterThanOrEqual(canonical.count, 3)
        for wireCase in canonical {
            let result = decode(wireCase.bytes, .allAtOnce)
            let reencoded = result.frames.flatMap { FrameEncoder.encode($0) }
            XCTAssertEqual(reencoded, wireCase.bytes, "\(wireCase.name): re-encoded bytes differ")
        }
    }

    /// Every stream — handed or golden — decodes to the same frames after decode → encode → decode (a
    /// malformed `Buffer-Damage` is unknown damage, which the encoder writes as no field: its fault is gone).
    func testDecodedFramesSurviveReencoding() throws {
        let cases = try WireCase.load(from: TestPaths.sharedCases) + WireCase.load(from: TestPaths.golden)
        for wireCase in cases {
            let first = decode(wireCase.bytes, .allAtOnce).frames
            let again = decode(first.flatMap { FrameEncoder.encode($0) }, .allAtOnce)
            XCTAssertEqual(again.end, .eof, wireCase.name)
            let expected = first.map { frame in
                var header = frame.header
                header.damageFault = nil
                return header
            }
            XCTAssertEqual(again.frames.map(\.header), expected, wireCase.name)
            XCTAssertEqual(again.frames.map(\.body), first.map(\.body), wireCase.name)
        }
    }

    private func check(_ wireCase: WireCase, file: StaticString = #filePath, line: UInt = #line) {
        var reference: DecodeResult?
        for chunking in Chunking.standardSet {
            let context = "\(wireCase.name), \(chunking)"
            let result = decode(wireCase.bytes, chunking, file: file, line: line)
            XCTAssertEqual(result.end?.name, wireCase.end, "\(context): end", file: file, line: line)
            if case .error(let error) = result.end {
                XCTAssertEqual(error.kind, wireCase.errorKind, "\(context): error kind", file: file, line: line)
            } else {
                XCTAssertNil(wireCase.errorKind, "\(context): expected an error", file: file, line: line)
            }
            XCTAssertEqual(result.frames.count, wireCase.frames.count, "\(context): frame count", file: file, line: line)
            for (frame, expected) in zip(result.frames, wireCase.frames) {
                let h = frame.header
                XCTAssertEqual(frame.offset, expected.offset, "\(context): offset", file: file, line: line)
                XCTAssertEqual(h.contentLength, expected.contentLength, "\(context): contentLength", file: file, line: line)
                XCTAssertEqual(frame.body.count, expected.contentLength, "\(context): body size", file: file, line: line)
                XCTAssertEqual(h.bufferWidth, expected.bufferWidth, "\(context): bufferWidth", file: file, line: line)
                XCTAssertEqual(h.bufferHeight, expected.bufferHeight, "\(context): bufferHeight", file: file, line: line)
                XCTAssertEqual(h.orientation, expected.orientation, "\(context): orientation", file: file, line: line)
                XCTAssertEqual(h.rotation.degrees, expected.rotation, "\(context): rotation", file: file, line: line)
                XCTAssertEqual(h.format.rawValue, expected.format, "\(context): format", file: file, line: line)
                XCTAssertEqual(h.format == .i420 ? h.bodyColorRange.rawValue : nil, expected.colorRange, "\(context): colour range", file: file, line: line)
                XCTAssertEqual(h.memory.map { [Int($0.generation), $0.slot, Int($0.version)] }, expected.memory,
                               "\(context): memory", file: file, line: line)
                let capture = h.capture.map { Dictionary(uniqueKeysWithValues: $0.fields.map { ($0.name, $0.value) }) } ?? [:]
                XCTAssertEqual(capture, expected.capture, "\(context): Capture-* fields", file: file, line: line)
                XCTAssertEqual(h.damage.map { $0.map { [$0.x, $0.y, $0.width, $0.height] } }, expected.damage, "\(context): damage", file: file, line: line)
                XCTAssertEqual(h.damageFault?.kind, expected.damageFault, "\(context): damage fault", file: file, line: line)
                if let timestamp = expected.timestamp {
                    XCTAssertEqual(h.timestampMicros, timestamp, "\(context): timestamp", file: file, line: line)
                    XCTAssertEqual(h.sequence, expected.sequence, "\(context): sequence", file: file, line: line)
                }
                // The body is exactly the bytes after the header block in the stream.
                XCTAssertEqual(frame.headerLength, headerBlockLength(of: wireCase.bytes, at: frame.offset), "\(context): header length", file: file, line: line)
                let start = frame.offset + frame.headerLength
                XCTAssertTrue(frame.body[...] == wireCase.bytes[start..<(start + frame.body.count)],
                              "\(context): body bytes", file: file, line: line)
            }
            if let reference {
                XCTAssertEqual(result.frames, reference.frames, "\(context): differs from all-at-once", file: file, line: line)
            } else {
                reference = result
            }
        }
    }
}
