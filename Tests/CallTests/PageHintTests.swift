import Foundation
import TestSupport
import XCTest

/// The page's "only changes are sent" hint belongs to the screen (its agent sends only what changed): a call
/// fed by the test pattern, which changes every frame, serves a page that never shows it.
final class PageHintTests: CallTestCase {
    private func page(_ extra: [String]) throws -> String {
        let call = try startCall(["--http", "127.0.0.1:0", "--stats-interval", "0"] + extra)
        defer {
            call.signal(SIGTERM)
            _ = call.waitForExit()
        }
        let line = try XCTUnwrap(call.waitForLine("viewer page", timeout: 10), call.logText)
        let url = try XCTUnwrap(line.split(separator: " ").first { $0.hasPrefix("url=") }?.dropFirst(4), line)
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "--max-time", "10", String(url)], timeout: 15)
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }

    func testTheTestPatternsPageHasNoChangesOnlyHintAndTheScreensHasIt() throws {
        let pattern = try page(["--source", "testpattern", "--pattern-size", "160x96"])
        XCTAssertTrue(pattern.contains(#"data-source-changes-only="no""#), String(pattern.prefix(3000)))
        let screen = try page([])
        XCTAssertTrue(screen.contains(#"data-source-changes-only="yes""#), String(screen.prefix(3000)))
    }
}
