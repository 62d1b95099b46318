import ICE
import PeerConnection
import XCTest

/// An ICE restart of a publishing connection (our offer, the viewer answers `active` as Janus does),
/// driven through ``InMemoryCall``: the path dies, ICE fails, the restart holds frames, the new path comes
/// up, and media flows again on the same DTLS association and SRTP keys, a keyframe first.
final class InMemoryRestartTests: XCTestCase {
    func testRestartKeepsDTLSAndSRTPAndSendsAKeyframeFirst() throws {
        let call = try InMemoryCall(offeringTo: .active)
        try call.run(until: call.now + 2_000_000)
        XCTAssertEqual(call.machine.state, .connected)
        let before = (frames: call.viewer.frames.count, dtls: call.machine.counters.dtlsDatagrams, profile: call.machine.srtpProfile)
        XCTAssertGreaterThan(before.frames, 40)

        // The path dies; libnice reports FAILED (consent lost): the owner hears it, and restarts.
        call.link.lossToViewer = 1
        call.link.lossToSender = 1
        try call.run(until: call.now + 300_000)
        call.carry(call.machine.handle(.stateChanged(.failed), nowMicros: call.now))
        XCTAssertEqual(call.events.last?.event, .iceConnectionFailed)
        call.carry(call.machine.iceRestarted(nowMicros: call.now))
        XCTAssertEqual(call.machine.restartGate.phase, .restarting)
        let restartedAt = call.now
        try call.run(until: call.now + 1_000_000)
        XCTAssertGreaterThanOrEqual(call.machine.restartGate.framesDropped, 29, "a second of frames held while restarting")

        // The new path is up (ICE READY): the keyframe is asked for and goes first.
        call.link.lossToViewer = 0
        call.link.lossToSender = 0
        let upAt = call.now
        call.carry(call.machine.handle(.stateChanged(.ready), nowMicros: call.now))
        XCTAssertEqual(call.keyframeRequests.last?.reason, "ice restart")
        XCTAssertEqual(call.machine.restartGate.phase, .awaitingKeyframe)
        try call.run(until: call.now + 2_000_000)
        call.encoding = false
        try call.run(until: call.now + 500_000)

        XCTAssertEqual(call.machine.state, .connected)
        XCTAssertEqual(call.machine.restartGate.phase, .idle)
        XCTAssertEqual(call.machine.restartGate.restarts, 1)
        XCTAssertEqual(call.events.filter { $0.event == .connected }.count, 1, "no second DTLS handshake")
        XCTAssertEqual(call.machine.counters.dtlsDatagrams, before.dtls, "no DTLS datagram since")
        XCTAssertEqual(call.machine.srtpProfile, before.profile)
        XCTAssertEqual(call.viewer.counts.srtpFailures, 0, "the viewer's SRTP context (the old keys) takes every packet")
        // What the viewer completed after the path came up: a keyframe first, then every frame the
        // encoder made from that keyframe on, byte for byte.
        let after = call.viewer.frames.filter { $0.arrivalMicros >= upAt }.map(\.frame)
        let sentFromKeyframe = call.sent.filter { $0.atMicros > upAt }.drop { !$0.frame.isKeyframe }.map(\.frame)
        XCTAssertGreaterThan(after.count, 50)
        XCTAssertEqual(after.first?.isKeyframe, true)
        XCTAssertEqual(after.map(\.data), sentFromKeyframe.map(\.bytes))
        XCTAssertTrue(call.sent.contains { $0.atMicros > restartedAt && $0.atMicros < upAt && !$0.frame.isKeyframe })
    }
}

/// Congestion control across an ICE restart: the outage before it lowers the target to the floor (no TWCC
/// feedback for seconds), and the new path starts again at the start rate with the start probes, so the
/// stream does not crawl back from 100 kbit/s (Janus subscribers after a restart decoded 9 frames in 4 s).
final class InMemoryRestartCongestionTests: XCTestCase {
    func testTheNewPathStartsAtTheStartRate() throws {
        let call = try InMemoryCall(transportWideCC: 5)
        try call.run(until: call.now + 3_000_000)
        let probesBefore = try XCTUnwrap(call.machine.senderReport.congestionCounters).probeClustersRequested
        let before = try XCTUnwrap(call.target)
        XCTAssertGreaterThanOrEqual(before, 300_000)

        call.link.lossToViewer = 1
        call.link.lossToSender = 1
        try call.run(until: call.now + 9_000_000)
        let lowered = try XCTUnwrap(call.target)
        XCTAssertLessThanOrEqual(Double(lowered), Double(before) * 0.8 * 0.8 * 0.8 * 0.8 * 0.8, "×0.8 a second after 3 s without feedback")
        XCTAssertGreaterThan(try XCTUnwrap(call.machine.senderReport.congestion).bytesInFlight, 100_000, "9 s sent into the dead path")
        call.carry(call.machine.iceRestarted(nowMicros: call.now))
        try call.run(until: call.now + 500_000)

        call.link.lossToViewer = 0
        call.link.lossToSender = 0
        let up = call.machine.handle(.stateChanged(.ready), nowMicros: call.now)
        call.carry(up)
        XCTAssertEqual(call.target, 300_000, "the start rate on the new path")
        let report = call.machine.senderReport
        XCTAssertLessThanOrEqual(try XCTUnwrap(report.congestion).bytesInFlight, up.datagrams.reduce(0) { $0 + $1.count },
                                 "in flight: only what the new path was just given")
        XCTAssertEqual(report.congestion?.lossBasedBitsPerSecond, 300_000)
        XCTAssertEqual(report.pacingBitsPerSecond, 750_000)
        XCTAssertGreaterThan(try XCTUnwrap(report.congestionCounters).probeClustersRequested, probesBefore, "the start probes again")

        try call.run(until: call.now + 3_000_000)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(call.target), 300_000, "feedback flows on the new path and the target holds")
        XCTAssertNotNil(call.machine.senderReport.congestion?.roundTripMillis, "an RTT measured on the new path")
    }
}
