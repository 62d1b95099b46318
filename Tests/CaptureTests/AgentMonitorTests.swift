import Capture
import Foundation
import FrameWire
import Glibc
import TestSupport
import XCTest
import XTestSupport

/// `screencast-agent --monitor NAME` under Xvnc follows the monitor when `xrandr --setmonitor` redefines
/// it while the screen keeps its size (no screen resize happens, only the monitor list changes).
final class AgentMonitorTests: XServerTestCase {
    override var serverKind: XServerProcess.Kind { .xvnc }
    override var screenSize: (width: Int, height: Int) { (640, 480) }
    private var folder: TemporaryDirectory!

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = try TemporaryDirectory(prefix: "sc-monitor")
    }

    override func tearDown() {
        folder?.remove()
        super.tearDown()
    }

    private let pattern = TestImages.pattern(width: 640, height: 480)
    /// Three shapes of "share": the first, another size elsewhere, then the same size moved.
    private let shapes = [
        CaptureRect(x: 20, y: 30, width: 300, height: 200),
        CaptureRect(x: 400, y: 300, width: 200, height: 150),
        CaptureRect(x: 60, y: 250, width: 200, height: 150),
    ]

    /// Defines monitor "share" as `area` (`xrandr --setmonitor`), after deleting it when `replacing`: a
    /// monitor name can be defined only once, so a redefinition deletes it first.
    private func define(_ area: CaptureRect, replacing: Bool) throws {
        try server.run("xrandr", (replacing ? ["--delmonitor", "share"] : []) + [
            "--setmonitor", "share", "\(area.width)/80x\(area.height)/60+\(area.x)+\(area.y)", "none",
        ])
    }

    /// The pattern on the root, "share" defined as the first shape, and the agent capturing it into a dump.
    private func startAgent() throws -> (ChildProcess, dump: String) {
        client.setRootBackground(pattern)
        try define(shapes[0], replacing: false)
        let dump = folder.path("monitor.frames")
        let agent = try ChildProcess(TestPaths.executable("screencast-agent"), [
            "--display", server.display, "--monitor", "share", "--output", dump, "--cursor", "off", "--quality", "90",
            "--keepalive", "0.2", "--no-paint-over",
        ])
        XCTAssertTrue(agent.waitForOutput("capture area what=", timeout: 5), agent.stderr)
        return (agent, dump)
    }

    /// Delete and define in one xrandr run (two requests, each followed by the root's ConfigureNotify).
    func testRedefinedMonitorIsFollowedInSizeAndPosition() throws {
        let (agent, dump) = try startAgent()
        for (step, area) in shapes.enumerated().dropFirst() {
            usleep(400_000)
            try define(area, replacing: true)
            XCTAssertTrue(agent.waitForOutput("area=\(area)", timeout: 3), "step \(step), \(area) not followed:\n\(agent.stderr)")
        }
        usleep(400_000)
        agent.send(SIGTERM)
        XCTAssertEqual(agent.waitForExit(timeout: 5), 0, agent.stderr)
        XCTAssertEqual(agent.stderr.components(separatedBy: "capture area changed").count - 1, 2, agent.stderr)
        try checkShapes(dump, expected: [0, 1, 2])
    }

    /// Delete, then define in a second xrandr run 0.5 s later: the agent waits for the monitor (sending
    /// keepalives of the last frame), then follows it.
    func testAMonitorDeletedThenDefinedAgainIsFollowed() throws {
        let (agent, dump) = try startAgent()
        usleep(400_000)
        try server.run("xrandr", ["--delmonitor", "share"])
        XCTAssertTrue(agent.waitForOutput("monitor gone", timeout: 3), agent.stderr)
        usleep(500_000)
        XCTAssertNil(agent.waitForExit(timeout: 0), "still running while the monitor is gone:\n\(agent.stderr)")
        try define(shapes[1], replacing: false)
        XCTAssertTrue(agent.waitForOutput("area=\(shapes[1])", timeout: 3), agent.stderr)
        usleep(400_000)
        agent.send(SIGTERM)
        XCTAssertEqual(agent.waitForExit(timeout: 5), 0, agent.stderr)
        XCTAssertTrue(agent.stderr.contains("monitor back"), agent.stderr)
        try checkShapes(dump, expected: [0, 1])
    }

    /// A monitor that stays gone ends the agent with the usual error once the absence limit has passed.
    func testAMonitorDeletedForGoodEndsTheAgent() throws {
        let (agent, _) = try startAgent()
        try server.run("xrandr", ["--delmonitor", "share"])
        XCTAssertEqual(agent.waitForExit(timeout: CaptureConfiguration.monitorAbsenceLimitSeconds + 5), 1, agent.stderr)
        let lines = agent.stderr.split(separator: "\n")
        XCTAssertTrue(lines.contains { $0.contains("monitor gone") && $0.contains("limit.s=2.0") }, agent.stderr)
        XCTAssertEqual(lines.last, "screencast-agent: no monitor 'share' (monitors: 0=VNC-0)", agent.stderr)
    }

    /// Each frame of `dump` is the crop of one of the shapes (by its content, 35 dB at quality 90); the
    /// shapes shown, in order, are `expected`.
    private func checkShapes(_ dump: String, expected: [Int], file: StaticString = #filePath, line: UInt = #line) throws {
        let (frames, _) = try DumpReader.frames(dump)
        var shown: [Int] = []
        for frame in frames {
            let picture = try TestImages.decode(frame.body)
            let scores = shapes.map { area -> Double in
                guard area.width == picture.width, area.height == picture.height else { return 0 }
                return TestImages.psnr(picture, TestImages.crop(pattern, area))
            }
            let best = scores.indices.max { scores[$0] < scores[$1] }!
            XCTAssertGreaterThanOrEqual(scores[best], 35, "frame \(frame.header.sequence.map(String.init) ?? "-"): \(scores)",
                                        file: file, line: line)
            XCTAssertEqual([frame.header.bufferWidth, frame.header.bufferHeight], [picture.width, picture.height], file: file, line: line)
            if shown.last != best { shown.append(best) }
        }
        XCTAssertEqual(shown, expected, "the shapes in the order they were defined (\(frames.count) frames)", file: file, line: line)
    }
}
