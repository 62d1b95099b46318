import Foundation
import Publishing
import TestSupport
import XCTest

/// Debian's simple-whip-server (meetecho, 0.0~git20230201) in front of a ``JanusHarness`` with its WebSocket
/// transport on, for the WHIP tests. apt cannot install it beside this machine's nodesource nodejs, so
/// `tools/setup` unpacks its files and those of its node-* and libjs-* dependencies into ``root``; it runs
/// with the machine's `node`, `NODE_PATH` at the unpacked modules and `--preserve-symlinks` (Debian's modules
/// link into `/usr/share/javascript`, unpacked under ``root`` too). Its `server.js` reads `./config.js`
/// beside itself: the test's folder holds links to the package's `server.js` and `whip-janus.js` and a
/// config of its own (Janus at ``JanusHarness/webSocketURL``, the REST API on `port` under `/whip`).
/// `DEBUG=whip:*` makes it log each endpoint's life (`[ID] Publishing to WHIP endpoint`,
/// `[ID] Terminating WHIP session`).
final class SimpleWHIPServer {
    static let root = URL(fileURLWithPath: "/opt/simple-whip-server")
    static var sources: URL { root.appendingPathComponent("usr/share/simple-whip-server/src") }
    static let node = URL(fileURLWithPath: "/usr/bin/node")
    let port: UInt16
    let folder: URL
    let log: URL
    private var process: Process?

    /// Whether `tools/setup` unpacked the server (its `server.js`) and `node` is there.
    static var isInstalled: Bool {
        FileManager.default.fileExists(atPath: sources.appendingPathComponent("server.js").path)
            && FileManager.default.isExecutableFile(atPath: node.path)
    }

    /// - Parameter strictETags: its option of that name: a restart PATCH must then carry `If-Match: "*"`
    ///   (quoted) and a trickle PATCH the latest ETag, else 412.
    init(port: UInt16, folder: URL, strictETags: Bool = true) throws {
        self.port = port
        self.folder = folder.appendingPathComponent("whip-server")
        log = self.folder.appendingPathComponent("server.log")
        try FileManager.default.createDirectory(at: self.folder, withIntermediateDirectories: true)
        for name in ["server.js", "whip-janus.js"] {
            try FileManager.default.createSymbolicLink(
                at: self.folder.appendingPathComponent(name), withDestinationURL: Self.sources.appendingPathComponent(name))
        }
        let config = """
            module.exports = { janus: { address: '\(JanusHarness.webSocketURL)' }, port: \(port), rest: '/whip',
                allowTrickle: true, strictETags: \(strictETags), iceServers: [] };
            """
        try config.write(to: self.folder.appendingPathComponent("config.js"), atomically: true, encoding: .utf8)
    }

    /// Starts the server and waits (at most 15 s) until it is connected to Janus and its REST API listens.
    func start() throws {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        let process = Process()
        process.executableURL = Self.node
        process.arguments = ["--preserve-symlinks", "--preserve-symlinks-main", folder.appendingPathComponent("server.js").path]
        process.currentDirectoryURL = folder
        let modules = ["usr/share/nodejs", "usr/lib/x86_64-linux-gnu/nodejs"].map { Self.root.appendingPathComponent($0).path }
        process.environment = ["NODE_PATH": modules.joined(separator: ":"), "DEBUG": "whip:*", "DEBUG_COLORS": "0", "PATH": "/usr/bin:/bin"]
        process.standardOutput = output
        process.standardError = output
        try process.run()
        self.process = process
        let end = Date().addingTimeInterval(15)
        while Date() < end, ProcessRunner.isRunning(process) {
            if logText.contains("WHIP REST API listening") { return }
            usleep(100_000)
        }
        throw JanusHarnessError("simple-whip-server did not start:\n\(logText)")
    }

    /// Its non-standard `POST /whip/create`: an endpoint `id` publishing into VideoRoom `room`, the bearer
    /// `token` required on every WHIP request. Throws on any status but 200 (with the body).
    func createEndpoint(id: String, room: Int, token: String) throws {
        let body = try JSONSerialization.data(withJSONObject: ["id": id, "room": room, "token": token])
        let response = try HTTPClient().request(
            "POST", "http://127.0.0.1:\(port)/whip/create", headers: ["Content-Type: application/json"], body: Array(body))
        guard response.status == 200 else {
            throw JanusHarnessError("POST /whip/create: \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        }
    }

    /// `GET /whip/endpoints`: the endpoints it knows, each with `id`, `room` and `enabled` (publishing).
    func endpoints() throws -> [[String: Any]] {
        let response = try HTTPClient().request("GET", "http://127.0.0.1:\(port)/whip/endpoints")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(response.body)) as? [[String: Any]], "\(response.status)")
    }

    var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    func stop() {
        if let process { _ = ProcessRunner.terminate(process) }
        process = nil
    }
}
