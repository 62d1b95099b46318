import Foundation
import TestSupport
import XCTest
import XTestSupport

/// Issue 12 with real peers: two headless Chromium viewers (transport-cc) of a 1280×720 screen (Xvfb, the real
/// agent at 15 fps on the shared-memory wire) showing a page of text of which 1 random line of 45 changes 10
/// times a second (``ChangingTextScreen``), `--bitrate 1500`. The fast one is unshaped; the slow one's media alone goes through a 500 kbit/s bottleneck
/// (tc HTB + TBF, a u32 filter on the UDP port of its selected candidate). The slow one becomes an outlier, the
/// second encoding starts at half size and the slow viewer is moved to it at its keyframe (same SSRC, no
/// renegotiation); the fast one keeps the main encoding's rate and frame rate. The call encrypts end to end
/// (`--e2ee-key-file`, the key in both pages' links), so the second encoding's frames are checked to decrypt.
///
/// Measured in a window (`--mark`) that starts once the move has had time to happen: frames decoded there
/// (getStats `framesDecoded`) over the window's length, and `frameWidth` at the end.
final class SecondEncodingEndToEndTests: XCTestCase {
    let tc = LoopbackBottleneck.tc

    /// CPU seconds (user + system) of each named thread of process `pid` whose name starts with "vp8-".
    static func threadCPUSeconds(pid: Int32) -> [String: Double] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var seconds: [String: Double] = [:]
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        for task in tasks {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { continue }
            let name = String(stat[stat.index(after: open)..<close])
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            guard name.hasPrefix("vp8-"), fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
            seconds[name, default: 0] += (user + system) / ticks
        }
        return seconds
    }

    /// With end-to-end encryption: the second encoding's frames are encrypted as the main one's (same key, same
    /// key index), and both pages decrypt every frame. One run serves both questions (is the slow viewer moved
    /// and served, and do the second encoding's frames decrypt): the same run without encryption, 52 s of CI
    /// time, checked nothing this one does not (the same assertions, on the lighter path), and the second
    /// encoding without encryption is decoded by aiortc in `SecondEncodingTests`.
    func testASlowChromiumGetsTheHalfSizeEncodingAtFivePlusFPSTheFastOneKeepsItsRateAndBothDecrypt() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace(
                "EndToEndTests.SecondEncodingEndToEndTests/testASlowChromiumGetsTheHalfSizeEncodingAtFivePlusFPSTheFastOneKeepsItsRateAndBothDecrypt",
                timeout: 240)
        }
        try runSlowBesideFast()
    }

    private func runSlowBesideFast() throws {
        let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium"), driver = URL(fileURLWithPath: "/usr/bin/chromedriver")
        let agentPath = TestPaths.executable("screencast-agent")
        guard EndToEnd.requireTools([chromium, driver, tc, EndToEnd.systemPython, TestPaths.executable("screencast-call"), agentPath,
                                     URL(fileURLWithPath: "/usr/bin/Xvfb")]) else { return }
        let bottleneck = try LoopbackBottleneck(rate: "500kbit")
        defer { bottleneck.remove() }
        let server = try XServerProcess(.xvfb, width: 1280, height: 720)
        defer { server.stop() }
        // 10 pictures a second with 1 of 45 text lines new in each (a program such as top in an xterm was seen to
        // stop repainting for tens of seconds on the loaded machine).
        let screen = ChangingTextScreen(display: server.display, width: 1280, height: 720)
        defer { screen.stop() }

        let keys = try TemporaryDirectory(prefix: "sc-e2ee")
        defer { keys.remove() }
        let passphrase = "a passphrase for both encodings"
        XCTAssertTrue(FileManager.default.createFile(
            atPath: keys.path("key"), contents: Data((passphrase + "\n").utf8), attributes: [.posixPermissions: 0o600]))
        let e2eeArguments = ["--e2ee-key-file", keys.path("key")]
        let fragment = "#key=" + passphrase.utf8.map { String(format: "%%%02X", $0) }.joined()
        let call = try CallUnderTest(["--ice-ports", "40960-41023", "--ice-tcp", "off", "--bitrate", "1500"] + e2eeArguments)
        defer { call.stop() }
        // Its log is read as it comes (a pipe nobody reads would block the agent once 64 KiB of log filled it) and
        // its last lines are printed with the figures.
        let agentErrors = Pipe()
        let agentLog = PipeLines(agentErrors)
        let agent = try ProcessRunner.start(
            agentPath, ["--display", server.display, "--socket", call.folder.path("agent.sock"), "--format", "shm", "--fps", "15",
                        "--cursor", "off", "--stats-interval", "0"], stderr: agentErrors)
        defer { if agent.isRunning { kill(agent.processIdentifier, SIGKILL); agent.waitUntilExit() } }
        XCTAssertNotNil(call.waitForLine("screen takes over", timeout: 15), "the agent's screen reached the call")
        func chromiumViewer(_ name: String, seconds: Int, mark: Int, leave: Bool = false) throws -> PythonPeer {
            let profile = call.folder.path(name)
            try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
            return try PythonPeer(
                EndToEnd.systemPython, "chromium_viewer.py",
                ["--url", call.baseURL + "/" + fragment, "--profile", profile + "/profile", "--frames", "1000000", "--timeout", "\(seconds)",
                 "--mark", "\(mark)"] + (leave ? ["--leave"] : []),
                environment: ["HOME": profile, "TMPDIR": profile])
        }
        /// The ids of the connected peers with a congestion view, and each one's remote UDP port.
        func connectedPeers() -> [String: UInt16] {
            var found: [String: UInt16] = [:]
            for peer in (try? call.viewers())?["peers"] as? [[String: Any]] ?? [] where peer["congestion"] is [String: Any] {
                guard let id = peer["id"] as? String, let remote = (peer["pair"] as? [String: Any])?["remote"] as? String,
                      let port = remote.split(separator: ":").last.flatMap({ UInt16($0) }) else { continue }
                found[id] = port
            }
            return found
        }
        func waitForPeer(besides known: Set<String>, while viewer: PythonPeer) -> (String, UInt16)? {
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, viewer.isRunning {
                if let new = connectedPeers().first(where: { !known.contains($0.key) }) { return (new.key, new.value) }
                Thread.sleep(forTimeInterval: 0.2)
            }
            return nil
        }

        // The fast viewer first (the main encoder climbs to its 1500 kbit/s), then the slow one, shaped at once.
        let fast = try chromiumViewer("chromium-fast", seconds: 45, mark: 25)
        let fastID = try XCTUnwrap(waitForPeer(besides: [], while: fast)?.0, "the fast Chromium never connected")
        // It leaves as a person closing the tab would (its DELETE): the second encoder then has nobody left.
        let slow = try chromiumViewer("chromium-slow", seconds: 42, mark: 22, leave: true)
        let (slowID, slowPort) = try XCTUnwrap(waitForPeer(besides: [fastID], while: slow), "the slow Chromium never connected")
        try LoopbackBottleneck.run("filter add dev lo parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff match ip dport \(slowPort) 0xffff flowid 1:10")

        var slowEncodings: [String] = []
        var second: [String: Any] = [:]
        var slowPeer: [String: Any] = [:], fastPeer: [String: Any] = [:]
        var mainFPS: [Double] = [], mainKbps: [Double] = [], mainTargets: [Int] = []
        var trace: [String] = []
        var lastFrames = ""
        let started = Date()
        while fast.isRunning || slow.isRunning {
            Thread.sleep(forTimeInterval: 0.5)
            guard let stats = try? call.stats(), let viewers = stats["viewers"] as? [String: Any] else { continue }
            lastFrames = "frames \(stats["frames"] ?? "-") dropped \(stats["dropped"] ?? "-") screen \(stats["screen"] ?? "-")"
            if let value = viewers["secondEncoding"] as? [String: Any], value["encoder"] is [String: Any] { second = value }
            for peer in viewers["peers"] as? [[String: Any]] ?? [] {
                if peer["id"] as? String == slowID {
                    slowPeer = peer
                    if let encoding = peer["encoding"] as? String, slowEncodings.last != encoding { slowEncodings.append(encoding) }
                } else if peer["id"] as? String == fastID {
                    fastPeer = peer
                }
            }
            let slowTarget = (slowPeer["congestion"] as? [String: Any])?["targetKbps"] ?? "-"
            let secondTarget = (viewers["secondEncoding"] as? [String: Any])?["targetKbps"] ?? "-"
            let fastSent = fastPeer["framesSent"] ?? "-"
            trace.append("\(Int(Date().timeIntervalSince(started)))s \(slowEncodings.last ?? "-") slow=\(slowTarget) second=\(secondTarget) fastSent=\(fastSent)")
            // The main encoder while the slow viewer is on the second encoding.
            if slowEncodings.last == "low", let fps = stats["fps"] as? Double, let target = stats["bitrateKbps"] as? Int {
                mainFPS.append(fps)
                mainKbps.append(stats["kbps"] as? Double ?? 0)
                mainTargets.append(target)
            }
        }
        let threads = Self.threadCPUSeconds(pid: call.process.processIdentifier)
        let elapsed = Date().timeIntervalSince(started)
        // Stopped 5 s after the last viewer on it left (the policy's stop hold).
        let stopped = call.waitForLine("second encoder stopped", timeout: 12)
        let secondAfter = (try? call.viewers())?["secondEncoding"] as? [String: Any] ?? [:]
        let fastReport = try fast.finish(timeout: 90)
        let slowReport = try slow.finish(timeout: 90)
        let log = call.log.split(separator: "\n").filter {
            $0.contains("second encoder") || $0.contains("encoding") || $0.contains("screen") || $0.contains("sender") || $0.contains("watchdog")
        }

        /// Frames decoded a second and kbit/s received between the mark and the end, and the final stats.
        func window(_ report: [String: Any]) -> (fps: Double, kbps: Double, end: [String: Any]) {
            let end = report["stats"] as? [String: Any] ?? [:], mark = report["marked"] as? [String: Any] ?? [:]
            let frames = (end["framesDecoded"] as? Int ?? 0) - (mark["framesDecoded"] as? Int ?? 0)
            let bytes = (end["bytesReceived"] as? Int ?? 0) - (mark["bytesReceived"] as? Int ?? 0)
            let seconds = ((end["time"] as? Double ?? 0) - (mark["time"] as? Double ?? 0)) / 1000
            return seconds > 0 ? (Double(frames) / seconds, Double(bytes) * 8 / 1000 / seconds, end) : (0, 0, end)
        }
        let (slowFPS, slowKbps, slowEnd) = window(slowReport)
        let (fastFPS, fastKbps, fastEnd) = window(fastReport)
        let encoder = second["encoder"] as? [String: Any] ?? [:]
        func mean(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count) }
        let meanMainFPS = mean(mainFPS), meanMainKbps = mean(mainKbps)
        print("e2e: second encoding: slow encodings \(slowEncodings); second \(second)")
        print("e2e: slow (500 kbit/s): \(String(format: "%.1f", slowFPS)) fps decoded in the window, \(slowEnd["width"] ?? "-")x\(slowEnd["height"] ?? "-"), "
              + "\(Int(slowKbps)) kbps received, target \((slowPeer["congestion"] as? [String: Any])?["targetKbps"] ?? "-") kbit/s, "
              + "keyframes sent \(slowPeer["keyframesSent"] ?? "-"), PLIs \(slowPeer["plis"] ?? "-")")
        print("e2e: fast: \(String(format: "%.1f", fastFPS)) fps decoded in the window, \(fastEnd["width"] ?? "-")x\(fastEnd["height"] ?? "-"), "
              + "\(Int(fastKbps)) kbps received, target \((fastPeer["congestion"] as? [String: Any])?["targetKbps"] ?? "-") kbit/s, keyframes sent "
              + "\(fastPeer["keyframesSent"] ?? "-"); main encoder while the slow one was on the low encoding: \(String(format: "%.1f", meanMainFPS)) fps, "
              + "\(Int(meanMainKbps)) kbps, targets \(mainTargets.min() ?? 0)…\(mainTargets.max() ?? 0) kbps")
        let cpu = threads.map { "\($0.key) \(String(format: "%.1f", 100 * $0.value / elapsed)) %" }.sorted().joined(separator: ", ")
        print("e2e: CPU of the call's encoder threads over \(Int(elapsed)) s (of one core): \(cpu); pictures painted \(screen.painted.load(ordering: .relaxed))")
        print(agentLog.all.suffix(4).map { "e2e: agent " + $0 }.joined(separator: "\n"))
        print("e2e: source " + lastFrames.replacingOccurrences(of: "\n", with: " "))
        print("e2e: trace " + trace.enumerated().filter { $0.offset % 4 == 0 }.map(\.element).joined(separator: "; "))
        print(log.suffix(12).map { "e2e: log " + $0 }.joined(separator: "\n"))

        XCTAssertNil(slowReport["error"] as? String)
        XCTAssertNil(fastReport["error"] as? String)
        // The slow viewer was moved to the second encoding (and stayed there), which ran at half size.
        XCTAssertEqual(slowEncodings.last, "low", "the slow viewer's encodings over time: \(slowEncodings)")
        XCTAssertEqual(fastPeer["encoding"] as? String, "main")
        XCTAssertEqual(encoder["width"] as? Int, 640)
        XCTAssertEqual(encoder["height"] as? Int, 360)
        XCTAssertEqual(slowEnd["width"] as? Int, 640, "Chromium decodes the half-size encoding")
        XCTAssertEqual(fastEnd["width"] as? Int, 1280)
        // The slow viewer decodes at least 5 fps on it (the screen changes 10 times a second).
        XCTAssertGreaterThanOrEqual(slowFPS, 5, "the slow viewer's frame rate on the second encoding")
        // The fast one keeps the main encoder's rate and frame rate: the main target stays at the fast
        // viewer's (far above the slow one's 500 kbit/s), and it decodes what the encoder makes.
        XCTAssertFalse(mainTargets.isEmpty)
        XCTAssertGreaterThanOrEqual(mainTargets.min() ?? 0, 1000, "the main encoder's target while the slow viewer is on the second encoding")
        // (A sanity check only: the screen changes 10 times a second; the
        // rate policy would give 1280×720 about 10 fps at the slow viewer's 500 kbit/s too, so what shows the main
        // encoder was not dragged down is its target and output rate, asserted here.)
        XCTAssertGreaterThanOrEqual(meanMainFPS, 6, "the main encoder's frame rate")
        // (0.8: two Chromiums and two encoders share two loaded cores; a fast viewer thinned or dragged down
        // to the slow one's rate — 500 kbit/s gives 1280×720 10 fps — falls well below.)
        XCTAssertGreaterThanOrEqual(fastFPS, 0.8 * meanMainFPS, "the fast Chromium decodes the main encoder's frames")
        XCTAssertGreaterThanOrEqual(fastKbps, 0.8 * meanMainKbps, "the fast Chromium receives the main encoder's rate")
        // Clear or wrongly encrypted frames would count as failed or malformed, and not decode.
        for (name, end) in [("slow", slowEnd), ("fast", fastEnd)] {
            let counts = end["e2ee"] as? [String: Any] ?? [:]
            print("e2e: \(name) e2ee \(counts)")
            XCTAssertEqual(counts["state"] as? String, "decrypting", "\(name): \(counts)")
            XCTAssertGreaterThan(counts["decrypted"] as? Int ?? 0, 100, "\(name): \(counts)")
            XCTAssertEqual((counts["failed"] as? Int ?? -1) + (counts["malformed"] as? Int ?? -1), 0, "\(name): \(counts)")
        }
        XCTAssertNotNil(stopped, "the second encoder stopped once the slow viewer had left")
        XCTAssertEqual(secondAfter["state"] as? String, "off")
        XCTAssertEqual(secondAfter["starts"] as? Int, 1, "started once, no flapping")
        XCTAssertEqual(secondAfter["moves"] as? Int, 1, "one move, no flapping")
        XCTAssertGreaterThanOrEqual(meanMainKbps, 700, "the main encoder's output while the slow viewer is on the second encoding")
    }
}
