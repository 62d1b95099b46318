import Foundation
import Glibc
import Media
import TestSupport
import XCTest
import XTestSupport

/// The colour chart (`ColourChart`: grey steps 0, 16, 17 … 235, 240, 254, 255, saturated and mid colours)
/// shown on Xvfb, captured by the real `screencast-agent`, shared by a real `screencast-call`, and looked at
/// by real decoders: aiortc over WHEP (libvpx; its picture shown by libswscale, and its samples by the
/// BT.601 formulas), headless Chromium (its canvas), the call's IVF recording decoded by libvpx in-process
/// and by ffmpeg. Each must show every flat patch within
/// 4 levels of the screen in RGB, measured at the patch centre, and a whole-picture PSNR ≥ 38 dB against
/// the chart once the paint-over (JPEG wire) and the call's refinement have arrived.
///
/// Everything runs in a loopback-only network namespace. The three wires (default JPEG, `--format i420`,
/// `--format shm`) each get a run of their own.
final class ColourChartTests: XCTestCase {
    private let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium")
    private let chromedriver = URL(fileURLWithPath: "/usr/bin/chromedriver")
    private let ffmpeg = URL(fileURLWithPath: "/usr/bin/ffmpeg")

    func testTheChartOverTheJPEGWireReachesEveryViewerInItsColours() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ColourChartTests/testTheChartOverTheJPEGWireReachesEveryViewerInItsColours", timeout: 180)
        }
        try share(agentArguments: [], wire: "JPEG wire")
    }

    func testTheChartOverTheI420WireReachesEveryViewerInItsColours() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ColourChartTests/testTheChartOverTheI420WireReachesEveryViewerInItsColours", timeout: 180)
        }
        try share(agentArguments: ["--format", "i420"], wire: "I420 wire")
    }

    /// The shared-memory wire: the call maps the agent's memfd and converts the BGRX picture once.
    func testTheChartOverTheSharedMemoryWireReachesEveryViewerInItsColours() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ColourChartTests/testTheChartOverTheSharedMemoryWireReachesEveryViewerInItsColours", timeout: 180)
        }
        try share(agentArguments: ["--format", "shm"], wire: "shm wire")
    }

    /// One share of the chart, seen by every viewer; each reading checked against the chart.
    private func share(agentArguments: [String], wire: String) throws {
        let agentPath = TestPaths.executable("screencast-agent")
        guard EndToEnd.requireTools([EndToEnd.venvPython, EndToEnd.systemPython, chromium, chromedriver, ffmpeg,
                                     TestPaths.executable("screencast-call"), agentPath]) else { return }
        let work = try TemporaryDirectory(prefix: "sc-chart")
        defer { work.remove() }
        let server = try XServerProcess(.xvfb, width: ColourChart.width, height: ColourChart.height)
        defer { server.stop() }
        let client = try XTestClient(display: server.display)
        client.setRootBackground(ColourChart.image())

        let ivf = work.path("call.ivf")
        let call = try CallUnderTest(["--record-ivf", ivf])
        defer { call.stop() }
        let agentLog = Pipe()
        let agent = try ProcessRunner.start(
            agentPath, ["--display", server.display, "--socket", call.folder.path("agent.sock"), "--cursor", "off"] + agentArguments,
            stderr: agentLog)
        let agentLines = PipeLines(agentLog)
        defer { if agent.isRunning { kill(agent.processIdentifier, SIGKILL); agent.waitUntilExit() } }
        XCTAssertNotNil(call.waitForLine("encoder created", timeout: 15), "the call never encoded the screen:\n\(call.log)")

        // Both viewers at once. Each join asks for a keyframe, which restarts the still picture's refinement
        // for every viewer (one stream: the repeats, once a second at the best quantizer, take a few seconds
        // to converge), so each takes its picture ≥ 6 s after the later join (Chromium's, 2–5 s in): aiortc
        // at 14 s, Chromium 8 s after it has decoded 10 frames. The paint-over comes 1 s after the first frame.
        let rgb = work.path("aiortc.rgb"), rgba = work.path("chromium.rgba"), yuv = work.path("aiortc.yuv")
        let aiortc = try PythonPeer(EndToEnd.venvPython, "whep_viewer.py",
                                    ["--url", call.whepURL, "--seconds", "14", "--save-last-rgb", rgb, "--save-last", yuv])
        let profile = work.path("chromium")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let browser = try PythonPeer(
            EndToEnd.systemPython, "chromium_viewer.py",
            ["--url", call.baseURL + "/", "--profile", profile + "/profile", "--frames", "10", "--timeout", "40", "--settle", "8",
             "--save-rgba", rgba],
            environment: ["HOME": profile, "TMPDIR": profile])
        let aiortcReport = try aiortc.finish(timeout: 60)
        let browserReport = try browser.finish(timeout: 90)
        XCTAssertNil(((aiortcReport["viewers"] as? [[String: Any]])?.first)?["error"] as? String, "\(aiortcReport)")
        XCTAssertNil(browserReport["error"] as? String, "\(browserReport)")

        kill(agent.processIdentifier, SIGINT)
        XCTAssertFalse(ProcessRunner.wait(for: agent, timeout: 10), "the agent did not stop")
        XCTAssertEqual(call.stop(), 0, "the call's exit (its recording is complete)")
        let paintOvers = agentLines.all.last { $0.contains("summary") } ?? ""
        print("e2e: chart over the \(wire): agent \(paintOvers)")

        var readings: [(String, ColourChart.Reading)] = []
        // aiortc's picture as libswscale shows it (what a player built on it shows), and its decoded samples
        // as they are, shown by the BT.601 formulas (the stream itself, apart from any viewer's conversion).
        readings.append(("aiortc, libswscale", ColourChart.read(packed: try bytes(rgb), channels: 3)))
        let received = try I420Buffer(width: ColourChart.width, height: ColourChart.height, bytes: try bytes(yuv), colorSpace: .bt601Limited)
        readings.append(("aiortc, BT.601", ColourChart.read(received)))
        readings.append(("Chromium", ColourChart.read(packed: try bytes(rgba), channels: 4)))
        let recorded = try XCTUnwrap(try decodeIVF(ivf).frames.last?.picture, "the recording is empty")
        readings.append(("IVF, libvpx", ColourChart.read(recorded)))
        readings.append(("IVF, ffmpeg", ColourChart.read(packed: try ffmpegLastFrame(ivf, folder: work), channels: 3)))
        for (viewer, reading) in readings {
            print("e2e: chart over the \(wire), \(viewer): \(reading); over 3: \(reading.offenders(tolerance: 3))")
            XCTAssertLessThanOrEqual(reading.worstDifference, 4, "\(wire), \(viewer): \(reading.offenders(tolerance: 4))")
            XCTAssertGreaterThanOrEqual(reading.psnr, 38, "\(wire), \(viewer): \(reading)")
        }
    }

    /// A file's bytes, which must hold one chart-sized picture.
    private func bytes(_ path: String) throws -> [UInt8] {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: path), "\(path) was not written")
        return [UInt8](data)
    }

    /// The recording's last frame as ffmpeg decodes and shows it: packed RGB24 (libswscale, BT.601 limited
    /// range, the stream's default).
    private func ffmpegLastFrame(_ ivf: String, folder: TemporaryDirectory) throws -> [UInt8] {
        let out = folder.path("ffmpeg.rgb")
        // Every frame once, as recorded (passthrough: no frames made up for a constant rate).
        let result = try ProcessRunner.run(
            ffmpeg, ["-v", "error", "-i", ivf, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", "-y", out], timeout: 60)
        XCTAssertEqual(result.status, 0, "ffmpeg: \(result.stderr)")
        let all = try bytes(out)
        let frame = ColourChart.width * ColourChart.height * 3
        XCTAssertEqual(all.count % frame, 0, "whole frames")
        XCTAssertGreaterThan(all.count, 0, "ffmpeg decoded nothing")
        return Array(all.suffix(frame))
    }
}
