import Foundation
import ICE
import SDP
import TestSupport
import XCTest

/// What an agent tells its owner, in order: each local candidate as an event (the same as the gathered
/// list), gathering done once, the states as the checks progress, the selected pair; nothing after close.
final class ICEAgentEventTests: XCTestCase {
    func testEventsTellTheConnectionsStory() throws {
        let pair = try ICETestPair()
        defer { pair.close() }
        XCTAssertTrue(pair.answererLog.wait(seconds: 3) { $0.events.contains(.gatheringDone) })
        let announced = pair.answererLog.events.compactMap { event -> ICECandidate? in
            if case .localCandidate(let candidate) = event { candidate } else { nil }
        }
        XCTAssertEqual(announced, pair.answererCandidates, "every gathered candidate was announced")
        try pair.exchangeEverything()
        try pair.waitUntilBothReady()
        // The agent's state says ready before its owner's log has the event (events arrive on the agent's own
        // thread): wait for both the selected pair and the ready state in the log (seen once under ASan).
        XCTAssertTrue(pair.offererLog.wait(seconds: 3) { contents in
            contents.events.contains { if case .selectedPairChanged = $0 { true } else { false } }
                && contents.events.contains(.stateChanged(.ready))
        })
        let events = pair.offererLog.events
        XCTAssertEqual(events.filter { $0 == .gatheringDone }.count, 1)
        let states = events.compactMap { event -> ICEAgent.State? in if case .stateChanged(let state) = event { state } else { nil } }
        XCTAssertEqual(states.last, .ready)
        // States only move forward on the way up: gathering before connecting before connected before ready.
        let rank: [ICEAgent.State: Int] = [.gathering: 0, .connecting: 1, .connected: 2, .ready: 3]
        let ranks = states.compactMap { rank[$0] }
        XCTAssertEqual(ranks, ranks.sorted(), "\(states)")
        XCTAssertTrue(states.contains(.connecting))
        let selected = events.compactMap { event -> ICEAgent.CandidatePair? in
            if case .selectedPairChanged(let pair) = event { pair } else { nil }
        }
        XCTAssertEqual(selected.last, pair.offerer.selectedPair)
        XCTAssertFalse(events.contains { if case .expired = $0 { true } else { false } })

        pair.offerer.close()
        let count = pair.offererLog.events.count
        usleep(200_000)
        XCTAssertLessThanOrEqual(pair.offererLog.events.count, count + 1, "at most the closing state change after close")
        XCTAssertFalse(pair.offererLog.events.dropFirst(count).contains { if case .localCandidate = $0 { true } else { false } })
    }

    /// Gathering on both loopbacks gives a host candidate for each family, IPv4 and IPv6, with their own ports
    /// (UDP, and with ICE-TCP a passive and an active TCP one for each).
    func testBothAddressFamilies() throws {
        let agent = try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["127.0.0.1", "::1"]), onDatagram: { _ in })
        defer { agent.close() }
        let candidates = try agent.gatherCandidates()
        XCTAssertEqual(Set(candidates.map(\.address)), ["127.0.0.1", "::1"])
        XCTAssertEqual(candidates.filter { !$0.isTCP }.map(\.address).sorted(), ["127.0.0.1", "::1"])
        XCTAssertEqual(candidates.compactMap(\.tcpType).sorted(), ["active", "active", "passive", "passive"])
        XCTAssertTrue(candidates.allSatisfy { $0.kind == .host && $0.component == 1 })
        XCTAssertTrue(candidates.allSatisfy { !$0.hasHostName })
        XCTAssertEqual(Set(candidates.map(\.foundation)).count, candidates.count, "a foundation per base address")
        // Each parses back from its own SDP text, as the answer carries it.
        for candidate in candidates { XCTAssertEqual(try ICECandidate(parsing: candidate.description), candidate) }
    }
}
