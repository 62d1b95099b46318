import FrameWire
import XCTest

/// Protocol/frame-wire.md §2.7: the `Capture-*` fields say what the sender captures, for people. Read with
/// any chunking, names case-insensitive, the first value of each kept, one over 256 bytes ignored, never an
/// error; written by the encoder after `Buffer-Sequence` only when the header has them, so the iOS-format
/// frames stay byte for byte the same.
final class CaptureFieldsTests: XCTestCase {
    func testTheFieldsAreReadAsTextWithAnyChunking() {
        let bytes = validMessage(extra: [
            "capture-display: \t:1 ", "CAPTURE-AREA: monitor DP-2", "Capture-Rect: 1280x720+1920+0", "Capture-Fps: 7.5",
        ])
        let result = decodeEveryWay(bytes)
        XCTAssertEqual(result.end, .eof)
        XCTAssertEqual(result.frames.first?.header.capture,
                       CaptureDescription(display: ":1", area: "monitor DP-2", rect: "1280x720+1920+0", framesPerSecond: "7.5"))
    }

    func testTheFirstValueWinsALongOneIsIgnoredAndNoneIsNil() {
        let long = String(repeating: "x", count: CaptureDescription.maxValueBytes + 1)
        let exact = String(repeating: "y", count: CaptureDescription.maxValueBytes)
        let bytes = validMessage(extra: [
            "Capture-Display: \(long)", "Capture-Display: :0", "Capture-Display: :9", "Capture-Area: \(exact)", "Capture-Rect:",
        ])
        let header = decodeEveryWay(bytes).frames.first?.header
        XCTAssertEqual(header?.capture?.display, ":0", "a value over 256 bytes is ignored; the first within the limit wins")
        XCTAssertEqual(header?.capture?.area, exact, "256 bytes is within the limit")
        XCTAssertEqual(header?.capture?.rect, "", "an empty value is a value")
        XCTAssertNil(header?.capture?.framesPerSecond)
        XCTAssertNil(decodeEveryWay(validMessage()).frames.first?.header.capture, "no Capture-* field: nil")
        let onlyLong = decodeEveryWay(validMessage(extra: ["Capture-FPS: \(long)"]))
        XCTAssertEqual(onlyLong.end, .eof, "never an error")
        XCTAssertNil(onlyLong.frames.first?.header.capture)
    }

    /// The encoder writes them after the agent's fields, CR and LF removed from the values; without them the
    /// bytes are what they were (the iOS sender's, plus our optional fields).
    func testTheEncoderWritesThemOnlyWhenGiven() {
        let body: [UInt8] = [0xFF, 0xD8, 0xFF, 0xD9]
        var header = FrameHeader(contentLength: 0, bufferWidth: 8, bufferHeight: 6, orientation: 1, timestampMicros: 5, sequence: 2)
        let plain = FrameEncoder.encode(header: header, body: body)
        XCTAssertEqual(String(decoding: plain.prefix(plain.count - body.count), as: UTF8.self),
                       "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nBuffer-Width: 8\r\nBuffer-Height: 6\r\nBuffer-Orientation: 1\r\n"
                       + "Buffer-Timestamp: 5\r\nBuffer-Sequence: 2\r\n\r\n")
        header.capture = CaptureDescription(display: ":0\r\nX-Injected: 1", area: "screen", rect: "8x6+0+0", framesPerSecond: "30")
        let extended = FrameEncoder.encode(header: header, body: body)
        XCTAssertEqual(String(decoding: extended.prefix(extended.count - body.count), as: UTF8.self),
                       "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nBuffer-Width: 8\r\nBuffer-Height: 6\r\nBuffer-Orientation: 1\r\n"
                       + "Buffer-Timestamp: 5\r\nBuffer-Sequence: 2\r\nCapture-Display: :0X-Injected: 1\r\nCapture-Area: screen\r\n"
                       + "Capture-Rect: 8x6+0+0\r\nCapture-FPS: 30\r\n\r\n")
        let back = decodeEveryWay(extended).frames.first
        XCTAssertEqual(back?.header.capture, header.capture)
        XCTAssertEqual(back?.body, body)
    }
}
