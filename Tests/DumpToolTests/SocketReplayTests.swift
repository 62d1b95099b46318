import FrameSocket
import FrameWire
import Foundation
import Media
import ScreencastSupport
import Synchronization
import TestSupport
import XCTest

/// Every handed case and golden stream through a real Unix socket: `screencast-dump replay` → a
/// `FrameServer` (the call side), every field compared (a `BGRX-SHM` stream, whose memory a file cannot
/// hold, refused at its first frame: `sharedMemory`); and `replay` → `record`, byte for byte.
final class SocketReplayTests: XCTestCase {
    private let tool = TestPaths.executable("screencast-dump")

    func testEveryCaseThroughAFrameServer() throws {
        let cases = try WireCase.load(from: TestPaths.sharedCases).map { ($0, TestPaths.sharedCases) }
            + WireCase.load(from: TestPaths.golden).map { ($0, TestPaths.golden) }
        let (dir, socket, collector, server) = try startServer(prefix: "sc-replay")
        defer { server.stop(); dir.remove() }
        let jpeg = try JPEGDecoder()
        var picture = I420Buffer()

        for (wireCase, folder) in cases {
            collector.reset()
            let file = folder.appendingPathComponent(wireCase.name + ".frames").path
            let replay = try ProcessRunner.run(tool, ["replay", file, "--as-fast-as-possible", "--socket", socket.string,
                                                      "--log-level", "error"], timeout: 30)
            if let first = wireCase.frames.first, first.format == "BGRX-SHM" {
                // A replay carries no memory (no SCM_RIGHTS): the reader refuses the first such frame.
                let (frames, end) = try XCTUnwrap(collector.waitForEnd(timeout: 10), "\(wireCase.name): no end")
                XCTAssertEqual(end, .stream(.error(.sharedMemory(.descriptorMissing(generation: UInt64(first.memory?.first ?? -1))))),
                               wireCase.name)
                XCTAssertTrue(frames.isEmpty, wireCase.name)
                continue
            }
            XCTAssertEqual(replay.status, 0, "\(wireCase.name): \(replay.stderr)")
            let (frames, end) = try XCTUnwrap(collector.waitForEnd(timeout: 10), "\(wireCase.name): no end")
            XCTAssertEqual(end.name, wireCase.end, "\(wireCase.name): end \(end)")
            if case .stream(.error(let error)) = end {
                XCTAssertEqual(error.kind, wireCase.errorKind, wireCase.name)
            } else {
                XCTAssertNil(wireCase.errorKind, wireCase.name)
            }
            let seen = frames.map { frame -> ExpectedFrame in
                let isJPEG = frame.header.format == .jpeg
                let info = isJPEG ? try? jpeg.decodeI420(frame.body, into: &picture) : nil
                return ExpectedFrame(
                    offset: frame.offset, contentLength: frame.header.contentLength,
                    bufferWidth: frame.header.bufferWidth, bufferHeight: frame.header.bufferHeight,
                    orientation: frame.header.orientation, rotation: frame.header.rotation.degrees,
                    jpegWidth: info?.width, jpegHeight: info?.height, decodeError: isJPEG && info == nil,
                    timestamp: wireCase.frames.first?.timestamp == nil ? nil : frame.header.timestampMicros,
                    sequence: wireCase.frames.first?.sequence == nil ? nil : frame.header.sequence,
                    format: frame.header.format.rawValue, colorRange: isJPEG ? nil : frame.header.bodyColorRange.rawValue)
                .withCapture(Dictionary(uniqueKeysWithValues: (frame.header.capture?.fields ?? []).map { ($0.name, $0.value) }))
                .withDamage(frame.header.damage.map { $0.map { [$0.x, $0.y, $0.width, $0.height] } }, fault: frame.header.damageFault?.kind)
            }
            XCTAssertEqual(seen, wireCase.frames, "\(wireCase.name): frames")
            // The summary counts frames; a faulty or truncated tail is named apart, not counted as one.
            let count = wireCase.frames.count
            let summary = wireCase.end == "eof"
                ? "offered \(count) frames, sent \(count) "
                : "offered \(count) frame\(count == 1 ? "" : "s") + a faulty tail of "
            XCTAssertTrue(replay.stderr.contains(summary), "\(wireCase.name): \(replay.stderr)")
        }
    }

    /// `record` writes what `replay` sent, byte for byte (up to the fault for a faulty stream, which the
    /// recording then reproduces).
    func testRecordKeepsTheBytes() throws {
        let dir = try TemporaryDirectory(prefix: "sc-record")
        defer { dir.remove() }
        for name in ["ios-rotations", "two-tiny-frames", "truncated-body", "midstream-start", "large-4k-frame"] {
            let wireCase = try WireCase.load(name: name, from: TestPaths.sharedCases)
            let socket = dir.path("\(name).sock")
            let out = dir.path("\(name).frames")
            let record = try ProcessRunner.start(tool, ["record", "--socket", socket, "--out", out, "--log-level", "error"])
            let replay = try ProcessRunner.run(tool, ["replay", TestPaths.sharedCases.appendingPathComponent(name + ".frames").path,
                                                      "--as-fast-as-possible", "--socket", socket, "--log-level", "error"])
            XCTAssertEqual(replay.status, 0, "\(name): \(replay.stderr)")
            XCTAssertFalse(ProcessRunner.wait(for: record, timeout: 10), "\(name): record did not finish")
            XCTAssertEqual(ProcessRunner.status(of: record), wireCase.end == "eof" ? 0 : 1, name)
            let recorded = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
            if wireCase.end == "error" {
                XCTAssertTrue(wireCase.bytes.starts(with: recorded), "\(name): recording is a prefix")
                let again = try ProcessRunner.run(tool, ["inspect", "--json", out])
                XCTAssertTrue(again.stdout.contains("\"kind\":\"\(wireCase.errorKind!)\""), "\(name): \(again.stdout)")
            } else {
                XCTAssertEqual(recorded, wireCase.bytes, "\(name): bytes differ")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "\(name): socket file left behind")
        }
    }

    func testReplayWithoutAReaderFailsClearly() throws {
        let dir = try TemporaryDirectory(prefix: "sc-noreader")
        defer { dir.remove() }
        let file = TestPaths.golden.appendingPathComponent("ios-three-frames.frames").path
        let result = try ProcessRunner.run(tool, ["replay", file, "--socket", dir.path("none.sock"), "--wait", "0.5"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("no reader at"), result.stderr)
    }

    /// Paced replay keeps `Buffer-Timestamp` spacing; the frames all arrive in order.
    func testPacedReplayDeliversEveryFrameInOrder() throws {
        let (dir, socket, collector, server) = try startServer(prefix: "sc-paced")
        defer { server.stop(); dir.remove() }
        let file = TestPaths.golden.appendingPathComponent("agent-extended.frames").path
        let result = try ProcessRunner.run(tool, ["replay", file, "--socket", socket.string, "--log-level", "error"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let (frames, end) = try XCTUnwrap(collector.waitForEnd(timeout: 10))
        XCTAssertEqual(end, .stream(.eof))
        XCTAssertEqual(frames.compactMap(\.header.sequence), [0, 1, 2, 3])
    }
}

/// A FrameServer on a fresh socket, collecting what it receives.
private func startServer(prefix: String) throws -> (TemporaryDirectory, SocketPath, Collector, FrameServer) {
    let dir = try TemporaryDirectory(prefix: prefix)
    let socket = try SocketPath(dir.path("agent.sock"))
    let collector = Collector()
    let server = FrameServer(path: socket, logger: Logger(component: "test", threshold: .error)) { collector.add($0) }
    try server.start()
    return (dir, socket, collector, server)
}

/// Collects a FrameServer's events for one sender at a time.
final class Collector: Sendable {
    private struct State {
        var frames: [Frame] = []
        var end: SourceEndReason?
    }
    private let state = Mutex(State())

    func add(_ event: FrameServerEvent) {
        state.withLock { state in
            switch event {
            case .frame(let frame, _): state.frames.append(frame)
            case .sound: break
            case .senderEnded(_, let reason): state.end = reason
            case .senderConnected, .senderRefused: break
            }
        }
    }

    func reset() { state.withLock { $0 = State() } }

    var frameCount: Int { state.withLock { $0.frames.count } }

    func waitForEnd(timeout: Double) -> ([Frame], SourceEndReason)? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let result = state.withLock({ s in s.end.map { (s.frames, $0) } }) { return result }
            usleep(2_000)
        }
        return nil
    }
}
