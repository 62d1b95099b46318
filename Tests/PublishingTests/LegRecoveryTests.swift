import PeerConnection
import Publishing
import SDP
import XCTest

/// The SFU leg's ICE recovery (``LegRecovery``, injected clock) and the server's answer to the restart
/// PATCH (``WHIPRestartAnswer``, RFC 9725 §4.3.3).
final class LegRecoveryTests: XCTestCase {
    func testFailedICERestartsThenConnects() {
        var recovery = LegRecovery(supportsRestart: true)
        XCTAssertEqual(recovery.tick(nowMicros: 1_000_000), .none)
        XCTAssertEqual(recovery.iceFailed(nowMicros: 1_000_000), .restartICE(number: 1))
        XCTAssertEqual(recovery.phase, .restarting)
        XCTAssertEqual(recovery.restartAnswered(), .none)
        XCTAssertEqual(recovery.tick(nowMicros: 10_999_999), .none, "within the 10 s limit")
        XCTAssertEqual(recovery.iceConnected(), .none)
        XCTAssertEqual(recovery.phase, .up)
        XCTAssertEqual(recovery.tick(nowMicros: 60_000_000), .none, "up: no limit runs")
        // A later, separate failure restarts again.
        XCTAssertEqual(recovery.iceFailed(nowMicros: 70_000_000), .restartICE(number: 2))
        XCTAssertEqual(recovery.iceConnected(), .none)
        XCTAssertEqual(recovery.restarts, 2)
        XCTAssertEqual(recovery.restartsSucceeded, 2)
    }

    /// A FAILED while restarting restarts again, up to ``LegRecovery/defaultRestartsPerFailure`` in a row; the
    /// time limit runs from the first of them; a success starts the count over for the next failure.
    func testFailedDuringARestartRestartsAgainUpToTheLimit() {
        var recovery = LegRecovery(supportsRestart: true, restartTimeLimitMicros: 10_000_000)
        XCTAssertEqual(LegRecovery.defaultRestartsPerFailure, 3)
        XCTAssertEqual(recovery.iceFailed(nowMicros: 1_000_000), .restartICE(number: 1))
        XCTAssertEqual(recovery.iceFailed(nowMicros: 2_000_000), .restartICE(number: 2))
        XCTAssertEqual(recovery.lastReason, "ICE failed again during ICE restart 1")
        XCTAssertEqual(recovery.tick(nowMicros: 10_999_999), .none)
        XCTAssertEqual(recovery.iceConnected(), .none)
        XCTAssertEqual([recovery.restarts, recovery.restartsSucceeded], [2, 1])
        XCTAssertEqual(recovery.phase, .up)

        XCTAssertEqual(recovery.iceFailed(nowMicros: 20_000_000), .restartICE(number: 3), "a new failure, a new count")
        XCTAssertEqual(recovery.iceFailed(nowMicros: 20_100_000), .restartICE(number: 4))
        XCTAssertEqual(recovery.iceFailed(nowMicros: 20_200_000), .restartICE(number: 5))
        XCTAssertEqual(recovery.iceFailed(nowMicros: 20_300_000), .republish(reason: "ICE failed again during ICE restart 5"))
        XCTAssertEqual(recovery.phase, .down)

        var slow = LegRecovery(supportsRestart: true, restartTimeLimitMicros: 3_000_000)
        _ = slow.iceFailed(nowMicros: 0)
        _ = slow.iceFailed(nowMicros: 2_000_000)
        XCTAssertEqual(slow.tick(nowMicros: 3_000_000), .republish(reason: "ICE restart 2 did not connect within 3000 ms of the failure"),
                       "the limit runs from the first restart")
    }

    func testEveryFailureOfTheRestartPublishesAnew() {
        var refused = LegRecovery(supportsRestart: true)
        _ = refused.iceFailed(nowMicros: 0)
        XCTAssertEqual(refused.restartFailed("PATCH http://h/r/1: HTTP 405"), .republish(reason: "ICE restart 1 failed: PATCH http://h/r/1: HTTP 405"))
        XCTAssertEqual(refused.phase, .down)
        XCTAssertEqual(refused.iceFailed(nowMicros: 1), .none, "down: the owner is publishing anew")

        var slow = LegRecovery(supportsRestart: true, restartTimeLimitMicros: 3_000_000)
        _ = slow.iceFailed(nowMicros: 5_000_000)
        XCTAssertEqual(slow.tick(nowMicros: 7_999_999), .none)
        XCTAssertEqual(slow.tick(nowMicros: 8_000_000), .republish(reason: "ICE restart 1 did not connect within 3000 ms of the failure"))
        XCTAssertEqual(slow.lastReason, "ICE restart 1 did not connect within 3000 ms of the failure")

        var again = LegRecovery(supportsRestart: true, restartsPerFailure: 1)
        _ = again.iceFailed(nowMicros: 0)
        XCTAssertEqual(again.iceFailed(nowMicros: 100), .republish(reason: "ICE failed again during ICE restart 1"))

        var none = LegRecovery(supportsRestart: false)
        XCTAssertEqual(none.iceFailed(nowMicros: 0), .republish(reason: "ICE failed (the transport has no ICE restart)"))
        XCTAssertEqual(none.restarts, 0)
        XCTAssertEqual(none.restartFailed("x"), .none, "no restart running")
    }

    // MARK: The PATCH's answer

    func response(_ head: String, body: String) throws -> HTTPClientResponse {
        let parsed = try HTTPResponseHead.parse(Array((head + "\r\n\r\n").utf8))
        return HTTPClientResponse(url: "http://h/r/1", status: parsed.status, head: parsed, body: Array(body.utf8))
    }

    func testA200AnswerGivesTheFragmentAndTheNewETag() throws {
        let answer = try WHIPRestartAnswer(response: response(
            "HTTP/1.1 200 OK\r\nContent-Type: application/trickle-ice-sdpfrag\r\nETag: \"e2\"",
            body: "a=ice-ufrag:wxyz\r\na=ice-pwd:ABCDEFGHIJKLMNOPQRSTUV\r\na=candidate:1 1 udp 2130706431 127.0.0.1 4000 typ host\r\n"))
        XCTAssertEqual(answer.etag, "\"e2\"")
        XCTAssertEqual(answer.fragment.ufrag, "wxyz")
        XCTAssertEqual(answer.fragment.password, "ABCDEFGHIJKLMNOPQRSTUV")
        XCTAssertEqual(answer.fragment.candidates, ["candidate:1 1 udp 2130706431 127.0.0.1 4000 typ host"])
    }

    func testRefusedAnswersAreTyped() throws {
        let fragment = "a=ice-ufrag:wxyz\r\na=ice-pwd:ABCDEFGHIJKLMNOPQRSTUV\r\n"
        let cases: [(String, String, PublishingError)] = [
            ("HTTP/1.1 404 Not Found", "gone", .sessionGone(url: "http://h/r/1")),
            ("HTTP/1.1 405 Method Not Allowed", "no", .httpStatus(method: "PATCH", url: "http://h/r/1", status: 405, body: "no")),
            ("HTTP/1.1 412 Precondition Failed", "etag", .httpStatus(method: "PATCH", url: "http://h/r/1", status: 412, body: "etag")),
            ("HTTP/1.1 204 No Content", "", .httpStatus(method: "PATCH", url: "http://h/r/1", status: 204, body: "")),
            ("HTTP/1.1 200 OK\r\nContent-Type: application/sdp", fragment,
             .whipProtocol(url: "http://h/r/1", reason: "the ICE restart answer's Content-Type is application/sdp, not application/trickle-ice-sdpfrag")),
            ("HTTP/1.1 200 OK\r\nContent-Type: application/trickle-ice-sdpfrag", "a=ice-ufrag:wxyz\r\n",
             .whipProtocol(url: "http://h/r/1", reason: "the ICE restart answer: \(SDPErrorText.missingPwd)")),
        ]
        for (head, body, expected) in cases {
            XCTAssertThrowsError(try WHIPRestartAnswer(response: response(head, body: body)), head) { error in
                XCTAssertEqual(error as? PublishingError, expected, head)
            }
        }
        XCTAssertTrue(PublishingError.iceRestartUnsupported(server: "s").isRetryable)
    }
}

private enum SDPErrorText {
    static let missingPwd = "\(SDPError.missingLine("a=ice-pwd", section: "ICE restart fragment"))"
}
