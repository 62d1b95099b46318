import Foundation
import FrameWire
import Glibc
import Media
import TestSupport
import XCTest

/// Faults on the portal path, on a real headless Wayland desktop (``WaylandDesktop``): the PipeWire daemon
/// killed and restarted (the share resumes), the output resized (followed), the cast stopped by the portal
/// backend (the agent ends with exit 0). The agent writes a dump (`--output`), read while it grows.
final class PortalFaultTests: XCTestCase {
    let agent = TestPaths.executable("screencast-agent")
    private var folder: TemporaryDirectory!
    private var desktop: WaylandDesktop!
    /// Daemons this test started itself (a restarted PipeWire and WirePlumber), stopped before the desktop.
    private var daemons: [ChildProcess] = []

    override func setUpWithError() throws {
        folder = try TemporaryDirectory(prefix: "sc-portalfault")
        desktop = try WaylandDesktop()
    }

    override func tearDown() {
        for daemon in daemons.reversed() {
            daemon.send(SIGTERM)
            _ = daemon.waitForExit(timeout: 5)
        }
        daemons = []
        desktop?.down()
        folder?.remove()
    }

    private var dump: String { folder.path("a.frames") }

    private func startAgent(_ extra: [String] = []) throws -> ChildProcess {
        try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), desktop.command(agent, [
            "--source", "portal", "--output", dump, "--stats-interval", "0", "--fps", "30",
        ] + extra, extra: ["XDG_STATE_HOME": folder.path("state")]))
    }

    /// The dump's frames once `condition` holds (or the time is up).
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

    private static func shows(_ frame: Frame, x: Int, y: Int, _ r: Int, _ g: Int, _ b: Int) -> Bool {
        guard let picture = try? TestImages.decode(frame.body) else { return false }
        return PortalCaptureTests.near(PortalCaptureTests.rgb(picture, x, y), r, g, b)
    }

    /// PipeWire killed (SIGKILL; WirePlumber ends with it) and started again, with the portal backend restarted
    /// (xdg-desktop-portal-wlr 0.7.0 does not reconnect to a new daemon: its Start never answers; bus activation
    /// starts a new one): the agent asks the portal again with the restore token, says the share resumed, and
    /// a change made afterwards reaches the dump. The run then ends with exit 0.
    func testPipeWireRestartedTheShareResumes() throws {
        let agent = try startAgent()
        XCTAssertTrue(agent.waitForOutput("capture area", timeout: 15), agent.stderr)
        let pipewire = try XCTUnwrap(desktop.pid("pipewire")), backend = try XCTUnwrap(desktop.pid("xdpw"))
        let killed = Date()
        kill(pipewire, SIGKILL)
        kill(backend, SIGTERM)
        XCTAssertTrue(agent.waitForOutput("the PipeWire daemon went away; asking the portal again", timeout: 5), agent.stderr)
        // A service manager would start them again: here the test does (the desktop's environment).
        daemons.append(try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), desktop.command(URL(fileURLWithPath: "/usr/bin/pipewire"), [])))
        let socket = (desktop.environment["XDG_RUNTIME_DIR"] ?? "") + "/pipewire-0"
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, access(socket, F_OK) != 0 { usleep(10_000) }
        daemons.append(try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), desktop.command(URL(fileURLWithPath: "/usr/bin/wireplumber"), [])))
        XCTAssertTrue(agent.waitForOutput("the share resumed on a new PipeWire stream", timeout: 20), agent.stderr)
        let gap = Date().timeIntervalSince(killed)
        XCTAssertTrue(agent.stderr.contains("chosen before (restore token)"), "asked again without the token: \(agent.stderr)")
        XCTAssertFalse(agent.stderr.contains("capture ended from outside"), agent.stderr)

        let before = frames(timeout: 0) { _ in true }.count
        try desktop.swaymsg(["output", "HEADLESS-1", "bg", "#00ff00", "solid_color"])
        let after = frames(timeout: 10) { $0.dropFirst(before).contains { Self.shows($0, x: 800, y: 400, 0, 0xff, 0) } }
        XCTAssertTrue(after.dropFirst(before).contains { Self.shows($0, x: 800, y: 400, 0, 0xff, 0) },
                      "no green frame after the restart (\(after.count - before) frames since): \(agent.stderr)")
        print("portal: PipeWire killed -> share resumed after \(Int(gap * 1000)) ms")
        agent.send(SIGTERM)
        XCTAssertEqual(agent.waitForExit(timeout: 10), 0, agent.stderr)
        XCTAssertTrue(agent.stderr.contains("stop=signal"), agent.stderr)
    }

    /// PipeWire killed and not back (`--portal-reconnect 2`): the agent asks the portal again for 2 s (xdpw,
    /// still up without a daemon, never answers Start), then ends with exit 1 saying why; never a hang.
    func testPipeWireGoneForGoodEndsTheAgentAfterTheReconnectLimit() throws {
        let agent = try startAgent(["--portal-reconnect", "2"])
        XCTAssertTrue(agent.waitForOutput("capture area", timeout: 15), agent.stderr)
        kill(try XCTUnwrap(desktop.pid("pipewire")), SIGKILL)
        let killed = Date()
        XCTAssertEqual(agent.waitForExit(timeout: 15), 1, agent.stderr)
        let seconds = Date().timeIntervalSince(killed)
        XCTAssertGreaterThanOrEqual(seconds, 2)
        XCTAssertLessThan(seconds, 6)
        XCTAssertTrue(agent.stderr.contains("the portal gave no new stream within 2 s"), agent.stderr)
        print("portal: PipeWire gone for good -> exit 1 after \(String(format: "%.1f", seconds)) s (--portal-reconnect 2)")
    }

    /// The output resized (`swaymsg output HEADLESS-1 resolution 1024x768`): PipeWire renegotiates, the frames
    /// follow at the new size (the agent says `capture area changed`) with the scene still in its colours.
    func testOutputResizeIsFollowed() throws {
        let agent = try startAgent()
        let first = frames(timeout: 15) { !$0.isEmpty }
        XCTAssertEqual(first.first?.header.bufferWidth, 1280, agent.stderr)
        try desktop.swaymsg(["output", "HEADLESS-1", "resolution", "1024x768"])
        let resized = frames(timeout: 10) { $0.contains { $0.header.bufferWidth == 1024 } }
        let frame = try XCTUnwrap(resized.first { $0.header.bufferWidth == 1024 }, "no 1024x768 frame: \(agent.stderr)")
        XCTAssertEqual(frame.header.bufferHeight, 768)
        XCTAssertTrue(Self.shows(frame, x: 1000, y: 740, 0x1e, 0x90, 0xff), "the background at the new bottom-right corner")
        XCTAssertTrue(Self.shows(frame, x: 160, y: 120, 0xff, 0, 0), "the red window")
        XCTAssertTrue(agent.stderr.contains("capture area changed"), agent.stderr)
        agent.send(SIGTERM)
        XCTAssertEqual(agent.waitForExit(timeout: 10), 0, agent.stderr)
        XCTAssertTrue(agent.stderr.contains("size=1024x768"), agent.stderr)
    }

    /// The cast stopped by the desktop's side: the backend's own Session.Close (what a compositor's "stop
    /// sharing" does in xdg-desktop-portal-wlr; the frontend's Session.Close is refused to anyone but the
    /// session's owner, "Unmatched caller"). xdpw 0.7.0 sends no Session::Closed but removes its stream: the
    /// agent says the capture ended from outside and exits 0.
    func testBackendClosingTheSessionEndsTheAgentWithExitZero() throws {
        let agent = try startAgent()
        XCTAssertTrue(agent.waitForOutput("capture area", timeout: 15), agent.stderr)
        let line = try XCTUnwrap(desktop.portalBackendLog.split(separator: "\n").last { $0.contains("session_handle: ") })
        let handle = String(line.split(separator: " ").last!)
        let close = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), desktop.command(URL(fileURLWithPath: "/usr/bin/gdbus"), [
            "call", "--session", "-d", "org.freedesktop.impl.portal.desktop.wlr", "-o", handle,
            "-m", "org.freedesktop.impl.portal.Session.Close",
        ]), timeout: 10)
        XCTAssertEqual(close.status, 0, close.stderr)
        let closed = Date()
        XCTAssertEqual(agent.waitForExit(timeout: 10), 0, agent.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(closed), 3)
        XCTAssertTrue(agent.stderr.contains("capture ended from outside"), agent.stderr)
        XCTAssertTrue(agent.stderr.contains("stop=source-ended"), agent.stderr)
    }

    /// `--window pick` asks the portal for a window source; xdg-desktop-portal-wlr 0.7 offers monitors only
    /// (AvailableSourceTypes 1): the agent says so at once, exit 1, without asking for a session.
    func testWindowOnAPortalWithoutWindowSourcesIsAClearFailure() throws {
        let agent = try startAgent(["--window", "pick"])
        let started = Date()
        XCTAssertEqual(agent.waitForExit(timeout: 15), 1, agent.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertTrue(agent.stderr.contains("the screen-cast portal offers no window sources (AvailableSourceTypes=1: monitors only"), agent.stderr)
        XCTAssertFalse(desktop.portalBackendLog.contains("create session"), "a session was asked for")
    }

    /// The portal's Session::Closed (the desktop's "stop sharing" in GNOME and KDE; xdg-desktop-portal-wlr 0.7 never
    /// sends it, and the frontend refuses Session.Close to anyone but the owner): a relay portal
    /// (`Peers/relay_portal.py`) on a bus of its own hands the agent the real desktop's stream, then sends
    /// Closed on SIGUSR1. The agent says the portal closed the session and exits 0.
    func testPortalClosingTheSessionEndsTheAgentWithExitZero() throws {
        let busPath = folder.path("relay-bus")
        let config = folder.path("relay-bus.conf")
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>session</type><listen>unix:path=\(busPath)</listen>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
            </busconfig>
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let bus = try ChildProcess(URL(fileURLWithPath: "/usr/bin/dbus-daemon"), ["--config-file=\(config)", "--nofork", "--nopidfile"])
        daemons.append(bus)
        let deadline = Date().addingTimeInterval(5)
        while access(busPath, F_OK) != 0, Date() < deadline { usleep(10_000) }
        let script = TestPaths.packageRoot.appendingPathComponent("Tests/EndToEndTests/Peers/relay_portal.py").path
        let relay = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), desktop.command(
            URL(fileURLWithPath: "/usr/bin/python3"), ["-u", script, "--serve", "unix:path=\(busPath)"]))
        daemons.append(relay)
        // (stdout is not kept: "serving" is seen as the name owned on the bus, through the agent's own check.)
        var owned = false
        while !owned, Date() < deadline.addingTimeInterval(5) {
            let check = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/dbus-send"), [
                "--bus=unix:path=\(busPath)", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.NameHasOwner",
                "string:org.freedesktop.portal.Desktop",
            ], timeout: 5)
            owned = check.stdout.contains("true")
            if !owned { usleep(20_000) }
        }
        XCTAssertTrue(owned, "the relay portal did not come up: \(relay.stderr)")
        let agent = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), desktop.command(self.agent, [
            "--source", "portal", "--output", dump, "--stats-interval", "0",
        ], extra: ["XDG_STATE_HOME": folder.path("state"), "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(busPath)"]))
        XCTAssertTrue(agent.waitForOutput("capture area", timeout: 15), agent.stderr + relay.stderr)
        XCTAssertFalse(frames(timeout: 5) { !$0.isEmpty }.isEmpty, "no frame through the relay")
        relay.send(SIGUSR1)
        let closed = Date()
        XCTAssertEqual(agent.waitForExit(timeout: 10), 0, agent.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(closed), 3)
        XCTAssertTrue(agent.stderr.contains("the portal closed the screen-cast session"), agent.stderr)
        XCTAssertTrue(agent.stderr.contains("stop=source-ended"), agent.stderr)
    }
}
