import Foundation
import FrameWire
import Glibc
import Media
import TestSupport
import XCTest

/// `screencast-agent --source portal` on a real headless Wayland desktop (``WaylandDesktop``): the portal's
/// ScreenCast session, the PipeWire stream, the frames on the wire checked against the scene, the restore
/// token, and the stream ended from outside. Each test brings its own desktop up and down (≈0.2 s) and has
/// time limits throughout.
final class PortalCaptureTests: XCTestCase {
    let agent = TestPaths.executable("screencast-agent")
    private var folder: TemporaryDirectory!
    private var desktop: WaylandDesktop!

    override func setUpWithError() throws {
        folder = try TemporaryDirectory(prefix: "sc-portal")
        desktop = try WaylandDesktop()
    }

    override func tearDown() {
        desktop?.down()
        folder?.remove()
    }

    private var socket: String { folder.path("call/agent.sock") }

    /// The agent on the desktop, its restore token kept under this test's folder.
    private func startAgent(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"),
                         desktop.command(agent, arguments, extra: ["XDG_STATE_HOME": folder.path("state")]))
    }

    /// A stand-in for the call: records what arrives on the socket to `name`.
    private func startCall(_ name: String) throws -> ChildProcess {
        let call = try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", AgentSocketTests.callStandIn, socket, folder.path(name)])
        XCTAssertTrue(call.waitForOutput("listening", timeout: 5), call.stderr)
        return call
    }

    /// The recording's frames once `condition` holds (or the time is up).
    private func frames(_ name: String, timeout: Double, until condition: ([Frame]) -> Bool) -> [Frame] {
        let deadline = Date().addingTimeInterval(timeout)
        var frames: [Frame] = []
        while Date() < deadline {
            frames = (try? DumpReader.frames(folder.path(name)).frames) ?? []
            if condition(frames) { break }
            usleep(10_000)
        }
        return frames
    }

    static func rgb(_ image: BGRXImage, _ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int) {
        let i = y * image.stride + x * 4
        return (Int(image.bytes[i + 2]), Int(image.bytes[i + 1]), Int(image.bytes[i]))
    }

    static func near(_ pixel: (r: Int, g: Int, b: Int), _ r: Int, _ g: Int, _ b: Int) -> Bool {
        abs(pixel.r - r) <= 4 && abs(pixel.g - g) <= 4 && abs(pixel.b - b) <= 4
    }

    /// The scene's colours arrive on the socket (JPEG), a change on screen follows, and the compositor's
    /// damage becomes Buffer-Damage.
    func testPortalFramesShowTheSceneAndFollowAChange() throws {
        let call = try startCall("wire.frames")
        let agent = try startAgent(["--source", "portal", "--socket", socket, "--fps", "30", "--stats-interval", "0"])
        let first = frames("wire.frames", timeout: 15) { $0.count >= 3 }
        XCTAssertGreaterThanOrEqual(first.count, 3, agent.stderr)
        let frame = try XCTUnwrap(first.first)
        XCTAssertEqual(frame.header.bufferWidth, 1280)
        XCTAssertEqual(frame.header.bufferHeight, 720)
        let picture = try TestImages.decode(frame.body)
        let background = Self.rgb(picture, 800, 400), window = Self.rgb(picture, 160, 120)
        XCTAssertTrue(Self.near(background, 0x1e, 0x90, 0xff), "background \(background), want #1e90ff ±4")
        XCTAssertTrue(Self.near(window, 0xff, 0, 0), "window \(window), want #ff0000 ±4")
        // The red window prints 5 times a second: the compositor's damage is that line, not the screen.
        let partial = first.dropFirst().compactMap(\.header.damage).filter { rects in
            !rects.isEmpty && rects.allSatisfy { $0.width * $0.height < 1280 * 720 / 4 }
        }
        XCTAssertFalse(partial.isEmpty, "no frame carried the compositor's damage: \(first.map { $0.header.damage.map { "\($0)" } ?? "nil" })")

        // A change on screen reaches the wire.
        let before = first.count
        let asked = Date()
        try desktop.swaymsg(["output", "HEADLESS-1", "bg", "#00ff00", "solid_color"])
        let after = frames("wire.frames", timeout: 5) { frames in
            frames.dropFirst(before).contains { (try? TestImages.decode($0.body)).map { Self.near(Self.rgb($0, 800, 400), 0, 0xff, 0) } ?? false }
        }
        let seconds = Date().timeIntervalSince(asked)
        let green = after.dropFirst(before).first { (try? TestImages.decode($0.body)).map { Self.near(Self.rgb($0, 800, 400), 0, 0xff, 0) } ?? false }
        XCTAssertNotNil(green, "the green background never reached the wire; \(agent.stderr)")
        XCTAssertLessThan(seconds, 1.0, "the change took \(seconds) s to reach the wire (swaymsg included)")
        print("portal: background change on the wire after \(Int(seconds * 1000)) ms (swaymsg and polling included)")

        agent.send(SIGTERM)
        XCTAssertEqual(agent.waitForExit(timeout: 10), 0, agent.stderr)
        XCTAssertTrue(agent.stderr.contains("method=portal"), agent.stderr)
        // xdg-desktop-portal-wlr offers hidden and embedded only (3): no metadata mode, the compositor draws it.
        XCTAssertTrue(agent.stderr.contains("cursor_modes=3"), agent.stderr)
        XCTAssertTrue(agent.stderr.contains("cursor mode mode=\"embedded (drawn by the compositor)\""), agent.stderr)
        _ = call.waitForExit(timeout: 5)
    }

    /// The second run restores the first run's choice with the token (no chooser: xdpw says "restoring
    /// session from data"); the token file is 0600; --forget-portal-choice drops it.
    func testSecondRunUsesTheRestoreTokenAndForgetDropsIt() throws {
        let tokenPath = folder.path("state/screencast/portal-restore-token")
        let first = try startAgent(["--source", "portal", "--output", folder.path("1.frames"), "--frames", "1"])
        XCTAssertEqual(first.waitForExit(timeout: 20), 0, first.stderr)
        var info = stat()
        XCTAssertEqual(stat(tokenPath, &info), 0, "no restore token kept at \(tokenPath)")
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        let firstToken = try String(contentsOfFile: tokenPath, encoding: .utf8)
        XCTAssertFalse(desktop.portalBackendLog.contains("restoring session from data"))

        let second = try startAgent(["--source", "portal", "--output", folder.path("2.frames"), "--frames", "1"])
        XCTAssertEqual(second.waitForExit(timeout: 20), 0, second.stderr)
        XCTAssertTrue(second.stderr.contains("chosen before (restore token)"), second.stderr)
        XCTAssertTrue(desktop.portalBackendLog.contains("restoring session from data"), "xdpw did not restore the session")
        // The token the portal gave this time is the one kept (xdg-desktop-portal 1.16 with xdpw gives the same).
        XCTAssertFalse(try String(contentsOfFile: tokenPath, encoding: .utf8).isEmpty, "no token kept after the second run (\(firstToken))")

        let restored = desktop.portalBackendLog.components(separatedBy: "restoring session from data").count
        let third = try startAgent(["--source", "portal", "--forget-portal-choice", "--output", folder.path("3.frames"), "--frames", "1"])
        XCTAssertEqual(third.waitForExit(timeout: 20), 0, third.stderr)
        XCTAssertTrue(third.stderr.contains("forgot the portal's saved choice"), third.stderr)
        XCTAssertEqual(desktop.portalBackendLog.components(separatedBy: "restoring session from data").count, restored,
                       "--forget-portal-choice still restored")
    }

    /// SIGINT while the portal has not answered (its backend stopped with SIGSTOP: a chooser waiting for a person
    /// looks the same from here): the agent stops waiting at once and exits 0.
    func testSignalWhileThePortalWaitsEndsTheAgentAtOnce() throws {
        let backend = try XCTUnwrap(desktop.pid("xdpw"))
        kill(backend, SIGSTOP)
        defer { kill(backend, SIGCONT) }
        let agent = try startAgent(["--source", "portal", "--output", folder.path("a.frames")])
        XCTAssertTrue(agent.waitForOutput("screen-cast portal version", timeout: 15), agent.stderr)
        usleep(700_000)
        XCTAssertNil(agent.waitForExit(timeout: 0.1), "the agent should still wait for the portal: \(agent.stderr)")
        let asked = Date()
        agent.send(SIGINT)
        XCTAssertEqual(agent.waitForExit(timeout: 5), 0, agent.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(asked), 2, agent.stderr)
        XCTAssertTrue(agent.stderr.contains("stopped before the capture started"), agent.stderr)
    }

    /// The cast ended from outside (here: the portal backend goes, so its PipeWire node does; xdpw 0.7.0 never
    /// sends Session::Closed, which ends the run the same way): the agent says so and exits 0.
    func testStreamEndedFromOutsideEndsTheAgentWithExitZero() throws {
        let agent = try startAgent(["--source", "portal", "--output", folder.path("a.frames"), "--stats-interval", "0"])
        XCTAssertTrue(agent.waitForOutput("capture area", timeout: 15), agent.stderr)
        let backend = try XCTUnwrap(desktop.pid("xdpw"))
        kill(backend, SIGTERM)
        let ended = Date()
        XCTAssertEqual(agent.waitForExit(timeout: 10), 0, agent.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(ended), 5)
        XCTAssertTrue(agent.stderr.contains("capture ended from outside"), agent.stderr)
        XCTAssertTrue(agent.stderr.contains("stop=source-ended"), agent.stderr)
    }
}

/// The agent where there is no portal to ask: no desktop needed.
final class PortalMissingTests: XCTestCase {
    let agent = TestPaths.executable("screencast-agent")
    private var folder: TemporaryDirectory!

    override func setUpWithError() throws { folder = try TemporaryDirectory(prefix: "sc-noportal") }

    override func tearDown() { folder?.remove() }

    /// A private session bus with no services at all (stopped by the caller): its address.
    private func privateBus(_ name: String) throws -> (bus: ChildProcess, address: String) {
        let config = folder.path(name + ".conf")
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>session</type><listen>unix:path=\(folder.path(name))</listen>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
            </busconfig>
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let bus = try ChildProcess(URL(fileURLWithPath: "/usr/bin/dbus-daemon"), ["--config-file=\(config)", "--nofork", "--nopidfile"])
        let deadline = Date().addingTimeInterval(5)
        while !FileManager.default.fileExists(atPath: folder.path(name)), Date() < deadline { usleep(10_000) }
        return (bus, "unix:path=\(folder.path(name))")
    }

    /// No portal on the bus (a private bus with no services at all), or no bus: exit 1 at once with what is
    /// missing, never a hang.
    func testMissingPortalIsAClearFailureNotAHang() throws {
        let (bus, address) = try privateBus("bus")
        defer { bus.send(SIGTERM); _ = bus.waitForExit(timeout: 5) }

        for (bus, expected) in [(address, "xdg-desktop-portal is not on the session bus"),
                                ("unix:path=\(folder.path("none"))", "no D-Bus session bus")] {
            let started = Date()
            let run = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), [
                "-i", "PATH=/usr/bin:/bin", "HOME=\(folder.path("home"))", "XDG_RUNTIME_DIR=\(folder.path(""))",
                "DBUS_SESSION_BUS_ADDRESS=\(bus)", agent.path, "--source", "portal", "--output", folder.path("x.frames"),
            ], timeout: 20)
            XCTAssertEqual(run.status, 1, run.stderr)
            XCTAssertTrue(run.stderr.contains(expected), run.stderr)
            XCTAssertLessThan(Date().timeIntervalSince(started), 8, "took \(Date().timeIntervalSince(started)) s")
        }
    }

    /// The portal refuses (the person cancels its dialog: Start's Response is 1; here a relay portal that
    /// denies, `Peers/relay_portal.py --deny`): exit 1 at once, saying the request was cancelled.
    func testRefusedChooserIsAClearFailure() throws {
        let (bus, address) = try privateBus("deny-bus")
        defer { bus.send(SIGTERM); _ = bus.waitForExit(timeout: 5) }
        let script = TestPaths.packageRoot.appendingPathComponent("Tests/EndToEndTests/Peers/relay_portal.py").path
        let relay = try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-u", script, "--serve", address, "--deny"])
        defer { relay.send(SIGTERM); _ = relay.waitForExit(timeout: 5) }
        var owned = false
        let deadline = Date().addingTimeInterval(10)
        while !owned, Date() < deadline {
            let check = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/dbus-send"), [
                "--bus=\(address)", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.NameHasOwner",
                "string:org.freedesktop.portal.Desktop",
            ], timeout: 5)
            owned = check.stdout.contains("true")
            if !owned { usleep(20_000) }
        }
        XCTAssertTrue(owned, "the relay portal did not come up: \(relay.stderr)")
        let started = Date()
        let run = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), [
            "-i", "PATH=/usr/bin:/bin", "HOME=\(folder.path("home"))", "XDG_STATE_HOME=\(folder.path("state"))",
            "DBUS_SESSION_BUS_ADDRESS=\(address)", agent.path, "--source", "portal", "--output", folder.path("x.frames"),
        ], timeout: 20)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("the screen-cast portal refused: starting the screen cast: the request was cancelled"), run.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }
}
