import Foundation
import ICE
import SDP
import TestSupport
import XCTest

/// Two real libnice agents on loopback carrying traffic: ports within a configured range, many datagrams
/// in order and byte-exact with exact counts, candidates trickled after the checks began, and what a closed
/// agent does.
final class ICEAgentTrafficTests: XCTestCase {
    /// Host candidates take ports from the configured range only (UDP and passive TCP; an active TCP
    /// candidate binds no port and is written with port 9, RFC 6544 §4.5).
    func testHostCandidatesUseThePortRange() throws {
        let base = try LoopbackPort.udp()
        let range = base...min(base + 9, UInt16.max)
        let agent = try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"], portRange: range), onDatagram: { _ in })
        defer { agent.close() }
        let candidates = try agent.gatherCandidates()
        XCTAssertFalse(candidates.isEmpty)
        let bound = candidates.filter { $0.tcpType != "active" }
        XCTAssertEqual(bound.count, 2, "UDP and passive TCP: \(candidates)")
        XCTAssertTrue(bound.allSatisfy { range.contains($0.port) }, "\(bound.map(\.port)) not in \(range)")
        XCTAssertEqual(try agent.gatherCandidates(), candidates, "asking again gives what is known")
    }

    /// 300 datagrams of seeded sizes (1…1200 bytes) each way arrive in order, byte for byte, and the
    /// statistics count exactly what went and came.
    func testManyDatagramsInOrderWithExactCounts() throws {
        let pair = try ICETestPair()
        defer { pair.close() }
        try pair.exchangeEverything()
        try pair.waitUntilBothReady()
        var generator = SeededGenerator(seed: 31)
        func datagrams(_ tag: UInt8) -> [[UInt8]] {
            (0..<300).map { index in
                let size = Int.random(in: 1...1200, using: &generator)
                let header = Array([tag, UInt8(index >> 8), UInt8(index & 0xFF)].prefix(size))
                return header + (0..<max(0, size - 3)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
        }
        let forward = datagrams(1), backward = datagrams(2)
        let sentBefore = (pair.offerer.statistics, pair.answerer.statistics)
        for index in 0..<300 {
            XCTAssertEqual(pair.offerer.send(forward[index]), .sent)
            XCTAssertEqual(pair.answerer.send(backward[index]), .sent)
            if index % 25 == 24 { usleep(3_000) }  // within the socket buffers
        }
        XCTAssertTrue(pair.answererLog.wait(seconds: 5) { $0.datagrams.count >= 300 })
        XCTAssertTrue(pair.offererLog.wait(seconds: 5) { $0.datagrams.count >= 300 })
        XCTAssertEqual(pair.answererLog.datagrams, forward)
        XCTAssertEqual(pair.offererLog.datagrams, backward)
        let bytes = forward.reduce(0) { $0 + $1.count }
        XCTAssertEqual(pair.offerer.statistics.datagramsSent - sentBefore.0.datagramsSent, 300)
        XCTAssertEqual(pair.offerer.statistics.bytesSent - sentBefore.0.bytesSent, bytes)
        XCTAssertEqual(pair.answerer.statistics.datagramsReceived - sentBefore.1.datagramsReceived, 300)
        XCTAssertEqual(pair.answerer.statistics.bytesReceived - sentBefore.1.bytesReceived, bytes)
        XCTAssertEqual(pair.offerer.statistics.datagramsDropped, 0)
    }

    /// ICE carries datagrams whole, whatever their size (the layers above keep to 1200 bytes, but nothing
    /// here cuts or splits): 1500, 9000 and 60 000 bytes arrive as sent.
    func testLargeDatagramsArriveWhole() throws {
        let pair = try ICETestPair()
        defer { pair.close() }
        try pair.exchangeEverything()
        try pair.waitUntilBothReady()
        let datagrams = [1500, 9000, 60_000].map { size in (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ size) } }
        for datagram in datagrams { XCTAssertEqual(pair.offerer.send(datagram), .sent) }
        XCTAssertTrue(pair.answererLog.wait(seconds: 3) { $0.datagrams.count >= 3 })
        XCTAssertEqual(pair.answererLog.datagrams.map(\.count), [1500, 9000, 60_000])
        XCTAssertEqual(pair.answererLog.datagrams, datagrams)
    }

    /// Credentials first, candidates later (trickle ICE, RFC 8838): with none on either side nothing
    /// connects; once the answerer's candidates are trickled to the offerer, its checks connect the pair, and
    /// each side's selected pair names the other's address and port.
    func testTrickledCandidatesConnect() throws {
        let pair = try ICETestPair()
        defer { pair.close() }
        try pair.exchangeCredentials()
        usleep(300_000)
        XCTAssertNotEqual(pair.offerer.state, .ready)
        XCTAssertNotEqual(pair.answerer.state, .ready)
        XCTAssertNil(pair.offerer.selectedPair)
        for candidate in pair.answererCandidates { XCTAssertTrue(try pair.offerer.addRemoteCandidate(candidate.description)) }
        pair.offerer.remoteCandidatesComplete()
        try pair.waitUntilBothReady()
        let offererPair = try XCTUnwrap(pair.offerer.selectedPair)
        XCTAssertTrue(pair.answererCandidates.contains { $0.port == offererPair.remote.port })
        XCTAssertTrue(pair.offererCandidates.contains { $0.port == offererPair.local.port })
        XCTAssertEqual(pair.answerer.selectedPair?.remote.port, offererPair.local.port)
    }

    /// A closed agent sends nothing, gathers nothing, and says so with typed outcomes.
    func testAClosedAgentRefusesPolitely() throws {
        let pair = try ICETestPair()
        try pair.exchangeEverything()
        try pair.waitUntilBothReady()
        pair.offerer.close()
        XCTAssertEqual(pair.offerer.state, .closed)
        XCTAssertEqual(pair.offerer.send([1, 2, 3]), .dropped)
        XCTAssertEqual(pair.offerer.statistics.datagramsDropped, 1)
        XCTAssertThrowsError(try pair.offerer.gatherCandidates()) { error in XCTAssertEqual(error as? ICEError, .closed) }
        XCTAssertThrowsError(try pair.offerer.setRemoteCredentials(pair.answerer.localCredentials)) { error in
            XCTAssertEqual(error as? ICEError, .closed)
        }
        XCTAssertNil(pair.offerer.selectedPair)
        pair.offerer.close()
        pair.answerer.close()
    }
}
