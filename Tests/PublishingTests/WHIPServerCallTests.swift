import Foundation
import Media
import Publishing
import TestSupport
import XCTest

/// WHIP into a real SFU: `screencast-call --whip http://127.0.0.2:PORT/whip/endpoint/ID --whip-token T`
/// publishing through Debian's simple-whip-server (``SimpleWHIPServer``) into a real Janus
/// (``JanusHarness``, WebSocket transport on), in a loopback-only namespace with the 127.0.0.2 veth. An
/// independent aiortc subscriber through the Janus HTTP API (`Peers/janus_subscriber.py`) decodes the test
/// pattern; stopping the call DELETEs the WHIP session, which the server handles (its log and its
/// endpoint's state) and Janus sees (the publisher leaves the room).
final class WHIPServerCallTests: XCTestCase {
    let room = 80
    let port: UInt16 = 17080
    let (width, height) = (320, 240)

    func testPublishesThroughSimpleWHIPServerIntoJanusAndDeletesOnStop() throws {
        guard try Self.insideNamespace("PublishingTests.WHIPServerCallTests/testPublishesThroughSimpleWHIPServerIntoJanusAndDeletesOnStop") else { return }
        let (janus, server, call) = try startChain(room: room, port: port)
        defer { Self.stop(janus, server, call) }
        XCTAssertTrue(wait(20) { (try? JanusCallTests.stats())?["state"] as? String == "published" }, "\(server.logText.suffix(4000))")
        XCTAssertTrue(server.logText.contains("[screen] Publishing to WHIP endpoint"), server.logText)
        XCTAssertEqual(try server.endpoints().first { $0["id"] as? String == "screen" }?["enabled"] as? Bool, true)

        try assertSubscriberSeesThePattern(janus)

        // SIGTERM: the call DELETEs its WHIP session (the 201's Location, /whip/resource/screen).
        XCTAssertFalse(ProcessRunner.terminate(call), "the call stops on SIGTERM")
        XCTAssertTrue(wait(10) { server.logText.contains("[screen] Terminating WHIP session") }, server.logText)
        let text = server.logText
        XCTAssertTrue(text.contains("/resource/: screen"), "the DELETE handler ran:\n\(text)")
        XCTAssertFalse(text.contains("PeerConnection detected as closed"), "the session ended by the DELETE, not by Janus seeing the peer go:\n\(text)")
        XCTAssertEqual(try server.endpoints().first { $0["id"] as? String == "screen" }?["enabled"] as? Bool, false)
        XCTAssertTrue(wait(10) {
            let listed = (try? JanusHarness.videoRoom(["request": "listparticipants", "room": self.room]))?["participants"] as? [[String: Any]]
            return listed?.contains { $0["publisher"] as? Bool == true } == false
        }, "the publisher left the Janus room")
    }

    /// With `strictETags` on, simple-whip-server wants a restart's `If-Match` as the quoted `"*"` and answers
    /// our RFC 9110 `*` with 412: the leg then ends the session (DELETE) and publishes anew with a POST, the
    /// reason naming the 412, and a subscriber decodes the pattern from the new session.
    func testStrictETagsRefuseTheRestartAndTheLegPublishesAnew() throws {
        guard try Self.insideNamespace("PublishingTests.WHIPServerCallTests/testStrictETagsRefuseTheRestartAndTheLegPublishesAnew") else { return }
        let (janus, server, call) = try startChain(room: room, port: port, strictETags: true)
        defer { Self.stop(janus, server, call) }
        XCTAssertTrue(wait(20) { (try? JanusCallTests.stats())?["state"] as? String == "published" }, "\(server.logText.suffix(4000))")
        try cutUDPUntilARestartBegins()
        XCTAssertTrue(wait(25) {
            let stats = try? JanusCallTests.stats()
            return stats?["reconnects"] as? Int == 1 && stats?["state"] as? String == "published"
        }, "\((try? JanusCallTests.stats()) ?? [:])\n\(server.logText.suffix(3000))")
        let stats = try JanusCallTests.stats()
        XCTAssertEqual(stats["iceRestartsSucceeded"] as? Int, 0)
        let reason = stats["lastReason"] as? String ?? ""
        XCTAssertTrue(reason.hasPrefix("ICE restart 1 failed: PATCH http://127.0.0.2:\(port)/whip/resource/screen: HTTP 412"), reason)
        XCTAssertFalse(server.logText.contains("Performing ICE restart"), server.logText)
        XCTAssertEqual(server.logText.components(separatedBy: "[screen] Publishing to WHIP endpoint").count, 3, "a second POST")
        try assertSubscriberSeesThePattern(janus)
    }

    /// Drops all UDP in the namespace (nft) until our consent has lapsed (10 s here) and `/stats` counts a restart begun.
    /// Meanwhile no TWCC feedback comes and the leg's congestion target falls on timers: from the follower's
    /// silence limit on (3 s, plus a check interval and our polling) the silent leg no longer sets the shared
    /// encoder's rate, so every sample after 4 s of the cut finds the encoder at its default (the call has no
    /// other consumer), not following the dying leg down to the floor.
    func cutUDPUntilARestartBegins(file: StaticString = #filePath, line: UInt = #line) throws {
        try Self.nft("add table inet cut", "add chain inet cut out { type filter hook output priority 0 ; }", "add rule inet cut out meta l4proto udp drop")
        defer { try? Self.nft("delete table inet cut") }
        let cut = Date()
        var samples: [(t: Double, applied: String, target: Int?)] = []
        // Our consent (RFC 7675) lapses 10 s after Janus's last RTCP (`--consent-timeout 10`): the restart begins.
        XCTAssertTrue(wait(25) {
            let stats = try? JanusCallTests.stats(path: "")
            let sfu = stats?["sfu"] as? [String: Any], bitrate = (stats?["viewers"] as? [String: Any])?["bitrate"] as? [String: Any]
            if let bitrate {
                samples.append((Date().timeIntervalSince(cut), "\(bitrate["applied"] ?? "-")", (sfu?["targetBps"] as? Int).map { $0 / 1000 }))
            }
            return (sfu?["iceRestarts"] as? Int ?? 0) >= 1
        }, "ICE failed and a restart began", file: file, line: line)
        print("whip: the cut, (s, encoder's bitrate, the leg's target kbit/s): "
            + samples.map { "(\(String(format: "%.1f", $0.t)), \($0.applied), \($0.target.map(String.init) ?? "-"))" }.joined(separator: " "))
        for sample in samples where sample.t >= 4 {
            XCTAssertEqual(sample.applied, "default", "\(String(format: "%.1f", sample.t)) s into the cut the silent leg (target "
                + "\(sample.target.map(String.init) ?? "-") kbit/s) still set the encoder", file: file, line: line)
        }
    }

    /// simple-whip-server with `strictETags` off (its default) relays an ICE restart PATCH to Janus
    /// (a renegotiation with our new ufrag/pwd) and answers Janus's new credentials, without candidates. All
    /// UDP in the namespace is dropped (nft) until our ICE fails and the restart begins, then let through:
    /// the leg comes back on the same session (no new POST) and a new subscriber decodes the pattern.
    func testICERestartThroughSimpleWHIPServerIntoJanus() throws {
        guard try Self.insideNamespace("PublishingTests.WHIPServerCallTests/testICERestartThroughSimpleWHIPServerIntoJanus") else { return }
        let (janus, server, call) = try startChain(room: room, port: port, strictETags: false)
        defer { Self.stop(janus, server, call) }
        XCTAssertTrue(wait(20) { (try? JanusCallTests.stats())?["state"] as? String == "published" }, "\(server.logText.suffix(4000))")
        try cutUDPUntilARestartBegins()
        XCTAssertTrue(wait(20) {
            let stats = try? JanusCallTests.stats()
            return stats?["iceRestartsSucceeded"] as? Int == 1 && stats?["state"] as? String == "published"
        }, "\((try? JanusCallTests.stats()) ?? [:])\n\(server.logText.suffix(3000))")
        let stats = try JanusCallTests.stats()
        XCTAssertEqual(stats["reconnects"] as? Int, 0, "the same session: \(stats)")
        XCTAssertTrue(server.logText.contains("[screen] Performing ICE restart"), server.logText)
        XCTAssertEqual(server.logText.components(separatedBy: "[screen] Publishing to WHIP endpoint").count, 2, "one POST")
        try assertSubscriberSeesThePattern(janus)
    }

    /// An independent aiortc subscriber through the Janus HTTP API decodes 4 s of the pattern (retrying
    /// while Janus does not list the publisher yet).
    func assertSubscriberSeesThePattern(_ janus: JanusHarness, file: StaticString = #filePath, line: UInt = #line) throws {
        let pictures = janus.folder.appendingPathComponent("pictures.yuv").path
        var report: [String: Any] = [:]
        for _ in 0..<4 {
            let result = try ProcessRunner.run(JanusCallTests.python, [
                JanusE2EETests.subscriber.path, "--url", JanusHarness.apiURL, "--room", String(room), "--seconds", "4", "--save-pictures", pictures,
            ], timeout: 40)
            let last = try XCTUnwrap(result.stdout.split(separator: "\n").last, "the subscriber printed nothing: \(result.stderr.suffix(3000))")
            report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
            guard (report["error"] as? String)?.contains("no publisher") == true else { break }
            usleep(500_000)  // Janus lists the publisher once its PeerConnection is up
        }
        print("janus: aiortc through simple-whip-server's Janus: \(report); the leg: \((try? JanusCallTests.stats()) ?? [:])")
        let whole = (try? JanusCallTests.stats(path: "")) ?? [:]
        print("janus: the call's source: \(whole.filter { !["viewers", "sfu", "e2ee"].contains($0.key) })")
        XCTAssertNil(report["error"] as? String, file: file, line: line)
        XCTAssertEqual(report["publisher"] as? String, "WHIP Publisher \(room)", "simple-whip-server's publisher in the room", file: file, line: line)
        XCTAssertGreaterThan(report["frames"] as? Int ?? 0, 30, "frames decoded in 4 s; the call's leg: \((try? JanusCallTests.stats()) ?? [:])", file: file, line: line)
        XCTAssertEqual(report["width"] as? Int, width, file: file, line: line)
        XCTAssertEqual(report["height"] as? Int, height, file: file, line: line)
        let decoded = try JanusE2EETests.pictures(at: pictures, width: width, height: height)
        XCTAssertEqual(decoded.count, min(30, report["frames"] as? Int ?? 0), file: file, line: line)
        for (index, picture) in decoded.enumerated() {
            XCTAssertEqual(testPatternBarsShown(in: picture), 8, "picture \(index) through simple-whip-server and Janus shows the test pattern", file: file, line: line)
        }
    }

    /// Stops the chain ``startChain(room:port:strictETags:)`` started.
    static func stop(_ janus: JanusHarness, _ server: SimpleWHIPServer, _ call: Process) {
        _ = ProcessRunner.terminate(call)
        server.stop()
        janus.stop()
    }

    /// Runs `nft` commands in this (the test's own) network namespace, through `system(3)`: Foundation's
    /// Process once missed an nft's exit here and waited on the zombie for ever.
    static func nft(_ commands: String...) throws {
        for command in commands {
            let status = system("/usr/sbin/nft '\(command)' </dev/null >/dev/null 2>&1")
            guard status == 0 else { throw JanusHarnessError("nft \(command): status \(status)") }
        }
    }

    /// Outside the namespace: checks the tools and reruns `test` inside one (false: the caller returns).
    static func insideNamespace(_ test: String) throws -> Bool {
        guard JanusHarness.isInside else {
            guard SimpleWHIPServer.isInstalled else {
                XCTFail("\(SimpleWHIPServer.sources.path)/server.js or /usr/bin/node is missing: run tools/setup")
                return false
            }
            for tool in [JanusCallTests.python, TestPaths.executable("screencast-call")] where !FileManager.default.isExecutableFile(atPath: tool.path) {
                XCTFail("\(tool.path) is missing: run tools/setup and swift build")
                return false
            }
            try JanusHarness.rerunInNamespace(test, timeout: 120)
            return false
        }
        return true
    }

    /// Janus (WebSocket transport on) with a VP8 `room`, simple-whip-server on `port` with endpoint `screen`
    /// (token `t0ken`) into it, and `screencast-call --whip` publishing the test pattern to it (`/stats` on
    /// 127.0.0.1:18080). The caller stops all three.
    func startChain(room: Int, port: UInt16, strictETags: Bool = true) throws -> (JanusHarness, SimpleWHIPServer, Process) {
        let janus = try JanusHarness(websockets: true)
        try janus.start()
        var server: SimpleWHIPServer?
        do {
            return try startChain(janus, room: room, port: port, strictETags: strictETags, server: &server)
        } catch {
            server?.stop()
            janus.stop()
            throw error
        }
    }

    private func startChain(
        _ janus: JanusHarness, room: Int, port: UInt16, strictETags: Bool, server started: inout SimpleWHIPServer?
    ) throws -> (JanusHarness, SimpleWHIPServer, Process) {
        let created = try JanusHarness.videoRoom(["request": "create", "room": room, "publishers": 1, "videocodec": "vp8"])
        XCTAssertEqual(created["videoroom"] as? String, "created", "\(created)")
        let server = try SimpleWHIPServer(port: port, folder: janus.folder, strictETags: strictETags)
        started = server
        try server.start()
        XCTAssertTrue(wait(15) { server.logText.contains("Connected to Janus: \(JanusHarness.webSocketURL)") }, server.logText)
        try server.createEndpoint(id: "screen", room: room, token: "t0ken")
        let call = try ProcessRunner.start(TestPaths.executable("screencast-call"), [
            "--source", "testpattern", "--pattern-size", "\(width)x\(height)", "--http", "127.0.0.1:18080", "--stats-interval", "0",
            "--socket", janus.folder.appendingPathComponent("agent.sock").path, "--ice-address", "127.0.0.2", "--ice-address", "127.0.0.1",
            "--whip", "http://127.0.0.2:\(port)/whip/endpoint/screen", "--whip-token", "t0ken",
            // Consent lapses 10 s after Janus's last RTCP (30 s by default): the cut tests take 10 s, not 30.
            "--consent-timeout", "10",
        ])
        return (janus, server, call)
    }

    /// Polls `condition` every 100 ms for at most `seconds`; whether it held.
    func wait(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(100_000)
        }
        return condition()
    }
}
