import RTPSession
import XCTest

/// ``KeyframeLobby``: a new receiver gets nothing before a keyframe, on an injected clock.
final class KeyframeLobbyTests: XCTestCase {
    /// Nothing before the first keyframe; from it on, everything; requests repeat until it comes.
    func testKeyframeLobby() {
        var lobby = KeyframeLobby(retryIntervalMicros: 1_000_000)
        XCTAssertFalse(lobby.admit(isKeyframe: true, nowMicros: 0), "closed until the peer is ready")
        XCTAssertEqual(lobby.stateName, "closed")
        XCTAssertTrue(lobby.enter(nowMicros: 10_000))
        XCTAssertEqual(lobby.stateName, "waiting")
        XCTAssertFalse(lobby.admit(isKeyframe: false, nowMicros: 20_000))
        XCTAssertFalse(lobby.keyframeRequestDue(nowMicros: 500_000))
        XCTAssertTrue(lobby.keyframeRequestDue(nowMicros: 1_010_000))
        lobby.markRequested(nowMicros: 1_010_000)
        XCTAssertEqual(lobby.nextRequestMicros, 2_010_000)
        XCTAssertTrue(lobby.admit(isKeyframe: true, nowMicros: 1_100_000))
        XCTAssertEqual(lobby.lastWaitMicros, 1_090_000)
        XCTAssertTrue(lobby.isOpen)
        XCTAssertTrue(lobby.admit(isKeyframe: false, nowMicros: 1_133_000))
        XCTAssertNil(lobby.nextRequestMicros)
        XCTAssertEqual(lobby.framesDropped, 2)
        XCTAssertTrue(lobby.reset(nowMicros: 2_000_000), "fell behind: wait for a keyframe again")
        XCTAssertFalse(lobby.reset(nowMicros: 2_000_001), "already waiting")
        XCTAssertFalse(lobby.admit(isKeyframe: false, nowMicros: 2_033_000))
        XCTAssertEqual(lobby.framesDropped, 3)
    }

    /// An open lobby makes no requests; marking a request outside `waiting` changes nothing; a zero retry
    /// interval is raised to 1 µs (never a request storm in a loop that does not advance time).
    func testRequestsOnlyWhileWaiting() {
        var lobby = KeyframeLobby(retryIntervalMicros: 0)
        XCTAssertEqual(lobby.retryIntervalMicros, 1)
        XCTAssertFalse(lobby.keyframeRequestDue(nowMicros: .max))
        lobby.markRequested(nowMicros: 5)
        XCTAssertEqual(lobby.state, .closed)
        lobby.enter(nowMicros: 100)
        XCTAssertFalse(lobby.keyframeRequestDue(nowMicros: 100))
        XCTAssertTrue(lobby.keyframeRequestDue(nowMicros: 101))
        XCTAssertTrue(lobby.admit(isKeyframe: true, nowMicros: 90), "a clock that went back counts a zero wait")
        XCTAssertEqual(lobby.lastWaitMicros, 0)
        lobby.markRequested(nowMicros: 200)
        XCTAssertEqual(lobby.state, .open)
    }
}
