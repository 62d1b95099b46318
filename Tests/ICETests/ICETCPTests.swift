import Foundation
@testable import ICE
import SDP
import ScreencastSupport
import TestSupport
import XCTest

/// ICE-TCP (RFC 6544, framing RFC 4571) with libnice 0.1.21: the candidates gathered beside UDP, on the
/// port range, ranked below UDP; which TCP remote candidates are taken; and datagrams over a TCP pair
/// between two real agents, whole and in order.
final class ICETCPTests: XCTestCase {
    /// With ICE-TCP on (the default), each local address gets a UDP host candidate, a passive TCP one on a
    /// port of the range (`--ice-ports` applies to TCP too) and an active TCP one (port 9: it binds no port
    /// until it connects, RFC 6544 §4.5), written as SDP writes them; the TCP ones rank below UDP (type
    /// preference 60 against UDP's 120; server-reflexive UDP would be 100, relayed UDP 30). Off: UDP only,
    /// and libnice's own `ice-tcp` says so.
    func testTCPCandidatesBesideUDPOnThePortRange() throws {
        let base = try LoopbackPort.udp()
        let range = base...min(base + 9, UInt16.max)
        XCTAssertTrue(ICEAgent.Configuration(role: .controlled).iceTCP, "on by default")
        let agent = try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"], portRange: range), onDatagram: { _ in })
        defer { agent.close() }
        XCTAssertEqual(agent.libniceBool("ice-tcp"), true)
        let candidates = try agent.gatherCandidates()
        print("ice-tcp: gathered \(candidates.map(\.description))")
        let udp = try XCTUnwrap(candidates.first { !$0.isTCP }, "\(candidates)")
        let passive = try XCTUnwrap(candidates.first { $0.tcpType == "passive" }, "\(candidates)")
        let active = try XCTUnwrap(candidates.first { $0.tcpType == "active" }, "\(candidates)")
        XCTAssertEqual(candidates.count, 3, "\(candidates)")
        XCTAssertTrue(range.contains(udp.port), "UDP port \(udp.port) in \(range)")
        XCTAssertTrue(range.contains(passive.port), "passive TCP port \(passive.port) in \(range)")
        XCTAssertEqual(active.port, 9)
        for candidate in [passive, active] {
            XCTAssertEqual(candidate.kind, .host)
            XCTAssertEqual(candidate.address, "127.0.0.1")
            XCTAssertEqual(candidate.component, 1)
            XCTAssertEqual(candidate.priority >> 24, 60, "type preference of a TCP host candidate: \(candidate)")
            XCTAssertLessThan(candidate.priority, 100 << 24, "below any UDP host, server- or peer-reflexive candidate")
            XCTAssertGreaterThan(candidate.priority, 31 << 24, "above relayed UDP ones (30)")
        }
        XCTAssertEqual(udp.priority >> 24, 120)
        XCTAssertEqual(candidates.first, udp, "highest priority first")
        // The a=candidate line the answer carries (RFC 6544 §4.5).
        let line = "a=" + passive.description
        XCTAssertNotNil(line.range(of: #"^a=candidate:[A-Za-z0-9+/]+ 1 TCP [0-9]+ 127\.0\.0\.1 [0-9]+ typ host tcptype passive$"#,
                                   options: .regularExpression), line)
        XCTAssertNotNil(("a=" + active.description).range(of: #" TCP [0-9]+ 127\.0\.0\.1 9 typ host tcptype active$"#, options: .regularExpression))

        let off = try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"], portRange: range, iceTCP: false),
                               onDatagram: { _ in })
        defer { off.close() }
        XCTAssertEqual(off.libniceBool("ice-tcp"), false)
        let udpOnly = try off.gatherCandidates()
        XCTAssertEqual(udpOnly.count, 1, "\(udpOnly)")
        XCTAssertFalse(udpOnly.contains { $0.isTCP })
    }

    /// A browser's TCP candidates (`tcptype active` on port 9, as Chromium and Firefox write them; passive and
    /// simultaneous-open ones) are taken; a TCP candidate without a `tcptype` or with an unknown one is
    /// skipped (libnice would read it as `so`), and with ICE-TCP off every TCP one is skipped. The address
    /// policy judges TCP candidates as it judges UDP ones.
    func testWhichTCPRemoteCandidatesAreTaken() throws {
        func agent(_ configuration: ICEAgent.Configuration) throws -> ICEAgent {
            let agent = try ICEAgent(configuration: configuration, onDatagram: { _ in })
            _ = try agent.gatherCandidates()
            try agent.setRemoteCredentials(.init(ufrag: "peer", password: "peerpassword0123456789"))
            return agent
        }
        let taken = [
            "candidate:1942106542 1 tcp 1518280447 127.0.0.1 9 typ host tcptype active generation 0 network-id 1",
            "candidate:2 1 TCP 1518280446 127.0.0.1 50000 typ host tcptype passive",
            "candidate:3 1 tcp 1518280445 127.0.0.1 50001 typ host tcptype so",
        ]
        let skipped = [
            "candidate:4 1 tcp 1518280447 127.0.0.1 9 typ host",
            "candidate:5 1 tcp 1518280447 127.0.0.1 9 typ host tcptype sideways",
            "candidate:6 1 tcp 1518280447 abcd.local 9 typ host tcptype active",
            "candidate:7 2 tcp 1518280447 127.0.0.1 9 typ host tcptype active",
        ]
        let on = try agent(.init(role: .controlled, localAddresses: ["127.0.0.1"]))
        defer { on.close() }
        XCTAssertEqual(try on.addRemoteCandidates(skipped), 0)
        XCTAssertEqual(try on.addRemoteCandidates(taken + skipped), 3)
        XCTAssertEqual(ICEAgentCore.unusableReason(try ICECandidate(parsing: skipped[0]), iceTCP: true), "TCP without tcptype")
        XCTAssertEqual(ICEAgentCore.unusableReason(try ICECandidate(parsing: skipped[1]), iceTCP: true), "tcptype sideways")
        XCTAssertNil(ICEAgentCore.unusableReason(try ICECandidate(parsing: taken[1]), iceTCP: true))

        let off = try agent(.init(role: .controlled, localAddresses: ["127.0.0.1"], iceTCP: false))
        defer { off.close() }
        XCTAssertEqual(try off.addRemoteCandidates(taken), 0)
        XCTAssertEqual(ICEAgentCore.unusableReason(try ICECandidate(parsing: taken[0]), iceTCP: false), "transport TCP (ICE-TCP is off)")
        XCTAssertEqual(try off.addRemoteCandidate("candidate:8 1 udp 2122260223 127.0.0.1 50002 typ host") ? 1 : 0, 1)

        let loopbackOnly = try agent(.init(role: .controlled, localAddresses: ["127.0.0.1"]))
        defer { loopbackOnly.close() }
        XCTAssertEqual(try loopbackOnly.addRemoteCandidates(["candidate:9 1 tcp 1518280447 192.0.2.9 9 typ host tcptype active"]), 0)
        XCTAssertEqual(loopbackOnly.statistics.remoteCandidatesRefused, 1)
    }

    /// Within the remote candidate limit UDP candidates come first: an offer listing its TCP candidates
    /// first (or many of them) cannot crowd its UDP ones out; each kind keeps the offer's order.
    func testTheLimitTakesUDPBeforeTCP() throws {
        let texts = [
            "candidate:1 1 tcp 1518280447 127.0.0.1 9 typ host tcptype active",
            "candidate:2 1 udp 2122260223 127.0.0.1 50000 typ host",
            "candidate:3 1 tcp 1518280446 127.0.0.1 50001 typ host tcptype passive",
            "candidate:4 1 udp 2122260222 127.0.0.1 50002 typ host",
        ]
        let entries = try texts.map { (text: $0, candidate: try ICECandidate(parsing: $0)) }
        XCTAssertEqual(ICEAgentCore.withinLimit(entries, room: 2).map(\.text), [texts[1], texts[3]])
        XCTAssertEqual(ICEAgentCore.withinLimit(entries, room: 3).map(\.text), [texts[1], texts[3], texts[0]])
        XCTAssertEqual(ICEAgentCore.withinLimit(entries, room: 9).map(\.text), [texts[1], texts[3], texts[0], texts[2]])
        XCTAssertEqual(ICEAgentCore.withinLimit(entries, room: 0).count, 0)

        let limited = try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"], remoteCandidateLimit: 2),
                                   onDatagram: { _ in })
        defer { limited.close() }
        _ = try limited.gatherCandidates()
        try limited.setRemoteCredentials(.init(ufrag: "peer", password: "peerpassword0123456789"))
        XCTAssertEqual(try limited.addRemoteCandidates(texts), 2)
        XCTAssertEqual(limited.statistics.remoteCandidatesRefused, 2)
    }

    /// When UDP works too, UDP wins: two agents given each other's every candidate (UDP, passive and active
    /// TCP) select a UDP pair on both sides.
    func testUDPWinsWhenBothWork() throws {
        let pair = try ICETestPair(consentFreshness: false)
        defer { pair.close() }
        XCTAssertTrue(pair.offererCandidates.contains { $0.tcpType == "passive" } && pair.answererCandidates.contains { $0.tcpType == "passive" })
        try pair.exchangeEverything()
        try pair.waitUntilBothReady()
        usleep(200_000)  // let the TCP checks finish too: the selection must not move to them
        XCTAssertEqual(pair.offerer.selectedPair?.transport, "udp", "\(String(describing: pair.offerer.selectedPair))")
        XCTAssertEqual(pair.answerer.selectedPair?.transport, "udp", "\(String(describing: pair.answerer.selectedPair))")
        XCTAssertFalse(pair.offererLog.events.contains { if case .selectedPairChanged(let p) = $0 { p.transport == "tcp" } else { false } })
    }

    /// Two libnice agents on a TCP pair only: the controlling one is given nothing but the other's passive
    /// TCP candidate (the controlled one none: it learns the peer from the checks on the accepted
    /// connection). Both reach READY on a `tcp` pair, and 300 datagrams of seeded sizes (1…1200 bytes) each
    /// way, then 1500, 9000 and 60 000 bytes, arrive whole, in order, byte for byte: libnice frames each
    /// with RFC 4571's length and delivers each frame as one datagram, as DTLS and SRTP above need.
    func testDatagramsCrossATCPPairWholeAndInOrder() throws {
        let logger = Logger(component: "ice", threshold: ProcessInfo.processInfo.environment["ICE_DEBUG"] == nil ? .warning : .debug)
        let offererLog = ICEEventLog(), answererLog = ICEEventLog()
        let offerer = try ICEAgent(configuration: .init(role: .controlling, localAddresses: ["127.0.0.1"]),
                                   logger: logger.named("ice.offerer"), onEvent: offererLog.record, onDatagram: offererLog.receive)
        defer { offerer.close() }
        let answerer = try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"]),
                                    logger: logger.named("ice.answerer"), onEvent: answererLog.record, onDatagram: answererLog.receive)
        defer { answerer.close() }
        _ = try offerer.gatherCandidates()
        let passive = try XCTUnwrap(try answerer.gatherCandidates().first { $0.tcpType == "passive" })
        try offerer.setRemoteCredentials(answerer.localCredentials)
        try answerer.setRemoteCredentials(offerer.localCredentials)
        XCTAssertEqual(try offerer.addRemoteCandidates([passive.description]), 1)
        offerer.remoteCandidatesComplete()
        let started = Date()
        let deadline = started.addingTimeInterval(5)
        while offerer.state != .ready || answerer.state != .ready, Date() < deadline { usleep(5_000) }
        XCTAssertEqual(offerer.state, .ready)
        XCTAssertEqual(answerer.state, .ready)
        print("ice-tcp: READY over TCP after \(Int(Date().timeIntervalSince(started) * 1000)) ms; offerer \(String(describing: offerer.selectedPair)), answerer \(String(describing: answerer.selectedPair))")
        XCTAssertEqual(offerer.selectedPair?.transport, "tcp")
        XCTAssertEqual(answerer.selectedPair?.transport, "tcp")
        XCTAssertEqual(offerer.selectedPair?.remote.port, passive.port)

        var generator = SeededGenerator(seed: 6544)
        func datagrams(_ tag: UInt8) -> [[UInt8]] {
            (0..<300).map { index in
                let size = Int.random(in: 1...1200, using: &generator)
                let header = Array([tag, UInt8(index >> 8), UInt8(index & 0xFF)].prefix(size))
                return header + (0..<max(0, size - 3)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
        }
        let forward = datagrams(1) + [1500, 9000, 60_000].map { size in (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ size) } }
        let backward = datagrams(2)
        for index in forward.indices {
            XCTAssertEqual(offerer.send(forward[index]), .sent, "datagram \(index)")
            if index < backward.count { XCTAssertEqual(answerer.send(backward[index]), .sent, "datagram \(index) back") }
            if index % 25 == 24 { usleep(3_000) }
        }
        XCTAssertTrue(answererLog.wait(seconds: 5) { $0.datagrams.count >= forward.count })
        XCTAssertTrue(offererLog.wait(seconds: 5) { $0.datagrams.count >= backward.count })
        XCTAssertEqual(answererLog.datagrams.count, forward.count)
        XCTAssertEqual(answererLog.datagrams, forward)
        XCTAssertEqual(offererLog.datagrams, backward)
        XCTAssertEqual(offerer.statistics.datagramsDropped, 0)
        XCTAssertEqual(answerer.statistics.datagramsReceived, forward.count)
    }
}
