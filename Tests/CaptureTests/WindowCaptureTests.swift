import Foundation
import FrameWire
import Glibc
import Media
import TestSupport
import XTestSupport
import XCTest

/// `screencast-agent --window ID|TITLE` on Xvfb with a real xterm (red on red, no borders: every pixel of it
/// is #ff0000), moved and resized with xdotool, partly covered by another window, and closed.
final class WindowCaptureTests: XServerTestCase {
    override var screenSize: (width: Int, height: Int) { (640, 480) }
    let agentPath = TestPaths.executable("screencast-agent")
    private var folder: TemporaryDirectory!
    private var dump: String { folder.path("w.frames") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = try TemporaryDirectory(prefix: "sc-window")
        client.setRootColor(0x0000ff)
    }

    override func tearDown() {
        folder?.remove()
        super.tearDown()
    }

    /// Starts an xterm titled `title` at 50,60 (80x24 cells: its size in pixels is the font's) and returns its id.
    private func startXterm(_ title: String) throws -> String {
        try server.spawn("xterm", ["-T", title, "-geometry", "40x10+50+60", "-bw", "0", "-b", "0", "-bg", "#ff0000", "-fg", "#ff0000",
                                   "-cr", "#ff0000", "-e", "sh", "-c", "while :; do date; sleep 0.1; done"])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let found = try? ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"),
                                               ["DISPLAY=\(server.display)", "xdotool", "search", "--onlyvisible", "--name", "^\(title)$"], timeout: 5)
            if let found, found.status == 0, let id = found.stdout.split(separator: "\n").first { return String(id) }
            usleep(50_000)
        }
        throw XServerError(message: "xterm '\(title)' did not appear in 10 s")
    }

    private func frames(timeout: Double, until condition: ([Frame]) -> Bool) -> [Frame] {
        let deadline = Date().addingTimeInterval(timeout)
        var frames: [Frame] = []
        while Date() < deadline {
            frames = (try? DumpReader.frames(dump).frames) ?? []
            if condition(frames) { break }
            usleep(10_000)
        }
        return frames
    }

    private static func rgb(_ frame: Frame, _ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int)? {
        guard let picture = try? TestImages.decode(frame.body) else { return nil }
        let pixel = picture.rgb(x: x, y: y)
        return (Int(pixel.red), Int(pixel.green), Int(pixel.blue))
    }

    private static func near(_ pixel: (r: Int, g: Int, b: Int)?, _ r: Int, _ g: Int, _ b: Int, within: Int = 4) -> Bool {
        guard let pixel else { return false }
        return abs(pixel.r - r) <= within && abs(pixel.g - g) <= within && abs(pixel.b - b) <= within
    }

    /// The xterm's picture, also where another window covers it (Composite keeps it whole); a move changes
    /// nothing on the wire; a resize to twice the width and half the height keeps the first size on the wire,
    /// the picture scaled into it between black bars above and below; closing the xterm ends the agent with
    /// exit 0, saying which window was closed.
    func testWindowIsFollowedThroughMoveAndResizeAndItsCloseEndsTheRun() throws {
        let id = try startXterm("wintest")
        let agent = try ChildProcess(agentPath, ["--display", server.display, "--window", "wintest", "--output", dump,
                                                 "--fps", "30", "--stats-interval", "0", "--no-paint-over"])
        let first = try XCTUnwrap(frames(timeout: 10) { !$0.isEmpty }.first, agent.stderr)
        let (width, height) = (first.header.bufferWidth, first.header.bufferHeight)
        XCTAssertGreaterThan(width, 100, agent.stderr)
        XCTAssertTrue(Self.near(Self.rgb(first, width / 2, height / 2), 0xff, 0, 0), "\(String(describing: Self.rgb(first, width / 2, height / 2)))")
        XCTAssertTrue(agent.stderr.contains("method=") || agent.stderr.contains("capture area"), agent.stderr)

        // Another window over the xterm's left half: the frames still show the xterm there.
        // (The xterm prints a line every 0.1 s, red on red: each one is a change, so frames keep coming.)
        _ = client.createWindow(x: 40, y: 50, width: 60 + width / 2, height: height + 40, color: 0x00ff00)
        var count = frames(timeout: 0) { _ in true }.count
        let covered = try XCTUnwrap(frames(timeout: 5) { $0.count >= count + 3 }.last)
        XCTAssertTrue(Self.near(Self.rgb(covered, 10, height / 2), 0xff, 0, 0), "covered part: \(String(describing: Self.rgb(covered, 10, height / 2)))")
        try server.run("xdotool", ["windowmove", id, "300", "200"])
        count = frames(timeout: 0) { _ in true }.count
        let afterMove = try XCTUnwrap(frames(timeout: 5) { $0.count >= count + 3 }.last)
        XCTAssertEqual(afterMove.header.bufferWidth, width)
        XCTAssertTrue(Self.near(Self.rgb(afterMove, width / 2, height / 2), 0xff, 0, 0))
        XCTAssertFalse(agent.stderr.contains("window resized"), agent.stderr)

        // Twice as wide, half as high: scaled by 1/2 into the first size, black bars of height/4 above and below.
        try server.run("xdotool", ["windowsize", id, "\(width * 2)", "\(height / 2)"])
        XCTAssertTrue(agent.waitForOutput("window resized", timeout: 5), agent.stderr)
        let resized = frames(timeout: 5) { frames in frames.last.map { Self.near(Self.rgb($0, width / 2, 2), 0, 0, 0, within: 8) } ?? false }
        let boxed = try XCTUnwrap(resized.last)
        XCTAssertEqual(boxed.header.bufferWidth, width, "the size on the wire stays the first")
        XCTAssertEqual(boxed.header.bufferHeight, height)
        XCTAssertTrue(Self.near(Self.rgb(boxed, width / 2, 2), 0, 0, 0, within: 8), "top bar: \(String(describing: Self.rgb(boxed, width / 2, 2)))")
        XCTAssertTrue(Self.near(Self.rgb(boxed, width / 2, height - 3), 0, 0, 0, within: 8), "bottom bar")
        XCTAssertTrue(Self.near(Self.rgb(boxed, width / 2, height / 2), 0xff, 0, 0), "the picture: \(String(describing: Self.rgb(boxed, width / 2, height / 2)))")
        XCTAssertTrue(Self.near(Self.rgb(boxed, 3, height / 2), 0xff, 0, 0, within: 8), "the picture spans the width")

        print("window: \(width)x\(height) on the wire; after the resize top bar \(String(describing: Self.rgb(boxed, width / 2, 2))), centre \(String(describing: Self.rgb(boxed, width / 2, height / 2))), covered part \(String(describing: Self.rgb(covered, 10, height / 2)))")
        let closed = Date()
        try server.run("xdotool", ["windowkill", id])
        XCTAssertEqual(agent.waitForExit(timeout: 5), 0, agent.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(closed), 3)
        XCTAssertTrue(agent.stderr.contains("('wintest') was closed"), agent.stderr)
        XCTAssertTrue(agent.stderr.contains("stop=source-ended"), agent.stderr)
        XCTAssertTrue(agent.stderr.contains("method=composite+mit-shm"), agent.stderr)
    }

    /// A title no window has is bad usage (exit 64) naming it; `--window pick` is the portal's, `--window`
    /// with `--monitor` is refused.
    func testUnknownWindowAndBadCombinationsAreBadUsage() throws {
        let cases: [([String], String)] = [
            (["--window", "no such title"], "--window: no window titled 'no such title'"),
            (["--window", "0x7fffff0"], "--window: no window 0x7fffff0"),
            (["--window", "pick", "--source", "x11"], "--window pick asks the portal's chooser"),
            (["--window", "wintest", "--monitor", "0"], "--window excludes --monitor and --region"),
            (["--window", "wintest", "--source", "portal"], "is for X11"),
        ]
        for (arguments, message) in cases {
            let run = try ProcessRunner.run(agentPath, ["--display", server.display, "--output", folder.path("x.frames")] + arguments, timeout: 20)
            XCTAssertEqual(run.status, 64, "\(arguments): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains(message), "\(arguments): \(run.stderr)")
        }
    }
}
