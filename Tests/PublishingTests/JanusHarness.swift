import Foundation
import Publishing
import TestSupport
import XCTest

/// A real Janus 1.1.2 (Debian `janus`) for tests, run inside a loopback-only network namespace that the
/// test re-runs itself in. Janus skips loopback-flagged interfaces when it gathers, so the namespace gets a
/// veth carrying 127.0.0.2/32 (`../shared/notes/real-peers.md`), and every peer of Janus uses 127.0.0.2
/// as its host candidate. The configuration is generated into a temporary folder: only the VideoRoom
/// plugin and the HTTP transport (127.0.0.1:8088), no preset rooms; with `websockets`, also the WebSocket
/// transport (127.0.0.1:8188, the Janus API that simple-whip-server speaks).
final class JanusHarness {
    static let binary = "/usr/bin/janus"
    static let insideVariable = "SCREENCAST_JANUS_INSIDE_NETNS"
    static let apiURL = "http://127.0.0.1:8088/janus"
    let folder: URL
    private(set) var process: Process?
    let log: URL
    let websockets: Bool
    static let webSocketURL = "ws://127.0.0.1:8188"

    /// Re-runs `test` inside `unshare -n` with lo up and the 127.0.0.2 veth; checks it passed there.
    static func rerunInNamespace(_ test: String, timeout: Double, file: StaticString = #filePath, line: UInt = #line) throws {
        guard getuid() == 0 else { return XCTFail("needs root for a network namespace (unshare -n)", file: file, line: line) }
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            return XCTFail("\(binary) is missing: run tools/setup (Debian janus)", file: file, line: line)
        }
        // No IPv6 on the veth: link-local addresses appearing after DAD, a second or two in, are a network change
        // that makes Chromium abort a page load in flight (ERR_NETWORK_CHANGED, seen in tools/demo-check).
        let network = "ip link set lo up && ip link add sfu0 type veth peer name sfu1"
            + " && for e in sfu0 sfu1; do { echo 1 >/proc/sys/net/ipv6/conf/$e/disable_ipv6; } 2>/dev/null || true; done"
            + " && ip addr add 127.0.0.2/32 dev sfu0 && ip link set sfu0 up && ip link set sfu1 up"
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/unshare"),
            ["-n", "sh", "-c", "\(network) && \(insideVariable)=1 exec \"$0\" \"$1\"", CommandLine.arguments[0], test], timeout: timeout)
        let report = result.stdout.split(separator: "\n").filter { $0.hasPrefix("janus:") }.joined(separator: "\n")
        print("\(test) against Janus in a namespace:\n\(report)")
        XCTAssertFalse(result.timedOut, "the inner run timed out:\n\(result.stdout.suffix(8000))", file: file, line: line)
        XCTAssertTrue(result.stdout.contains("Executed 1 test, with 0 failures"),
                      "inner run failed:\n\(result.stdout.suffix(12000))\n\(result.stderr.suffix(3000))", file: file, line: line)
    }

    static var isInside: Bool { ProcessInfo.processInfo.environment[insideVariable] != nil }

    init(websockets: Bool = false) throws {
        self.websockets = websockets
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("janus-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        log = folder.appendingPathComponent("janus.log")
        let libraries = "/usr/lib/x86_64-linux-gnu/janus"
        let plugins = ["audiobridge", "duktape", "echotest", "lua", "nosip", "recordplay", "sip", "streaming", "textroom", "videocall", "voicemail"]
        let transports = (websockets ? [] : ["websockets"]) + ["mqtt", "nanomsg", "pfunix", "rabbitmq"]
        var files = [
            "janus.jcfg": """
                general: { configs_folder = "\(folder.path)", plugins_folder = "\(libraries)/plugins",
                    transports_folder = "\(libraries)/transports", events_folder = "\(libraries)/events",
                    loggers_folder = "\(libraries)/loggers", debug_level = 4, session_timeout = 60 }
                plugins: { disable = "\(plugins.map { "libjanus_\($0).so" }.joined(separator: ","))" }
                transports: { disable = "\(transports.map { "libjanus_\($0).so" }.joined(separator: ","))" }
                events: { broadcast = false }
                media: { rtp_port_range = "20000-20200" }
                """,
            "janus.transport.http.jcfg": """
                general: { json = "indented", base_path = "/janus", http = true, port = 8088, ip = "127.0.0.1", https = false }
                admin: { admin_http = false }
                """,
            "janus.plugin.videoroom.jcfg": "general: { }\n",
        ]
        if websockets {
            files["janus.transport.websockets.jcfg"] = """
                general: { json = "indented", ws = true, ws_port = 8188, ws_ip = "127.0.0.1", wss = false }
                admin: { admin_ws = false, admin_wss = false }
                """
        }
        for (name, text) in files { try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8) }
    }

    /// Starts Janus and waits (at most 10 s) until its HTTP API (and WebSocket API, when on) listens.
    func start() throws {
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: log.path]) }
        let output = try FileHandle(forWritingTo: log)
        output.seekToEndOfFile()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["-C", folder.appendingPathComponent("janus.jcfg").path, "-F", folder.path]
        process.standardOutput = output
        process.standardError = output
        try process.run()
        self.process = process
        let end = Date().addingTimeInterval(10)
        while Date() < end {
            if let text = try? String(contentsOf: log, encoding: .utf8), text.contains("HTTP webserver started"),
               !websockets || text.contains("Websockets server started") { return }
            usleep(50_000)
        }
        throw JanusHarnessError("Janus did not start:\n\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
    }

    /// SIGKILL, as a crash does.
    func kill() {
        guard let process else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    func stop() {
        if let process { _ = ProcessRunner.terminate(process) }
        process = nil
        try? FileManager.default.removeItem(at: folder)
    }

    var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// One synchronous VideoRoom request (`create`, `listparticipants`, …) from a session of its own
    /// (created, attached, destroyed): the plugin's reply data.
    static func videoRoom(_ body: [String: Any]) throws -> [String: Any] {
        let http = HTTPClient()
        func post(_ url: String, _ verb: String, _ extra: [String: Any] = [:]) throws -> [String: Any] {
            try JanusMessage.reply(http.request("POST", url, body: JanusMessage.request(verb, transaction: "probe", extra)).body)
        }
        let session = try JanusMessage.id(post(apiURL, "create"))
        defer { _ = try? post("\(apiURL)/\(session)", "destroy") }
        let handle = try JanusMessage.id(post("\(apiURL)/\(session)", "attach", ["plugin": "janus.plugin.videoroom"]))
        return JanusMessage.pluginData(try post("\(apiURL)/\(session)/\(handle)", "message", ["body": body])) ?? [:]
    }
}

struct JanusHarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
