import DTLS
import ICE
import PeerConnection
import RTP
import RTPSession
import ScreencastSupport
import SDP
import TestSupport
import XCTest

/// ``PeerConnectionStateMachine`` event by event, without a link: what it does before and after DTLS,
/// with garbage, with ICE's news, and on the injected clock.
final class StateMachineTests: XCTestCase {
    /// Our answer to a test viewer's offer, and that viewer (not started).
    func answer() throws -> (viewer: TestViewer, plan: PeerAnswer) {
        let viewer = try TestViewer()
        let configuration = PeerConnection.Configuration(ice: .init(role: .controlled), certificate: try DTLSCertificate.shared())
        var random = SeededGenerator(seed: 3)
        let plan = try PeerAnswer(
            offer: PeerAnswer.check(offer: viewer.offer(), fingerprint: configuration.certificate.fingerprint),
            ice: .init(ufrag: "ours", password: "0123456789abcdefghijkl"), candidates: [], configuration: configuration, using: &random)
        try viewer.accept(answer: plan.answer)
        return (viewer, plan)
    }

    /// A machine for that answer, with a 5 s handshake limit.
    func machine(_ plan: PeerAnswer) throws -> PeerConnectionStateMachine {
        try PeerConnectionStateMachine(
            id: "unit", negotiated: plan.negotiated, certificate: DTLSCertificate.shared(), sender: plan.sender,
            dtlsHandshakeTimeoutMicros: 5_000_000, logger: Logger(component: "test", threshold: .error), nowMicros: 0)
    }

    /// To an `actpass` offer we answer `a=setup:passive`, the DTLS server (RFC 8842 §5.3): start sends nothing
    /// but sets the handshake's deadline; the viewer's ClientHello gets our flight (ServerHello first); frames
    /// before DTLS completes go nowhere.
    func testServerWaitsForTheClientHelloAndFramesWaitForDTLS() throws {
        let (viewer, plan) = try answer()
        var machine = try machine(plan)
        XCTAssertEqual(plan.negotiated.dtlsRole, .server)
        XCTAssertTrue(plan.answer.contains("a=setup:passive\r\n"))
        XCTAssertEqual(machine.state, .connecting)
        let start = machine.start(nowMicros: 0)
        XCTAssertEqual(start.datagrams, [])
        XCTAssertEqual(start.events, [])
        XCTAssertEqual(start.deadlineMicros, 5_000_000, "the handshake limit")
        let hello = try viewer.start(nowMicros: 0)
        XCTAssertEqual(hello.first?[13], 1, "handshake type 1: ClientHello (RFC 6347 §4.2.2)")
        let flight = machine.receive(try XCTUnwrap(hello.first), nowMicros: 1000, wallClock: NTPTimestamp(rawValue: 0))
        XCTAssertFalse(flight.datagrams.isEmpty)
        XCTAssertEqual(flight.datagrams.first.map { DatagramKind.classify($0) }, .dtls)
        XCTAssertEqual(flight.datagrams.first?[13], 2, "handshake type 2: ServerHello")
        XCTAssertEqual(machine.counters.dtlsDatagrams, 1)
        let frame = machine.send(OutgoingVideoFrame(bytes: [0x50, 1, 2, 3], isKeyframe: true, captureMicros: 0), nowMicros: 1000)
        XCTAssertEqual(frame.datagrams, [])
        XCTAssertEqual(frame.events, [])
        XCTAssertEqual(machine.senderReport.stream.framesSent, 0)
    }

    /// A handshake the viewer never answers fails on the injected clock, with the reason, once; then the
    /// machine is silent.
    func testHandshakeTimesOutOnTheInjectedClock() throws {
        var machine = try machine(answer().plan)
        var output = machine.start(nowMicros: 0)
        var now: UInt64 = 0
        var ended: [PeerConnection.Event] = []
        while let deadline = output.deadlineMicros, now < 60_000_000 {
            now = max(now + 1, deadline)
            output = machine.handleTimer(nowMicros: now, wallClock: NTPTimestamp(rawValue: 0))
            ended += output.events
        }
        XCTAssertEqual(machine.state, .failed)
        XCTAssertEqual(machine.endReason, "DTLS: DTLS handshake timed out")
        XCTAssertEqual(ended, [.closed(reason: "DTLS: DTLS handshake timed out", failed: true)])
        XCTAssertGreaterThanOrEqual(now, 5_000_000)
        XCTAssertLessThan(now, 6_000_000)
        XCTAssertNil(output.deadlineMicros)
        XCTAssertEqual(machine.handleTimer(nowMicros: now + 1, wallClock: NTPTimestamp(rawValue: 0)).datagrams, [])
        XCTAssertEqual(machine.receive([22, 254, 253], nowMicros: now + 2, wallClock: NTPTimestamp(rawValue: 0)).events, [])
    }

    /// What is not DTLS or RTCP is counted by kind and dropped; RTCP before SRTP is keyed too; RTCP that does
    /// not authenticate once keyed is counted as such, and the connection goes on.
    func testGarbageAndForgedRTCPAreCountedNotFatal() throws {
        let (viewer, plan) = try answer()
        var machine = try machine(plan)
        _ = machine.start(nowMicros: 0)
        var toViewer: [[UInt8]] = []
        let rtcp: [UInt8] = [0x80, 201, 0, 1, 0, 0, 0, 7]
        for datagram in [[], [0x00, 0x01, 0x00, 0x00], [0x80, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1], rtcp, [200, 1, 2]] as [[UInt8]] {
            XCTAssertEqual(machine.receive(datagram, nowMicros: 10, wallClock: NTPTimestamp(rawValue: 0)).events, [])
        }
        XCTAssertEqual(machine.counters.datagramsReceived, 5)
        var dropped = DroppedDatagrams()
        (dropped.unknown, dropped.stun, dropped.rtp, dropped.rtcpBeforeKeys) = (2, 1, 1, 1)
        XCTAssertEqual(machine.counters.dropped, dropped, "empty and 200: unknown; STUN; RTP; RTCP before the keys")
        XCTAssertEqual(machine.counters.dropped.total, 5)
        // Complete the handshake by hand.
        var now: UInt64 = 100
        var toUs = try viewer.start(nowMicros: now)
        while !toUs.isEmpty || !machine.isUp {
            for datagram in toUs { toViewer += machine.receive(datagram, nowMicros: now, wallClock: NTPTimestamp(rawValue: 0)).datagrams }
            toUs = []
            for datagram in toViewer { toUs += try viewer.receive(datagram, nowMicros: now) }
            toViewer = []
            now += 1000
            if now > 1_000_000 { return XCTFail("no handshake") }
        }
        XCTAssertEqual(machine.state, .connected)
        var forged = rtcp + Array(repeating: 0xAB, count: 20)
        forged[1] = 200
        _ = machine.receive(forged, nowMicros: now, wallClock: NTPTimestamp(rawValue: 0))
        XCTAssertEqual(machine.counters.dropped.srtcpAuthenticationFailed, 1)
        XCTAssertEqual(machine.counters.srtpErrors, 0, "ours only")
        XCTAssertEqual(machine.state, .connected)
        XCTAssertEqual(machine.srtpProfile, .aeadAES128GCM)
    }

    /// ICE's news: its state and the selected pair are kept for `/stats`; an expiry fails the connection.
    func testICEEventsAndExpiry() throws {
        var machine = try machine(answer().plan)
        _ = machine.start(nowMicros: 0)
        XCTAssertEqual(machine.handle(.stateChanged(.connecting), nowMicros: 1).events, [])
        let pair = ICEAgent.CandidatePair(
            local: try ICECandidate(parsing: "candidate:1 1 udp 2130706431 127.0.0.1 5000 typ host"),
            remote: try ICECandidate(parsing: "candidate:2 1 udp 1694498815 203.0.113.9 6000 typ srflx raddr 0.0.0.0 rport 0"))
        _ = machine.handle(.selectedPairChanged(pair), nowMicros: 2)
        _ = machine.handle(.stateChanged(.ready), nowMicros: 3)
        XCTAssertEqual(machine.iceState, .ready)
        XCTAssertEqual(machine.selectedPair, pair)
        let expired = machine.handle(.expired(.connectionLost), nowMicros: 4)
        XCTAssertEqual(expired.events, [.closed(reason: "ICE connectionLost", failed: true)])
        XCTAssertEqual(machine.state, .failed)
        XCTAssertEqual(machine.handle(.expired(.neverConnected), nowMicros: 5).events, [], "once")
        XCTAssertEqual(machine.handle(.stateChanged(.failed), nowMicros: 6).events, [])
        XCTAssertEqual(machine.iceState, .ready, "nothing changes after the end")
    }

    /// A sender configuration the chain refuses is our error, before anything starts.
    func testRefusedSenderConfiguration() throws {
        var sender = try answer().plan.sender
        sender.maxPacketSize = 10
        do {
            _ = try PeerConnectionStateMachine(
                id: "bad", negotiated: answer().plan.negotiated, certificate: DTLSCertificate.shared(), sender: sender,
                logger: Logger(component: "test", threshold: .error), nowMicros: 0)
            XCTFail("a 10-byte packet size was accepted")
        } catch {
            guard case .invalidConfiguration = error as? PeerConnectionError else { return XCTFail("\(error)") }
            XCTAssertFalse((error as? PeerConnectionError)?.isPeerError ?? true)
        }
    }
}

extension PeerConnectionStateMachine {
    /// Connected, or ended after connecting.
    var isUp: Bool { state != .connecting }
}
