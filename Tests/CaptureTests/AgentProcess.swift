import Foundation
import FrameWire
import Glibc
import Synchronization
import TestSupport
import XCTest

/// A running child process (`screencast-agent`, `screencast-dump record`) whose stderr is collected.
final class ChildProcess {
    let process: Process
    private let errors = CollectedOutput()

    /// Starts `executable` with `arguments`; stdout is discarded, stderr collected.
    init(_ executable: URL, _ arguments: [String]) throws {
        let stderr = Pipe()
        process = try ProcessRunner.start(executable, arguments, stdout: nil, stderr: stderr)
        errors.drain(stderr.fileHandleForReading)
    }

    deinit {
        if ProcessRunner.isRunning(process) {
            kill(process.processIdentifier, SIGKILL)
            _ = ProcessRunner.wait(for: process, timeout: 10)
        }
    }

    var pid: Int32 { process.processIdentifier }

    /// What the process wrote to stderr so far.
    var stderr: String { errors.text }

    /// Sends `signal`.
    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits up to `timeout` seconds for the exit; returns the status, or nil when still running.
    func waitForExit(timeout: Double) -> Int32? {
        guard ProcessRunner.awaitExit(process, until: Date().addingTimeInterval(timeout)) != nil else { return nil }
        errors.waitUntilClosed()
        return ProcessRunner.status(of: process)
    }

    /// Waits until stderr contains `text` (or `timeout` seconds pass).
    func waitForOutput(_ text: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if stderr.contains(text) { return true }
            usleep(10_000)
        }
        return false
    }

    /// Resident memory in KiB (`VmRSS` of /proc/PID/status), or nil.
    var residentKiB: Int? { ProcStatus.residentKiB(pid) }

    /// The fields of the last log line that starts with `level component message`, as a dictionary.
    func lastLogFields(_ prefix: String) -> [String: String]? {
        guard let line = stderr.split(separator: "\n").last(where: { $0.hasPrefix(prefix) }) else { return nil }
        var fields: [String: String] = [:]
        for word in line.dropFirst(prefix.count).split(separator: " ") {
            let parts = word.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        return fields
    }
}

/// Reads a pipe to its end on a background thread.
final class CollectedOutput: Sendable {
    private let data = Mutex(Data())
    private let closed = DispatchSemaphore(value: 0)

    func drain(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = (POSIXPipeRead.chunk(handle.fileDescriptor) ?? Data())
                if chunk.isEmpty { break }
                data.withLock { $0.append(chunk) }
            }
            closed.signal()
        }
    }

    var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }

    func waitUntilClosed() { _ = closed.wait(timeout: .now() + 2) }
}

/// Reads a frame dump (the socket byte stream) into frames.
enum DumpReader {
    static func frames(_ path: String) throws -> (frames: [Frame], end: FrameStreamEnd?) {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var decoder = FrameDecoder()
        var frames: [Frame] = []
        var end: FrameStreamEnd?
        let emit = { (event: FrameDecoderEvent) in
            switch event {
            case .frame(let frame): frames.append(frame)
            case .sound: break
            case .end(let streamEnd): end = streamEnd
            }
        }
        decoder.feed(bytes, emit: emit)
        decoder.finish(emit: emit)
        return (frames, end)
    }
}
