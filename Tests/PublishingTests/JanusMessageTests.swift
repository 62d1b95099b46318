import Publishing
import XCTest

/// The Janus HTTP API's replies and events as Janus 1.1.2 words them,
/// each error typed with its code, garbage refused.
final class JanusMessageTests: XCTestCase {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func testSuccessGivesTheIDAndRequestsCarryTheirTransaction() throws {
        let reply = try JanusMessage.reply(bytes(#"{"janus": "success", "transaction": "a", "data": {"id": 7825667901184941}}"#))
        XCTAssertEqual(try JanusMessage.id(reply), 7_825_667_901_184_941)
        XCTAssertThrowsError(try JanusMessage.id(JanusMessage.reply(bytes(#"{"janus": "ack"}"#)))) { error in
            XCTAssertEqual(error as? PublishingError, .janusProtocol("a success without data.id"))
        }
        let request = String(decoding: JanusMessage.request("attach", transaction: "t1", ["plugin": "janus.plugin.videoroom"]), as: UTF8.self)
        XCTAssertEqual(request, #"{"janus":"attach","plugin":"janus.plugin.videoroom","transaction":"t1"}"#)
    }

    func testJanusAndVideoRoomErrorsAreTypedWithTheirCodes() {
        XCTAssertThrowsError(try JanusMessage.reply(bytes(
            #"{"janus": "error", "transaction": "x", "error": {"code": 458, "reason": "No such session 1"}}"#))) { error in
            XCTAssertEqual(error as? PublishingError, .janus(code: 458, reason: "No such session 1"))
            XCTAssertEqual((error as? PublishingError)?.isRetryable, true)
        }
        let noRoom = #"{"janus": "success", "plugindata": {"plugin": "janus.plugin.videoroom", "data": "#
            + #"{"videoroom": "event", "error_code": 426, "error": "No such room (4242)"}}}"#
        XCTAssertThrowsError(try JanusMessage.reply(bytes(noRoom))) { error in
            XCTAssertEqual(error as? PublishingError, .videoRoom(code: 426, reason: "No such room (4242)"))
            XCTAssertEqual((error as? PublishingError)?.isRetryable, false)
        }
        for garbage in ["", "not json", "[1, 2]", #"{"janus": 5}"#, #"{"data": {}}"#] {
            XCTAssertThrowsError(try JanusMessage.reply(bytes(garbage)), garbage) { error in
                guard case .janusProtocol = error as? PublishingError else { return XCTFail("\(error)") }
            }
        }
    }

    func testTheAnswerComesFromOurHandlesEventAndARefusalIsThrown() throws {
        let events = #"[{"janus": "keepalive"}, {"janus": "event", "sender": 9, "jsep": {"type": "answer", "sdp": "other"}},"#
            + #" {"janus": "event", "sender": 5, "plugindata": {"data": {"videoroom": "joined"}}, "jsep": {"type": "answer", "sdp": "v=0\r\n"}}]"#
        XCTAssertEqual(try JanusMessage.answer(inEvents: bytes(events), handle: 5), "v=0\r\n")
        XCTAssertNil(try JanusMessage.answer(inEvents: bytes(#"{"janus": "keepalive"}"#), handle: 5))
        let refused = #"{"janus": "event", "sender": 5, "plugindata": {"data": {"error_code": 433, "error": "Unauthorized (wrong pin)"}}}"#
        XCTAssertThrowsError(try JanusMessage.answer(inEvents: bytes(refused), handle: 5)) { error in
            XCTAssertEqual(error as? PublishingError, .videoRoom(code: 433, reason: "Unauthorized (wrong pin)"))
        }
    }

    func testTheEndOfASessionIsRecognised() throws {
        XCTAssertEqual(try JanusMessage.endOfSession(inEvents: bytes(#"{"janus": "hangup", "sender": 5, "reason": "DTLS alert"}"#), handle: 5),
                       "Janus hangup: DTLS alert")
        XCTAssertNil(try JanusMessage.endOfSession(inEvents: bytes(#"{"janus": "hangup", "sender": 6, "reason": "x"}"#), handle: 5))
        XCTAssertEqual(try JanusMessage.endOfSession(inEvents: bytes(
            #"{"janus": "error", "error": {"code": 458, "reason": "No such session 1"}}"#), handle: 5), "Janus error 458: No such session 1")
        XCTAssertNil(try JanusMessage.endOfSession(inEvents: bytes(#"[{"janus": "webrtcup", "sender": 5}, {"janus": "media", "sender": 5}]"#), handle: 5))
        XCTAssertThrowsError(try JanusMessage.endOfSession(inEvents: bytes("<html>"), handle: 5))
    }
}
