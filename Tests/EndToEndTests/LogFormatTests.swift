import Foundation
import Glibc
import TestSupport
import XCTest
import XTestSupport

/// `--log-format json` of both programs: every stderr line is one JSON object with `time` (RFC 3339 UTC, ms),
/// `level`, `logger`, `message` and `fields`, the same events the text form writes.
final class LogFormatTests: XCTestCase {
    /// Parses every line as a JSON object with the five keys; returns them.
    private func jsonLines(_ stderr: String, file: StaticString = #filePath, line: UInt = #line) throws -> [[String: Any]] {
        let lines = stderr.split(separator: "\n").map(String.init)
        XCTAssertFalse(lines.isEmpty, "no log lines", file: file, line: line)
        let started = Date().addingTimeInterval(-120)
        let time = ISO8601DateFormatter()
        time.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return try lines.map { text in
            let object = try XCTUnwrap(
                try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)", file: file, line: line)
            XCTAssertEqual(Set(object.keys), ["time", "level", "logger", "message", "fields"], text, file: file, line: line)
            let stamp = try XCTUnwrap(object["time"] as? String, file: file, line: line)
            XCTAssertTrue(stamp.hasSuffix("Z") && stamp.count == 24, stamp, file: file, line: line)
            let date = try XCTUnwrap(time.date(from: stamp), stamp, file: file, line: line)
            XCTAssertTrue(date > started && date < Date().addingTimeInterval(1), stamp, file: file, line: line)
            XCTAssertTrue(["debug", "info", "warn", "error"].contains(object["level"] as? String ?? ""), text, file: file, line: line)
            XCTAssertNotNil(object["fields"] as? [String: Any], text, file: file, line: line)
            return object
        }
    }

    func testTheCallLogsJSONLines() throws {
        let pipe = Pipe()
        let call = try ProcessRunner.start(
            TestPaths.executable("screencast-call"),
            ["--log-format", "json", "--source", "testpattern", "--pattern-size", "160x96", "--http", "off", "--stats-interval", "0.2",
             "--socket", FileManager.default.temporaryDirectory.appendingPathComponent("sc-logjson-\(getpid()).sock").path],
            stderr: pipe)
        let output = PipeLines(pipe)
        let deadline = Date().addingTimeInterval(10)
        while !output.all.contains(where: { $0.contains("\"message\":\"stats\"") }), Date() < deadline { usleep(20_000) }
        kill(call.processIdentifier, SIGTERM)
        XCTAssertFalse(ProcessRunner.wait(for: call, timeout: 10))
        XCTAssertTrue(output.waitUntilClosed())
        let result = (status: ProcessRunner.status(of: call), stderr: output.all.joined(separator: "\n"))
        let lines = try jsonLines(result.stderr)
        let final = try XCTUnwrap(lines.first { $0["message"] as? String == "final" }, result.stderr)
        XCTAssertEqual(final["logger"] as? String, "stats")
        XCTAssertEqual(final["level"] as? String, "info")
        let fields = try XCTUnwrap(final["fields"] as? [String: Any])
        XCTAssertGreaterThan(fields["encoded"] as? Int ?? 0, 0, "integers stay numbers: \(fields)")
        XCTAssertEqual(fields["size"] as? String, "160x96")
        XCTAssertTrue(lines.contains { $0["message"] as? String == "stopping" && $0["logger"] as? String == "call" }, result.stderr)

        let bad = try ProcessRunner.run(TestPaths.executable("screencast-call"), ["--log-format", "yaml"])
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.hasPrefix("screencast-call: --log-format must be text or json, not 'yaml'\n"), bad.stderr)
    }

    func testTheAgentLogsJSONLines() throws {
        guard EndToEnd.requireTools([URL(fileURLWithPath: "/usr/bin/Xvfb"), TestPaths.executable("screencast-agent")]) else { return }
        let server = try XServerProcess(.xvfb, width: 160, height: 96)
        defer { server.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("sc-logjson-\(getpid()).frames").path
        defer { unlink(out) }
        let result = try ProcessRunner.run(
            TestPaths.executable("screencast-agent"),
            ["--log-format", "json", "--display", server.display, "--output", out, "--frames", "3", "--keepalive", "0.05"], timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = try jsonLines(result.stderr)
        let summary = try XCTUnwrap(lines.first { $0["message"] as? String == "summary" }, result.stderr)
        XCTAssertEqual((summary["fields"] as? [String: Any])?["frames"] as? Int, 3, "\(summary)")

        let bad = try ProcessRunner.run(TestPaths.executable("screencast-agent"), ["--log-format", "yaml"])
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.hasPrefix("screencast-agent: --log-format must be text or json, not 'yaml'\n"), bad.stderr)
    }
}
