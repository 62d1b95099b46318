import FrameWire
import TestSupport
import XCTest

/// How a test hands a stream to the decoder.
enum Chunking: CustomStringConvertible {
    /// One `feed` of the whole stream.
    case allAtOnce
    /// One `feed` per byte.
    case oneByteAtATime
    /// `feed` calls of random sizes (1…maxChunk) from a seeded generator.
    case randomFeeds(seed: UInt64, maxChunk: Int)
    /// `read` calls, as the socket reader makes them; each returns a random count 1…nextReadSize.
    case socketReads(seed: UInt64)

    var description: String {
        switch self {
        case .allAtOnce: "all at once"
        case .oneByteAtATime: "one byte at a time"
        case .randomFeeds(let seed, let max): "random feeds (seed \(seed), ≤\(max))"
        case .socketReads(let seed): "socket reads (seed \(seed))"
        }
    }

    static let standardSet: [Chunking] = [
        .allAtOnce, .oneByteAtATime,
        .randomFeeds(seed: 1, maxChunk: 7), .randomFeeds(seed: 2, maxChunk: 300), .randomFeeds(seed: 3, maxChunk: 70_000),
        .socketReads(seed: 4), .socketReads(seed: 5),
    ]
}

struct DecodeResult {
    var frames: [Frame] = []
    var sounds: [SoundMessage] = []
    var end: FrameStreamEnd?
}

/// Decodes `bytes` with the given chunking, then EOF, asserting the reader contract at every step:
/// `nextReadSize` ≥ 1; in a body it equals the missing body bytes; nothing is emitted after the end;
/// a frame emitted by a body read ends exactly at the bytes consumed (no read reaches past a message).
func decode(
    _ bytes: [UInt8], _ chunking: Chunking, limits: FrameWireLimits = .standard,
    file: StaticString = #filePath, line: UInt = #line
) -> DecodeResult {
    var decoder = FrameDecoder(limits: limits)
    var result = DecodeResult()
    var ends = 0
    let emit: (FrameDecoderEvent) -> Void = { event in
        switch event {
        case .frame(let frame):
            XCTAssertNil(result.end, "frame after the end", file: file, line: line)
            result.frames.append(frame)
        case .sound(let sound):
            XCTAssertNil(result.end, "sound after the end", file: file, line: line)
            result.sounds.append(sound)
        case .end(let end):
            ends += 1
            result.end = end
        }
    }
    func checkReadSize() {
        guard !decoder.isFinished else { return }
        XCTAssertGreaterThanOrEqual(decoder.nextReadSize, 1, "next read size 0", file: file, line: line)
        if let missing = decoder.bodyBytesMissing {
            XCTAssertEqual(decoder.nextReadSize, missing, "body read not limited to the message", file: file, line: line)
        }
    }
    switch chunking {
    case .allAtOnce:
        decoder.feed(bytes, emit: emit)
    case .oneByteAtATime:
        for byte in bytes {
            checkReadSize()
            decoder.feed([byte], emit: emit)
        }
    case .randomFeeds(let seed, let maxChunk):
        var rng = SeededGenerator(seed: seed)
        var index = 0
        while index < bytes.count {
            checkReadSize()
            let size = min(Int.random(in: 1...maxChunk, using: &rng), bytes.count - index)
            decoder.feed(bytes[index..<(index + size)], emit: emit)
            index += size
        }
    case .socketReads(let seed):
        var rng = SeededGenerator(seed: seed)
        var index = 0
        while !decoder.isFinished {
            checkReadSize()
            let inBody = decoder.bodyBytesMissing != nil
            let framesBefore = result.frames.count
            decoder.read({ buffer in
                XCTAssertGreaterThan(buffer.count, 0, "asked for 0 bytes", file: file, line: line)
                let size = min(Int.random(in: 1...buffer.count, using: &rng), bytes.count - index)
                buffer.copyBytes(from: bytes[index..<(index + size)])
                index += size
                return size
            }, emit: emit)
            if inBody, result.frames.count > framesBefore, let frame = result.frames.last {
                let messageEnd = frame.offset + headerBlockLength(of: bytes, at: frame.offset) + frame.body.count
                XCTAssertEqual(decoder.bytesConsumed, messageEnd, "a body read went past its message", file: file, line: line)
            }
        }
    }
    decoder.finish(emit: emit)
    XCTAssertLessThanOrEqual(ends, 1, "more than one end", file: file, line: line)
    XCTAssertNotNil(result.end, "no end emitted", file: file, line: line)
    return result
}

/// Length of the header block starting at `offset` (through the first empty line).
func headerBlockLength(of bytes: [UInt8], at offset: Int) -> Int {
    var index = offset
    var lineStart = offset
    while index < bytes.count {
        if bytes[index] == 0x0A {
            let lineLength = index - lineStart
            if lineLength == 0 || (lineLength == 1 && bytes[lineStart] == 0x0D) { return index + 1 - offset }
            lineStart = index + 1
        }
        index += 1
    }
    return bytes.count - offset
}

/// Builds header blocks for rule tests: `message(["Content-Length: 3", …], body: [1,2,3])`.
func message(_ lines: [String], status: String = "HTTP/1.1 200 OK", body: [UInt8] = [], lineEnd: String = "\r\n") -> [UInt8] {
    Array((([status] + lines).map { $0 + lineEnd }.joined() + lineEnd).utf8) + body
}

/// A valid message of `length` body bytes and the given extra header lines.
func validMessage(length: Int = 4, width: Int = 16, height: Int = 8, extra: [String] = []) -> [UInt8] {
    message(["Content-Length: \(length)", "Buffer-Width: \(width)", "Buffer-Height: \(height)"] + extra,
            body: (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
}

/// Decodes `bytes` with every chunking of ``Chunking/standardSet``, checks that they all end and emit the
/// same, and returns the all-at-once result.
func decodeEveryWay(_ bytes: [UInt8], _ context: String = "", file: StaticString = #filePath, line: UInt = #line) -> DecodeResult {
    let reference = decode(bytes, .allAtOnce)
    for chunking in Chunking.standardSet.dropFirst() {
        let other = decode(bytes, chunking)
        XCTAssertEqual(other.end, reference.end, "\(context) \(chunking)", file: file, line: line)
        XCTAssertEqual(other.frames, reference.frames, "\(context) \(chunking)", file: file, line: line)
        XCTAssertEqual(other.sounds, reference.sounds, "\(context) \(chunking)", file: file, line: line)
    }
    return reference
}
