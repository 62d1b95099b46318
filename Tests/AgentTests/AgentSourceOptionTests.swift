import Foundation
import TestSupport
import XCTest

/// `--source x11|portal|auto` and `--forget-portal-choice` as a black box, without any desktop: bad
/// combinations exit 64; auto picks the portal on a Wayland session (here: no bus, so exit 1 naming the bus,
/// instead of X11's exit 64 for want of a display).
final class AgentSourceOptionTests: XCTestCase {
    let agent = TestPaths.executable("screencast-agent")

    private func run(_ arguments: [String], environment: [String: String]) throws -> ProcessResult {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"),
                              ["-i"] + environment.map { "\($0)=\($1)" } + [agent.path] + arguments, timeout: 20)
    }

    func testBadSourceCombinationsExit64() throws {
        let cases: [([String], String)] = [
            (["--source", "vnc"], "--source must be x11, portal or auto, not 'vnc'"),
            (["--source", "portal", "--monitor", "0"], "--monitor is for X11; --source portal captures the monitor chosen in the portal"),
            (["--source", "portal", "--display", ":0"], "--display is for X11"),
            (["--source", "portal", "--list-monitors"], "--list-monitors is for X11"),
            (["--source", "x11", "--display", ":0", "--forget-portal-choice"], "--forget-portal-choice is for --source portal"),
            (["--source", "x11", "--display", ":0", "--portal-reconnect", "5"], "--portal-reconnect is for --source portal"),
            (["--source", "portal", "--portal-reconnect", "3601"], "--portal-reconnect"),
        ]
        for (arguments, message) in cases {
            let result = try run(arguments + ["--output", "/tmp/x.frames"], environment: ["PATH": "/usr/bin:/bin"])
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }

    func testAutoPicksThePortalOnAWaylandSession() throws {
        let noBus = "unix:path=/nonexistent-\(getpid())/bus"
        for environment in [["WAYLAND_DISPLAY": "wayland-1"], ["XDG_SESSION_TYPE": "wayland", "DISPLAY": ":0"]] {
            let result = try run(["--output", "/tmp/x.frames"],
                                 environment: environment.merging(["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": noBus]) { $1 })
            XCTAssertEqual(result.status, 1, "\(environment): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("cannot share the Wayland screen: no D-Bus session bus"), "\(environment): \(result.stderr)")
        }
        // An X11 option keeps X11, as does no Wayland at all (no display: exit 64).
        let x11 = try run(["--output", "/tmp/x.frames", "--monitor", "0"], environment: ["PATH": "/usr/bin:/bin", "WAYLAND_DISPLAY": "wayland-1"])
        XCTAssertEqual(x11.status, 64, x11.stderr)
        XCTAssertTrue(x11.stderr.contains("no X display"), x11.stderr)
    }
}
