import Foundation
import Glibc

/// A real headless Wayland desktop for one test, from `../shared/wayland` beside the checkout (README there):
/// sway 1.7 (pixman, one 1280x720 output HEADLESS-1, background #1e90ff, a 320x180 red window at 0,0), a
/// private D-Bus session bus, PipeWire, WirePlumber, xdg-desktop-portal-wlr (chooser off) and
/// xdg-desktop-portal. Its own `W` folder per test: `setup.sh` (idempotent: installs the Debian packages and
/// the `wltest` user on a fresh machine, writes the configs into `W`), `up.sh`, and `down.sh` + removal in
/// ``down()``. Missing scripts or a stack that does not come up fail the test: nothing is skipped.
public final class WaylandDesktop {
    public static var scripts: URL { TestPaths.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/wayland") }

    /// The stack's folder (`W`).
    public let folder: String
    /// What a client of the desktop needs (env.sh): WAYLAND_DISPLAY, DBUS_SESSION_BUS_ADDRESS, XDG_RUNTIME_DIR, …
    public private(set) var environment: [String: String] = [:]
    private var isUp = false

    public init() throws {
        folder = "/tmp/scwl-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let setup = Self.scripts.appendingPathComponent("setup.sh").path
        guard FileManager.default.fileExists(atPath: setup) else {
            throw WaylandDesktopError(message: "no \(setup): the Wayland test desktop lives in ../shared/wayland beside the checkout")
        }
        let prepared = try Self.bash("setup.sh", folder: folder, timeout: 900)
        guard prepared.status == 0 else { throw WaylandDesktopError(message: "setup.sh failed (\(prepared.status)): \(prepared.stderr.suffix(800))") }
        let up = try Self.bash("up.sh", folder: folder, timeout: 60)
        isUp = true
        guard up.status == 0 else { throw WaylandDesktopError(message: "up.sh failed (\(up.status)): \(up.stdout) \(up.stderr.suffix(800))") }
        let script = try String(contentsOfFile: folder + "/env.sh", encoding: .utf8)
        for word in script.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = word.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] != "export" { environment[String(parts[0])] = String(parts[1]) }
        }
        // The red window is mapped a moment after sway is up: wait for it, so the first frame shows it.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if (try? swaymsg(["-t", "get_tree"]))?.contains("\"app_id\": \"marker\"") == true { return }
            usleep(20_000)
        }
        throw WaylandDesktopError(message: "the scene's red window did not appear in 10 s")
    }

    deinit { down() }

    /// Stops exactly the stack's processes (down.sh) and removes `W`. Idempotent.
    public func down() {
        if isUp {
            isUp = false
            _ = try? Self.bash("down.sh", folder: folder, timeout: 30)
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs `swaymsg` on this desktop; returns its stdout.
    @discardableResult
    public func swaymsg(_ arguments: [String]) throws -> String {
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"),
                                           ["SWAYSOCK=\(environment["SWAYSOCK"] ?? "")", "swaymsg"] + arguments, timeout: 10)
        guard result.status == 0 else { throw WaylandDesktopError(message: "swaymsg \(arguments) failed: \(result.stderr)") }
        return result.stdout
    }

    /// The PID up.sh recorded for `name` (sway, dbus, pipewire, wireplumber, xdpw, xdp).
    public func pid(_ name: String) -> pid_t? {
        let lines = (try? String(contentsOfFile: folder + "/pids", encoding: .utf8)) ?? ""
        return lines.split(separator: "\n").compactMap { line -> pid_t? in
            let parts = line.split(separator: " ")
            return parts.count == 2 && parts[0] == name ? pid_t(parts[1]) : nil
        }.first
    }

    /// xdg-desktop-portal-wlr's log so far.
    public var portalBackendLog: String { (try? String(contentsOfFile: folder + "/logs/xdpw.log", encoding: .utf8)) ?? "" }

    /// `arguments` prefixed so that `/usr/bin/env` runs `executable` with this desktop's environment plus `extra`.
    public func command(_ executable: URL, _ arguments: [String], extra: [String: String] = [:]) -> [String] {
        let variables = environment.merging(extra) { $1 }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return ["-i", "PATH=/usr/local/bin:/usr/bin:/bin"] + variables + [executable.path] + arguments
    }

    private static func bash(_ script: String, folder: String, timeout: Double) throws -> ProcessResult {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"),
                              ["W=\(folder)", "DEBIAN_FRONTEND=noninteractive", "bash", scripts.appendingPathComponent(script).path],
                              timeout: timeout)
    }
}

/// The test desktop could not be prepared or brought up.
public struct WaylandDesktopError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
