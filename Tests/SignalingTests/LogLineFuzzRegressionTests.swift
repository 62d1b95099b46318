import Foundation
import ScreencastSupport
import Signaling
import Synchronization
import TestSupport
import XCTest

/// Requests `tools/fuzz whep-http` found (Tests/Fixtures/fuzz/whep-http/: a flags byte, then the raw
/// request): a field value quoted into a log line kept a bare CR (and any other control byte) as it was,
/// so an offer's text could break or rewrite the call's log lines. Values are now escaped.
final class LogLineFuzzRegressionTests: XCTestCase {
    private final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        var output: LogOutput { LogOutput { [self] line in lines.withLock { $0.append(line) } } }
        var all: [String] { lines.withLock { $0 } }
    }

    func testARefusedOfferIsLoggedOnOneLine() throws {
        for file in try TestPaths.fuzzRegressions("whep-http") {
            let bytes = Array(try Data(contentsOf: file))
            let separator = Array("\r\n\r\n".utf8)
            let end = try XCTUnwrap((0..<bytes.count).first { Array(bytes[$0..<min(bytes.count, $0 + 4)]) == separator }, file.lastPathComponent)
            let body = Array(bytes[(end + 4)...])
            let captured = Lines()
            let routes = SignalingServer.routes(
                configuration: SignalingConfiguration(), sessions: FakeSessions(), stats: { .object([]) },
                logger: Logger(component: "test", threshold: .debug, output: captured.output))
            let request = HTTPRequest(method: "POST", path: "/whep", headers: ["Content-Type": "application/sdp"], body: body)
            let response = HTTPRouter(routes: routes).respond(to: request)
            XCTAssertEqual(response.status, 400, file.lastPathComponent)
            XCTAssertTrue(response.bodyText.contains("bare CR"), response.bodyText)
            let refused = try XCTUnwrap(captured.all.first { $0.contains("viewer offer refused") }, "\(captured.all)")
            XCTAssertFalse(refused.utf8.contains { $0 < 0x20 || $0 == 0x7F }, "\(Array(refused.utf8))")
            XCTAssertTrue(refused.contains(#"\r"#), refused)
        }
    }

    func testControlCharactersInValuesAreEscaped() {
        let captured = Lines()
        let logger = Logger(component: "test", output: captured.output)
        logger.info("event", ["a": "x\r\ny", "b": "\u{1B}[2J", "c": "tab\there", "d": "line\u{2028}sep", "e": "q\"\\", "f": "plain"])
        XCTAssertEqual(captured.all, [#"info test event a="x\r\ny" b="\u{1b}[2J" c="tab\there" d="line\u{2028}sep" e="q\"\\" f=plain"#])
    }
}
