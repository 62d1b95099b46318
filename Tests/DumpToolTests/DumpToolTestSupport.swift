import FrameWire
import Foundation
import Synchronization
import TestSupport
import XCTest

/// `screencast-dump` started in the background with its stderr collected as it comes (so a long run never
/// blocks on a full pipe), for tests that signal it or read its progress lines.
final class RunningTool: Sendable {
    let process: Process
    private let collected = Mutex(Data())

    init(_ arguments: [String]) throws {
        let err = Pipe()
        process = try ProcessRunner.start(TestPaths.executable("screencast-dump"), arguments, stderr: err)
        let handle = err.fileHandleForReading
        let sink = Sink(self)
        Thread.detachNewThread {
            while true {
                let data = (POSIXPipeRead.chunk(handle.fileDescriptor) ?? Data())
                if data.isEmpty { return }
                sink.append(data)
            }
        }
    }

    /// Forwards pipe data to the tool (a Sendable box, so the reading thread holds no strong cycle).
    private final class Sink: Sendable {
        private let tool: RunningTool
        init(_ tool: RunningTool) { self.tool = tool }
        func append(_ data: Data) { tool.collected.withLock { $0.append(data) } }
    }

    /// Everything written to stderr so far.
    var stderr: String { collected.withLock { String(decoding: $0, as: UTF8.self) } }

    var isRunning: Bool { process.isRunning }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for exit up to `timeout` s (then kills it); returns the exit status, nil when it had to be killed.
    func finish(timeout: Double) -> Int32? {
        let killed = ProcessRunner.wait(for: process, timeout: timeout)
        usleep(50_000)  // let the reading thread take the last bytes
        return killed ? nil : ProcessRunner.status(of: process)
    }

    /// Waits until stderr contains `text`; false after `timeout` s.
    func waitForStderr(_ text: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if stderr.contains(text) { return true }
            usleep(10_000)
        }
        return stderr.contains(text)
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGCONT)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

enum DumpFixtures {
    /// A dump of tiny frames (a 4-byte body, not a decodable JPEG) with these timestamps; sequence = index
    /// unless `sequences` is false.
    static func tinyFrames(at path: String, timestamps: [UInt64?], sequences: Bool = true) throws {
        var bytes: [UInt8] = []
        for (index, stamp) in timestamps.enumerated() {
            let header = FrameHeader(contentLength: 0, bufferWidth: 8, bufferHeight: 8, orientation: 1,
                                     timestampMicros: stamp, sequence: sequences ? UInt64(index) : nil)
            bytes += FrameEncoder.encode(header: header, body: [0xFF, 0xD8, 0xFF, 0xD9])
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Waits until a file exists at `path` (a socket a server made); false after `timeout` s.
    static func waitForFile(_ path: String, timeout: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !FileManager.default.fileExists(atPath: path) {
            if Date() > deadline { return false }
            usleep(10_000)
        }
        return true
    }

    static func golden(_ name: String) -> String { TestPaths.golden.appendingPathComponent(name + ".frames").path }
    static func handed(_ name: String) -> String { TestPaths.sharedCases.appendingPathComponent(name + ".frames").path }
}
