import Foundation
import Synchronization

/// Runs a command to completion (with a time limit) and captures its output, for black-box CLI tests.
public struct ProcessResult {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// True when the time limit ended the process.
    public var timedOut: Bool
}

public enum ProcessRunner {
    /// Starts `executable` with `arguments`; the returned process is running. Output goes to the given pipes;
    /// `environment` is added to (and overrides) this process's.
    public static func start(
        _ executable: URL, _ arguments: [String], stdout: Pipe? = nil, stderr: Pipe? = nil, environment: [String: String] = [:]
    ) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
        }
        process.standardOutput = stdout ?? FileHandle.nullDevice
        process.standardError = stderr ?? FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs to completion; a process still running after `timeout` seconds is killed (SIGKILL).
    public static func run(_ executable: URL, _ arguments: [String], timeout: Double = 60) throws -> ProcessResult {
        let out = Pipe()
        let err = Pipe()
        let process = try start(executable, arguments, stdout: out, stderr: err)
        // Drain both pipes concurrently so a chatty process never blocks on a full pipe.
        let outData = DrainedPipe(out)
        let errData = DrainedPipe(err)
        var status = awaitExit(process, until: Date().addingTimeInterval(timeout))
        let timedOut = status == nil
        if timedOut {
            kill(process.processIdentifier, SIGKILL)
            status = awaitExit(process, until: .distantFuture)
        }
        return ProcessResult(status: status ?? -1, stdout: outData.finish(), stderr: errData.finish(), timedOut: timedOut)
    }

    /// SIGTERM, then ``wait(for:timeout:)`` (SIGKILL after `grace` seconds). Returns true when it was killed.
    @discardableResult
    public static func terminate(_ process: Process, grace: Double = 3) -> Bool {
        guard isRunning(process) else { return false }
        process.terminate()
        return wait(for: process, timeout: grace)
    }

    /// Waits for `process` to exit; kills it after `timeout` seconds. Returns true when it was killed.
    @discardableResult
    public static func wait(for process: Process, timeout: Double) -> Bool {
        guard awaitExit(process, until: Date().addingTimeInterval(timeout)) == nil else { return false }
        kill(process.processIdentifier, SIGKILL)
        _ = awaitExit(process, until: .distantFuture)
        return true
    }

    /// The exit status of a process that has ended (``awaitExit(_:until:)`` returned for it): Foundation's, or
    /// the one read here when Foundation missed the exit.
    public static func status(of process: Process) -> Int32 {
        awaitExit(process, until: .distantPast) ?? -1
    }

    /// How long a child may be a zombie that Foundation has not reaped before it is reaped here, seconds.
    static let missedExitGrace = 1.0
    /// What ``awaitExit(_:until:)`` reaped itself: the exit code or the signal, and whether a signal ended it.
    /// Keyed by the `Process` object, which the entry keeps alive (rare: only exits Foundation missed), so
    /// neither a reused pid nor a reused object address can find another child's exit.
    private static let reaped = Mutex<[ObjectIdentifier: (process: Process, status: Int32, signaled: Bool)]>([:])

    private static func reapedExit(_ process: Process) -> (status: Int32, signaled: Bool)? {
        reaped.withLock { $0[ObjectIdentifier(process)].map { ($0.status, $0.signaled) } }
    }

    /// Whether `process` still runs. Foundation's `isRunning` stays true for a child whose exit it missed (see
    /// ``awaitExit(_:until:)``); here an exited child that nobody has reaped yet (a zombie), or one reaped here,
    /// does not run. Loops that wait for a peer to end use this.
    public static func isRunning(_ process: Process) -> Bool {
        guard process.isRunning else { return false }
        return reapedExit(process) == nil && !isZombie(process.processIdentifier)
    }

    /// Whether a signal ended `process` (which has ended: after ``wait(for:timeout:)`` or ``run(_:_:timeout:)``).
    /// Foundation's `terminationStatus` and `terminationReason` trap ("task still running") for a child whose
    /// exit it missed and that was reaped here; ``status(of:)`` and this never do.
    public static func endedBySignal(_ process: Process) -> Bool {
        if let exit = reapedExit(process) { return exit.signaled }
        return !process.isRunning && process.terminationReason == .uncaughtSignal
    }

    /// Waits until `process` has exited and returns its status (the exit code, or the signal that ended it),
    /// or nil when it still runs at `deadline`. Foundation's `Process` on Linux has missed a child's exit here
    /// (`nft`, twice: `isRunning` stayed true for a zombie and `waitUntilExit()` never returned, hanging a test
    /// until its 180-s limit), so the child is watched directly too: a zombie Foundation has not reaped within
    /// ``missedExitGrace`` is reaped with `waitpid` and its status kept.
    public static func awaitExit(_ process: Process, until deadline: Date) -> Int32? {
        let pid = process.processIdentifier
        var zombieSince: Date?
        while true {
            if !process.isRunning { return process.terminationStatus }
            if let exit = reapedExit(process) { return exit.status }
            if isZombie(pid) {
                let since = zombieSince ?? Date()
                zombieSince = since
                var raw: Int32 = 0
                if Date().timeIntervalSince(since) >= missedExitGrace, waitpid(pid, &raw, WNOHANG) == pid {
                    // wait(2)'s encoding: the low 7 bits are the signal (0: exited), bits 8–15 the exit code.
                    let signaled = raw & 0x7f != 0
                    let status = signaled ? raw & 0x7f : (raw >> 8) & 0xff
                    reaped.withLock { $0[ObjectIdentifier(process)] = (process, status, signaled) }
                    return status
                }
            }
            if Date() >= deadline { return nil }
            usleep(5_000)
        }
    }

    /// Whether `/proc/PID/stat` says the process is a zombie (state `Z`, after the parenthesised command).
    /// Read with open(2)/read(2) into a stack buffer: Foundation's `String(contentsOfFile:)` leaked its 4 KiB
    /// buffer on a /proc file (LeakSanitizer, the CI rehearsal's ASan step).
    static func isZombie(_ pid: Int32) -> Bool {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { buffer in
            let count = read(fd, buffer.baseAddress, buffer.count)
            guard count > 0 else { return false }
            let text = UnsafeBufferPointer(rebasing: buffer[..<count])
            guard let close = text.lastIndex(of: UInt8(ascii: ")")) else { return false }
            return text[(close + 1)...].first { $0 != UInt8(ascii: " ") } == UInt8(ascii: "Z")
        }
    }
}

/// Reads a pipe to its end on a background thread.
final class DrainedPipe: @unchecked Sendable {
    // @unchecked Sendable: `data` is written only by the reading thread and read after `done` is signalled.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            data = POSIXPipeRead.toEnd(handle.fileDescriptor)
            // Closed here, not left to the handle's deinit: a test process runs hundreds of these, and the
            // descriptors piled up past 1024 (FD_SETSIZE) within one CI run.
            try? handle.close()
            done.signal()
        }
    }

    func finish() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}

/// A fresh temporary folder, removed by `remove()`.
public struct TemporaryDirectory {
    public let url: URL
    public init(prefix: String = "screencast-test") throws {
        // Short paths: Unix socket paths must stay under 108 bytes.
        url = URL(fileURLWithPath: "/tmp").appendingPathComponent("\(prefix)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    public func remove() { try? FileManager.default.removeItem(at: url) }
}

/// This process's own children, for a watchdog about to abort a hung test: `abort()` alone leaves them
/// running (an Xvfb and an agent stayed for an hour after one such abort), re-parented to init.
public enum ChildProcesses {
    /// The PIDs whose parent is this process (from `/proc/PID/stat`, field 4).
    public static func list() -> [pid_t] {
        let me = getpid()
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // "PID (comm) STATE PPID …": the command may hold spaces and parentheses; the last ")" ends it.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == me ? pid : nil
        }
    }

    /// SIGKILLs every child (their own children go with them only if they handle it; Xvfb, agents and
    /// calls started by the tests have none).
    public static func killAll() {
        for pid in list() { kill(pid, SIGKILL) }
    }
}
