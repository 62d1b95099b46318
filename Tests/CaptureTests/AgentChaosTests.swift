import Foundation
import FrameWire
import Glibc
import Media
import TestSupport
import XTestSupport
import XCTest

/// Chaos between the real agent (under Xvfb) and the real call process: the call restarted 20 times, shm
/// agents killed while sharing, the agent and then the call stopped with SIGSTOP, the agent's recording on a full disk, the socket folder
/// deleted, the X server killed. Each test is bounded by the X test watchdog (60 s).
final class AgentChaosTests: XServerTestCase {
    /// The 30 s stops of the agent and then of the call take a minute and more by themselves.
    override var timeLimit: Double { 120 }
    let agentPath = TestPaths.executable("screencast-agent")
    let callPath = TestPaths.executable("screencast-call")
    private var folder: TemporaryDirectory!
    private var socket: String { folder.path("run/agent.sock") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = try TemporaryDirectory(prefix: "sc-chaos")
        client.setRootBackground(TestImages.pattern(width: 320, height: 240))
    }

    override func tearDown() {
        folder?.remove()
        super.tearDown()
    }

    /// The agent on this test's socket: a keepalive every 100 ms (10 frames a second on a still screen).
    private func startAgent(_ extra: [String] = []) throws -> ChildProcess {
        try ChildProcess(agentPath, ["--display", server.display, "--socket", socket, "--cursor", "off", "--keepalive", "0.1"] + extra)
    }

    /// The call on this test's socket, without HTTP, logging every frame (`--log-level debug`).
    private func startCall(_ extra: [String] = []) throws -> ChildProcess {
        let call = try ChildProcess(callPath, ["--socket", socket, "--http", "off", "--stats-interval", "0", "--log-level", "debug"] + extra)
        XCTAssertTrue(call.waitForOutput("listening", timeout: 10), call.stderr)
        return call
    }

    /// `Buffer-Sequence` of every frame the call logged (`frame … seq=N`), in order.
    private func sequences(_ call: ChildProcess) -> [UInt64] {
        call.stderr.split(separator: "\n").filter { $0.hasPrefix("debug frame-server frame ") }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("seq=") }.flatMap { UInt64($0.dropFirst(4)) }
        }
    }

    private func count(_ text: String, in call: ChildProcess) -> Int {
        call.stderr.components(separatedBy: text).count - 1
    }

    /// Polls `condition` every 5 ms; returns the seconds it took, or nil after `timeout`.
    private func secondsUntil(timeout: Double, _ condition: () -> Bool) -> Double? {
        let start = Date()
        while Date().timeIntervalSince(start) < timeout {
            if condition() { return Date().timeIntervalSince(start) }
            usleep(5_000)
        }
        return nil
    }

    /// The call process killed (SIGKILL, leaving its socket file behind) or stopped (SIGTERM) and started
    /// again, 20 times: each time the agent connects within 1 s of the new call listening (a connection
    /// that lasted a second resets its back-off), and across all 20 calls every frame arrives once and in
    /// order (Buffer-Sequence strictly rising).
    func testTheCallRestarted20TimesIsRejoinedWithinASecondAndNoFrameComesTwice() throws {
        let agent = try startAgent()
        var received: [UInt64] = []
        var rejoins: [Double] = []
        for round in 0..<20 {
            let call = try startCall()
            let rejoin = try XCTUnwrap(
                secondsUntil(timeout: 5) { call.stderr.contains("frame-server sender connected") }, "round \(round): no agent:\n\(agent.stderr.suffix(2000))")
            rejoins.append(rejoin)
            // A connection that lives a second resets the agent's back-off; frames flow meanwhile.
            usleep(1_100_000)
            XCTAssertGreaterThanOrEqual(sequences(call).count, 5, "round \(round): frames flow")
            call.send(round % 2 == 0 ? SIGKILL : SIGTERM)
            _ = call.waitForExit(timeout: 10)
            received += sequences(call)
        }
        print("chaos: agent rejoined 20 restarted calls in \(rejoins.map { String(format: "%.3f", $0) }.joined(separator: " ")) s")
        XCTAssertLessThan(rejoins.max() ?? .infinity, 1.0, "the agent took more than 1 s to rejoin a restarted call")
        XCTAssertEqual(Set(received).count, received.count, "a frame arrived twice")
        XCTAssertEqual(received, received.sorted(), "frames out of order")
        XCTAssertGreaterThan(received.count, 20 * 5)
        agent.send(SIGINT)
        XCTAssertEqual(agent.waitForExit(timeout: 5), 0, agent.stderr)
        XCTAssertEqual(agent.lastLogFields("info agent summary ")?["connects"], "20", agent.stderr)
    }

    /// `--format shm` agents SIGKILLed one after the other while sharing to one call: each death ends its
    /// connection, the next agent's memory is mapped and its frames flow, and the call keeps no mapping or
    /// descriptor of a dead agent (`/proc/PID/maps` lists its memfds; at the end there is none).
    func testSharedMemoryAgentsKilledWhileSharingLeaveNothingBehind() throws {
        let call = try startCall()
        func memfdMappings() -> Int {
            let maps = (try? String(contentsOfFile: "/proc/\(call.pid)/maps", encoding: .utf8)) ?? ""
            return maps.split(separator: "\n").filter { $0.contains("memfd:screencast-picture") }.count
        }
        func descriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(call.pid)/fd").count) ?? -1 }
        var descriptorCounts: [Int] = []
        for round in 0..<5 {
            let before = sequences(call).count
            let agent = try startAgent(["--format", "shm"])
            XCTAssertNotNil(secondsUntil(timeout: 10) { sequences(call).count >= before + 5 }, "round \(round): no frames:\n\(call.stderr.suffix(2000))")
            XCTAssertEqual(memfdMappings(), 1, "round \(round): the live agent's memory, mapped once")
            agent.send(SIGKILL)
            _ = agent.waitForExit(timeout: 5)
            XCTAssertNotNil(secondsUntil(timeout: 5) { count("frame-server sender ended", in: call) == round + 1 }, "round \(round)")
            XCTAssertNotNil(secondsUntil(timeout: 5) { memfdMappings() == 0 }, "round \(round): the dead agent's memory is still mapped")
            descriptorCounts.append(descriptors())
        }
        print("chaos: shm agents killed 5 times; the call's descriptors after each: \(descriptorCounts)")
        XCTAssertEqual(Set(descriptorCounts).count, 1, "the call's descriptors grew: \(descriptorCounts)")
        XCTAssertEqual(count("sharedMemory", in: call), 0, call.stderr.suffix(2000).description)
        call.send(SIGTERM)
        XCTAssertEqual(call.waitForExit(timeout: 10), 0, call.stderr.suffix(2000).description)
    }

    /// The agent stopped (SIGSTOP) for 30 s (issue 13): the call drops it between 5 and 7 s, its memory
    /// stays flat, and on SIGCONT the agent reconnects at once and frames flow again. Then the call stopped
    /// for 30 s: the agent drops frames instead of queueing
    /// them (memory flat) and on SIGCONT the same connection goes on: the call's watchdog does not count
    /// the time the call itself was stopped.
    static let stopSeconds = 30.0

    func testAStoppedAgentIsDroppedByTheWatchdogAndAStoppedCallIsNotHeldAgainstTheAgent() throws {
        client.setRootBackground(AgentSocketTests.noise(width: 320, height: 240))
        let call = try startCall()
        let agent = try startAgent(["--quality", "95", "--stats-interval", "1"])
        XCTAssertNotNil(secondsUntil(timeout: 5) { self.sequences(call).count >= 5 }, call.stderr)

        agent.send(SIGSTOP)
        let stopped = Date()
        let dropped = secondsUntil(timeout: 9) { call.stderr.contains("reason=frame-timeout") }
        let callBefore = try XCTUnwrap(call.residentKiB)
        usleep(UInt32(max(0, Self.stopSeconds - Date().timeIntervalSince(stopped)) * 1e6))
        let callAfter = try XCTUnwrap(call.residentKiB)
        agent.send(SIGCONT)
        let drop = try XCTUnwrap(dropped, "the watchdog did not drop the stopped agent:\n\(call.stderr.suffix(3000))")
        print("chaos: stopped agent dropped after \(String(format: "%.2f", drop)) s; call RSS \(callBefore) → \(callAfter) KiB")
        XCTAssertGreaterThanOrEqual(drop, 4.5, "dropped before its 5 s (the last frame came at most 0.1 s before the stop)")
        XCTAssertLessThan(drop, 7)
        XCTAssertLessThan(callAfter - callBefore, ProcStatus.growthLimitKiB(2048), "the call's memory grew while the agent was stopped")
        let back = secondsUntil(timeout: 3) { self.count("frame-server sender connected", in: call) >= 2 }
        XCTAssertLessThan(try XCTUnwrap(back, "the agent did not come back:\n\(agent.stderr.suffix(2000))"), 1.5)
        usleep(500_000)

        let flowing = sequences(call).count
        call.send(SIGSTOP)
        usleep(1_500_000)
        let agentBefore = try XCTUnwrap(agent.residentKiB)
        usleep(UInt32((Self.stopSeconds - 1.5) * 1e6))
        let agentAfter = try XCTUnwrap(agent.residentKiB)
        call.send(SIGCONT)
        let resumed = secondsUntil(timeout: 3) { self.sequences(call).count > flowing + 3 }
        usleep(1_000_000)
        print("chaos: agent RSS while the call was stopped \(agentBefore) → \(agentAfter) KiB; frames resumed after \(resumed.map { String(format: "%.2f", $0) } ?? "-") s")
        XCTAssertNotNil(resumed, "frames did not resume after the call's SIGCONT:\n\(call.stderr.suffix(3000))")
        XCTAssertLessThan(agentAfter - agentBefore, ProcStatus.growthLimitKiB(4096), "the agent's memory grew while the call was stopped")
        XCTAssertEqual(count("frame-server sender ended", in: call) , 1, "the call's own stop was held against the agent:\n\(call.stderr.suffix(3000))")
        XCTAssertEqual(count("frame-server sender connected", in: call), 2, "the agent had to reconnect after the call's stop")
        let all = sequences(call)
        XCTAssertEqual(all, all.sorted())
        agent.send(SIGINT)
        XCTAssertEqual(agent.waitForExit(timeout: 5), 0, agent.stderr)
        let summary = try XCTUnwrap(agent.lastLogFields("info agent summary "))
        XCTAssertGreaterThan(Int(summary["dropped"] ?? "") ?? 0, 50, "frames were dropped while the call was stopped: \(summary)")
        call.send(SIGTERM)
        XCTAssertEqual(call.waitForExit(timeout: 10), 0, call.stderr.suffix(2000).description)
    }

    /// `--record` onto a disk that fills up (a 256 KiB tmpfs): one error line when it happens, the frames
    /// keep going to the call, and the agent exits 1 at the end saying the recording is incomplete.
    func testRecordOnAFullDiskEndsTheRecordingNotTheSharing() throws {
        let disk = try SmallDisk(at: folder.path("disk"), kibibytes: 256)
        defer { disk.unmount() }
        client.setRootBackground(AgentSocketTests.noise(width: 320, height: 240))
        let call = try startCall()
        let record = disk.path + "/recorded.frames"
        let agent = try startAgent(["--quality", "95", "--record", record])
        XCTAssertTrue(agent.waitForOutput("recording stopped", timeout: 10), agent.stderr)
        let atFailure = sequences(call).count
        XCTAssertNotNil(secondsUntil(timeout: 3) { self.sequences(call).count >= atFailure + 10 }, "frames stopped with the recording")
        XCTAssertNil(agent.waitForExit(timeout: 0), "the agent stopped with its recording:\n\(agent.stderr)")
        agent.send(SIGINT)
        XCTAssertEqual(agent.waitForExit(timeout: 5), 1, agent.stderr)
        let lines = agent.stderr.split(separator: "\n")
        XCTAssertEqual(lines.filter { $0.contains("recording stopped") }.count, 1, "said once:\n\(agent.stderr)")
        XCTAssertTrue(lines.first { $0.contains("recording stopped") }?.contains("No space left on device") ?? false, agent.stderr)
        let last = String(lines.last ?? "")
        XCTAssertTrue(last.hasPrefix("screencast-agent: the recording '\(record)' is incomplete: No space left on device after "), last)
        // What was written is whole frames and then the start of one: it reads as a truncated dump (or as a
        // clean one, when the disk happened to fill exactly at a frame's end).
        let dump = try DumpReader.frames(record)
        XCTAssertGreaterThan(dump.frames.count, 0)
        XCTAssertTrue([.truncated, .eof].contains(dump.end), "\(String(describing: dump.end))")
        XCTAssertEqual(dump.frames.map(\.header.sequence), (0..<UInt64(dump.frames.count)).map { $0 })
        call.send(SIGTERM)
        XCTAssertEqual(call.waitForExit(timeout: 10), 0)
    }

    /// The socket's folder removed while the agent sends (a /tmp cleaner): the call says so and listens
    /// there again within about a second; the agent's connection is not disturbed, and a new agent finds
    /// the new socket.
    func testTheSocketFolderDeletedWhileSharingIsMadeAgain() throws {
        let call = try startCall()
        let agent = try startAgent()
        XCTAssertNotNil(secondsUntil(timeout: 5) { self.sequences(call).count >= 3 }, call.stderr)
        try FileManager.default.removeItem(atPath: folder.path("run"))
        let back = secondsUntil(timeout: 3) { self.count("socket file gone; listening again", in: call) == 1 }
        XCTAssertLessThan(try XCTUnwrap(back, call.stderr.suffix(2000).description), 2.1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: socket))
        let flowing = sequences(call).count
        XCTAssertNotNil(secondsUntil(timeout: 3) { self.sequences(call).count >= flowing + 5 }, "the agent's connection was disturbed")
        agent.send(SIGINT)
        XCTAssertEqual(agent.waitForExit(timeout: 5), 0, agent.stderr)
        let second = try startAgent()
        XCTAssertNotNil(secondsUntil(timeout: 3) { self.count("frame-server sender connected", in: call) >= 2 }, second.stderr)
        second.send(SIGINT)
        XCTAssertEqual(second.waitForExit(timeout: 5), 0, second.stderr)
        call.send(SIGTERM)
        XCTAssertEqual(call.waitForExit(timeout: 10), 0, call.stderr.suffix(2000).description)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "the call removes the socket it made again")
    }

    /// The X server killed while sharing: the agent exits 1 with one clear line; the call notes the
    /// sender's end and goes on (it takes the next agent, here on a new X server).
    func testTheXServerKilledEndsTheAgentAndLeavesTheCallServing() throws {
        let call = try startCall()
        let agent = try startAgent()
        XCTAssertNotNil(secondsUntil(timeout: 5) { self.sequences(call).count >= 3 }, call.stderr)
        let display = server.display
        server.crash()
        XCTAssertEqual(agent.waitForExit(timeout: 5), 1, agent.stderr)
        let last = agent.stderr.split(separator: "\n").last.map(String.init) ?? ""
        XCTAssertTrue(last.hasPrefix("screencast-agent: lost the connection to X display '\(display)'"), agent.stderr)
        XCTAssertNotNil(secondsUntil(timeout: 3) { call.stderr.contains("sender ended") }, call.stderr)
        XCTAssertNil(call.waitForExit(timeout: 0.5), "the call stopped with the agent's X server")
        let other = try XServerProcess(.xvfb, width: 320, height: 240)
        defer { other.stop() }
        let next = try ChildProcess(agentPath, ["--display", other.display, "--socket", socket, "--cursor", "off", "--keepalive", "0.1"])
        XCTAssertNotNil(secondsUntil(timeout: 5) { self.count("frame-server sender connected", in: call) >= 2 }, next.stderr)
        next.send(SIGINT)
        XCTAssertEqual(next.waitForExit(timeout: 5), 0, next.stderr)
        call.send(SIGTERM)
        XCTAssertEqual(call.waitForExit(timeout: 10), 0, call.stderr.suffix(2000).description)
    }
}
