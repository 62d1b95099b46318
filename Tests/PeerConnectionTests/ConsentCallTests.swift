import PeerConnection
import RTP
import XCTest

/// Consent freshness (RFC 7675) in a whole connection, through ``InMemoryCall``: our media lost on a
/// collapsed path keeps consent while the viewer's reports come back; a viewer gone silent lapses it at
/// 30 s (nothing more is sent) and ends the peer 5 s later; a viewer heard again within the grace gets
/// media back, a keyframe first; and our own process stopping for a minute lapses nothing.
final class ConsentCallTests: XCTestCase {
    /// Every datagram towards the viewer is lost for 60 s (a collapsed bottleneck), its RTCP still comes
    /// back: consent holds, media keeps going out.
    func testMediaLostOnTheWayOutKeepsConsent() throws {
        let call = try InMemoryCall()
        try call.run(until: call.now + 2_000_000)
        XCTAssertEqual(call.machine.state, .connected)
        call.link.lossToViewer = 1
        let out = call.machine.counters.datagramsOut
        try call.run(until: call.now + 60_000_000)
        XCTAssertEqual(call.machine.state, .connected)
        XCTAssertFalse(call.events.contains { $0.event == .iceConnectionFailed })
        XCTAssertEqual(call.machine.consent?.phase, .fresh)
        XCTAssertEqual(call.machine.counters.heldByConsent, 0)
        XCTAssertGreaterThan(call.machine.counters.datagramsOut - out, 1_800, "a minute of frames and reports went out")
    }

    /// The viewer goes silent (all its datagrams lost): consent lapses 30 s after its last report arrived
    /// (``PeerConnection/Event/iceConnectionFailed``), nothing is sent from then on, and the peer ends 5 s
    /// later (the default grace) as failed.
    func testASilentViewerLapsesAtThirtySecondsAndEndsAfterTheGrace() throws {
        let call = try InMemoryCall()
        try call.run(until: call.now + 2_000_000)
        XCTAssertEqual(call.machine.state, .connected)
        call.link.lossToSender = 1
        let silentFrom = call.now  // the viewer reports every 500 ms: its last one arrived at most 0.5 s before
        try call.run(until: call.now + 29_000_000)
        XCTAssertEqual(call.machine.consent?.phase, .fresh)
        try call.run(until: call.now + 2_000_000)
        let lapse = try XCTUnwrap(call.events.first { $0.event == .iceConnectionFailed }?.micros)
        XCTAssertGreaterThanOrEqual(lapse, silentFrom + 29_500_000)
        XCTAssertLessThanOrEqual(lapse, silentFrom + 30_010_000)
        XCTAssertEqual(call.machine.consent?.phase, .lapsed)
        XCTAssertEqual(call.machine.state, .connected)
        let outAtLapse = call.machine.counters.datagramsOut
        try call.run(until: lapse + 4_900_000)
        XCTAssertEqual(call.machine.counters.datagramsOut, outAtLapse, "nothing sent while consent has lapsed (RFC 7675 §5.1)")
        XCTAssertGreaterThan(call.machine.counters.heldByConsent, 140, "five seconds of frames held")
        XCTAssertEqual(call.machine.state, .connected)
        try call.run(until: lapse + 5_100_000)
        XCTAssertEqual(call.machine.state, .failed)
        let closed = try XCTUnwrap(call.events.last)
        XCTAssertEqual(closed.micros, lapse + 5_000_000)
        guard case .closed(let reason, true) = closed.event else { return XCTFail("\(closed.event)") }
        XCTAssertTrue(reason.hasPrefix("consent expired (RFC 7675)"), reason)
        XCTAssertEqual(call.machine.counters.datagramsOut, outAtLapse, "not even a close_notify")
    }

    /// Only what the viewer alone can make renews consent: forged SRTCP (a right-looking header, a wrong tag),
    /// garbage, STUN and a DTLS record that fails authentication, from the viewer's address every 100 ms,
    /// renew nothing — consent lapses at 30 s as if nothing came.
    func testForgedDatagramsRenewNothing() throws {
        let call = try InMemoryCall()
        try call.run(until: call.now + 2_000_000)
        call.link.lossToSender = 1
        let silentFrom = call.now
        var forgedSRTCP: [UInt8] = [0x80, 200, 0, 6] + [UInt8](repeating: 0x11, count: 24) + [0x80, 0, 0, 1] + [UInt8](repeating: 0xAB, count: 16)
        forgedSRTCP[1] = 200
        let forged: [[UInt8]] = [
            forgedSRTCP, [0x00, 0x01, 0x00, 0x00] + [UInt8](repeating: 0, count: 16), [0x17, 0xFE, 0xFD, 0, 1] + [UInt8](repeating: 0x42, count: 40),
            [0xC8, 1, 2, 3],
        ]
        while call.now < silentFrom + 31_000_000 {
            for datagram in forged { call.carry(call.machine.receive(datagram, nowMicros: call.now, wallClock: InMemoryCall.ntp(call.now))) }
            try call.run(until: call.now + 100_000)
        }
        let lapse = try XCTUnwrap(call.events.first { $0.event == .iceConnectionFailed }?.micros, "consent never lapsed")
        XCTAssertLessThanOrEqual(lapse, silentFrom + 30_100_000)
        XCTAssertGreaterThan(call.machine.counters.dropped.total, 1_000, "each forged datagram counted and dropped")
        XCTAssertEqual(call.machine.consent?.phase, .lapsed)
    }

    /// The viewer is heard again during the grace: consent is renewed, a keyframe is asked for, and the
    /// viewer decodes again, the keyframe first.
    func testAViewerHeardAgainGetsMediaBackWithAKeyframe() throws {
        let call = try InMemoryCall()
        try call.run(until: call.now + 2_000_000)
        call.link.lossToSender = 1
        try call.run(until: call.now + 32_000_000)
        XCTAssertEqual(call.machine.consent?.phase, .lapsed)
        let heardAt = call.now
        call.link.lossToSender = 0
        try call.run(until: call.now + 3_000_000)
        XCTAssertEqual(call.machine.state, .connected)
        XCTAssertEqual(call.machine.consent?.phase, .fresh)
        XCTAssertEqual(call.machine.consent?.lapses, 1)
        let renewal = try XCTUnwrap(call.keyframeRequests.first { $0.reason == "consent renewed" })
        XCTAssertLessThan(renewal.micros, heardAt + 600_000, "the next report (every 500 ms) renews it")
        let after = call.viewer.frames.filter { $0.arrivalMicros > renewal.micros }.map(\.frame)
        XCTAssertGreaterThan(after.count, 60)
        XCTAssertEqual(after.first?.isKeyframe, true)
    }

    /// Our process stops for a minute (SIGSTOP; the clock jumps): the viewer's silence meanwhile is not
    /// counted, consent holds, and the next reports keep it.
    func testOurOwnStallLapsesNothing() throws {
        let call = try InMemoryCall()
        try call.run(until: call.now + 2_000_000)
        let resumed = call.now + 60_000_000
        call.carry(call.machine.handleTimer(nowMicros: resumed, wallClock: InMemoryCall.ntp(resumed)))
        XCTAssertEqual(call.machine.consent?.phase, .fresh)
        // What was silent before (under 0.5 s: reports come every 500 ms) and one step for the whole minute.
        XCTAssertLessThanOrEqual(call.machine.consent?.silentMicros ?? .max, 500_000 + ConsentFreshness.maximumStepMicros)
        XCTAssertFalse(call.events.contains { $0.event == .iceConnectionFailed })
        XCTAssertEqual(call.machine.state, .connected)
    }
}
