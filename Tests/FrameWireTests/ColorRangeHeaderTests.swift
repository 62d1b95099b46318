import FrameWire
import XCTest

/// Protocol/frame-wire.md §2.6: `Buffer-Color-Range` (limited or full) — read case-insensitively with any
/// chunking, absent meaning full, a bad value or `limited` on a JPEG refused at the empty line, repeats
/// checked, written by the encoder only when the header has a range. Every stream goes through every
/// chunking (all at once, byte by byte, random feeds, socket reads) and is cut at every byte.
final class ColorRangeHeaderTests: XCTestCase {
    private let i420Body: [UInt8] = [16, 40, 80, 235, 100, 200]  // a 2×2 picture: Y ×4, U, V

    private func i420Message(_ lines: [String]) -> [UInt8] {
        message(["Content-Length: 6", "Buffer-Width: 2", "Buffer-Height: 2", "Buffer-Format: I420"] + lines, body: i420Body)
    }

    func testValuesAreReadCaseInsensitivelyWithAnyChunking() {
        let cases: [(String, BufferColorRange)] = [
            ("limited", .limited), ("LIMITED", .limited), (" \tLimited\t ", .limited), ("full", .full), ("Full", .full),
        ]
        for (value, range) in cases {
            let result = decodeEveryWay(i420Message(["Buffer-Color-Range: \(value)"]), value)
            XCTAssertEqual(result.end, .eof, value)
            XCTAssertEqual(result.frames.first?.header.colorRange, range, value)
            XCTAssertEqual(result.frames.first?.header.bodyColorRange, range, value)
            XCTAssertEqual(result.frames.first?.body, i420Body, value)
        }
    }

    /// No field: nil as given, and full range for what the body holds (JPEG always; I420 from an agent
    /// that predates the field, so old dumps replay in their true colours).
    func testAbsentMeansFull() {
        let i420 = decodeEveryWay(i420Message([]))
        XCTAssertNil(i420.frames.first?.header.colorRange)
        XCTAssertEqual(i420.frames.first?.header.bodyColorRange, .full)
        let jpeg = decodeEveryWay(validMessage())
        XCTAssertNil(jpeg.frames.first?.header.colorRange)
        XCTAssertEqual(jpeg.frames.first?.header.bodyColorRange, .full)
        let said = decodeEveryWay(validMessage(extra: ["Buffer-Color-Range: full"]))
        XCTAssertEqual(said.end, .eof)
        XCTAssertEqual(said.frames.first?.header.colorRange, .full, "full on a JPEG is true, if redundant")
    }

    /// Anything but `limited`/`full` is `badHeaderValue`, reported at the empty line (not before), and the
    /// frames before it stand.
    func testBadValuesAreBadHeaderValueAtTheEmptyLine() {
        let good = i420Message(["Buffer-Color-Range: limited"])
        for value in ["", "studio", "tv", "limited full", "lim", "fullrange", "16-235", "limited\u{1}"] {
            let bad = i420Message(["Buffer-Color-Range: \(value)"])
            let result = decodeEveryWay(good + bad, value)
            XCTAssertEqual(result.frames.count, 1, value)
            XCTAssertEqual(result.end?.errorKind, "badHeaderValue", value)
            if case .error(.badHeaderValue(let name, _)) = result.end { XCTAssertEqual(name, "Buffer-Color-Range") }
            let headerBlock = headerBlockLength(of: bad, at: 0)
            XCTAssertEqual(decode(Array(bad.prefix(headerBlock - 2)), .allAtOnce).end, .truncated, "\(value): not before the empty line")
            XCTAssertEqual(decode(Array(bad.prefix(headerBlock)), .oneByteAtATime).end?.errorKind, "badHeaderValue", value)
        }
        let control = decodeEveryWay(i420Message(["Buffer-Color-Range: lim\u{0}ited"]))
        XCTAssertEqual(control.end?.description, #"error: bad value for Buffer-Color-Range: "lim\x00ited""#)
    }

    /// A JPEG is full range by definition (JFIF): `limited` on one is `badHeaderValue`, whatever the case.
    func testLimitedOnAJPEGIsRefused() {
        for value in ["limited", "Limited"] {
            let result = decodeEveryWay(validMessage() + validMessage(extra: ["Buffer-Color-Range: \(value)"]))
            XCTAssertEqual(result.frames.count, 1)
            XCTAssertEqual(result.end, .error(.badHeaderValue(name: "Buffer-Color-Range", value: #""limited" (a JPEG body is full range)"#)))
        }
        let explicitJPEG = decodeEveryWay(validMessage(extra: ["Buffer-Format: JPEG", "Buffer-Color-Range: limited"]))
        XCTAssertEqual(explicitJPEG.end?.errorKind, "badHeaderValue")
    }

    func testRepeatsMustAgree() {
        let same = decodeEveryWay(i420Message(["Buffer-Color-Range: limited", "buffer-color-range: LIMITED"]))
        XCTAssertEqual(same.frames.first?.header.colorRange, .limited)
        let different = decodeEveryWay(i420Message(["Buffer-Color-Range: limited", "Buffer-Color-Range: full"]))
        XCTAssertEqual(different.end, .error(.conflictingHeaders("Buffer-Color-Range")))
        XCTAssertTrue(different.frames.isEmpty)
    }

    /// Cut at every byte: `truncated`, never a frame; whole: the frame and `eof`.
    func testTruncatedAtEveryByte() {
        let bytes = i420Message(["Buffer-Color-Range: limited"])
        for cut in 1..<bytes.count {
            let result = decode(Array(bytes.prefix(cut)), cut % 2 == 0 ? .oneByteAtATime : .allAtOnce)
            XCTAssertEqual(result.end, .truncated, "cut at \(cut)")
            XCTAssertTrue(result.frames.isEmpty, "cut at \(cut)")
        }
        XCTAssertEqual(decode(bytes, .oneByteAtATime).frames.first?.header.colorRange, .limited)
    }

    /// The encoder writes the field right after `Buffer-Format` when the header has a range, never
    /// otherwise (a JPEG header stays byte for byte the iOS sender's); what it writes reads back.
    func testTheEncoderWritesTheFieldOnlyWhenGiven() {
        let header = FrameHeader(contentLength: 0, bufferWidth: 2, bufferHeight: 2, orientation: 1, timestampMicros: 9,
                                 format: .i420, colorRange: .limited)
        let expected = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nBuffer-Width: 2\r\nBuffer-Height: 2\r\nBuffer-Orientation: 1\r\n"
            + "Buffer-Format: I420\r\nBuffer-Color-Range: limited\r\nBuffer-Timestamp: 9\r\n\r\n"
        XCTAssertEqual(String(decoding: FrameEncoder.headerBlock(for: header, bodyLength: 6), as: UTF8.self), expected)
        var absent = header
        absent.colorRange = nil
        XCTAssertFalse(String(decoding: FrameEncoder.headerBlock(for: absent, bodyLength: 6), as: UTF8.self).contains("Range"))
        var full = header
        full.colorRange = .full
        let stream = FrameEncoder.encode(header: header, body: i420Body) + FrameEncoder.encode(header: full, body: i420Body)
            + FrameEncoder.encode(header: absent, body: i420Body)
        let result = decodeEveryWay(stream)
        XCTAssertEqual(result.end, .eof)
        XCTAssertEqual(result.frames.map(\.header.colorRange), [.limited, .full, nil])
        XCTAssertEqual(result.frames.map(\.header.bodyColorRange), [.limited, .full, .full])
    }
}
