import FrameWire
import XCTest

/// Protocol/frame-wire.md §2.9: `Buffer-Damage` — read with every chunking (``decodeEveryWay(_:_:file:line:)``:
/// all at once, byte by byte, random feeds, socket reads) and cut at every byte; a malformed value never fails
/// or holds up the frame (delivered with its damage unknown and the fault named); every limit tested.
final class DamageHeaderTests: XCTestCase {
    /// A 16×8 JPEG-framed message with these `Buffer-Damage` lines.
    private func damaged(_ values: [String]) -> [UInt8] { validMessage(extra: values.map { "Buffer-Damage: \($0)" }) }

    func testValuesAreRead() {
        let many = (0..<BufferDamage.maxRectangles).map { DamageRect(x: $0, y: $0 % 8, width: 1, height: 1) }
        let cases: [(String, [DamageRect])] = [
            ("0,0,16,8", [.whole(width: 16, height: 8)]),
            ("none", []),
            (" \tNoNe \t", []),
            ("1,2,3,4;5,0,11,8", [DamageRect(x: 1, y: 2, width: 3, height: 4), DamageRect(x: 5, y: 0, width: 11, height: 8)]),
            ("\t0015,007,01,1 ", [DamageRect(x: 15, y: 7, width: 1, height: 1)]),
            ("0,0,4,4;2,2,4,4", [DamageRect(x: 0, y: 0, width: 4, height: 4), DamageRect(x: 2, y: 2, width: 4, height: 4)]),
            (many.map(\.description).joined(separator: ";"), many),
        ]
        for (value, rects) in cases {
            let result = decodeEveryWay(damaged([value]), value)
            XCTAssertEqual(result.end, .eof, value)
            XCTAssertEqual(result.frames.count, 1, value)
            XCTAssertEqual(result.frames.first?.header.damage, rects, value)
            XCTAssertNil(result.frames.first?.header.damageFault, value)
        }
        // Repeated with the same bytes is one value; the name in any case.
        let repeated = decodeEveryWay(validMessage(extra: ["buffer-DAMAGE: 1,1,2,2", "Buffer-Damage: 1,1,2,2"]))
        XCTAssertEqual(repeated.frames.first?.header.damage, [DamageRect(x: 1, y: 1, width: 2, height: 2)])
    }

    func testAbsentMeansEverythingMayHaveChanged() {
        let result = decodeEveryWay(validMessage())
        XCTAssertNil(result.frames.first?.header.damage)
        XCTAssertNil(result.frames.first?.header.damageFault)
        XCTAssertEqual(result.frames.first?.header.damagedFraction, 1)
    }

    /// Every refusal: the frame is still delivered, damage unknown, the fault named; the next frame follows.
    func testMalformedValuesDeliverTheFrameWithDamageUnknown() {
        let tooMany = Array(repeating: "0,0,1,1", count: BufferDamage.maxRectangles + 1).joined(separator: ";")
        let cases: [([String], BufferDamageError)] = [
            ([""], .syntax(index: 0, value: "\"\"")),
            (["1,2,3"], .syntax(index: 0, value: "\"1,2,3\"")),
            (["1,2,3,4,5"], .syntax(index: 0, value: "\"1,2,3,4,5\"")),
            (["1,2,3,4;"], .syntax(index: 1, value: "\"\"")),
            (["1,2,3,4 ; 5,0,1,1"], .syntax(index: 0, value: "\"1,2,3,4 \"")),
            (["1, 2,3,4"], .syntax(index: 0, value: "\"1, 2,3,4\"")),
            (["-1,0,1,1"], .syntax(index: 0, value: "\"-1,0,1,1\"")),
            (["+1,0,1,1"], .syntax(index: 0, value: "\"+1,0,1,1\"")),
            (["0x1,0,1,1"], .syntax(index: 0, value: "\"0x1,0,1,1\"")),
            (["none;0,0,1,1"], .syntax(index: 0, value: "\"none\"")),
            (["nothing"], .syntax(index: 0, value: "\"nothing\"")),
            (["0,0,1,1;1\u{7F},0,1,1"], .syntax(index: 1, value: "\"1\\x7f,0,1,1\"")),
            (["18446744073709551616,0,1,1"], .syntax(index: 0, value: "\"18446744073709551616,0,1,1\"")),
            (["0,0,0,1"], .emptyRectangle(index: 0)),
            (["0,0,1,1;3,3,2,0"], .emptyRectangle(index: 1)),
            (["0,0,17,1"], .outsideBuffer(index: 0, value: "\"0,0,17,1\"", width: 16, height: 8)),
            (["16,0,1,1"], .outsideBuffer(index: 0, value: "\"16,0,1,1\"", width: 16, height: 8)),
            (["15,7,2,1"], .outsideBuffer(index: 0, value: "\"15,7,2,1\"", width: 16, height: 8)),
            (["0,8,1,1"], .outsideBuffer(index: 0, value: "\"0,8,1,1\"", width: 16, height: 8)),
            (["18446744073709551615,0,1,1"], .outsideBuffer(index: 0, value: "\"18446744073709551615,0,1,1\"", width: 16, height: 8)),
            (["1,1,18446744073709551615,1"], .outsideBuffer(index: 0, value: "\"1,1,18446744073709551615,1\"", width: 16, height: 8)),
            ([tooMany], .tooManyRectangles(count: BufferDamage.maxRectangles + 1, limit: BufferDamage.maxRectangles)),
            (["0,0,1,1", "0,0,2,2"], .conflicting),
            (["none", "0,0,1,1"], .conflicting),
        ]
        for (values, fault) in cases {
            let context = values.joined(separator: " | ")
            let result = decodeEveryWay(damaged(values) + validMessage(extra: ["Buffer-Damage: 0,0,2,2"]), context)
            XCTAssertEqual(result.end, .eof, context)
            XCTAssertEqual(result.frames.count, 2, context)
            XCTAssertNil(result.frames.first?.header.damage, context)
            XCTAssertEqual(result.frames.first?.header.damageFault, fault, context)
            XCTAssertEqual(result.frames.first?.body.count, 4, context)
            XCTAssertEqual(result.frames.last?.header.damage, [DamageRect(x: 0, y: 0, width: 2, height: 2)], context)
            XCTAssertNil(result.frames.last?.header.damageFault, context)
        }
    }

    /// Cut anywhere in or after the field: truncated, never a frame, never a hang.
    func testTruncatedAtEveryByte() {
        let bytes = damaged(["1,2,3,4;5,0,11,8"])
        for cut in 1..<bytes.count {
            let result = decode(Array(bytes[..<cut]), .oneByteAtATime)
            XCTAssertEqual(result.end, .truncated, "cut at \(cut)")
            XCTAssertEqual(result.frames.count, 0, "cut at \(cut)")
        }
    }

    /// The longest value our writer can send fits the header block with room to spare.
    func testLongestValueFitsTheHeaderLimit() {
        let widest = DamageRect(x: 16383, y: 16383, width: 1, height: 1)
        let rects = Array(repeating: widest, count: BufferDamage.maxRectangles)
        let header = FrameHeader(contentLength: 4, bufferWidth: 16384, bufferHeight: 16384, damage: rects)
        let bytes = FrameEncoder.encode(header: header, body: [1, 2, 3, 4])
        XCTAssertLessThan(FrameEncoder.headerBlock(for: header, bodyLength: 4).count, FrameWireLimits.standard.maxHeaderBytes / 8)
        XCTAssertEqual(decodeEveryWay(bytes).frames.first?.header.damage, rects)
    }

    func testEncoderWritesTheField() {
        let header = FrameHeader(contentLength: 4, bufferWidth: 16, bufferHeight: 8, orientation: 1, sequence: 3,
                                 damage: [DamageRect(x: 2, y: 0, width: 6, height: 4), DamageRect(x: 0, y: 6, width: 16, height: 2)])
        let bytes = FrameEncoder.encode(header: header, body: [9, 9, 9, 9])
        XCTAssertEqual(String(decoding: bytes.prefix(bytes.count - 4), as: UTF8.self), "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n"
            + "Buffer-Width: 16\r\nBuffer-Height: 8\r\nBuffer-Orientation: 1\r\nBuffer-Sequence: 3\r\n"
            + "Buffer-Damage: 2,0,6,4;0,6,16,2\r\n\r\n")
        XCTAssertEqual(decodeEveryWay(bytes).frames.first?.header, header)
        var still = header
        still.damage = []
        XCTAssertTrue(String(decoding: FrameEncoder.headerBlock(for: still, bodyLength: 4), as: UTF8.self).contains("\r\nBuffer-Damage: none\r\n"))
        XCTAssertEqual(decodeEveryWay(FrameEncoder.encode(header: still, body: [9, 9, 9, 9])).frames.first?.header, still)
    }

    func testFittedClipsDropsAndBoundsTheCount() {
        let inside = DamageRect(x: 2, y: 2, width: 2, height: 2)
        XCTAssertEqual(BufferDamage.fitted([DamageRect(x: -4, y: 6, width: 8, height: 8), inside, DamageRect(x: 20, y: 0, width: 2, height: 2),
                                            DamageRect(x: 1, y: 1, width: 4, height: 4)], width: 16, height: 8),
                       [DamageRect(x: 0, y: 6, width: 4, height: 2), DamageRect(x: 1, y: 1, width: 4, height: 4)])
        let limit = (0..<BufferDamage.maxRectangles).map { DamageRect(x: $0 * 2, y: 0, width: 1, height: 1) }
        XCTAssertEqual(BufferDamage.fitted(limit, width: 64, height: 8), limit)
        let beyond = limit + [DamageRect(x: 40, y: 5, width: 3, height: 2)]
        XCTAssertEqual(BufferDamage.fitted(beyond, width: 64, height: 8), [DamageRect(x: 0, y: 0, width: 43, height: 7)])
    }

    func testCoveredPixelsCountsOverlapsOnce() {
        XCTAssertEqual(BufferDamage.coveredPixels([]), 0)
        XCTAssertEqual(BufferDamage.coveredPixels([DamageRect(x: 0, y: 0, width: 4, height: 4), DamageRect(x: 2, y: 2, width: 4, height: 4)]), 28)
        XCTAssertEqual(BufferDamage.coveredPixels([DamageRect(x: 0, y: 0, width: 4, height: 4), DamageRect(x: 1, y: 1, width: 2, height: 2)]), 16)
        XCTAssertEqual(BufferDamage.coveredPixels([DamageRect(x: 0, y: 0, width: 2, height: 1), DamageRect(x: 5, y: 0, width: 2, height: 1)]), 4)
        let header = FrameHeader(contentLength: 1, bufferWidth: 16, bufferHeight: 8, damage: [DamageRect(x: 0, y: 0, width: 8, height: 4)])
        XCTAssertEqual(header.damagedFraction, 0.25)
        XCTAssertEqual(DamageRect(x: 3, y: 1, width: 4, height: 4).alignedToChroma(width: 7, height: 8), DamageRect(x: 2, y: 0, width: 5, height: 6))
    }
}
