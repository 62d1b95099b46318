import FrameWire
import Foundation
import TestSupport
import XCTest

/// `replay --loop` that looks like a live sender, progress lines and summaries of `replay` and `record`.
final class LoopAndProgressTests: XCTestCase {
    private let tool = TestPaths.executable("screencast-dump")
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory(prefix: "sc-loop") }
    override func tearDown() { dir.remove() }

    /// Records a looped replay of `dump` until `enough` holds (polled, at most 20 s), then interrupts the replay.
    /// Returns the recording's whole frames (an interrupt may cut the last one), its bytes and both tools.
    private func recordLoop(
        _ dump: String, extra: [String], until enough: (_ recordedBytes: Int, _ replay: RunningTool, _ record: RunningTool) -> Bool
    ) throws -> (frames: [Frame], bytes: [UInt8], replay: RunningTool, record: RunningTool) {
        let socket = dir.path("loop.sock")
        let out = dir.path("loop.frames")
        let record = try RunningTool(["record", "--socket", socket, "--out", out, "--log-level", "error"])
        XCTAssertTrue(DumpFixtures.waitForFile(socket))
        let replay = try RunningTool(["replay", dump, "--socket", socket, "--loop"] + extra)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let size = (try? FileManager.default.attributesOfItem(atPath: out + ".partial")[.size] as? Int) ?? 0
            if enough(size, replay, record) { break }
            usleep(10_000)
        }
        replay.signal(SIGINT)
        XCTAssertEqual(replay.finish(timeout: 10), 0, replay.stderr)
        XCTAssertNotNil(record.finish(timeout: 10), record.stderr)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
        var frames: [Frame] = []
        var decoder = FrameDecoder()
        decoder.feed(bytes) { if case .frame(let frame) = $0 { frames.append(frame) } }
        return (frames, bytes, replay, record)
    }

    /// Later passes carry shifted timestamps and continuing sequence numbers; the first pass is byte-exact.
    /// (Lossless, so that no frame is dropped however loaded the machine.)
    func testLoopedPassesContinueTimestampsAndSequences() throws {
        let dump = DumpFixtures.golden("agent-extended")
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dump)))
        let (frames, recorded, _, _) = try recordLoop(dump, extra: ["--as-fast-as-possible"]) { size, _, _ in
            size >= original.count * 3
        }
        XCTAssertTrue(recorded.starts(with: original), "the first pass is the dump byte for byte")
        XCTAssertGreaterThanOrEqual(frames.count, 10, "at least two passes and a half")
        XCTAssertEqual(frames.map(\.header.sequence), (0..<frames.count).map { UInt64($0) })
        let stamps = frames.compactMap(\.header.timestampMicros)
        XCTAssertEqual(stamps.count, frames.count)
        let steps = zip(stamps, stamps.dropFirst()).map { $1 &- $0 }
        XCTAssertEqual(Set(steps), [33_333], "every timestamp step is the dump's 33 333 µs")
        // Re-encoded frames are what our encoder writes for them.
        XCTAssertEqual(Array(recorded[original.count..<(original.count + frames[4].messageLength)]),
                       FrameEncoder.encode(frames[4]))
    }

    /// Frames without Buffer-Timestamp / Buffer-Sequence are repeated byte for byte.
    func testLoopOfFramesWithoutExtrasRepeatsTheBytes() throws {
        let dump = DumpFixtures.golden("tolerant-reader")
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dump)))
        let (_, recorded, _, _) = try recordLoop(dump, extra: ["--as-fast-as-possible"]) { size, _, _ in
            size >= original.count * 3
        }
        XCTAssertTrue(recorded.starts(with: original + original + original), "three passes, byte for byte")
    }

    /// A run longer than 5 s prints progress lines; summaries carry elapsed time and fps, and an interrupt
    /// says so. `record`'s summary is printed whatever the log level.
    func testProgressLinesAndSummaries() throws {
        let (_, _, replay, record) = try recordLoop(DumpFixtures.golden("agent-extended"), extra: ["--log-level", "error"]) {
            _, replay, record in replay.stderr.contains("replay: ") && record.stderr.contains("record: ")
        }
        let replayLog = replay.stderr
        XCTAssertNotNil(replayLog.range(of: #"replay: \d+ frames sent \(\d+ bytes\), [0-9.]+ fps, \d+ dropped, [0-9.]+ s"#,
                                        options: .regularExpression), replayLog)
        let replaySummary = try XCTUnwrap(replayLog.split(separator: "\n").last.map(String.init))
        XCTAssertTrue(replaySummary.hasPrefix("replayed "), replaySummary)
        XCTAssertNotNil(replaySummary.range(of: #"in [0-9.]+ s \([0-9.]+ fps\), interrupted$"#, options: .regularExpression),
                        replaySummary)
        let recordLog = record.stderr
        XCTAssertNotNil(recordLog.range(of: #"record: \d+ frames \(\d+ bytes\), [0-9.]+ fps, [0-9.]+ s"#,
                                        options: .regularExpression), recordLog)
        let recordSummary = try XCTUnwrap(recordLog.split(separator: "\n").last.map(String.init))
        XCTAssertNotNil(recordSummary.range(
            of: #"^recorded .*loop\.frames: \d+ frames, \d+ bytes in [0-9.]+ s \([0-9.]+ fps\), end: eof$"#,
            options: .regularExpression), recordSummary)
    }

    /// A short run prints no progress line, only its summary; so does an interrupted `record`.
    func testShortRunsPrintOnlyTheirSummary() throws {
        let socket = dir.path("short.sock")
        let record = try RunningTool(["record", "--socket", socket, "--out", dir.path("short.frames"), "--log-level", "error"])
        XCTAssertTrue(DumpFixtures.waitForFile(socket))
        let replay = try ProcessRunner.run(tool, ["replay", DumpFixtures.golden("ios-three-frames"), "--socket", socket,
                                                  "--log-level", "error"])
        XCTAssertEqual(replay.status, 0, replay.stderr)
        XCTAssertEqual(replay.stderr.split(separator: "\n").count, 1, replay.stderr)
        XCTAssertTrue(replay.stderr.hasPrefix("replayed "), replay.stderr)
        XCTAssertEqual(record.finish(timeout: 10), 0)
        XCTAssertEqual(record.stderr.split(separator: "\n").count, 1, record.stderr)

        let idle = try RunningTool(["record", "--socket", socket, "--out", dir.path("idle.frames"), "--log-level", "error"])
        XCTAssertTrue(DumpFixtures.waitForFile(socket))
        idle.signal(SIGINT)
        XCTAssertEqual(idle.finish(timeout: 10), 0)
        XCTAssertTrue(idle.stderr.contains("0 frames, 0 bytes"), idle.stderr)
        XCTAssertTrue(idle.stderr.contains("end: interrupted"), idle.stderr)
    }

    /// Recording a stream that breaks the wire format: exit 1 and one line that says why.
    func testRecordSaysWhyABrokenStreamFails() throws {
        let socket = dir.path("broken.sock")
        let record = try RunningTool(["record", "--socket", socket, "--out", dir.path("broken.frames"), "--log-level", "error"])
        XCTAssertTrue(DumpFixtures.waitForFile(socket))
        _ = try ProcessRunner.run(tool, ["replay", DumpFixtures.handed("header-flood"), "--socket", socket,
                                         "--as-fast-as-possible", "--log-level", "error"])
        XCTAssertEqual(record.finish(timeout: 10), 1)
        let lines = record.stderr.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.first?.contains("end: error: header block longer than 8192 bytes") ?? false, record.stderr)
        XCTAssertTrue(lines.last?.hasPrefix("screencast-dump: \(socket): the sender's stream broke the wire format") ?? false,
                      record.stderr)
    }
}
