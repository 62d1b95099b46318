import Foundation
import Glibc
import Media
import Synchronization
import TestSupport
import XCTest

/// Where the end-to-end tests find their peers and tools.
enum EndToEnd {
    static let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Peers")
    static let venvPython = TestPaths.packageRoot.appendingPathComponent("venv/bin/python")
    static let systemPython = URL(fileURLWithPath: "/usr/bin/python3")
    static let fixtures = TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures")
    static let insideVariable = "SCREENCAST_E2E_INSIDE_NETNS"

    static var isInsideNamespace: Bool {
        let inside = ProcessInfo.processInfo.environment[insideVariable] != nil
        if inside { _ = lineBufferedOutput }
        return inside
    }

    /// The inner run's stdout goes to a pipe, where C stdio buffers it in blocks: a run that crashes would take
    /// what it printed (its `e2e:` measurements, XCTest's lines) with it. Line-buffered once, at the first check.
    /// (Glibc's `stdout` variable is read through `dlsym`: Swift 6 refuses a reference to the C global itself.)
    private static let lineBufferedOutput: Void = {
        guard let symbol = dlsym(nil, "stdout") else { return }
        setvbuf(symbol.assumingMemoryBound(to: UnsafeMutablePointer<FILE>?.self).pointee, nil, _IOLBF, 0)
    }()

    /// Runs `test` (e.g. "EndToEndTests.AiortcViewerTests/testX") again in a network namespace of its own
    /// with only loopback up (as root: `unshare -n`, `ip link set lo up`), so nothing it starts can reach
    /// another address, and checks that it passed there. Fails (never skips) without root or unshare.
    static func rerunInLoopbackNamespace(_ test: String, timeout: Double, file: StaticString = #filePath, line: UInt = #line) throws {
        guard getuid() == 0 else {
            XCTFail("end-to-end tests need root for a loopback-only network namespace (unshare -n); run as root", file: file, line: line)
            return
        }
        for tool in ["/usr/bin/unshare", "/usr/sbin/ip"] where !FileManager.default.isExecutableFile(atPath: tool) {
            XCTFail("\(tool) is missing: run tools/setup", file: file, line: line)
            return
        }
        let started = Date()
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/unshare"),
            ["-n", "sh", "-c", "ip link set lo up && \(insideVariable)=1 exec \"$0\" \"$1\"", CommandLine.arguments[0], test],
            timeout: timeout)
        let seconds = Date().timeIntervalSince(started)
        // The inner run's own report (measurements it printed), for the log of this run.
        let report = result.stdout.split(separator: "\n").filter { $0.hasPrefix("e2e:") }.joined(separator: "\n")
        print("\(test) in a loopback-only namespace: \(String(format: "%.1f", seconds)) s\n\(report)")
        XCTAssertFalse(result.timedOut, "the inner run timed out after \(timeout) s:\n\(result.stdout.suffix(6000))", file: file, line: line)
        // A crash (a Swift trap ends the run with SIGILL, status 4) loses the inner run's buffered stdout: the
        // runtime's own line ("Fatal error: …", "💣 Program crashed: …") goes first in the message, so that a
        // CI log that keeps 400 characters of each failure says why.
        let crash = (result.stderr + "\n" + result.stdout).split(separator: "\n").first {
            $0.contains("Fatal error") || $0.contains("Program crashed") || $0.contains("failed: file ") || $0.contains("Assertion failed")
        }
        XCTAssertEqual(
            result.status, 0,
            "inner run failed\(crash.map { " (\($0))" } ?? ""):\n\(result.stdout.suffix(12000))\n\(result.stderr.suffix(4000))",
            file: file, line: line)
        XCTAssertTrue(result.stdout.contains("Executed 1 test, with 0 failures"), result.stdout.suffix(6000).description, file: file, line: line)
    }

    /// Checks the tools a test needs, failing with a pointer to tools/setup when one is missing.
    static func requireTools(_ paths: [URL], file: StaticString = #filePath, line: UInt = #line) -> Bool {
        for path in paths where !FileManager.default.isExecutableFile(atPath: path.path) {
            XCTFail("\(path.path) is missing: run tools/setup", file: file, line: line)
            return false
        }
        return true
    }

    /// Runs a Python peer to completion and returns the JSON object it printed last.
    static func runPeer(
        _ python: URL, _ script: String, _ arguments: [String], timeout: Double, environment: [String: String] = [:],
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> [String: Any] {
        let peer = try PythonPeer(python, script, arguments, environment: environment)
        return try peer.finish(timeout: timeout, file: file, line: line)
    }
}

/// A Python peer process whose stdout is read to its end (the last line is its JSON report).
final class PythonPeer: @unchecked Sendable {
    // @unchecked Sendable: `process` is set once; the output is collected behind a Mutex.
    let process: Process
    private let output = Mutex<(stdout: Data, stderr: Data)>((Data(), Data()))
    private let done = DispatchSemaphore(value: 0)

    init(_ python: URL, _ script: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = python
        process.arguments = [EndToEnd.peers.appendingPathComponent(script).path] + arguments
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { _, new in new }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outHandle = out.fileHandleForReading, errHandle = err.fileHandleForReading
        Thread.detachNewThread { [self] in
            let data = POSIXPipeRead.toEnd(errHandle.fileDescriptor)
            output.withLock { $0.stderr = data }
            done.signal()
        }
        Thread.detachNewThread { [self] in
            let data = POSIXPipeRead.toEnd(outHandle.fileDescriptor)
            output.withLock { $0.stdout = data }
            done.signal()
        }
    }

    /// Whether the peer still runs (``ProcessRunner/isRunning(_:)``: an exit Foundation missed counts as one).
    var isRunning: Bool { ProcessRunner.isRunning(process) }

    /// Waits for the exit (killing it after `timeout`) and parses the last stdout line as a JSON object.
    func finish(timeout: Double, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let killed = ProcessRunner.wait(for: process, timeout: timeout)
        _ = done.wait(timeout: .now() + 5)
        _ = done.wait(timeout: .now() + 5)
        let (stdout, stderr) = output.withLock { (String(decoding: $0.stdout, as: UTF8.self), String(decoding: $0.stderr, as: UTF8.self)) }
        XCTAssertFalse(killed, "peer \(process.arguments?.first ?? "") timed out:\n\(stderr.suffix(3000))", file: file, line: line)
        XCTAssertEqual(ProcessRunner.status(of: process), 0, "peer failed:\n\(stdout.suffix(2000))\n\(stderr.suffix(5000))", file: file, line: line)
        guard let last = stdout.split(separator: "\n").last,
              let object = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
        else {
            XCTFail("peer printed no JSON:\n\(stdout.suffix(2000))\n\(stderr.suffix(5000))", file: file, line: line)
            return [:]
        }
        return object
    }
}

/// A `screencast-call` process serving viewers on loopback: `--http 127.0.0.1:PORT` (0: any free port),
/// `--ice-address 127.0.0.1`, a socket in a temporary folder. Its stderr is collected line by line.
final class CallUnderTest: @unchecked Sendable {
    // @unchecked Sendable: `process`, `folder` and `lines` are set in init (`port` too) and only read afterwards.
    let process: Process
    let folder: TemporaryDirectory
    private let lines: PipeLines
    /// What the call printed on stdout (the `--share` banner).
    private let output: PipeLines
    private(set) var port: UInt16 = 0
    /// `--token`, sent with every `/stats` request.
    let token: String?

    /// - Parameter port: the HTTP port; a fixed one lets a second call take a stopped call's place.
    /// - Parameter iceAddress: give `--ice-address 127.0.0.1` (false: the call picks, as a user's would).
    ///   - stateFolder: `XDG_STATE_HOME` of the call (what `--share` keeps); nil: one in the call's own folder.
    init(_ arguments: [String], token: String? = nil, port fixedPort: UInt16 = 0, iceAddress: Bool = true, stateFolder: String? = nil) throws {
        folder = try TemporaryDirectory(prefix: "sc-e2e")
        self.token = token
        var words = ["--http", "127.0.0.1:\(fixedPort)"] + (iceAddress ? ["--ice-address", "127.0.0.1"] : [])
            + ["--socket", folder.path("agent.sock"), "--stats-interval", "0"] + arguments
        if let token { words += ["--token", token] }
        let pipe = Pipe(), out = Pipe()
        process = try ProcessRunner.start(
            TestPaths.executable("screencast-call"), words, stdout: out, stderr: pipe,
            environment: ["XDG_STATE_HOME": stateFolder ?? folder.path("state")])
        lines = PipeLines(pipe)
        output = PipeLines(out)
        guard let line = waitForLine("viewer page", timeout: 15),
              let whep = line.split(separator: " ").first(where: { $0.hasPrefix("whep=") }),
              let portText = whep.split(separator: ":").last?.split(separator: "/").first, let port = UInt16(portText)
        else {
            stop()
            throw CallUnderTestError.notStarted(log)
        }
        self.port = port
    }

    var log: String { lines.all.joined(separator: "\n") }
    /// The stdout lines so far.
    var printed: [String] { output.all }
    var baseURL: String { "http://127.0.0.1:\(port)" }
    var whepURL: String { baseURL + "/whep" }

    func waitForLine(_ text: String, timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let line = lines.all.first(where: { $0.contains(text) }) { return line }
            usleep(20_000)
        } while Date() < deadline && process.isRunning
        return lines.all.first { $0.contains(text) }
    }

    /// `GET /stats` as a JSON object.
    func stats() throws -> [String: Any] {
        let response = try HTTP.request("GET", port: port, path: "/stats", headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
        guard response.status == 200, let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else {
            throw CallUnderTestError.badStats(response.status)
        }
        return object
    }

    /// The `viewers` part of `/stats`.
    func viewers() throws -> [String: Any] { (try stats()["viewers"] as? [String: Any]) ?? [:] }

    /// `signal` (SIGTERM unless told), then waits (SIGKILL after 10 s). Returns the exit status (nil when killed).
    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Int32? {
        if process.isRunning { kill(process.processIdentifier, signal) }
        let killed = ProcessRunner.wait(for: process, timeout: 10)
        lines.waitUntilClosed()
        output.waitUntilClosed()
        folder.remove()
        return killed ? nil : ProcessRunner.status(of: process)
    }

    deinit {
        // Through ProcessRunner: after stop() reaped an exit Foundation missed, Foundation's isRunning stays
        // true and waitUntilExit() never returns (seen: ChromiumICETCPTests hung here until its 150 s limit).
        if ProcessRunner.isRunning(process) {
            kill(process.processIdentifier, SIGKILL)
            _ = ProcessRunner.wait(for: process, timeout: 10)
        }
        folder.remove()
    }
}

enum CallUnderTestError: Error, CustomStringConvertible {
    case notStarted(String)
    case badStats(Int)
    case http(String)

    var description: String {
        switch self {
        case .notStarted(let log): "screencast-call did not start serving:\n\(log)"
        case .badStats(let status): "GET /stats answered \(status)"
        case .http(let reason): "HTTP: \(reason)"
        }
    }
}

/// A minimal HTTP/1.1 client over a blocking TCP socket to 127.0.0.1 (Connection: close).
enum HTTP {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    static func request(_ method: String, port: UInt16, path: String, headers: [String: String] = [:], body: [UInt8] = []) throws -> Response {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CallUnderTestError.http("socket: errno \(errno)") }
        defer { close(fd) }
        var tv = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw CallUnderTestError.http("connect: errno \(errno)") }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let request = Array((head + "\r\n").utf8) + body
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw CallUnderTestError.http("send: errno \(errno)") }
            sent += count
        }
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            data += buffer[0..<count]
        }
        guard let split = data.indices.first(where: { data[$0...].starts(with: [13, 10, 13, 10]) }) else {
            throw CallUnderTestError.http("no complete response head")
        }
        let headLines = String(decoding: data[..<split], as: UTF8.self).components(separatedBy: "\r\n")
        guard let statusLine = headLines.first, statusLine.split(separator: " ").count >= 2,
              let status = Int(statusLine.split(separator: " ")[1])
        else { throw CallUnderTestError.http("bad status line") }
        var fields: [String: String] = [:]
        for line in headLines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, headers: fields, body: Array(data[(split + 4)...]))
    }
}
