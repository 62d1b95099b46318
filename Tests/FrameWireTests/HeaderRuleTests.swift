import FrameWire
import XCTest

/// Protocol/frame-wire.md §2.2–§2.4: header lines, required values, repeats, orientation.
final class HeaderRuleTests: XCTestCase {
    private let required = ["Content-Length: 4", "Buffer-Width: 16", "Buffer-Height: 8"]

    private func outcome(_ lines: [String], body: [UInt8] = [1, 2, 3, 4], lineEnd: String = "\r\n") -> DecodeResult {
        decodeEveryWay(message(lines, body: body, lineEnd: lineEnd), "\(lines)")
    }

    func testBadHeaderLines() {
        let bad = ["No colon here", " Folded: continuation", "\tFolded: tab", "Content Length: 4", "Bad(Name): 1",
                   ": empty name", "Na\u{e9}me: x", "Name\u{1}: x", "Content-Length : 4", "Bare\rCR: x"]
        for line in bad {
            for lineEnd in ["\r\n", "\n"] {
                let result = outcome(required + [line], lineEnd: lineEnd)
                XCTAssertEqual(result.end?.errorKind, "badHeaderLine", line.debugDescription)
                XCTAssertTrue(result.frames.isEmpty)
            }
        }
        // A CR that does not end the empty line.
        let bytes = Array("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nBuffer-Width: 1\r\nBuffer-Height: 1\r\n\rX".utf8)
        XCTAssertEqual(decode(bytes, .allAtOnce).end?.errorKind, "badHeaderLine")
    }

    func testNamesAreCaseInsensitiveTokensAndUnknownOnesAreIgnored() {
        let result = outcome(["bUFFER-hEIGHT: 8", "x-weird!#$%&'*+.^_`|~: {anything} \u{1} goes", "CONTENT-LENGTH: 4",
                              "buffer-width: 16", "Empty-Value:", "Buffer-Orientation: 8"])
        XCTAssertEqual(result.end, .eof)
        XCTAssertEqual(result.frames.first?.header, FrameHeader(contentLength: 4, bufferWidth: 16, bufferHeight: 8, orientation: 8))
    }

    func testValuesArePaddedDigitsWithLeadingZeros() {
        let result = outcome(["Content-Length:\t 0004 \t", "Buffer-Width:16", "Buffer-Height:   00008"])
        XCTAssertEqual(result.frames.first?.header, FrameHeader(contentLength: 4, bufferWidth: 16, bufferHeight: 8, orientation: 0))
    }

    func testBadRequiredValues() {
        for name in ["Content-Length", "Buffer-Width", "Buffer-Height"] {
            for value in ["0", "000", "", "-5", "+5", "4a", "0x10", "4 4", "1e3", "4.0", "\u{663}"] {
                let lines = required.filter { !$0.hasPrefix(name) } + ["\(name): \(value)"]
                let result = outcome(lines)
                XCTAssertEqual(result.end?.errorKind, "badHeaderValue", "\(name): \(value.debugDescription)")
            }
        }
    }

    func testDimensionLimits() {
        for name in ["Buffer-Width", "Buffer-Height"] {
            let others = required.filter { !$0.hasPrefix(name) }
            XCTAssertEqual(outcome(others + ["\(name): 16384"]).end, .eof, name)
            XCTAssertEqual(outcome(others + ["\(name): 016384"]).end, .eof, name)
            XCTAssertEqual(outcome(others + ["\(name): 16385"]).end?.errorKind, "badHeaderValue", name)
            XCTAssertEqual(outcome(others + ["\(name): 99999999999999999999999"]).end?.errorKind, "badHeaderValue", name)
        }
    }

    /// Content-Length above 64 MiB is refused at its header line, before any body byte is buffered.
    func testBodyLimit() {
        let limit = FrameWireLimits.standard.maxBodyBytes
        XCTAssertEqual(limit, 67_108_864)
        for value in ["\(limit + 1)", "1000000000000", "99999999999999999999999999999"] {
            var decoder = FrameDecoder()
            var end: FrameStreamEnd?
            // No empty line yet: the refusal must not wait for the end of the header block.
            decoder.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n".utf8)) { if case .end(let e) = $0 { end = e } }
            XCTAssertEqual(end?.errorKind, "bodyTooLarge", value)
            XCTAssertEqual(decoder.bodyBytesMissing, nil)
        }
        // Exactly the limit is accepted: the decoder then asks for that many body bytes.
        var decoder = FrameDecoder()
        decoder.feed(message(["Content-Length: \(limit)", "Buffer-Width: 1", "Buffer-Height: 1"])) { _ in XCTFail("no event expected") }
        XCTAssertEqual(decoder.nextReadSize, limit)
        XCTAssertEqual(decoder.bodyBytesMissing, limit)
    }

    func testMissingHeaders() {
        for (index, name) in ["Content-Length", "Buffer-Width", "Buffer-Height"].enumerated() {
            var lines = required
            lines.remove(at: index)
            let result = outcome(lines + ["Buffer-Orientation: 1"])
            XCTAssertEqual(result.end, .error(.missingHeader(name)))
        }
        XCTAssertEqual(outcome([]).end?.errorKind, "missingHeader")
    }

    func testRepeatedHeaders() {
        let cases: [(String, String, String?)] = [
            ("Content-Length: 4", "content-length: 004", nil),
            ("Content-Length: 4", "Content-Length: 5", "conflictingHeaders"),
            ("Buffer-Width: 16", "Buffer-Width: 16", nil),
            ("Buffer-Width: 16", "Buffer-Width: 17", "conflictingHeaders"),
            ("Buffer-Height: 8", "BUFFER-HEIGHT: 8", nil),
            ("Buffer-Height: 8", "Buffer-Height: 9", "conflictingHeaders"),
            ("Buffer-Orientation: 6", "Buffer-Orientation: 6", nil),
            ("Buffer-Orientation: 6", "Buffer-Orientation: 8", "conflictingHeaders"),
            ("Buffer-Orientation: 0", "Buffer-Orientation: junk", nil),
            ("X-Unknown: 1", "X-Unknown: 2", nil),
        ]
        for (first, second, kind) in cases {
            let result = outcome(required + [first, second])
            XCTAssertEqual(result.end?.errorKind, kind, "\(first) / \(second)")
            XCTAssertEqual(result.frames.count, kind == nil ? 1 : 0)
        }
    }

    func testOrientation() {
        let cases: [(String?, Int, Int)] = [
            (nil, 0, 0), ("0", 0, 0), ("1", 1, 0), ("2", 2, 0), ("3", 3, 180), ("4", 4, 0), ("5", 5, 0), ("6", 6, 270),
            ("7", 7, 0), ("8", 8, 90), ("9", 9, 0), ("255", 255, 0), ("256", 0, 0), ("008", 8, 90), ("", 0, 0),
            ("-6", 0, 0), ("abc", 0, 0), (" 6 ", 6, 270), ("6.0", 0, 0), ("99999999999999999999999", 0, 0),
        ]
        for (value, orientation, rotation) in cases {
            let result = outcome(required + (value.map { ["Buffer-Orientation: \($0)"] } ?? []))
            XCTAssertEqual(result.frames.first?.header.orientation, orientation, value ?? "missing")
            XCTAssertEqual(result.frames.first?.header.rotation.degrees, rotation, value ?? "missing")
        }
    }

    func testAgentExtras() {
        let result = outcome(required + ["Buffer-Timestamp: 123456789012", "Buffer-Sequence: 42"])
        XCTAssertEqual(result.frames.first?.header.timestampMicros, 123_456_789_012)
        XCTAssertEqual(result.frames.first?.header.sequence, 42)
        let junk = outcome(required + ["Buffer-Timestamp: soon", "Buffer-Sequence: -1"])
        XCTAssertEqual(junk.end, .eof, "others' readers ignore them, so bad values are not errors")
        XCTAssertNil(junk.frames.first?.header.timestampMicros)
        XCTAssertNil(junk.frames.first?.header.sequence)
    }

    /// The header block may be 8192 bytes (status line through the empty line), not one more.
    func testHeaderBlockLimit() {
        let limit = FrameWireLimits.standard.maxHeaderBytes
        for (lineEnd, extraBytes) in [("\r\n", 0), ("\n", 0), ("\r\n", 1), ("\n", 1)] {
            let base = message(required + ["X-Pad: "], lineEnd: lineEnd).count
            let padding = String(repeating: "p", count: limit - base + extraBytes)
            let bytes = message(required + ["X-Pad: " + padding], body: [1, 2, 3, 4], lineEnd: lineEnd)
            XCTAssertEqual(headerBlockLength(of: bytes, at: 0), limit + extraBytes)
            for chunking in Chunking.standardSet {
                let result = decode(Array("\r\n\r\n".utf8) + bytes, chunking)  // skipped empty lines do not count
                if extraBytes == 0 {
                    XCTAssertEqual(result.end, .eof, "\(chunking)")
                } else {
                    XCTAssertEqual(result.end, .error(.headerTooLarge(limit: limit)), "\(chunking)")
                }
            }
        }
        // A flood without an empty line is refused as soon as byte 8193 arrives, not at EOF.
        var decoder = FrameDecoder()
        var end: FrameStreamEnd?
        let flood = Array("HTTP/1.1 200 OK\r\n".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: limit)
        decoder.feed(flood) { if case .end(let e) = $0 { end = e } }
        XCTAssertEqual(end?.errorKind, "headerTooLarge")
    }

    /// The first fault ends the stream; frames before it stand and later bytes are ignored.
    func testErrorEndsTheStreamAndEarlierFramesStand() {
        let bytes = validMessage() + message(["Content-Length: 0"]) + validMessage()
        for chunking in Chunking.standardSet {
            let result = decode(bytes, chunking)
            XCTAssertEqual(result.frames.count, 1)
            XCTAssertEqual(result.end?.errorKind, "badHeaderValue")
        }
    }
}
