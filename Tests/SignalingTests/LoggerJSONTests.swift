import Foundation
import ScreencastSupport
import Synchronization
import XCTest

/// ``LogFormat/json``: one JSON object a line, whatever a field holds (quotes, line feeds, control characters),
/// with the event's numbers kept as numbers and the injected wall clock as RFC 3339 UTC.
final class LoggerJSONTests: XCTestCase {
    private final class Lines: Sendable { let all = Mutex<[String]>([]) }

    func testJSONLinesCarryTimeLevelLoggerMessageAndTypedFields() throws {
        let lines = Lines()
        let logger = Logger(
            component: "call", threshold: .info, format: .json, output: LogOutput { line in lines.all.withLock { $0.append(line) } },
            wallClock: { 1_765_153_541.394_2 })
        logger.named("http").warning("viewer left", [
            "peer": "a\"b\\c\nd\u{1b}[2J", "count": 3, "ratio": 0.25, "ok": true, "nan": Double.nan, "big": UInt64.max, "port": UInt16(8080),
        ])
        logger.debug("not written", [:])
        let written = lines.all.withLock { $0 }
        XCTAssertEqual(written.count, 1)
        XCTAssertFalse(written[0].contains("\n"), "one line")
        XCTAssertEqual(written[0], #"{"time":"2025-12-08T00:25:41.394Z","level":"warn","logger":"http","message":"viewer left","fields":"#
            + #"{"peer":"a\"b\\c\nd\u001b[2J","count":3,"ratio":0.25,"ok":true,"nan":"nan","big":18446744073709551615,"port":8080}}"#)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(written[0].utf8)) as? [String: Any])
        XCTAssertEqual((object["fields"] as? [String: Any])?["peer"] as? String, "a\"b\\c\nd\u{1b}[2J")
    }

    func testTextStaysTheDefault() {
        let lines = Lines()
        let logger = Logger(component: "call", output: LogOutput { line in lines.all.withLock { $0.append(line) } })
        logger.info("stats", ["fps": 30, "size": "640x360"])
        XCTAssertEqual(lines.all.withLock { $0 }, ["info call stats fps=30 size=640x360"])
    }
}
