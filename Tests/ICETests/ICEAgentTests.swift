import Foundation
import ScreencastSupport
import Synchronization
import ICE
import SDP
import TestSupport
import XCTest

/// Two real libnice agents in this process, over loopback only (127.0.0.1 is the one local address each
/// gathers on, so every check and datagram stays on `lo`).
final class ICEAgentTests: XCTestCase {
    func testTwoAgentsConnectAndExchangeDatagramsBothWays() throws {
        let pair = try ICETestPair()
        defer { pair.close() }
        try pair.exchangeEverything()
        try pair.waitUntilBothReady()

        // Host candidates on loopback only.
        for candidates in [pair.offererCandidates, pair.answererCandidates] {
            XCTAssertFalse(candidates.isEmpty)
            XCTAssertTrue(candidates.allSatisfy { $0.address == "127.0.0.1" && $0.kind == .host && $0.component == 1 })
        }
        let offererPair = try XCTUnwrap(pair.offerer.selectedPair)
        let answererPair = try XCTUnwrap(pair.answerer.selectedPair)
        XCTAssertEqual(offererPair.local.port, answererPair.remote.port)
        XCTAssertEqual(offererPair.remote.port, answererPair.local.port)
        XCTAssertEqual(offererPair.remote.address, "127.0.0.1")

        let sizes = [1, 13, 200, 1200, 1400]
        let toAnswerer = sizes.enumerated().map { index, size in (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7 + index) } }
        let toOfferer = sizes.enumerated().map { index, size in (0..<size).map { UInt8(truncatingIfNeeded: $0 * 3 + index + 100) } }
        for datagram in toAnswerer { XCTAssertEqual(pair.offerer.send(datagram), .sent) }
        for datagram in toOfferer { XCTAssertEqual(pair.answerer.send(datagram), .sent) }
        XCTAssertTrue(pair.answererLog.wait(seconds: 3) { $0.datagrams.count >= toAnswerer.count })
        XCTAssertTrue(pair.offererLog.wait(seconds: 3) { $0.datagrams.count >= toOfferer.count })
        XCTAssertEqual(pair.answererLog.datagrams, toAnswerer)
        XCTAssertEqual(pair.offererLog.datagrams, toOfferer)
        XCTAssertEqual(pair.offerer.statistics.datagramsSent, toAnswerer.count)
        XCTAssertEqual(pair.answerer.statistics.bytesReceived, sizes.reduce(0, +))

        // The event stream tells the same story.
        XCTAssertTrue(pair.answererLog.events.contains(.stateChanged(.ready)))
        XCTAssertTrue(pair.answererLog.events.contains(.gatheringDone))
        XCTAssertTrue(pair.answererLog.events.contains { if case .localCandidate = $0 { true } else { false } })
        XCTAssertTrue(pair.offererLog.events.contains(.selectedPairChanged(offererPair)))
        XCTAssertFalse(pair.answererLog.events.contains { if case .expired = $0 { true } else { false } })
    }

    /// Chromium advertises no candidates here: the answerer only learns the peer from its checks.
    func testControlledAgentConnectsWithNoRemoteCandidates() throws {
        let pair = try ICETestPair()
        defer { pair.close() }
        try pair.exchangeCredentials()
        try pair.offerer.addRemoteCandidates(pair.answererCandidates.map(\.description))
        // The answerer gets no candidates at all.
        try pair.waitUntilBothReady()

        let learned = pair.answererLog.events.compactMap { event -> ICECandidate? in
            if case .remoteCandidateLearned(let candidate) = event { candidate } else { nil }
        }
        XCTAssertEqual(learned.first?.kind, .peerReflexive)
        XCTAssertEqual(learned.first?.address, "127.0.0.1")
        let selected = try XCTUnwrap(pair.answerer.selectedPair)
        XCTAssertEqual(selected.remote.kind, .peerReflexive)
        XCTAssertEqual(selected.remote.port, try XCTUnwrap(pair.offerer.selectedPair).local.port)

        XCTAssertEqual(pair.answerer.send([1, 2, 3]), .sent)
        XCTAssertEqual(pair.offerer.send([4, 5, 6]), .sent)
        XCTAssertTrue(pair.offererLog.wait(seconds: 3) { $0.datagrams == [[1, 2, 3]] })
        XCTAssertTrue(pair.answererLog.wait(seconds: 3) { $0.datagrams == [[4, 5, 6]] })
    }

    /// A browser that hides its addresses may still send `a=end-of-candidates`: told "no more candidates"
    /// with none usable, the answerer must still learn the peer from its checks.
    func testEndOfCandidatesWithNoUsableCandidateStillLearnsThePeer() throws {
        let pair = try ICETestPair()
        defer { pair.close() }
        try pair.exchangeCredentials()
        XCTAssertFalse(try pair.answerer.addRemoteCandidate("candidate:1 1 udp 2122260223 abc.local 5000 typ host"))
        pair.answerer.remoteCandidatesComplete()
        usleep(200_000)  // let libnice act on it before the peer's checks arrive
        try pair.offerer.addRemoteCandidates(pair.answererCandidates.map(\.description))
        try pair.waitUntilBothReady()
        XCTAssertTrue(pair.answererLog.wait(seconds: 1) { $0.events.contains(.stateChanged(.ready)) })
        XCTAssertFalse(pair.answererLog.events.contains { if case .expired = $0 { true } else { false } })
    }

    /// Datagrams sent before READY are queued and go out in order, before later ones.
    func testSendBeforeReadyIsQueuedNotLost() throws {
        let pair = try ICETestPair()
        defer { pair.close() }
        let early = (0..<5).map { [UInt8]("early \($0)".utf8) }
        for datagram in early { XCTAssertEqual(pair.answerer.send(datagram), .queued) }
        XCTAssertEqual(pair.answerer.statistics.datagramsQueued, early.count)
        try pair.exchangeEverything()
        try pair.waitUntilBothReady()
        XCTAssertEqual(pair.answerer.send(Array("late".utf8)), .sent)
        let expected = early + [Array("late".utf8)]
        XCTAssertTrue(pair.offererLog.wait(seconds: 3) { $0.datagrams.count >= expected.count })
        XCTAssertEqual(pair.offererLog.datagrams, expected)
        XCTAssertEqual(pair.answerer.statistics.datagramsSent, expected.count)
        XCTAssertEqual(pair.answerer.statistics.datagramsDropped, 0)
    }

    func testQueueLimitDropsTheExcess() throws {
        let log = ICEEventLog()
        let agent = try ICEAgent(
            configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"], sendQueueLimit: 2),
            onEvent: log.record, onDatagram: log.receive)
        defer { agent.close() }
        XCTAssertEqual(agent.send([1]), .queued)
        XCTAssertEqual(agent.send([2]), .queued)
        XCTAssertEqual(agent.send([3]), .dropped)
        XCTAssertEqual(agent.statistics.datagramsDropped, 1)
    }

    /// RFC 7675: the peer goes silent (its agent is closed, as when a browser tab dies); libnice's consent
    /// checks go unanswered, the component fails, and after the grace period the peer expires.
    /// With libnice's consent freshness on (``ICETestPair``), it takes about 15 s: libnice's consent timeout
    /// (~10 s) and the default 5 s grace.
    func testSilentPeerIsDroppedByConsentFreshness() throws {
        let pair = try ICETestPair()
        defer { pair.close() }
        try pair.exchangeEverything()
        try pair.waitUntilBothReady()
        let silentSince = Date()
        pair.offerer.close()
        XCTAssertTrue(pair.answererLog.wait(seconds: 30) { $0.events.contains(.expired(.connectionLost)) },
                      "no expiry within 30 s; events: \(pair.answererLog.events)")
        let elapsed = Date().timeIntervalSince(silentSince)
        XCTAssertLessThan(elapsed, 30)
        XCTAssertTrue(pair.answererLog.events.contains(.stateChanged(.failed)))
        XCTAssertEqual(pair.answerer.state, .failed)
        print("silent peer expired after \(String(format: "%.1f", elapsed)) s")
    }

    func testPeerThatNeverConnectsExpires() throws {
        let log = ICEEventLog()
        let agent = try ICEAgent(
            configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"], connectTimeLimit: .milliseconds(500)),
            onEvent: log.record, onDatagram: log.receive)
        defer { agent.close() }
        _ = try agent.gatherCandidates()
        try agent.setRemoteCredentials(.init(ufrag: "abcd", password: "0123456789abcdef012345"))
        XCTAssertTrue(log.wait(seconds: 5) { $0.events.contains(.expired(.neverConnected)) })
    }

    /// With trickle ICE the agent waits for more candidates until told there are none (end-of-candidates);
    /// then a candidate that never answers fails the agent, and the FAILED state expires after the grace.
    func testEndOfCandidatesLetsAHopelessAgentFail() throws {
        let log = ICEEventLog()
        let agent = try ICEAgent(
            configuration: .init(role: .controlling, localAddresses: ["127.0.0.1"], failedGracePeriod: .milliseconds(200)),
            onEvent: log.record, onDatagram: log.receive)
        defer { agent.close() }
        _ = try agent.gatherCandidates()
        try agent.setRemoteCredentials(.init(ufrag: "abcd", password: "0123456789abcdef012345"))
        // A loopback port nobody listens on.
        let deadPort = try LoopbackPort.udp()
        XCTAssertTrue(try agent.addRemoteCandidate("candidate:1 1 udp 2122260223 127.0.0.1 \(deadPort) typ host"))
        let start = Date()
        agent.remoteCandidatesComplete()
        XCTAssertTrue(log.wait(seconds: 15) { $0.events.contains(.expired(.neverConnected)) }, "\(log.events)")
        XCTAssertTrue(log.events.contains(.stateChanged(.failed)))
        print("hopeless agent expired after \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
    }

    func testIPv6Loopback() throws {
        let offererLog = ICEEventLog()
        let answererLog = ICEEventLog()
        let offerer = try ICEAgent(configuration: .init(role: .controlling, localAddresses: ["::1"]),
                                   onEvent: offererLog.record, onDatagram: offererLog.receive)
        let answerer = try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["::1"]),
                                    onEvent: answererLog.record, onDatagram: answererLog.receive)
        defer {
            offerer.close()
            answerer.close()
        }
        let candidates = try offerer.gatherCandidates()
        XCTAssertEqual(candidates.first?.address, "::1")
        _ = try answerer.gatherCandidates()
        try offerer.setRemoteCredentials(answerer.localCredentials)
        try answerer.setRemoteCredentials(offerer.localCredentials)
        try answerer.addRemoteCandidates(candidates.map(\.description))
        XCTAssertTrue(answererLog.wait(seconds: 5) { _ in offerer.state == .ready && answerer.state == .ready })
        XCTAssertEqual(answerer.send([42]), .sent)
        XCTAssertTrue(offererLog.wait(seconds: 3) { $0.datagrams == [[42]] })
    }

    /// close() is prompt, idempotent, joins the GLib thread and frees every socket.
    func testCloseIsPromptAndLeaksNoThreadsOrDescriptors() throws {
        // Warm up: GLib and libnice create a few process-wide things once (type registrations, a
        // wake-up pipe for the default context); measure after that.
        do {
            let warmUp = try ICETestPair()
            try warmUp.exchangeEverything()
            try warmUp.waitUntilBothReady()
            warmUp.close()
        }
        let fdsBefore = ICEProcessCounts.descriptors()
        let threadsBefore = ICEProcessCounts.threads()
        let socketsBefore = ICEProcessCounts.sockets()
        for _ in 0..<3 {
            let pair = try ICETestPair()
            try pair.exchangeEverything()
            try pair.waitUntilBothReady()
            XCTAssertGreaterThan(ICEProcessCounts.threads(), threadsBefore)
            XCTAssertGreaterThan(ICEProcessCounts.descriptors(), fdsBefore)
            let start = Date()
            pair.offerer.close()
            pair.answerer.close()
            XCTAssertLessThan(Date().timeIntervalSince(start), 0.5)
            // The sockets are closed by close() itself (the GLib context's wake-up fd goes with the object).
            XCTAssertEqual(ICEProcessCounts.sockets(), socketsBefore, "sockets left open after close()")
            pair.offerer.close()  // idempotent
            XCTAssertEqual(pair.offerer.state, .closed)
            XCTAssertEqual(pair.offerer.send([1]), .dropped)
            XCTAssertThrowsError(try pair.offerer.setRemoteCredentials(pair.answerer.localCredentials)) {
                XCTAssertEqual($0 as? ICEError, .closed)
            }
            XCTAssertNil(pair.offerer.selectedPair)
        }
        XCTAssertEqual(ICEProcessCounts.descriptors(), fdsBefore, "file descriptors leaked")
        XCTAssertEqual(ICEProcessCounts.threads(), threadsBefore, "threads leaked: \(ICEProcessCounts.threadNames())")
        XCTAssertFalse(ICEProcessCounts.threadNames().contains("ice-glib"))
    }

    /// An owner may close the agent from its own callback (on the agent's thread) without deadlock.
    func testCloseFromACallbackOnTheAgentThread() throws {
        let threadsBefore = ICEProcessCounts.threads()
        let closer = Mutex<ICEAgent?>(nil)
        let closedInCallback = Atomic<Bool>(false)
        let log = ICEEventLog()
        let pair = try ICETestPair(answererEvent: { event in
            log.record(event)
            if event == .stateChanged(.ready), let agent = closer.withLock({ $0 }) {
                agent.close()
                closedInCallback.store(true, ordering: .releasing)
            }
        })
        defer { pair.close() }
        closer.withLock { $0 = pair.answerer }
        try pair.exchangeEverything()
        XCTAssertTrue(log.wait(seconds: 5) { _ in closedInCallback.load(ordering: .acquiring) })
        closer.withLock { $0 = nil }
        XCTAssertEqual(pair.answerer.state, .closed)
        pair.offerer.close()
        // The detached thread ends right after the callback returns.
        let deadline = Date().addingTimeInterval(2)
        while ICEProcessCounts.threads() > threadsBefore, Date() < deadline { usleep(10_000) }
        XCTAssertEqual(ICEProcessCounts.threads(), threadsBefore, "\(ICEProcessCounts.threadNames())")
    }

    func testGarbageRemoteCandidatesGiveATypedError() throws {
        let log = ICEEventLog()
        let agent = try ICEAgent(
            configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"]),
            onEvent: log.record, onDatagram: log.receive)
        defer { agent.close() }
        _ = try agent.gatherCandidates()
        let garbage = [
            "", "candidate:", "hello world", "candidate:1 1 udp 2122260223 127.0.0.1 notaport typ host",
            "candidate:1 1 udp 2122260223 127.0.0.1 5000", "candidate:1 0 udp 1 127.0.0.1 5000 typ host",
            "candidate:1 1 udp -5 127.0.0.1 5000 typ host", "candidate:1 1 udp 1 127.0.0.1 70000 typ host",
            "candidate:1 1 udp 1 127.0.0.1 5000 typ host raddr",
            "candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host\0junk",
        ]
        for text in garbage {
            XCTAssertThrowsError(try agent.addRemoteCandidate(text), "accepted: \(text.debugDescription)") { error in
                guard case .badRemoteCandidate(let given, _)? = error as? ICEError else {
                    return XCTFail("\(text.debugDescription): \(error)")
                }
                XCTAssertEqual(given, text)
                XCTAssertTrue((error as! ICEError).isPeerError)
            }
        }
        // All or none: one bad candidate in a batch adds nothing.
        XCTAssertThrowsError(try agent.addRemoteCandidates([
            "candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host", "garbage",
        ]))

        // Valid but unusable here: skipped, not an error.
        XCTAssertFalse(try agent.addRemoteCandidate(
            "candidate:1 1 udp 2122260223 3e0a1b2c-0000-4000-8000-000000000000.local 54321 typ host generation 0"))
        XCTAssertFalse(try agent.addRemoteCandidate("candidate:1 2 udp 2122260222 127.0.0.1 5001 typ host"))
        XCTAssertFalse(try agent.addRemoteCandidate("candidate:1 1 tcp 1518280447 127.0.0.1 9 typ host"))  // no tcptype
        // Usable, in the forms browsers and WHEP trickle fragments use.
        XCTAssertTrue(try agent.addRemoteCandidate("a=candidate:1 1 UDP 2122260223 127.0.0.1 5000 typ host\r\n"))
        XCTAssertTrue(try agent.addRemoteCandidate(
            "candidate:842163049 1 udp 1677729535 127.0.0.1 5002 typ srflx raddr 0.0.0.0 rport 0 generation 0 network-cost 999"))
        XCTAssertEqual(try agent.addRemoteCandidates([
            "candidate:2 1 udp 2122260223 127.0.0.1 5003 typ host", "candidate:3 1 udp 2122260223 ::1 5004 typ host",
        ]), 2)

        for (ufrag, password) in [("abc", "0123456789abcdef012345"), ("abcd", "short"), ("ab d", "0123456789abcdef012345"),
                                  ("abcd", String(repeating: "x", count: 257)), ("abcd", "0123456789abcdef01234;")] {
            XCTAssertThrowsError(try agent.setRemoteCredentials(.init(ufrag: ufrag, password: password))) { error in
                guard case .badRemoteCredentials? = error as? ICEError else { return XCTFail("\(error)") }
            }
        }
        XCTAssertNoThrow(try agent.setRemoteCredentials(.init(ufrag: "Qx9b", password: "vJ3kR8mPz2LqT5nW7yH1dF0c")))
    }

    /// Chromium's offer carries only mDNS host names and a TCP candidate: the credentials are taken, no
    /// candidate is usable (nothing is sent anywhere), and the peer is left to be learned from its checks.
    func testRemoteTransportFromAChromiumOffer() throws {
        let offer = try SessionDescription(parsing: SDPFixture.text("chromium-whep-offer.sdp"))
        let (_, video) = try VideoAnswerBuilder.answer(offer, local: SDPFixture.localParameters())
        let agent = try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"]),
                                 onDatagram: { _ in })
        defer { agent.close() }
        _ = try agent.gatherCandidates()
        XCTAssertFalse(video.remote.candidates.isEmpty)
        XCTAssertEqual(try agent.setRemoteTransport(video.remote), 0)
    }

    func testLocalCredentialsAndBadLocalAddress() throws {
        let log = ICEEventLog()
        let agent = try ICEAgent(
            configuration: .init(role: .controlling, localAddresses: ["127.0.0.1"]),
            onEvent: log.record, onDatagram: log.receive)
        defer { agent.close() }
        let credentials = agent.localCredentials
        // Ours, not libnice's: 8 and 24 characters of ALPHA / DIGIT, no `+` or `/` (ICECredentials.swift).
        XCTAssertEqual(credentials.ufrag.utf8.count, 8)
        XCTAssertEqual(credentials.password.utf8.count, 24)
        XCTAssertTrue((credentials.ufrag + credentials.password).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) },
                      "\(credentials)")
        XCTAssertEqual(agent.state, .new)

        XCTAssertThrowsError(try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["not-an-ip"]),
                                          onDatagram: { _ in })) { error in
            guard case .invalidConfiguration? = error as? ICEError else { return XCTFail("\(error)") }
        }
    }

    /// Gathering on an address that is not this machine's fails with a typed error.
    func testGatheringOnAForeignAddressFails() throws {
        let agent = try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["192.0.2.1"]),
                                 onDatagram: { _ in })
        defer { agent.close() }
        XCTAssertThrowsError(try agent.gatherCandidates()) { error in
            guard case .gatheringFailed? = error as? ICEError else { return XCTFail("\(error)") }
        }
    }
}

// MARK: Helpers

/// An offerer (controlling) and an answerer (controlled) on 127.0.0.1, gathered.
final class ICETestPair: Sendable {
    let offerer: ICEAgent
    let answerer: ICEAgent
    let offererLog = ICEEventLog()
    let answererLog = ICEEventLog()
    let offererCandidates: [ICECandidate]
    let answererCandidates: [ICECandidate]

    /// `consentFreshness`: libnice's own RFC 7675 checks, on here (the tests of dead paths rely on libnice
    /// failing the component; the peer connection keeps consent itself and turns them off).
    init(failedGracePeriod: Duration = .seconds(5), consentFreshness: Bool = true,
         answererEvent: (@Sendable (ICEAgent.Event) -> Void)? = nil) throws {
        let logger = Logger(component: "ice", threshold: ProcessInfo.processInfo.environment["ICE_DEBUG"] == nil ? .warning : .debug)
        offerer = try ICEAgent(
            configuration: .init(
                role: .controlling, localAddresses: ["127.0.0.1"], failedGracePeriod: failedGracePeriod,
                consentFreshness: consentFreshness),
            logger: logger.named("ice.offerer"), onEvent: offererLog.record, onDatagram: offererLog.receive)
        let answererLog = answererLog
        answerer = try ICEAgent(
            configuration: .init(
                role: .controlled, localAddresses: ["127.0.0.1"], failedGracePeriod: failedGracePeriod,
                consentFreshness: consentFreshness),
            logger: logger.named("ice.answerer"), onEvent: answererEvent ?? answererLog.record,
            onDatagram: answererLog.receive)
        offererCandidates = try offerer.gatherCandidates()
        answererCandidates = try answerer.gatherCandidates()
    }

    func exchangeCredentials() throws {
        try offerer.setRemoteCredentials(answerer.localCredentials)
        try answerer.setRemoteCredentials(offerer.localCredentials)
    }

    func exchangeEverything() throws {
        try exchangeCredentials()
        XCTAssertEqual(try answerer.addRemoteCandidates(offererCandidates.map(\.description)), offererCandidates.count)
        XCTAssertEqual(try offerer.addRemoteCandidates(answererCandidates.map(\.description)), answererCandidates.count)
    }

    func waitUntilBothReady(seconds: Double = 5) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while offerer.state != .ready || answerer.state != .ready {
            guard Date() < deadline else {
                throw ICETestFailure("not ready after \(seconds) s: offerer \(offerer.state), answerer \(answerer.state)")
            }
            usleep(5_000)
        }
    }

    func close() {
        offerer.close()
        answerer.close()
    }
}


/// Events and datagrams one agent delivered.
final class ICEEventLog: Sendable {
    struct Contents {
        var events: [ICEAgent.Event] = []
        var datagrams: [[UInt8]] = []
    }

    private let contents = Mutex(Contents())

    var events: [ICEAgent.Event] { contents.withLock { $0.events } }
    var datagrams: [[UInt8]] { contents.withLock { $0.datagrams } }

    @Sendable func record(_ event: ICEAgent.Event) { contents.withLock { $0.events.append(event) } }
    @Sendable func receive(_ datagram: [UInt8]) { contents.withLock { $0.datagrams.append(datagram) } }

    /// Polls until `condition` holds (true) or `seconds` pass (false).
    func wait(seconds: Double, until condition: (Contents) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if contents.withLock({ condition($0) }) { return true }
            if Date() >= deadline { return false }
            usleep(5_000)
        }
    }
}

enum ICEProcessCounts {
    static func descriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }
    /// Threads of this process, not counting libdispatch's pool workers (named `…-qos…`), which come and go
    /// on their own.
    static func threads() -> Int { threadNames().filter { !$0.contains("qos") }.count }
    /// Open descriptors that are sockets.
    static func sockets() -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))?.hasPrefix("socket:") == true }.count
    }

    /// The threads' names (`comm`), for failure messages.
    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.sorted()
    }
}
