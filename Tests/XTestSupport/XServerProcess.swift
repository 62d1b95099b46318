import Foundation
import Glibc
import TestSupport
import XCTest

/// An X server started by a test: Xvfb (fast; no resizing, no `--setmonitor`) or TigerVNC's Xvnc
/// (resizes with `xrandr -s`, defines monitors with `xrandr --setmonitor`; `-rfbport -1` opens no port).
///
/// The server picks a free display number itself and tells it through `-displayfd` (its stdout here), so no
/// test assumes `:99` is free. `-noreset` keeps the root background when the last client leaves. Stopped
/// (SIGTERM, then SIGKILL) by ``stop()`` or `deinit`.
public final class XServerProcess {
    public enum Kind: String {
        case xvfb = "Xvfb"
        case xvnc = "Xvnc"
    }

    public let kind: Kind
    /// `:N`.
    public let display: String
    public let process: Process
    /// X clients started with ``spawn(_:_:)``, ended by ``stop()``.
    private var clients: [Process] = []

    /// Starts the server with a `width`×`height`×24 screen and waits (up to 10 s) for its display number.
    public init(_ kind: Kind, width: Int = 320, height: Int = 240) throws {
        let executable = "/usr/bin/\(kind.rawValue)"
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw XCTSkip("\(executable) is not installed (tools/setup installs it)")
        }
        var arguments = ["-displayfd", "1", "-noreset", "-nolisten", "tcp"]
        switch kind {
        case .xvfb: arguments += ["-screen", "0", "\(width)x\(height)x24"]
        case .xvnc: arguments += ["-rfbport", "-1", "-SecurityTypes", "None", "-geometry", "\(width)x\(height)", "-depth", "24"]
        }
        let output = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.kind = kind
        self.process = process
        let fd = output.fileHandleForReading.fileDescriptor
        var text = ""
        let deadline = Date().addingTimeInterval(10)
        while !text.hasSuffix("\n"), Date() < deadline, ProcessRunner.isRunning(process) {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) > 0 else { continue }
            var byte: UInt8 = 0
            guard read(fd, &byte, 1) == 1 else { break }
            text.append(Character(UnicodeScalar(byte)))
        }
        guard let number = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            ProcessRunner.terminate(process)
            throw XServerError(message: "\(kind.rawValue) did not report a display number (got '\(text)')")
        }
        display = ":\(number)"
    }

    deinit { stop() }

    /// SIGTERM, then SIGKILL after 3 s; waits for the exit. Idempotent.
    public func stop() {
        for client in clients where ProcessRunner.isRunning(client) {
            kill(client.processIdentifier, SIGKILL)
            _ = ProcessRunner.wait(for: client, timeout: 10)
        }
        clients = []
        ProcessRunner.terminate(process, grace: 3)
    }

    /// Kills the server at once (SIGKILL), as a crash would.
    public func crash() {
        guard ProcessRunner.isRunning(process) else { return }
        kill(process.processIdentifier, SIGKILL)
        _ = ProcessRunner.wait(for: process, timeout: 10)
    }

    /// Starts an X client (`xterm`, …) on this display in the background; it is killed by ``stop()``.
    public func spawn(_ tool: String, _ arguments: [String]) throws {
        let path = "/usr/bin/\(tool)"
        guard FileManager.default.isExecutableFile(atPath: path) else { throw XCTSkip("\(path) is not installed") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = display
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        clients.append(process)
    }

    /// Runs an X client tool (`xrandr`, `xdotool`, …) against this display; fails the test on a non-zero exit.
    @discardableResult
    public func run(_ tool: String, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let path = "/usr/bin/\(tool)"
        guard FileManager.default.isExecutableFile(atPath: path) else { throw XCTSkip("\(path) is not installed") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = display
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let killed = ProcessRunner.wait(for: process, timeout: 30)
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertFalse(killed, "\(tool) ran past 30 s", file: file, line: line)
        XCTAssertEqual(ProcessRunner.status(of: process), 0, "\(tool) \(arguments.joined(separator: " ")): \(text)", file: file, line: line)
        return text
    }
}

public struct XServerError: Error, CustomStringConvertible {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
