import Foundation
import Glibc
import ScreencastSupport
import TestSupport
import XCTest

/// Running as a systemd user service: the sd_notify datagrams (``ServiceNotifier``) as a fake `$NOTIFY_SOCKET`
/// bound by the test receives them from a real `screencast-call`, and the units of `contrib/systemd` installed by
/// `tools/install --user` into a temporary home, checked by `systemd-analyze verify`.
final class ServiceTests: CallTestCase {
    /// A Unix datagram socket the test binds, standing for systemd's notification socket.
    final class FakeNotifySocket {
        let fd: Int32
        let path: String

        init(path: String) throws {
            self.path = path
            fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sa_family_t>.size + bytes.count))
                }
            }
            guard fd >= 0, bound == 0 else { throw POSIXError(.EADDRINUSE) }
        }

        deinit { close(fd) }

        /// The next datagram, or nil after `timeout` seconds.
        func receive(timeout: Double) -> String? {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, 0)
            return count >= 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
        }
    }

    func testNotifierSendsDatagramsAndReadsTheWatchdogItsPIDIsGiven() throws {
        let sink = try FakeNotifySocket(path: folder.path("notify"))
        XCTAssertNil(ServiceNotifier(environment: [:]), "not run by systemd: nothing")
        XCTAssertNil(ServiceNotifier(environment: ["NOTIFY_SOCKET": "relative/path"]))
        XCTAssertNil(ServiceNotifier(environment: ["NOTIFY_SOCKET": "/" + String(repeating: "x", count: 107)]), "longer than sun_path")
        let notifier = try XCTUnwrap(ServiceNotifier(environment: ["NOTIFY_SOCKET": sink.path, "WATCHDOG_USEC": "30000000"]))
        XCTAssertEqual(notifier.watchdogMicros, 30_000_000)
        notifier.ready(status: "viewer page http://x/\nSTOPPING=1")
        XCTAssertEqual(sink.receive(timeout: 1), "READY=1\nSTATUS=viewer page http://x/ STOPPING=1", "a newline in a value starts no assignment")
        let other = try XCTUnwrap(ServiceNotifier(
            environment: ["NOTIFY_SOCKET": sink.path, "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": String(getpid() + 1)]))
        XCTAssertNil(other.watchdogMicros, "a watchdog meant for another process")
        // An abstract socket: '@' for the leading zero byte.
        let abstract = "@screencast-test-\(getpid())"
        let abstractSink = try FakeNotifySocket(path: "\0" + abstract.dropFirst())
        try XCTUnwrap(ServiceNotifier(environment: ["NOTIFY_SOCKET": abstract])).notify(["WATCHDOG=1"])
        XCTAssertEqual(abstractSink.receive(timeout: 1), "WATCHDOG=1")
    }

    /// A real call: READY=1 only once its page answers, WATCHDOG=1 every half WATCHDOG_USEC while it runs, and
    /// STOPPING=1 on SIGTERM.
    func testTheCallSaysReadyWhenListeningThenPingsTheWatchdog() throws {
        let sink = try FakeNotifySocket(path: folder.path("notify"))
        let port = try LoopbackPort.tcp()
        let pipe = Pipe()
        let call = try ProcessRunner.start(
            TestPaths.executable("screencast-call"),
            ["--source", "testpattern", "--pattern-size", "160x96", "--http", "127.0.0.1:\(port)", "--socket", socket, "--stats-interval", "0"],
            stderr: pipe, environment: ["NOTIFY_SOCKET": sink.path, "WATCHDOG_USEC": "200000"])
        let log = PipeLines(pipe)
        defer { if ProcessRunner.isRunning(call) { kill(call.processIdentifier, SIGKILL) } }
        let ready = try XCTUnwrap(sink.receive(timeout: 15), log.all.joined(separator: "\n"))
        XCTAssertEqual(ready, "READY=1\nSTATUS=viewer page http://127.0.0.1:\(port)/")
        // Listening when it says so: the page answers at once, the agent socket is there.
        let health = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "-f", "--max-time", "2", "http://127.0.0.1:\(port)/healthz"])
        XCTAssertEqual(health.stdout, "ok\n", "READY=1 before the page answered")
        XCTAssertTrue(FileManager.default.fileExists(atPath: socket))
        // Pings every 0.1 s: 5 within 1 s.
        let started = Date()
        var pings = 0
        while pings < 5, Date().timeIntervalSince(started) < 2 {
            if let message = sink.receive(timeout: 0.5) { XCTAssertEqual(message, "WATCHDOG=1"); pings += 1 }
        }
        let seconds = Date().timeIntervalSince(started)
        XCTAssertEqual(pings, 5)
        XCTAssertLessThan(seconds, 1.0, "one ping every half period (0.1 s)")
        kill(call.processIdentifier, SIGTERM)
        var stopping: String?
        while let message = sink.receive(timeout: 5) {
            if message.hasPrefix("STOPPING=1") { stopping = message; break }
        }
        XCTAssertEqual(stopping, "STOPPING=1\nSTATUS=stopping: SIGTERM")
        XCTAssertFalse(ProcessRunner.wait(for: call, timeout: 10))
        XCTAssertEqual(ProcessRunner.status(of: call), 0)
    }

    /// `tools/install --user` into a temporary home puts the programs, their manual pages and the units in place,
    /// the units point at the installed programs, and `systemd-analyze verify --user` (which also looks up each
    /// unit's `Documentation=man:` page) finds nothing to say about them.
    func testInstalledUnitsVerifyClean() throws {
        let analyze = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: analyze.path), "systemd-analyze is missing: run tools/setup")
        let home = folder.path("home")
        let runtime = folder.path("run")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let tool = TestPaths.packageRoot.appendingPathComponent("tools/install")
        let install = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["HOME=\(home)", "XDG_CONFIG_HOME=\(home)/.config", tool.path, "--user", "--from", TestPaths.executable("screencast-call").deletingLastPathComponent().path])
        XCTAssertEqual(install.status, 0, install.stderr)
        for program in ["screencast-call", "screencast-agent", "screencast-dump"] {
            XCTAssertTrue(FileManager.default.isExecutableFile(atPath: "\(home)/.local/bin/\(program)"), program)
        }
        let units = ["screencast-call.service", "screencast-agent.service"].map { "\(home)/.config/systemd/user/\($0)" }
        let call = try String(contentsOfFile: units[0], encoding: .utf8)
        XCTAssertTrue(call.contains("\nExecStart=\(home)/.local/bin/screencast-call --log-format json"), call)
        XCTAssertTrue(call.contains("\nType=notify\n") && call.contains("\nWatchdogSec=30\n") && call.contains("\nRestart=on-failure\n"))
        let agent = try String(contentsOfFile: units[1], encoding: .utf8)
        XCTAssertTrue(agent.contains("\nPartOf=graphical-session.target\n") && agent.contains("\nWantedBy=graphical-session.target\n"))
        let verify = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["HOME=\(home)", "XDG_RUNTIME_DIR=\(runtime)", "MANPATH=\(home)/.local/share/man", analyze.path, "verify", "--user"] + units)
        XCTAssertEqual(verify.status, 0, verify.stderr)
        XCTAssertEqual(verify.stderr + verify.stdout, "", "systemd-analyze verify has something to say")
        // Documentation=man:… resolves (systemd-analyze verify runs man for it): the pages are installed.
        for page in ["screencast-call.1", "screencast-agent.1", "screencast-dump.1"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: "\(home)/.local/share/man/man1/\(page)"), page)
        }
        // The installed program runs.
        let version = try ProcessRunner.run(URL(fileURLWithPath: "\(home)/.local/bin/screencast-call"), ["--version"])
        XCTAssertEqual(version.stdout, "screencast-call \(ScreencastVersion.string)\n")

        let bare = try ProcessRunner.run(tool, [])
        XCTAssertEqual(bare.status, 64, "no --user: nothing installed")
    }
}
