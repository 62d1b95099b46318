import FrameWire
import XCTest

/// Protocol/frame-wire.md §2.8: `Buffer-Format: BGRX-SHM` with `Buffer-Memory: <generation> <slot> <version>`
/// — read with any chunking and cut at every byte (``decodeEveryWay(_:_:file:line:)``), refused at the empty
/// line when the field is absent or bad or the body is not one byte, ignored on other formats, written by
/// the encoder byte for byte.
final class SharedMemoryHeaderTests: XCTestCase {
    private func shmMessage(_ lines: [String], length: Int = 1, body: [UInt8] = [0x0A]) -> [UInt8] {
        message(["Content-Length: \(length)", "Buffer-Width: 8", "Buffer-Height: 4", "Buffer-Format: BGRX-SHM"] + lines, body: body)
    }

    func testValuesAreRead() {
        let cases: [(String, SharedPictureReference)] = [
            ("1 0 2", .init(generation: 1, slot: 0, version: 2)),
            (" \t7 1 0010\t ", .init(generation: 7, slot: 1, version: 10)),
            ("18446744073709551615 1 18446744073709551614", .init(generation: .max, slot: 1, version: .max - 1)),
            ("0 0 0", .init(generation: 0, slot: 0, version: 0)),
        ]
        for (value, reference) in cases {
            let result = decodeEveryWay(shmMessage(["Buffer-Memory: \(value)"]), value)
            XCTAssertEqual(result.end, .eof, value)
            XCTAssertEqual(result.frames.first?.header.format, .sharedBGRX, value)
            XCTAssertEqual(result.frames.first?.header.memory, reference, value)
            XCTAssertEqual(result.frames.first?.body, [0x0A], value)
            XCTAssertNil(result.frames.first?.sharedPicture, "a plain decoder maps nothing")
        }
        // The first value counts; the name in any case.
        let repeated = decodeEveryWay(shmMessage(["buffer-MEMORY: 3 1 4", "Buffer-Memory: 9 0 2"]))
        XCTAssertEqual(repeated.frames.first?.header.memory, .init(generation: 3, slot: 1, version: 4))
    }

    func testRefusals() {
        for value in ["", "1", "1 0", "1 0 2 3", "1  0 2", "1 2 2", "1 0 3", "-1 0 2", "1 0 x", "18446744073709551616 0 2", "1\t0 2"] {
            let result = decodeEveryWay(shmMessage(["Buffer-Memory: \(value)"]), value)
            XCTAssertEqual(result.frames.count, 0, value)
            guard case .error(.badHeaderValue(let name, _))? = result.end else { return XCTFail("\(value): \(String(describing: result.end))") }
            XCTAssertEqual(name, "Buffer-Memory", value)
        }
        let missing = decodeEveryWay(shmMessage([]))
        XCTAssertEqual(missing.end, .error(.missingHeader("Buffer-Memory")))
        for length in [2, 4096] {
            let wrong = decodeEveryWay(shmMessage(["Buffer-Memory: 1 0 2"], length: length, body: Array(repeating: 0x0A, count: length)))
            XCTAssertEqual(wrong.end, .error(.bodyLengthMismatch(format: "BGRX-SHM", contentLength: length, expected: 1)))
        }
        // Ignored on a JPEG (another reader's header may have anything).
        let jpeg = decodeEveryWay(validMessage(extra: ["Buffer-Memory: not checked"]))
        XCTAssertEqual(jpeg.end, .eof)
        XCTAssertNil(jpeg.frames.first?.header.memory)
    }

    func testEncoderWritesTheField() {
        let header = FrameHeader(contentLength: 1, bufferWidth: 64, bufferHeight: 48, orientation: 1, timestampMicros: 5,
                                 sequence: 6, format: .sharedBGRX, memory: .init(generation: 2, slot: 1, version: 8))
        let bytes = FrameEncoder.encode(header: header, body: [0x0A])
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nBuffer-Width: 64\r\n"
            + "Buffer-Height: 48\r\nBuffer-Orientation: 1\r\nBuffer-Format: BGRX-SHM\r\nBuffer-Memory: 2 1 8\r\n"
            + "Buffer-Timestamp: 5\r\nBuffer-Sequence: 6\r\n\r\n\n")
        XCTAssertEqual(decodeEveryWay(bytes).frames.first?.header, header)
    }
}
