import Foundation
import TestSupport
import XCTest

/// One rule for a busy HTTP address: the call exits 1 with the reason and what to pass instead, whether the
/// address was the default or given with `--http` (a user who starts a call expects its page).
final class HTTPAddressTests: CallTestCase {
    func testABusyAddressGivenWithHTTPEndsTheCallWithExit1() throws {
        let taken = try LoopbackPort.Listener()
        let result = try ProcessRunner.run(
            TestPaths.executable("screencast-call"), ["--socket", socket, "--http", "127.0.0.1:\(taken.port)"], timeout: 15)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("cannot serve the viewer page on --http 127.0.0.1:\(taken.port)"), result.stderr)
        XCTAssertTrue(result.stderr.contains("--http off"), result.stderr)
        XCTAssertEqual(result.stderr.components(separatedBy: "cannot serve").count, 2, "said once:\n\(result.stderr)")
        withExtendedLifetime(taken) {}
    }

    func testABusyDefaultAddressEndsTheCallTheSameWay() throws {
        // Port 8080 is taken either by this listener or, when that fails, by someone else already.
        let taken = try? LoopbackPort.Listener(port: 8080)
        let result = try ProcessRunner.run(TestPaths.executable("screencast-call"), ["--socket", socket], timeout: 15)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("cannot serve the viewer page on the default HTTP address 127.0.0.1:8080"), result.stderr)
        XCTAssertTrue(result.stderr.contains("pass --http 127.0.0.1:PORT"), result.stderr)
        withExtendedLifetime(taken) {}
    }

    func testABusyShareAddressSaysHTTPSAndSuggestsAnotherPortOnEveryAddress() throws {
        // --share binds 0.0.0.0:8443, which a listener on 127.0.0.1:8443 (this one, or someone else's) blocks.
        let taken = try? LoopbackPort.Listener(port: 8443)
        let result = try ProcessRunner.run(
            TestPaths.executable("screencast-call"), ["--share", "--socket", socket, "--source", "testpattern", "--stats-interval", "0"], timeout: 15)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("cannot serve the viewer page on the default HTTPS address 0.0.0.0:8443"), result.stderr)
        XCTAssertTrue(result.stderr.contains("pass --http 0.0.0.0:PORT (0 picks a free port)"), result.stderr)
        XCTAssertFalse(result.stderr.contains("127.0.0.1:PORT"), "not loopback: the share is for other machines\n\(result.stderr)")
        XCTAssertFalse(result.stderr.contains("--http off"), "--share needs the page\n\(result.stderr)")
        XCTAssertFalse(result.stderr.contains("HTTP server"), result.stderr)
        withExtendedLifetime(taken) {}
    }
}
