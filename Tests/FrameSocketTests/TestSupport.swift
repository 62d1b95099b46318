import Foundation
import FrameWire
import Glibc
import ScreencastSupport
import TestSupport
import Synchronization
import XCTest

@testable import FrameSocket

/// Base class for the socket tests: a short temp folder under /tmp, a watchdog that aborts a hung test
/// (so CI fails loudly instead of hanging), captured logs, and checks in `tearDown` that no server or
/// sender thread, no socket descriptor and no temp file outlives the test.
class SocketTestCase: XCTestCase {
    /// Seconds a test may run before the watchdog aborts the test process.
    var timeLimit: Double { 30 }

    private(set) var folder = ""
    private var watchdog: Watchdog?
    private var socketsBefore: Set<String> = []
    let logs = LogRecorder()

    override func setUp() {
        super.setUp()
        var template = Array("/tmp/fst-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        XCTAssertNotNil(made, "mkdtemp failed: errno \(errno)")
        folder = made.map { String(cString: $0) } ?? ""
        socketsBefore = openSockets()
        watchdog = Watchdog(seconds: timeLimit, name: name)
    }

    override func tearDown() {
        let leakedThreads = !waitUntil(timeout: 3) { !frameThreadsRunning() }
        XCTAssertFalse(leakedThreads, "a frame-server/frame-sender thread outlived the test: \(threadNames())")
        var leakedSockets: Set<String> = []
        _ = waitUntil(timeout: 2) {
            leakedSockets = openSockets().subtracting(socketsBefore)
            return leakedSockets.isEmpty
        }
        XCTAssertEqual(leakedSockets, [], "socket descriptors outlived the test")
        if !folder.isEmpty {
            try? FileManager.default.removeItem(atPath: folder)
            XCTAssertFalse(FileManager.default.fileExists(atPath: folder), "temp folder left behind")
        }
        watchdog?.cancel()
        watchdog = nil
        if testRun.map({ $0.failureCount + $0.unexpectedExceptionCount > 0 }) ?? false {
            print("--- logs of \(name) ---\n" + logs.lines.joined(separator: "\n"))
        }
        super.tearDown()
    }

    /// A socket path inside this test's folder.
    func socketPath(_ name: String = "agent.sock") throws -> SocketPath {
        try SocketPath(folder + "/" + name)
    }

    /// Starts `python3 -c script args…` with stdout captured. The sockets Foundation's `Process`
    /// opens for itself (to watch the child) are excluded from the leak check.
    func startPython(_ script: String, _ arguments: [String]) throws -> (Process, Pipe) {
        guard let python = python3() else { throw MissingTool(name: "python3") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script] + arguments
        let output = Pipe()
        process.standardOutput = output
        let before = openSockets()
        try process.run()
        socketsBefore.formUnion(openSockets().subtracting(before))
        return (process, output)
    }

    /// A logger whose lines land in ``logs``.
    func logger(_ component: String, threshold: LogLevel = .info) -> Logger {
        Logger(component: component, threshold: threshold, output: logs.output)
    }
}

/// Aborts the process when a test runs past its limit (a hung socket test must not hang CI).
final class Watchdog: Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(seconds: Double, name: String) {
        let done = done
        let thread = Thread {
            if done.wait(timeout: .now() + seconds) == .timedOut {
                FileHandle.standardError.write(Data("watchdog: \(name) ran past \(seconds) s; aborting\n".utf8))
                ChildProcesses.killAll()
                abort()
            }
        }
        thread.name = "test-watchdog"
        thread.start()
    }

    func cancel() { done.signal() }
}

/// Collects log lines in memory.
final class LogRecorder: Sendable {
    private let storage = Mutex<[String]>([])
    var output: LogOutput {
        LogOutput { [self] line in storage.withLock { $0.append(line) } }
    }
    var lines: [String] { storage.withLock { $0 } }
    func count(containing text: String) -> Int { lines.filter { $0.contains(text) }.count }
}

/// Collects server events and lets a test wait for a condition on them.
final class EventRecorder: Sendable {
    private let storage = Mutex<[FrameServerEvent]>([])

    var handler: @Sendable (FrameServerEvent) -> Void {
        { [self] event in storage.withLock { $0.append(event) } }
    }

    var events: [FrameServerEvent] { storage.withLock { $0 } }

    var frames: [(Frame, SenderInfo)] {
        events.compactMap { if case .frame(let frame, let info) = $0 { (frame, info) } else { nil } }
    }
    var connected: [SenderInfo] {
        events.compactMap { if case .senderConnected(let info) = $0 { info } else { nil } }
    }
    var ended: [(SenderInfo, SourceEndReason)] {
        events.compactMap { if case .senderEnded(let info, let reason) = $0 { (info, reason) } else { nil } }
    }
    var refused: [(SenderInfo, SenderRefusal)] {
        events.compactMap { if case .senderRefused(let info, let why) = $0 { (info, why) } else { nil } }
    }

    /// Waits up to `timeout` seconds for `condition`.
    func wait(timeout: Double, _ condition: (EventRecorder) -> Bool) -> Bool {
        waitUntil(timeout: timeout) { condition(self) }
    }
}

/// Polls `condition` every 5 ms for up to `timeout` seconds.
func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while true {
        if condition() { return true }
        if Date() > deadline { return false }
        usleep(5_000)
    }
}

/// Seconds taken by `body`.
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = MonotonicClock.nowMicros()
    try body()
    return Double(MonotonicClock.nowMicros() - start) / 1e6
}

/// The names (`comm`) of this process's threads. Read with open(2)/read(2): a thread that ends between the
/// listing and the read makes Foundation's `String(contentsOfFile:)` fail, and on that path
/// FoundationEssentials 6.3.1 leaks its 4096-byte read buffer (LeakSanitizer, 1 rehearsal in 3).
func threadNames() -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap { task in
        let fd = open("/proc/self/task/\(task)/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// True while a server or sender thread is alive.
func frameThreadsRunning() -> Bool {
    threadNames().contains { $0 == "frame-server" || $0 == "frame-sender" }
}

/// Every open descriptor of this process, as `/proc/self/fd` link targets.
func openDescriptors() -> [String] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
}

/// The open socket descriptors (`socket:[inode]`) of this process.
func openSockets() -> Set<String> {
    Set(openDescriptors().filter { $0.hasPrefix("socket:") })
}

/// `stat` mode bits (permission part) and file type of `path`.
func fileMode(_ path: String) -> (permissions: UInt32, type: UInt32)? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return (info.st_mode & 0o7777, info.st_mode & S_IFMT)
}

/// A frame message with a recognisable body.
func message(sequence: UInt64, bodyBytes: Int, width: Int = 640, height: Int = 480, orientation: Int = 1) -> (FrameHeader, [UInt8], [UInt8]) {
    let body = (0..<bodyBytes).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(sequence)) }
    let header = FrameHeader(
        contentLength: bodyBytes, bufferWidth: width, bufferHeight: height, orientation: orientation,
        timestampMicros: 1_000_000 + sequence * 33_333, sequence: sequence
    )
    return (header, body, FrameEncoder.encode(header: header, body: body))
}

// MARK: - Raw sockets (peers that misbehave on purpose)

/// A raw listening socket bound to `path` (blocking, close-on-exec).
func rawListen(_ path: SocketPath) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    precondition(fd >= 0)
    let bound = UnixSocket.withAddress(path) { Glibc.bind(fd, $0, $1) }
    precondition(bound == 0, "bind failed: errno \(errno)")
    precondition(listen(fd, 4) == 0)
    return fd
}

/// A raw connected socket to `path`, or -1.
func rawConnect(_ path: SocketPath) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    precondition(fd >= 0)
    let result = UnixSocket.withAddress(path) { Glibc.connect(fd, $0, $1) }
    if result != 0 {
        close(fd)
        return -1
    }
    return fd
}

/// Accepts on `listener` within `timeout` seconds, or returns -1.
func rawAccept(_ listener: Int32, timeout: Double) -> Int32 {
    var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
    guard poll(&fds, 1, Int32(timeout * 1000)) == 1 else { return -1 }
    return accept(listener, nil, nil)
}

/// Writes all of `bytes` to a blocking socket.
func rawWrite(_ fd: Int32, _ bytes: [UInt8]) {
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let count = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            if count <= 0 { return }
            offset += count
        }
    }
}

/// Reads up to `count` bytes (blocking until that many or EOF).
func rawRead(_ fd: Int32, count: Int) -> Int {
    var buffer = [UInt8](repeating: 0, count: 65536)
    var total = 0
    while total < count {
        let got = read(fd, &buffer, min(buffer.count, count - total))
        if got <= 0 { break }
        total += got
    }
    return total
}

// MARK: - Helper processes

/// Path of python3, or nil (tests that need it fail, never skip silently).
func python3() -> String? {
    ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
}


/// A tool a test needs is not installed (`tools/setup` installs it): the test fails, it does not skip.
struct MissingTool: Error, CustomStringConvertible {
    var name: String
    var description: String { "\(name) is not installed; run tools/setup" }
}

/// Waits up to `timeout` seconds for `process` to exit; kills it (SIGKILL) when it does not.
@discardableResult
func finish(_ process: Process, timeout: Double) -> Bool {
    let exited = waitUntil(timeout: timeout) { !process.isRunning }
    if !exited {
        kill(process.processIdentifier, SIGCONT)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
    return exited
}
