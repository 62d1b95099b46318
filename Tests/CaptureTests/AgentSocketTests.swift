import Foundation
import FrameWire
import Glibc
import Media
import TestSupport
import XCTest
import XTestSupport

/// The agent against a separate call-side process: absent at start, killed and restarted, stopped with
/// SIGSTOP. The stand-in (``callStandIn``) is a few lines of Python that listen where the call process would
/// and append every byte read to a file at once, so a test can watch frames arrive, kill it, and restart it.
final class AgentSocketTests: XServerTestCase {
    let agent = TestPaths.executable("screencast-agent")
    private var folder: TemporaryDirectory!
    private var socket: String { folder.path("call/agent.sock") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = try TemporaryDirectory(prefix: "sc-sock")
        client.setRootBackground(TestImages.pattern(width: 320, height: 240))
    }

    override func tearDown() {
        folder?.remove()
        super.tearDown()
    }

    private func startAgent(_ extra: [String]) throws -> ChildProcess {
        try ChildProcess(agent, ["--display", server.display, "--socket", socket, "--cursor", "off"] + extra)
    }

    /// Listens on argv[1] (replacing a stale socket, making its folder 0700), accepts one sender and appends
    /// everything it sends to argv[2], unbuffered; exits 0 at the sender's EOF.
    static let callStandIn = """
        import os, socket, sys
        path, out = sys.argv[1], sys.argv[2]
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(1)
        print("listening", file=sys.stderr, flush=True)
        connection, _ = server.accept()
        with open(out, "wb", buffering=0) as f:
            while True:
                data = connection.recv(65536)
                if not data:
                    break
                f.write(data)
        """

    private func startCall(_ name: String) throws -> ChildProcess {
        let call = try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", Self.callStandIn, socket, folder.path(name)])
        XCTAssertTrue(call.waitForOutput("listening", timeout: 5), call.stderr)
        return call
    }

    /// Waits until the recording `name` holds at least `count` whole frames; returns them.
    @discardableResult
    private func waitForFrames(_ name: String, count: Int, timeout: Double) -> [Frame] {
        let deadline = Date().addingTimeInterval(timeout)
        var frames: [Frame] = []
        while Date() < deadline {
            frames = (try? DumpReader.frames(folder.path(name)).frames) ?? []
            if frames.count >= count { break }
            usleep(20_000)
        }
        return frames
    }

    func testConnectsWhenTheCallProcessAppearsLater() throws {
        let agent = try startAgent(["--keepalive", "0.1"])
        XCTAssertTrue(agent.waitForOutput("waiting for server", timeout: 5), agent.stderr)
        usleep(700_000)
        XCTAssertNil(agent.waitForExit(timeout: 0), "the agent keeps running without a reader")
        // Nobody reads: nothing is grabbed or encoded for nobody (issue 34), and it says so.
        XCTAssertTrue(agent.waitForOutput("no call reads the frames: capture paused until one connects", timeout: 2), agent.stderr)
        let call = try startCall("late.frames")
        let frames = waitForFrames("late.frames", count: 3, timeout: 5)
        XCTAssertGreaterThanOrEqual(frames.count, 3, agent.stderr)
        XCTAssertTrue(agent.waitForOutput("a call reads the frames: capturing", timeout: 2), agent.stderr)
        let firstDamage = frames.first?.header.damage
        XCTAssertTrue(firstDamage.map { $0.count == 1 && $0[0].x == 0 && $0[0].y == 0 && $0[0].width == 320 && $0[0].height == 240 } ?? true,
                      "the first picture a new reader gets is whole: \(String(describing: firstDamage))")
        let sequences = frames.compactMap(\.header.sequence)
        XCTAssertEqual(sequences, sequences.sorted(), "frames in order")
        agent.send(SIGINT)
        XCTAssertEqual(agent.waitForExit(timeout: 5), 0, agent.stderr)
        XCTAssertEqual(call.waitForExit(timeout: 5), 0, call.stderr)
        XCTAssertEqual(try DumpReader.frames(folder.path("late.frames")).end, .eof, "the stream ends between frames")
        // Keepalives every 0.1 s for the second or so without a reader used to be made and dropped one by one.
        let summary = agent.lastLogFields("info agent summary ")
        XCTAssertLessThanOrEqual(Int(summary?["dropped"] ?? "99") ?? 99, 1, agent.stderr)
    }

    func testReconnectsWhenTheCallProcessIsKilledAndRestarted() throws {
        let first = try startCall("first.frames")
        let agent = try startAgent(["--keepalive", "0.1"])
        XCTAssertGreaterThanOrEqual(waitForFrames("first.frames", count: 3, timeout: 5).count, 3, agent.stderr)
        first.send(SIGKILL)
        _ = first.waitForExit(timeout: 5)
        usleep(300_000)
        XCTAssertNil(agent.waitForExit(timeout: 0), "the agent survives its reader's death (no SIGPIPE)")
        let second = try startCall("second.frames")
        let frames = waitForFrames("second.frames", count: 3, timeout: 6)
        XCTAssertGreaterThanOrEqual(frames.count, 3, agent.stderr)
        let firstSequence = try XCTUnwrap(try DumpReader.frames(folder.path("first.frames")).frames.last?.header.sequence)
        XCTAssertGreaterThan(frames.first?.header.sequence ?? 0, firstSequence, "the same agent run goes on")
        agent.send(SIGTERM)
        XCTAssertEqual(agent.waitForExit(timeout: 5), 0, agent.stderr)
        XCTAssertEqual(agent.lastLogFields("info agent summary ")?["connects"], "2", agent.stderr)
        _ = second.waitForExit(timeout: 5)
    }

    func testRecordWritesADumpWhileSending() throws {
        let call = try startCall("received.frames")
        let agent = try startAgent(["--keepalive", "0.1", "--frames", "6", "--record", folder.path("recorded.frames")])
        XCTAssertEqual(agent.waitForExit(timeout: 10), 0, agent.stderr)
        XCTAssertEqual(call.waitForExit(timeout: 5), 0, call.stderr)
        let recorded = try DumpReader.frames(folder.path("recorded.frames"))
        let received = try DumpReader.frames(folder.path("received.frames"))
        XCTAssertEqual(recorded.end, .eof)
        XCTAssertEqual(recorded.frames.count, 6)
        XCTAssertEqual(recorded.frames.map(\.header.sequence), [0, 1, 2, 3, 4, 5])
        // Every frame the reader got is byte-identical to the recorded one with the same sequence number;
        // the last one is always delivered (the agent flushes before it exits).
        XCTAssertFalse(received.frames.isEmpty)
        for frame in received.frames {
            let twin = recorded.frames.first { $0.header.sequence == frame.header.sequence }
            XCTAssertEqual(twin.map(FrameEncoder.encode), FrameEncoder.encode(frame))
        }
        XCTAssertEqual(received.frames.last?.header.sequence, 5)
    }

    func testStoppedCallProcessMakesFramesDropNotQueue() throws {
        // Noise compresses badly: ~100 KB frames at 20 per second fill the socket buffers at once.
        client.setRootBackground(Self.noise(width: 320, height: 240))
        let call = try startCall("stopped.frames")
        let agent = try startAgent(["--keepalive", "0.05", "--quality", "95", "--stats-interval", "1"])
        XCTAssertGreaterThanOrEqual(waitForFrames("stopped.frames", count: 3, timeout: 5).count, 3, agent.stderr)
        call.send(SIGSTOP)
        usleep(1_500_000)
        let before = try XCTUnwrap(agent.residentKiB)
        usleep(8_500_000)
        let after = try XCTUnwrap(agent.residentKiB)
        let duringStop = Int(agent.lastLogFields("info agent stats ")?["dropped"] ?? "") ?? 0
        call.send(SIGCONT)
        let resumed = waitForFrames("stopped.frames", count: 1, timeout: 1).count
        usleep(1_000_000)
        XCTAssertGreaterThan(waitForFrames("stopped.frames", count: resumed + 3, timeout: 3).count, resumed, "frames flow again")
        agent.send(SIGINT)
        XCTAssertEqual(agent.waitForExit(timeout: 5), 0, agent.stderr)
        _ = call.waitForExit(timeout: 5)
        XCTAssertLessThan(after - before, ProcStatus.growthLimitKiB(4_096), "agent memory grew from \(before) KiB to \(after) KiB while the reader was stopped")
        XCTAssertGreaterThan(duringStop, 100, "about 20 frames a second were dropped while stopped: \(agent.stderr)")
        let summary = try XCTUnwrap(agent.lastLogFields("info agent summary "))
        XCTAssertGreaterThan(Int(summary["dropped"] ?? "") ?? 0, 100, "\(summary)")
    }

    /// Deterministic noise (a linear congruential generator).
    static func noise(width: Int, height: Int) -> BGRXImage {
        var image = BGRXImage(width: width, height: height)
        var state: UInt32 = 12345
        image.withUnsafeMutableBytes { bytes in
            for index in 0..<bytes.count {
                state = state &* 1_664_525 &+ 1_013_904_223
                bytes[index] = UInt8(truncatingIfNeeded: state >> 24)
            }
        }
        return image
    }
}
