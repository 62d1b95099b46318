import Foundation
import TestSupport
import XCTest

/// `screencast-call --share` on its own: the banner carries a stats link with the token beside the viewer
/// link, and `/stats` names the page by the address viewers use (the first printed link), not loopback.
final class ShareBannerTests: CallTestCase {
    func testTheBannerHasAStatsLinkAndStatsNamesThePrintedViewerAddress() throws {
        let out = Pipe(), err = Pipe()
        let process = try ProcessRunner.start(
            TestPaths.executable("screencast-call"),
            ["--share", "--http", "0.0.0.0:0", "--socket", socket, "--source", "testpattern", "--pattern-size", "160x96", "--stats-interval", "0"],
            stdout: out, stderr: err)
        let printed = PipeLines(out), log = PipeLines(err)
        defer {
            if ProcessRunner.isRunning(process) { kill(process.processIdentifier, SIGTERM) }
            _ = ProcessRunner.wait(for: process, timeout: 10)
        }
        let deadline = Date().addingTimeInterval(15)
        while !printed.all.contains(where: { $0.contains("SHA-256") }), ProcessRunner.isRunning(process), Date() < deadline { usleep(50_000) }
        let lines = printed.all
        let link = try XCTUnwrap(lines.first { $0.hasPrefix("    https://") }?.trimmingCharacters(in: .whitespaces), "\(lines)\n\(log.all)")
        let components = try XCTUnwrap(URLComponents(string: link))
        let token = try XCTUnwrap(components.queryItems?.first { $0.name == "token" }?.value)
        let port = try XCTUnwrap(components.port)
        let base = link.components(separatedBy: "/?token=")[0]
        XCTAssertEqual(token.count, 32, link)
        let stats = try XCTUnwrap(lines.first { $0.contains("Stats") }, "\(lines)")
        XCTAssertTrue(stats.hasSuffix(": \(base)/stats?format=text&token=\(token)"), stats)

        // Read over loopback (the server listens on every address); it names the printed link's address.
        let curl = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/curl"), ["-sk", "--max-time", "10", "https://127.0.0.1:\(port)/stats?token=\(token)"], timeout: 15)
        XCTAssertEqual(curl.status, 0, curl.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(curl.stdout.utf8)) as? [String: Any], curl.stdout)
        XCTAssertEqual(json["viewerURL"] as? String, base + "/")
        let text = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/curl"), ["-sk", "--max-time", "10", "https://127.0.0.1:\(port)/stats?format=text&token=\(token)"],
            timeout: 15)
        XCTAssertTrue(text.stdout.contains("; viewer page \(base)/"), text.stdout)
    }
}
