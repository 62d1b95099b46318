import Foundation
import FrameWire
import TestSupport
import XCTest

/// Sound messages (Protocol/frame-wire.md §2.10): the golden stream Tests/Fixtures/sound/agent-sound.frames
/// (made by make-sound-golden.py from the document, not by our encoder) read field by field in every
/// chunking, one byte at a time included, and serialised back to the same bytes; the limits; a kind no reader
/// knows skipped whole; malformed sound headers refused with their error kind.
final class SoundMessageTests: XCTestCase {
    private static let golden: [UInt8] = {
        let url = TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/sound/agent-sound.frames")
        return (try? [UInt8](Data(contentsOf: url))) ?? []
    }()

    private func sine(phase: Int) -> [Int16] {
        (0..<480).flatMap { n -> [Int16] in
            let v = Int16((16384 * sin(2 * Double.pi * 1000 * Double(phase + n) / 48000)).rounded())
            return [v, v]
        }
    }

    func testGoldenStreamParsesToItsFieldsInEveryChunking() throws {
        XCTAssertFalse(Self.golden.isEmpty, "Tests/Fixtures/sound/agent-sound.frames is missing")
        let result = decodeEveryWay(Self.golden, "golden sound")
        XCTAssertEqual(result.end, .eof)
        XCTAssertEqual(result.sounds.count, 3)
        XCTAssertEqual(result.frames.count, 1, "the picture between the sound messages")
        XCTAssertEqual(result.frames.first?.body, [0xFF, 0xD8, 0xFF, 0xD9])
        XCTAssertEqual(result.frames.first?.header.sequence, 7)
        for (index, sound) in result.sounds.enumerated() {
            let header = sound.header
            XCTAssertEqual(header.format, .s16le)
            XCTAssertEqual(header.rate, 48000)
            XCTAssertEqual(header.channels, 2)
            XCTAssertEqual(header.samples, 480)
            XCTAssertEqual(header.timestampMicros, 1_000_000_000 + UInt64(index) * 10_000)
            XCTAssertEqual(header.sequence, UInt64(index))
            XCTAssertEqual(header.source, "system")
            XCTAssertEqual(header.durationMicros, 10_000)
            XCTAssertEqual(sound.body.count, 1920)
            XCTAssertEqual(sound.samples, sine(phase: 480 * index))
        }
        var level = SoundLevel()
        for sound in result.sounds { level.add(sound.body) }
        XCTAssertEqual(level.rmsDBFS, -9.03, accuracy: 0.05)
    }

    func testGoldenStreamSerialisesBackToItsBytes() throws {
        var decoder = FrameDecoder()
        var out: [UInt8] = []
        decoder.feed(Self.golden) { event in
            switch event {
            case .frame(let frame): out += FrameEncoder.encode(frame)
            case .sound(let sound): out += FrameEncoder.encode(sound)
            case .end: break
            }
        }
        XCTAssertEqual(decoder.skippedMessages, 1, "Message-Kind: cursor")
        // Everything but the unknown message, which a reader drops, byte for byte.
        let unknown = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nMessage-Kind: cursor\r\n\r\nx=1\r\n".utf8)
        var expected = Self.golden
        let start = try XCTUnwrap(expected.indices.first { expected[$0...].starts(with: unknown) })
        expected.removeSubrange(start..<(start + unknown.count))
        XCTAssertEqual(out, expected)
        // And a header built from fields writes the golden bytes.
        let header = SoundHeader(samples: 480, timestampMicros: 1_000_000_000, sequence: 0, source: "system")
        let first = FrameEncoder.encodeSound(header: header, body: FrameEncoder.soundBody(sine(phase: 0)))
        XCTAssertEqual(first, Array(Self.golden.prefix(first.count)))
    }

    private func soundLines(samples: String = "2", channels: String = "1", rate: String = "48000", length: Int? = nil,
                            extra: [String] = [], without: String? = nil) -> [UInt8] {
        let count = (Int(samples) ?? 0) * (Int(channels) ?? 0) * 2
        var lines = ["Content-Length: \(length ?? max(1, count))", "Message-Kind: sound", "Sound-Format: S16LE",
                     "Sound-Rate: \(rate)", "Sound-Channels: \(channels)", "Sound-Samples: \(samples)", "Sound-Timestamp: 5"]
        if let without { lines.removeAll { $0.hasPrefix(without + ":") } }
        return message(lines + extra, body: [UInt8](repeating: 1, count: length ?? max(1, count)))
    }

    func testLimitsAreNamedAndHeld() {
        XCTAssertEqual(SoundHeader.maxSamplesPerMessage, 9600)
        XCTAssertEqual(SoundHeader.maxChannels, 8)
        XCTAssertEqual(SoundHeader.rateRange, 8000...192_000)
        XCTAssertEqual(decodeEveryWay(soundLines(samples: "9600", channels: "8")).sounds.first?.body.count, 9600 * 8 * 2)
        XCTAssertEqual(decodeEveryWay(soundLines(samples: "9601")).end, .error(.badHeaderValue(name: "Sound-Samples", value: "\"9601\"")))
        XCTAssertEqual(decodeEveryWay(soundLines(samples: "0")).end, .error(.badHeaderValue(name: "Sound-Samples", value: "\"0\"")))
        XCTAssertEqual(decodeEveryWay(soundLines(channels: "9")).end, .error(.badHeaderValue(name: "Sound-Channels", value: "\"9\"")))
        XCTAssertEqual(decodeEveryWay(soundLines(rate: "7999")).end, .error(.badHeaderValue(name: "Sound-Rate", value: "\"7999\"")))
        XCTAssertEqual(decodeEveryWay(soundLines(rate: "192001")).end, .error(.badHeaderValue(name: "Sound-Rate", value: "\"192001\"")))
        XCTAssertNotNil(decodeEveryWay(soundLines(rate: "192000")).sounds.first)
    }

    func testMalformedSoundHeadersEndTheStreamWithTheirKind() {
        let cases: [(String, [UInt8], String)] = [
            ("length", soundLines(length: 5), "bodyLengthMismatch"),
            ("format", soundLines(extra: ["Sound-Format: F32LE"], without: "Sound-Format"), "badHeaderValue"),
            ("no timestamp", soundLines(without: "Sound-Timestamp"), "missingHeader"),
            ("no rate", soundLines(without: "Sound-Rate"), "missingHeader"),
            ("bad timestamp", soundLines(extra: ["Sound-Timestamp: -1"], without: "Sound-Timestamp"), "badHeaderValue"),
            ("conflict", soundLines(extra: ["Sound-Rate: 44100"]), "conflictingHeaders"),
            ("kinds conflict", soundLines(extra: ["Message-Kind: picture"]), "conflictingHeaders"),
            ("empty kind", message(["Content-Length: 1", "Message-Kind: "], body: [0]), "badHeaderValue"),
        ]
        let picture = validMessage()
        for (name, bytes, kind) in cases {
            let result = decodeEveryWay(picture + bytes + picture, name)
            XCTAssertEqual(result.frames.count, 1, "\(name): the picture before stands")
            guard case .error(let error) = result.end else { XCTFail("\(name): \(String(describing: result.end))"); continue }
            XCTAssertEqual(error.kind, kind, name)
        }
        // Tolerant like the picture fields: any case, padding, leading zeros; a repeat with the same value.
        let tolerant = message(["content-length: 0004", "MESSAGE-KIND:\tSound ", "sound-format: s16le", "SOUND-RATE: 048000",
                                "Sound-Channels: 1", "Sound-Channels: 1", "Sound-Samples: 02", "Sound-Timestamp: 0009"], body: [1, 0, 255, 255])
        let read = decodeEveryWay(tolerant)
        XCTAssertEqual(read.sounds.first?.samples, [1, -1])
        XCTAssertEqual(read.sounds.first?.header.timestampMicros, 9)
    }

    func testUnknownKindIsSkippedWholeWithoutReadingPastIt() {
        // A body holding what looks like a message must not be read as one.
        let inner = validMessage(length: 3)
        let unknown = message(["Content-Length: \(inner.count)", "Message-Kind: cursor", "Cursor-X: 5"], body: inner)
        let picture = validMessage()
        let result = decodeEveryWay(picture + unknown + picture)
        XCTAssertEqual(result.end, .eof)
        XCTAssertEqual(result.frames.count, 2)
        XCTAssertEqual(result.frames.last?.offset, picture.count + unknown.count)
        // Cut inside the skipped body: truncated, not eof.
        XCTAssertEqual(decodeEveryWay(picture + unknown.dropLast(2)).end, .truncated)
        // A picture stays a picture with Message-Kind: picture, and the sound fields on it are ignored.
        let explicit = decodeEveryWay(validMessage(extra: ["Message-Kind: PICTURE", "Sound-Rate: 1"]))
        XCTAssertEqual(explicit.frames.count, 1)
        XCTAssertEqual(explicit.end, .eof)
    }
}
