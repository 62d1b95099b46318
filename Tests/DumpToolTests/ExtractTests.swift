import Foundation
import TestSupport
import XCTest

/// `extract`: never mixes two runs in one folder, says what it wrote, and why it failed.
final class ExtractTests: XCTestCase {
    private let tool = TestPaths.executable("screencast-dump")
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory(prefix: "sc-extract") }
    override func tearDown() { dir.remove() }

    func testRefusesAFolderThatHoldsFilesUnlessForced() throws {
        let out = dir.path("bodies")
        let file = DumpFixtures.golden("ios-three-frames")
        let first = try ProcessRunner.run(tool, ["extract", file, "--out", out])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stderr.contains("wrote 3 bodies to \(out)"), first.stderr)
        XCTAssertFalse(first.stderr.contains("JPEG files"), first.stderr)

        try Data("mine".utf8).write(to: URL(fileURLWithPath: out + "/notes.txt"))
        let second = try ProcessRunner.run(tool, ["extract", DumpFixtures.golden("tolerant-reader"), "--out", out])
        XCTAssertEqual(second.status, 64, "the command line must change (--force or another folder)")
        XCTAssertTrue(second.stderr.hasPrefix("screencast-dump: \(out): "), second.stderr)
        XCTAssertTrue(second.stderr.contains("--force"), second.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out).sorted(),
                       ["000000.jpg", "000001.jpg", "000002.jpg", "notes.txt"], "a refused run writes nothing")

        let forced = try ProcessRunner.run(tool, ["extract", DumpFixtures.golden("tolerant-reader"), "--out", out, "--force"])
        XCTAssertEqual(forced.status, 0, forced.stderr)
        XCTAssertTrue(forced.stderr.contains("wrote 2 bodies"), forced.stderr)
    }

    func testAnEmptyExistingFolderIsFine() throws {
        let out = dir.path("empty")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        let result = try ProcessRunner.run(tool, ["extract", DumpFixtures.golden("ios-three-frames"), "--out", out])
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    /// A folder that cannot be the output is the command line's fault (exit 64, a pointer to --help), and a
    /// missing parent is refused rather than made: a typo must not leave new folders behind (a new user's
    /// `--out /nonexistent/out` made `/nonexistent`, 2026-12-05).
    func testFolderErrorsAreUsageErrorsAndNoParentIsMade() throws {
        let blocker = dir.path("file")
        try Data().write(to: URL(fileURLWithPath: blocker))
        let file = DumpFixtures.golden("ios-three-frames")
        let underFile = try ProcessRunner.run(tool, ["extract", file, "--out", blocker + "/sub"])
        XCTAssertEqual(underFile.status, 64)
        XCTAssertEqual(underFile.stderr, "screencast-dump: \(blocker)/sub: '\(blocker)' is not a folder\nTry 'screencast-dump --help'.\n")
        let isFile = try ProcessRunner.run(tool, ["extract", file, "--out", blocker])
        XCTAssertEqual(isFile.status, 64)
        XCTAssertTrue(isFile.stderr.hasPrefix("screencast-dump: \(blocker): exists and is not a folder\n"), isFile.stderr)
        let missing = dir.path("typo/out")
        let noParent = try ProcessRunner.run(tool, ["extract", file, "--out", missing])
        XCTAssertEqual(noParent.status, 64)
        XCTAssertTrue(noParent.stderr.contains("folder '\(dir.path("typo"))' does not exist (make it first)"), noParent.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("typo")), "no folder made for a typo")
    }

    func testABrokenStreamWritesTheBodiesBeforeTheFault() throws {
        let out = dir.path("partial")
        let result = try ProcessRunner.run(tool, ["extract", DumpFixtures.handed("truncated-body"), "--out", out])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("stream end: truncated"), result.stderr)
    }
}

/// `extract` of sound (Protocol/frame-wire.md §2.10): one WAV per format, however the formats alternate, with
/// every sample of that format in stream order; at most 8 formats.
final class ExtractSoundTests: XCTestCase {
    private let tool = TestPaths.executable("screencast-dump")

    /// A sound message of `samples` per channel whose samples count up from `first`.
    private func sound(rate: Int, channels: Int, samples: Int, first: Int, stamp: Int) -> [UInt8] {
        var body: [UInt8] = []
        for i in 0..<(samples * channels) {
            let v = Int16(truncatingIfNeeded: first + i)
            body += [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)]
        }
        let head = "HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\nMessage-Kind: sound\r\nSound-Format: S16LE\r\n"
            + "Sound-Rate: \(rate)\r\nSound-Channels: \(channels)\r\nSound-Samples: \(samples)\r\nSound-Timestamp: \(stamp)\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// The `data` chunk of a 44-byte-header PCM WAV, and its rate and channel count.
    private func wav(_ path: String) throws -> (rate: Int, channels: Int, samples: [Int16]) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(Array(bytes[0..<4]), Array("RIFF".utf8))
        XCTAssertEqual(Array(bytes[36..<40]), Array("data".utf8))
        func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        XCTAssertEqual(u32(40), bytes.count - 44, "the data size is filled in")
        XCTAssertEqual(u32(4), bytes.count - 8, "the RIFF size too")
        let samples = stride(from: 44, to: bytes.count, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
        return (u32(24), Int(bytes[22]), samples)
    }

    func testAlternatingFormatsGoIntoOneWAVEachAndNoMoreThanEight() throws {
        let dir = try TemporaryDirectory(prefix: "sc-extract-sound")
        defer { dir.remove() }
        var dump: [UInt8] = []
        for k in 0..<10 {
            dump += sound(rate: 48000, channels: 2, samples: 480, first: k * 960, stamp: 1_000_000 + k * 10_000)
            dump += sound(rate: 16000, channels: 1, samples: 160, first: k * 160, stamp: 1_000_000 + k * 10_000)
        }
        for j in 0..<8 { dump += sound(rate: 8000 + 1000 * j, channels: 1, samples: 80, first: 0, stamp: 2_000_000) }
        let path = dir.path("sound.frames")
        try Data(dump).write(to: URL(fileURLWithPath: path))
        let out = dir.path("out")
        let result = try ProcessRunner.run(tool, ["extract", path, "--out", out])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("wrote 26 sound messages to 8 WAV files (sound.wav)"), result.stderr)
        XCTAssertTrue(result.stderr.contains("warning: skipped 2 sound messages in more than 8 formats"), result.stderr)
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        XCTAssertEqual(files.count, 8, "\(files)")
        let main = try wav(out + "/sound.wav")
        XCTAssertEqual([main.rate, main.channels], [48000, 2])
        XCTAssertEqual(main.samples, (0..<9600).map { Int16($0) }, "every 48 kHz sample, in order, from ten messages apart")
        let other = try wav(out + "/sound-16000hz-1ch.wav")
        XCTAssertEqual([other.rate, other.channels], [16000, 1])
        XCTAssertEqual(other.samples, (0..<1600).map { Int16($0) })
        XCTAssertTrue(files.contains("sound-13000hz-1ch.wav"))
        XCTAssertFalse(files.contains("sound-14000hz-1ch.wav"), "the ninth format is skipped")
    }
}
