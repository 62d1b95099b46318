import FrameWire
import XCTest

/// Protocol/frame-wire.md §6: our writer emits the iOS sender's bytes, plus the agent's two extras.
final class EncoderTests: XCTestCase {
    func testIOSSenderBytes() {
        let header = FrameHeader(contentLength: 999, bufferWidth: 585, bufferHeight: 1266, orientation: 1)
        let bytes = FrameEncoder.encode(header: header, body: [0xFF, 0xD8, 0xFF, 0xD9])
        let expected = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nBuffer-Width: 585\r\nBuffer-Height: 1266\r\n"
            + "Buffer-Orientation: 1\r\n\r\n"
        XCTAssertEqual(bytes, Array(expected.utf8) + [0xFF, 0xD8, 0xFF, 0xD9], "Content-Length comes from the body")
    }

    func testAgentExtras() {
        let header = FrameHeader(contentLength: 1, bufferWidth: 1920, bufferHeight: 1080, orientation: 6,
                                 timestampMicros: 18_446_744_073_709_551_615, sequence: 0)
        let expected = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nBuffer-Width: 1920\r\nBuffer-Height: 1080\r\n"
            + "Buffer-Orientation: 6\r\nBuffer-Timestamp: 18446744073709551615\r\nBuffer-Sequence: 0\r\n\r\n"
        XCTAssertEqual(FrameEncoder.headerBlock(for: header, bodyLength: 1), Array(expected.utf8))
    }

    func testRoundTrip() {
        var stream: [UInt8] = []
        var headers: [FrameHeader] = []
        for index in 0..<50 {
            let body = (0..<(index * 37 + 1)).map { UInt8(truncatingIfNeeded: $0 ^ index) }
            let header = FrameHeader(contentLength: body.count, bufferWidth: index + 1, bufferHeight: 2 * index + 1,
                                     orientation: index % 10, timestampMicros: index % 2 == 0 ? UInt64(index) * 33_333 : nil,
                                     sequence: index % 3 == 0 ? UInt64(index) : nil)
            headers.append(header)
            stream += FrameEncoder.encode(header: header, body: body)
        }
        for chunking in Chunking.standardSet {
            let result = decode(stream, chunking)
            XCTAssertEqual(result.end, .eof)
            XCTAssertEqual(result.frames.map(\.header), headers, "\(chunking)")
        }
    }
}

/// The socket reader's contract, step by step (issue: "FrameWire — a sans-I/O decoder").
final class ReaderContractTests: XCTestCase {
    /// Two small messages arrive in one header-phase read: the surplus is carried, both are delivered.
    func testSurplusOfAHeaderReadIsCarriedIntoTheNextMessages() {
        let first = validMessage(length: 300)
        let second = validMessage(length: 200)
        let stream = first + second
        var decoder = FrameDecoder()
        XCTAssertGreaterThanOrEqual(decoder.nextReadSize, stream.count, "one read holds both")
        var frames: [Frame] = []
        decoder.read({ buffer in
            buffer.copyBytes(from: stream)
            return stream.count
        }, emit: { if case .frame(let f) = $0 { frames.append(f) } })
        XCTAssertEqual(frames.map(\.offset), [0, first.count])
        XCTAssertEqual(decoder.nextReadSize, decoder.headerReadSize)
        XCTAssertNil(decoder.bodyBytesMissing)
    }

    /// Once the body length is known, reads ask for exactly the rest of the body and land in the frame.
    func testBodyReadsAreExactAndUncopied() {
        let body = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let stream = FrameEncoder.encode(header: FrameHeader(contentLength: 0, bufferWidth: 10, bufferHeight: 10), body: body)
            + validMessage()
        var decoder = FrameDecoder(headerReadSize: 64)
        var offset = 0
        var asked: [Int] = []
        var frames: [Frame] = []
        while !decoder.isFinished {
            decoder.read({ buffer in
                asked.append(buffer.count)
                let count = min(buffer.count, 4096, stream.count - offset)
                buffer.copyBytes(from: stream[offset..<(offset + count)])
                offset += count
                return count
            }, emit: { if case .frame(let f) = $0 { frames.append(f) } })
        }
        XCTAssertEqual(frames.count, 2)
        XCTAssertEqual(frames.first?.body, body)
        XCTAssertTrue(asked.allSatisfy { $0 >= 1 })
        // 64-byte header reads until the header block is in, then the body reads count down exactly.
        let headerReads = (headerBlockLength(of: stream, at: 0) + 63) / 64
        XCTAssertEqual(Array(asked[0..<headerReads]), Array(repeating: 64, count: headerReads))
        XCTAssertEqual(asked[headerReads], body.count - (64 * headerReads - headerBlockLength(of: stream, at: 0)))
        XCTAssertEqual(asked[headerReads + 1], asked[headerReads] - 4096)
    }

    func testInputAfterTheEndIsIgnored() {
        var decoder = FrameDecoder()
        var events: [FrameDecoderEvent] = []
        decoder.feed(Array("nope".utf8)) { events.append($0) }
        decoder.feed(validMessage()) { events.append($0) }
        decoder.finish { events.append($0) }
        XCTAssertEqual(events.count, 1)
        XCTAssertTrue(decoder.isFinished)
        XCTAssertEqual(decoder.read({ _ in XCTFail("no read after the end"); return 0 }, emit: { events.append($0) }), 0)
    }

    func testEOFFromAReadEndsTheStream() {
        var decoder = FrameDecoder()
        var events: [FrameDecoderEvent] = []
        decoder.feed(Array(validMessage().dropLast())) { events.append($0) }
        decoder.read({ _ in 0 }, emit: { events.append($0) })
        XCTAssertEqual(events, [.end(.truncated)])
    }
}
