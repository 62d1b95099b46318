import Foundation
import Glibc
import TestSupport
import XCTest

/// `screencast-call status` and `kick` against a live `--share` call (HTTPS, its kept token and certificate) with an
/// aiortc viewer, in a loopback-only network namespace.
final class ControlCommandTests: XCTestCase {
    func testStatusListsTheViewerAndKickEndsIt() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ControlCommandTests/testStatusListsTheViewerAndKickEndsIt", timeout: 120)
        }
        let executable = TestPaths.executable("screencast-call")
        guard EndToEnd.requireTools([EndToEnd.venvPython, executable]) else { return }
        let state = try TemporaryDirectory(prefix: "sc-control")
        defer { state.remove() }
        let call = try CallUnderTest(["--share", "--source", "testpattern", "--pattern-size", "320x240"], stateFolder: state.url.path)
        defer { call.stop() }
        let token = try String(contentsOfFile: state.path("screencast/share-token"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        func control(_ words: [String]) throws -> ProcessResult {
            try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["XDG_STATE_HOME=" + state.url.path, executable.path] + words + ["--share", "--http", "127.0.0.1:\(call.port)"], timeout: 20)
        }

        let empty = try control(["status"])
        XCTAssertEqual(empty.status, 0, empty.stderr)
        XCTAssertTrue(empty.stdout.contains("viewers: 0 connected of 16 allowed"), empty.stdout)
        XCTAssertFalse(empty.stdout.contains("watching"), empty.stdout)

        let peer = try PythonPeer(
            EndToEnd.venvPython, "whep_viewer.py", ["--url", "https://127.0.0.1:\(call.port)/whep", "--token=" + token, "--insecure", "--seconds", "5"])
        var status = empty
        let deadline = Date().addingTimeInterval(15)
        repeat {
            usleep(300_000)
            status = try control(["status"])
        } while !status.stdout.contains("sees the newest frames") && Date() < deadline
        print("e2e: screencast-call status:\n\(status.stdout)")
        XCTAssertEqual(status.status, 0, status.stderr)
        let line = try XCTUnwrap(status.stdout.split(separator: "\n").first { $0.contains("sees the newest frames") }, status.stdout)
        XCTAssertTrue(line.contains("  127.0.0.1:"), "the viewer's address: \(line)")
        XCTAssertTrue(line.contains(" kbps, loss "), String(line))
        let id = String(line.split(separator: " ")[0])
        XCTAssertEqual(id.count, try XCTUnwrap((try call.viewersOverHTTPS(token: token)).first).count, "the full session id")

        // A wrong token is refused; then the kick ends the viewer's session.
        let wrong = try control(["kick", id, "--token=wrong-token-1234567"])
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.stderr.contains(": 401 "), wrong.stderr)
        let kicked = try control(["kick", id])
        XCTAssertEqual(kicked.status, 0, kicked.stderr)
        XCTAssertEqual(kicked.stdout, "kicked \(id)\n")
        let after = try control(["status"])
        XCTAssertFalse(after.stdout.contains(id), after.stdout)
        XCTAssertTrue(call.log.contains("viewer kicked by the sharer"), call.log)
        let again = try control(["kick", id])
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.contains(": 404 no viewer \(id)"), again.stderr)
        _ = try? peer.finish(timeout: 30)

        // Pause and resume: the pages are told (GET /source), status says it.
        let paused = try control(["pause"])
        XCTAssertEqual(paused.stdout, "paused\n", paused.stderr)
        XCTAssertEqual(try control(["pause"]).stdout, "already paused\n")
        XCTAssertTrue(try control(["status"]).stdout.hasSuffix("sharing: paused (screencast-call resume)\n"))
        XCTAssertEqual(try control(["resume"]).stdout, "resumed\n")
        XCTAssertTrue(try control(["status"]).stdout.hasSuffix("sharing: live\n"))
        let usage = try ProcessRunner.run(executable, ["kick"])
        XCTAssertEqual(usage.status, 64)
    }
}

extension CallUnderTest {
    /// The ids of the viewers in `/stats`, read over HTTPS with curl (the --share call's self-signed certificate).
    func viewersOverHTTPS(token: String) throws -> [String] {
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "-k", "-H", "Authorization: Bearer \(token)", "https://127.0.0.1:\(port)/stats"])
        let stats = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let peers = (stats?["viewers"] as? [String: Any])?["peers"] as? [[String: Any]] ?? []
        return peers.compactMap { $0["id"] as? String }
    }
}
