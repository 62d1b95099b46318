import Foundation
import FrameSocket
import Media
import ScreencastSupport
import TestSupport
import XCTest

/// `/stats` `screen` of a real `screencast-call`: `senders` is who is sending now, `sendersTotal` the
/// connections that sent a frame, `connections` every accepted one; a second call's liveness probe (it
/// connects, finds the socket live and exits 1) counts only as a connection, never as a sender.
final class StatsSendersTests: CallTestCase {
    func testLivenessProbesAndRefusedConnectionsAreNotSenders() throws {
        let call = try startCall(["--http", "127.0.0.1:0", "--stats-interval", "0"])
        let line = try XCTUnwrap(call.waitForLine("viewer page", timeout: 10), call.logText)
        let port = try XCTUnwrap(field("whep", in: line)?.split(separator: ":").last?.split(separator: "/").first, line)
        func screen(file: StaticString = #filePath, line: UInt = #line) throws -> [String: Int] {
            let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                               ["-sS", "--max-time", "10", "http://127.0.0.1:\(port)/stats"], timeout: 15)
            XCTAssertEqual(result.status, 0, "curl (tools/setup installs it): \(result.stderr)", file: file, line: line)
            let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                                     file: file, line: line)
            let screen = try XCTUnwrap(json["screen"] as? [String: Any], result.stdout, file: file, line: line)
            var out: [String: Int] = [:]
            for key in ["senders", "sendersTotal", "connections"] { out[key] = (screen[key] as? NSNumber)?.intValue ?? -1 }
            out["connected"] = (screen["connected"] as? Bool).map { $0 ? 1 : 0 } ?? -1
            return out
        }
        /// A second call on the same socket: it probes the socket, finds it live and exits 1.
        func probeWithASecondCall() throws {
            let second = try ProcessRunner.run(TestPaths.executable("screencast-call"), ["--socket", socket, "--http", "off"], timeout: 10)
            XCTAssertEqual(second.status, 1, second.stderr)
            XCTAssertTrue(second.stderr.contains("in use"), second.stderr)
        }
        XCTAssertEqual(try screen(), ["senders": 0, "sendersTotal": 0, "connections": 0, "connected": 0])

        // Idle: the probe is accepted (connection 1) and ends at once without a frame.
        try probeWithASecondCall()
        XCTAssertNotNil(call.waitForLine("screen sender ended connection=1 ", timeout: 5), call.logText)
        XCTAssertEqual(try screen(), ["senders": 0, "sendersTotal": 0, "connections": 1, "connected": 0])

        // A sender (the agent's FrameSender) that stays connected: connection 2.
        let sender = try FrameSender(path: SocketPath(socket), logger: Logger(component: "sender", threshold: .error))
        let frame = try makeDump([DumpFrame(picture: makeDesktop(width: 160, height: 120, variant: 1), timestamp: 1_000_000)])
        sender.offer(frame)
        XCTAssertNotNil(call.waitForLine("screen takes over", timeout: 5), call.logText)
        XCTAssertEqual(try screen(), ["senders": 1, "sendersTotal": 1, "connections": 2, "connected": 1])

        // Busy: the probe is refused (connection 3) and the sender keeps going.
        try probeWithASecondCall()
        XCTAssertNotNil(call.waitForLine("sender refused connection=3 ", timeout: 5), call.logText)
        sender.offer(frame)
        XCTAssertEqual(try screen(), ["senders": 1, "sendersTotal": 1, "connections": 2, "connected": 1])

        sender.close()
        XCTAssertNotNil(call.waitForLine("screen sender ended connection=2 ", timeout: 5), call.logText)
        XCTAssertEqual(try screen(), ["senders": 0, "sendersTotal": 1, "connections": 2, "connected": 0])

        // A second sender that sends a frame adds to the total; none is connected after it.
        try Data(try makeDump((0..<3).map {
            DumpFrame(picture: makeDesktop(width: 160, height: 120, variant: $0), timestamp: 2_000_000 + UInt64($0) * 50_000)
        })).write(to: URL(fileURLWithPath: folder.path("three.frames")))
        try replay(folder.path("three.frames"), socket: socket)
        XCTAssertNotNil(call.waitForLine("screen sender ended connection=4 ", timeout: 5), call.logText)
        XCTAssertEqual(try screen(), ["senders": 0, "sendersTotal": 2, "connections": 3, "connected": 0])
        call.signal(SIGTERM)
        XCTAssertEqual(call.waitForExit(), 0, call.logText)
        let final = try XCTUnwrap(call.log.last { $0.contains("info stats final ") })
        XCTAssertEqual(field("senders", in: final), "0", final)
        XCTAssertEqual(field("senders.total", in: final), "2", final)
    }
}
