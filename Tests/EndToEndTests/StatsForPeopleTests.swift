import Foundation
import TestSupport
import XCTest

/// `/stats` answers what a person asks first (version, uptime, the viewer page), and `?format=text` says it
/// in three lines that agree with the JSON.
final class StatsForPeopleTests: XCTestCase {
    func testJSONLeadsWithVersionUptimeAndTheViewerPage() throws {
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "320x240", "--max-viewers", "5"])
        defer { call.stop() }
        usleep(1_200_000)
        let stats = try call.stats()
        let version = try ProcessRunner.run(TestPaths.executable("screencast-call"), ["--version"]).stdout
        XCTAssertEqual("screencast-call \(stats["version"] as? String ?? "-")\n", version)
        let uptime = try XCTUnwrap(stats["uptimeSeconds"] as? Double)
        XCTAssertGreaterThanOrEqual(uptime, 1.0)
        XCTAssertLessThan(uptime, 30)
        XCTAssertEqual(stats["viewerURL"] as? String, call.baseURL + "/")
        XCTAssertEqual(stats["maxViewers"] as? Int, 5)

        let text = try HTTP.request("GET", port: call.port, path: "/stats?format=text")
        XCTAssertEqual(text.status, 200)
        XCTAssertEqual(text.headers["Content-Type"] ?? text.headers["content-type"], "text/plain; charset=utf-8")
        let lines = text.text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, text.text)
        XCTAssertTrue(lines[0].hasPrefix("screencast-call \(stats["version"] as? String ?? "-"), up "), lines[0])
        XCTAssertTrue(lines[0].hasSuffix("; viewer page \(call.baseURL)/"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix("source: testpattern 320x240, "), lines[1])
        XCTAssertTrue(lines[1].hasSuffix("; no agent connected"), lines[1])
        XCTAssertEqual(lines[2], "viewers: 0 connected of 5 allowed; 0 ended recently")

        let bad = try HTTP.request("GET", port: call.port, path: "/stats?format=xml")
        XCTAssertEqual(bad.status, 400)
        XCTAssertTrue(bad.text.contains("format must be json or text"), bad.text)
    }
}
