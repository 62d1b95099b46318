import Foundation
import TestSupport
import XCTest

/// `screencast-bench viewers` against a call served over HTTPS with a token (`--https --token`, what
/// `--share` serves): the light viewers join with the token and receive media; a wrong token is the call's 401.
final class BenchViewersTests: XCTestCase {
    func testLightViewersJoinAnHTTPSCallWithItsToken() throws {
        let token = "bench-token-0123456789"
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "320x180", "--https"], token: token)
        defer { call.stop() }
        let url = "https://127.0.0.1:\(call.port)/whep"
        let bench = TestPaths.executable("screencast-bench")
        let good = try ProcessRunner.run(bench, ["viewers", "--url", url, "--token=" + token, "--count", "2", "--seconds", "1"], timeout: 60)
        XCTAssertEqual(good.status, 0, good.stderr + "\n" + call.log)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(good.stdout.utf8)) as? [String: Any], good.stdout)
        XCTAssertEqual(json["connected"] as? Int, 2)
        for viewer in json["viewers"] as? [[String: Any]] ?? [] {
            XCTAssertGreaterThan(viewer["mediaPackets"] as? Int ?? 0, 0, "\(viewer)")
        }
        let wrong = try ProcessRunner.run(bench, ["viewers", "--url", url, "--token=wrong-token-000", "--count", "1", "--seconds", "1"], timeout: 60)
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.stderr.contains("WHEP POST answered 401"), wrong.stderr)
        XCTAssertFalse(call.log.contains(token), "the token is not in the call's log")
    }
}
