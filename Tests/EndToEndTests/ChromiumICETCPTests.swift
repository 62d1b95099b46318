import Foundation
import TestSupport
import XCTest

/// A viewer whose network blocks UDP (issue 31: some enterprise Wi-Fi passes TCP only) still watches: ICE-TCP
/// (RFC 6544), headless Chromium connecting to the call's passive TCP candidate.
final class ChromiumICETCPTests: XCTestCase {
    /// In the test's loopback-only namespace nftables drops every UDP packet (input hook, `meta l4proto
    /// udp`: the call's and Chromium's STUN, DTLS and RTP alike). Chromium opens the page, connects over
    /// TCP to the call's passive candidate (its port from `--ice-ports`), and decodes the test pattern with
    /// the bars' colours; the call's `/stats` and Chromium's getStats both say the selected pair is TCP,
    /// and nftables' counter shows the UDP that was tried and dropped. (Measured: the page decodes its 30th
    /// frame about 2.4 s after it opened; the whole run takes about 10 s in the namespace.)
    func testChromiumDecodesOverICETCPWhenUDPIsBlocked() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ChromiumICETCPTests/testChromiumDecodesOverICETCPWhenUDPIsBlocked", timeout: 150)
        }
        let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium"), driver = URL(fileURLWithPath: "/usr/bin/chromedriver")
        let nft = URL(fileURLWithPath: "/usr/sbin/nft")
        guard EndToEnd.requireTools([chromium, driver, nft, EndToEnd.systemPython, TestPaths.executable("screencast-call")]) else { return }
        for rule in [
            ["add", "table", "inet", "noudp"],
            ["add", "chain", "inet", "noudp", "in", "{ type filter hook input priority 0; policy accept; }"],
            ["add", "rule", "inet", "noudp", "in", "meta", "l4proto", "udp", "counter", "drop"],
        ] {
            let result = try ProcessRunner.run(nft, rule, timeout: 10)
            XCTAssertEqual(result.status, 0, "nft \(rule.joined(separator: " ")): \(result.stderr)")
            guard result.status == 0 else { return }
        }
        defer { _ = try? ProcessRunner.run(nft, ["delete", "table", "inet", "noudp"], timeout: 10) }

        let (width, height) = (640, 360)
        let ports = 42_000...42_099
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "\(width)x\(height)",
                                      "--ice-ports", "\(ports.lowerBound)-\(ports.upperBound)"])
        defer { call.stop() }
        let profile = call.folder.path("chromium")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let points = barSamplePoints(width: width, height: height).map { "\($0.x),\($0.y)" }.joined(separator: ";")
        let started = Date()
        let browser = try PythonPeer(
            EndToEnd.systemPython, "chromium_viewer.py",
            ["--url", call.baseURL + "/", "--profile", profile + "/profile", "--frames", "30", "--timeout", "40", "--points", points],
            environment: ["HOME": profile, "TMPDIR": profile])
        var peer: [String: Any]?
        while browser.isRunning {
            if let seen = (try? call.viewers())?["peers"] as? [[String: Any]], let first = seen.first { peer = first }
            Thread.sleep(forTimeInterval: 0.5)
        }
        let report = try browser.finish(timeout: 120)
        print("e2e: chromium over ICE-TCP in \(String(format: "%.1f", Date().timeIntervalSince(started))) s: \(report)")
        print("e2e: the call's view of the peer \(peer ?? [:])")
        let counters = try ProcessRunner.run(nft, ["list", "table", "inet", "noudp"], timeout: 10)
        print("e2e: nft \(counters.stdout.replacingOccurrences(of: "\n", with: " "))")

        XCTAssertNil(report["error"] as? String)
        let stats = try XCTUnwrap(report["stats"] as? [String: Any], "the page reported no stats: \(report)\n\(call.log)")
        XCTAssertGreaterThanOrEqual(stats["framesDecoded"] as? Int ?? 0, 30)
        XCTAssertEqual(stats["width"] as? Int, width)
        XCTAssertEqual(stats["height"] as? Int, height)
        let pixels = try XCTUnwrap(report["pixels"] as? [[Int]], "no pixels read")
        XCTAssertEqual(pixels.count, 8)
        for (index, pixel) in pixels.enumerated() where pixel.count >= 3 {
            let expected = rgb(ofBar: testPatternBars[index])
            let differences = [abs(pixel[0] - expected.r), abs(pixel[1] - expected.g), abs(pixel[2] - expected.b)]
            XCTAssertLessThanOrEqual(differences.max() ?? 255, 4, "bar \(index): \(pixel) vs \(expected)")
        }
        // Chromium's side: its selected pair is TCP, to the call's passive candidate.
        let chromiumPair = try XCTUnwrap(report["selectedPair"] as? [String: Any], "Chromium reported no selected pair: \(report)")
        XCTAssertEqual(chromiumPair["localProtocol"] as? String, "tcp")
        XCTAssertEqual(chromiumPair["remoteProtocol"] as? String, "tcp")
        XCTAssertTrue(ports.contains(chromiumPair["remotePort"] as? Int ?? 0), "the call's TCP port is from --ice-ports: \(chromiumPair)")
        // The call's side: the pair is TCP on a port of the range, and media went out on it.
        let peerStats = try XCTUnwrap(peer, "/stats never showed the peer:\n\(call.log)")
        XCTAssertEqual(peerStats["state"] as? String, "connected")
        let pair = try XCTUnwrap(peerStats["pair"] as? [String: Any], "\(peerStats)")
        XCTAssertEqual(pair["transport"] as? String, "tcp")
        let localPort = (pair["local"] as? String)?.split(separator: ":").last.flatMap { Int($0) } ?? 0
        XCTAssertTrue(ports.contains(localPort), "the call's side of the pair is its passive TCP port: \(pair)")
        XCTAssertGreaterThanOrEqual(peerStats["receiverReports"] as? Int ?? 0, 1, "Chromium's RTCP came back over TCP")
        // UDP was tried (both sides' checks) and every datagram dropped.
        let dropped = counters.stdout.range(of: #"packets [0-9]+"#, options: .regularExpression)
            .flatMap { Int(counters.stdout[$0].dropFirst("packets ".count)) } ?? 0
        XCTAssertGreaterThan(dropped, 0, "nftables dropped no UDP: \(counters.stdout)")
        XCTAssertEqual(call.stop(), 0, "the call stops cleanly on SIGTERM after a TCP viewer:\n\(call.log)")
    }
}
