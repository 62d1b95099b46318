import Foundation
import ICE
import SDP
import TestSupport
import XCTest

/// ICE restart (RFC 8445 §9, `nice_agent_restart_stream`) between two real libnice agents on loopback:
/// new credentials on the same sockets, a pair selected anew, datagrams flowing again, and the refusals.
final class ICERestartTests: XCTestCase {
    /// Both sides restart (the offerer initiates, the answerer reacts to the new ufrag) while connected:
    /// each gets a new ufrag and password, keeps its ports, and with the other's new credentials and
    /// candidates a pair is selected again and datagrams flow both ways.
    func testRestartWhileConnectedGivesNewCredentialsAndReconnects() throws {
        let pair = try ICETestPair()
        defer { pair.close() }
        try pair.exchangeEverything()
        try pair.waitUntilBothReady()
        let before = (pair.offerer.localCredentials, pair.answerer.localCredentials)
        let pairsBefore = selectedPairs(pair.offererLog)

        let offerer = try pair.offerer.restart()
        let answerer = try pair.answerer.restart()
        for (new, old) in [(offerer.credentials, before.0), (answerer.credentials, before.1)] {
            XCTAssertNotEqual(new.ufrag, old.ufrag)
            XCTAssertNotEqual(new.password, old.password)
            XCTAssertEqual(new.ufrag.utf8.count, 8)
            XCTAssertEqual(new.password.utf8.count, 24)
            XCTAssertTrue((new.ufrag + new.password).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }, "\(new)")
        }
        XCTAssertEqual(pair.offerer.localCredentials, offerer.credentials)
        XCTAssertEqual(offerer.candidates.map(\.port), pair.offererCandidates.map(\.port), "same sockets")
        XCTAssertEqual(pair.offerer.restarts, 1)
        XCTAssertEqual(pair.answerer.restarts, 1)

        try reconnect(pair, offerer, answerer)
        XCTAssertTrue(pair.offererLog.wait(seconds: 5) { self.selectedPairs($0) > pairsBefore }, "a pair selected after the restart")
        try pair.waitUntilBothReady()
        try exchangeDatagrams(pair, tag: 9)
        XCTAssertFalse(pair.offererLog.events.contains { if case .expired = $0 { true } else { false } })
    }

    /// The real case: the path dies (a ``UDPRelay`` between the two starts dropping everything), the
    /// offerer's RFC 7675 consent lapses and its component FAILS (libnice: about 10 s). Both restart within
    /// the grace period, take the other's new credentials and direct candidates, and the connection comes
    /// back on the new path: READY, datagrams both ways, never expired. Takes about 17 s.
    func testRestartAfterThePathDiesRecovers() throws {
        let pair = try ICETestPair()
        defer { pair.close() }
        let answererPort = try XCTUnwrap(pair.answererCandidates.first?.port)
        let relay = try UDPRelay(to: answererPort)
        defer { relay.stop() }
        try pair.exchangeCredentials()
        // The offerer reaches the answerer only through the relay; the answerer learns the relay's far
        // socket from the checks (peer-reflexive).
        try pair.offerer.addRemoteCandidate("candidate:1 1 udp 2130706431 127.0.0.1 \(relay.port) typ host")
        try pair.waitUntilBothReady()
        try exchangeDatagrams(pair, tag: 3)
        XCTAssertGreaterThan(relay.forwarded, 6)
        relay.block()
        // Both restart once FAILED: libnice 0.1.21 keeps the old pair's consent timer across a restart, and
        // one that lapses before the new pair is selected aborts the process (FAILED → CONNECTED assertion).
        XCTAssertTrue(pair.offererLog.wait(seconds: 25) { $0.events.contains(.stateChanged(.failed)) }, "the offerer's consent lapsed")
        XCTAssertTrue(pair.answererLog.wait(seconds: 10) { $0.events.contains(.stateChanged(.failed)) }, "the answerer's consent lapsed")
        XCTAssertEqual(pair.offerer.state, .failed)
        XCTAssertGreaterThan(relay.dropped, 0)
        let offerer = try pair.offerer.restart()
        let answerer = try pair.answerer.restart()
        try reconnect(pair, offerer, answerer)
        try pair.waitUntilBothReady(seconds: 10)
        XCTAssertEqual(pair.offerer.selectedPair?.remote.port, answererPort, "the new path is direct")
        let dropped = relay.dropped
        try exchangeDatagrams(pair, tag: 4)
        usleep(5_500_000)  // past the grace period the FAILED had armed
        XCTAssertEqual(pair.offerer.state, .ready)
        XCTAssertEqual(relay.dropped - dropped, 0, "nothing goes to the dead path any more")
        XCTAssertFalse(pair.offererLog.events.contains { if case .expired = $0 { true } else { false } }, "the restart voided the grace timer")
    }

    /// A restart that never reaches READY (the peer is never given our new credentials) expires the peer
    /// after the connect time limit, as connection lost.
    func testRestartThatNeverConnectsExpires() throws {
        let log = ICEEventLog()
        let agent = try ICEAgent(
            configuration: .init(role: .controlling, localAddresses: ["127.0.0.1"], connectTimeLimit: .milliseconds(300)),
            onEvent: log.record, onDatagram: log.receive)
        defer { agent.close() }
        _ = try agent.gatherCandidates()
        _ = try agent.restart()
        XCTAssertTrue(log.wait(seconds: 3) { $0.events.contains(.expired(.connectionLost)) }, "\(log.events)")
        XCTAssertThrowsError(try agent.restart()) { error in
            guard case .restartFailed? = error as? ICEError else { return XCTFail("\(error)") }
        }
    }

    /// A closed agent refuses with ``ICEError/closed``; one that never gathered with restartFailed.
    func testRestartRefusals() throws {
        let agent = try ICEAgent(configuration: .init(role: .controlling, localAddresses: ["127.0.0.1"]), onDatagram: { _ in })
        XCTAssertThrowsError(try agent.restart()) { error in
            XCTAssertEqual(error as? ICEError, .restartFailed(reason: "candidates were never gathered"))
        }
        agent.close()
        XCTAssertThrowsError(try agent.restart()) { error in XCTAssertEqual(error as? ICEError, .closed) }
        XCTAssertFalse(ICEError.restartFailed(reason: "x").isPeerError)
        XCTAssertEqual(ICEError.restartFailed(reason: "x").description, "ICE restart failed: x")
    }

    // MARK: Helpers

    private func selectedPairs(_ log: ICEEventLog) -> Int {
        log.events.filter { if case .selectedPairChanged = $0 { true } else { false } }.count
    }

    private func selectedPairs(_ contents: ICEEventLog.Contents) -> Int {
        contents.events.filter { if case .selectedPairChanged = $0 { true } else { false } }.count
    }

    private typealias Restart = (credentials: ICEAgent.Credentials, candidates: [ICECandidate])

    private func reconnect(_ pair: ICETestPair, _ offerer: Restart, _ answerer: Restart) throws {
        try pair.offerer.setRemoteCredentials(answerer.credentials)
        try pair.answerer.setRemoteCredentials(offerer.credentials)
        XCTAssertEqual(try pair.answerer.addRemoteCandidates(offerer.candidates), offerer.candidates.count)
        XCTAssertEqual(try pair.offerer.addRemoteCandidates(answerer.candidates), answerer.candidates.count)
    }

    /// Three datagrams each way arrive byte for byte after the restart.
    private func exchangeDatagrams(_ pair: ICETestPair, tag: UInt8) throws {
        let forward = (0..<3).map { [tag, UInt8($0), 0xAA] }, backward = (0..<3).map { [tag, UInt8($0), 0xBB] }
        let seen = (pair.answererLog.datagrams.count, pair.offererLog.datagrams.count)
        for datagram in forward { XCTAssertEqual(pair.offerer.send(datagram), .sent) }
        for datagram in backward { XCTAssertEqual(pair.answerer.send(datagram), .sent) }
        XCTAssertTrue(pair.answererLog.wait(seconds: 3) { $0.datagrams.count >= seen.0 + 3 })
        XCTAssertTrue(pair.offererLog.wait(seconds: 3) { $0.datagrams.count >= seen.1 + 3 })
        XCTAssertEqual(Array(pair.answererLog.datagrams.suffix(3)), forward)
        XCTAssertEqual(Array(pair.offererLog.datagrams.suffix(3)), backward)
    }
}
