import FrameWire
import XCTest

/// Protocol/frame-wire.md §2.5: `Buffer-Format` (JPEG or I420), the exact I420 body length, and the
/// writer's field. Every stream goes through every chunking (all at once, byte by byte, random feeds,
/// socket reads), and truncated at every byte.
final class BufferFormatTests: XCTestCase {
    /// A real I420 body: Y then U then V of `width`×`height`, each byte telling its plane and place.
    private func i420Body(width: Int, height: Int) -> [UInt8] {
        let luma = width * height
        let chroma = ((width + 1) / 2) * ((height + 1) / 2)
        return (0..<luma).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            + (0..<chroma).map { UInt8(truncatingIfNeeded: 100 &+ $0) } + (0..<chroma).map { UInt8(truncatingIfNeeded: 200 &+ $0) }
    }

    private func i420Message(width: Int, height: Int, length: Int? = nil, format: String = "I420", extra: [String] = []) -> [UInt8] {
        var body = i420Body(width: width, height: height)
        if let length { body = Array((body + [UInt8](repeating: 9, count: max(0, length - body.count))).prefix(length)) }
        return message(["Content-Length: \(body.count)", "Buffer-Width: \(width)", "Buffer-Height: \(height)",
                        "Buffer-Format: \(format)"] + extra, body: body)
    }

    /// Decodes with every chunking and checks they agree; returns the all-at-once result.
    private func outcome(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> DecodeResult {
        decodeEveryWay(bytes, file: file, line: line)
    }

    func testByteCount() {
        XCTAssertEqual(BufferFormat.i420ByteCount(width: 1920, height: 1080), 3_110_400)
        XCTAssertEqual(BufferFormat.i420ByteCount(width: 37, height: 23), 37 * 23 + 2 * 19 * 12)
        XCTAssertEqual(BufferFormat.i420ByteCount(width: 1, height: 1), 3)
    }

    func testI420FramesParseWithTheirBodies() {
        for (width, height) in [(4, 2), (37, 23), (1, 1), (640, 361)] {
            let result = outcome(i420Message(width: width, height: height, extra: ["Buffer-Sequence: 5"]))
            XCTAssertEqual(result.end, .eof)
            let frame = try! XCTUnwrap(result.frames.first)
            XCTAssertEqual(frame.header.format, .i420)
            XCTAssertEqual(frame.header.bufferWidth, width)
            XCTAssertEqual(frame.header.contentLength, BufferFormat.i420ByteCount(width: width, height: height))
            XCTAssertEqual(frame.body, i420Body(width: width, height: height))
            XCTAssertEqual(frame.header.sequence, 5)
        }
    }

    func testValuesAreCaseInsensitiveAndJPEGIsTheDefault() {
        for value in ["I420", "i420", "  I420\t"] {
            XCTAssertEqual(outcome(i420Message(width: 4, height: 2, format: value)).frames.first?.header.format, .i420, value)
        }
        for lines in [[], ["Buffer-Format: JPEG"], ["buffer-format: jpeg"]] {
            let result = outcome(validMessage(extra: lines))
            XCTAssertEqual(result.end, .eof)
            XCTAssertEqual(result.frames.first?.header.format, .jpeg, "\(lines)")
        }
    }

    /// An I420 Content-Length other than the picture's size is `bodyLengthMismatch`, at the empty line:
    /// frames before it stand, no body byte of it is delivered.
    func testWrongI420LengthIsATypedErrorAtTheEmptyLine() {
        let good = i420Message(width: 4, height: 2)
        for length in [11, 13, 1, 12 * 1000] {
            let bad = i420Message(width: 4, height: 2, length: length)
            let result = outcome(good + bad)
            XCTAssertEqual(result.frames.count, 1, "\(length)")
            XCTAssertEqual(result.end, .error(.bodyLengthMismatch(format: "I420", contentLength: length, expected: 12)))
            XCTAssertEqual(result.end?.errorKind, "bodyLengthMismatch")
            // Reported at the empty line: the header block alone (no body byte) already fails.
            let headerOnly = Array(bad.prefix(headerBlockLength(of: bad, at: 0)))
            XCTAssertEqual(decode(headerOnly, .oneByteAtATime).end?.errorKind, "bodyLengthMismatch")
            XCTAssertEqual(decode(Array(headerOnly.dropLast()), .oneByteAtATime).end, .truncated)
        }
        // A JPEG body of any length is not checked.
        XCTAssertEqual(outcome(validMessage(length: 11, width: 4, height: 2, extra: ["Buffer-Format: JPEG"])).end, .eof)
    }

    func testUnknownFormatIsBadHeaderValueAtTheEmptyLine() {
        for value in ["NV12", "", "I42O", "jpeg2000", "I420x", "I 420"] {
            let bytes = validMessage(extra: ["Buffer-Format: \(value)"])
            let result = outcome(bytes)
            XCTAssertEqual(result.end?.errorKind, "badHeaderValue", value)
            XCTAssertEqual(result.frames.count, 0)
            let headerBlock = headerBlockLength(of: bytes, at: 0)
            XCTAssertEqual(decode(Array(bytes.prefix(headerBlock - 2)), .allAtOnce).end, .truncated,
                           "\(value): not reported before the empty line")
            XCTAssertEqual(decode(Array(bytes.prefix(headerBlock)), .allAtOnce).end?.errorKind, "badHeaderValue")
        }
    }

    /// The error text shows a control byte as two hex digits, so `I4<NUL>20` cannot be misread.
    func testControlBytesInTheValueAreShownAsTwoHexDigits() {
        let bytes = validMessage(extra: ["Buffer-Format: I4\u{0}20"])
        let result = outcome(bytes)
        XCTAssertEqual(result.end?.errorKind, "badHeaderValue")
        XCTAssertEqual(result.end?.description, #"error: bad value for Buffer-Format: "I4\x0020""#)
    }

    func testRepeatedFormat() {
        let base = ["Content-Length: 12", "Buffer-Width: 4", "Buffer-Height: 2"]
        let body = i420Body(width: 4, height: 2)
        let same = outcome(message(base + ["Buffer-Format: I420", "buffer-format: i420"], body: body))
        XCTAssertEqual(same.frames.first?.header.format, .i420)
        let different = outcome(message(base + ["Buffer-Format: I420", "Buffer-Format: JPEG"], body: body))
        XCTAssertEqual(different.end, .error(.conflictingHeaders("Buffer-Format")))
    }

    /// Cut at every byte: `truncated`, never a frame; cut at the message's end: the frame and `eof`.
    func testTruncatedI420Stream() {
        let bytes = i420Message(width: 5, height: 3)
        for cut in 1..<bytes.count {
            let result = decode(Array(bytes.prefix(cut)), cut % 2 == 0 ? .oneByteAtATime : .allAtOnce)
            XCTAssertEqual(result.end, .truncated, "cut at \(cut)")
            XCTAssertTrue(result.frames.isEmpty)
        }
        XCTAssertEqual(decode(bytes, .oneByteAtATime).frames.count, 1)
    }

    func testEncoderWritesTheFieldOnlyForI420() {
        let i420 = FrameHeader(contentLength: 0, bufferWidth: 4, bufferHeight: 2, orientation: 1,
                               timestampMicros: 7, sequence: 3, format: .i420)
        let expected = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nBuffer-Width: 4\r\nBuffer-Height: 2\r\n"
            + "Buffer-Orientation: 1\r\nBuffer-Format: I420\r\nBuffer-Timestamp: 7\r\nBuffer-Sequence: 3\r\n\r\n"
        XCTAssertEqual(FrameEncoder.headerBlock(for: i420, bodyLength: 12), Array(expected.utf8))
        var jpeg = i420
        jpeg.format = .jpeg
        XCTAssertFalse(String(decoding: FrameEncoder.headerBlock(for: jpeg, bodyLength: 12), as: UTF8.self).contains("Format"))

        // Round trip through the decoder, mixed formats on one stream.
        let body = i420Body(width: 4, height: 2)
        let stream = FrameEncoder.encode(header: i420, body: body) + FrameEncoder.encode(header: jpeg, body: [1, 2, 3])
            + FrameEncoder.encode(header: i420, body: body)
        let result = outcome(stream)
        XCTAssertEqual(result.end, .eof)
        XCTAssertEqual(result.frames.map(\.header.format), [.i420, .jpeg, .i420])
        XCTAssertEqual(result.frames.map(\.body), [body, [1, 2, 3], body])
    }
}
