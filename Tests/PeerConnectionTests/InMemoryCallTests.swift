import PeerConnection
import SDP
import RTP
import RTPSession
import XCTest

/// Two ends of a call in memory (``InMemoryCall``): our answering state machine and a viewer made of the
/// same DTLS/SRTP/RTP units, through a link with delay and injected loss, on an injected clock.
final class InMemoryCallTests: XCTestCase {
    /// Runs `seconds` of encoding, then one more second with the encoder stopped so what is in flight lands.
    func run(_ call: InMemoryCall, seconds: Double) throws {
        let end = call.now + UInt64(seconds * 1_000_000)
        try call.run(until: end)
        call.encoding = false
        try call.run(until: end + 1_000_000)
    }

    /// The viewer's frames compared with what the encoder gave from the first admitted keyframe on: the same
    /// number, each byte for byte, in order, none after a loss it could not repair.
    func assertDeliveredByteExact(_ call: InMemoryCall, file: StaticString = #filePath, line: UInt = #line) {
        let expected = call.framesFromTheFirstKeyframe
        let delivered = call.viewer.frames.map(\.frame)
        XCTAssertGreaterThan(expected.count, 0, file: file, line: line)
        XCTAssertEqual(delivered.count, expected.count, "frames delivered", file: file, line: line)
        for (index, (got, want)) in zip(delivered, expected).enumerated() where got.data != want.bytes || got.isKeyframe != want.isKeyframe {
            return XCTFail("frame \(index): \(got.data.count) bytes, keyframe \(got.isKeyframe); sent \(want.bytes.count), \(want.isKeyframe)",
                           file: file, line: line)
        }
        XCTAssertFalse(delivered.contains { $0.followsLoss }, "no frame follows an unrepaired loss", file: file, line: line)
    }

    /// No loss: DTLS completes in memory, the new viewer's keyframe request reaches the encoder, and every
    /// frame from that keyframe on arrives byte for byte, with the RTP timestamps of their capture times; the
    /// viewer's Receiver Reports give us the link's round trip (2 × 10 ms).
    func testFramesArriveByteExactAndTheRoundTripIsMeasured() throws {
        let call = try InMemoryCall()
        try run(call, seconds: 3)
        XCTAssertEqual(call.machine.state, .connected)
        XCTAssertTrue(call.viewer.isConnected)
        XCTAssertEqual(call.events.first?.event, .connected)
        XCTAssertEqual(call.keyframeRequests.first?.reason, "new viewer")
        assertDeliveredByteExact(call)
        XCTAssertGreaterThan(call.viewer.frames.count, 80)
        let expected = call.framesFromTheFirstKeyframe
        let mapper = RTPTimestampMapper(clockRate: 90_000, offset: call.senderConfiguration.timestampOffset, originMicroseconds: 0)
        for (got, want) in zip(call.viewer.frames.map(\.frame), expected) {
            XCTAssertEqual(got.rtpTimestamp, mapper.rtpTimestamp(forMicroseconds: want.captureMicros))
        }
        let report = call.machine.senderReport
        XCTAssertEqual(report.nack.packetsRetransmitted, 0)
        XCTAssertEqual(call.viewer.counts.rtx, 0)
        XCTAssertGreaterThanOrEqual(call.viewer.counts.senderReports, 2)
        XCTAssertEqual(try XCTUnwrap(report.reports.link.roundTripMillis), 20, accuracy: 0.5)
        XCTAssertEqual(call.viewer.counts.srtpFailures, 0)
        XCTAssertEqual(call.machine.counters.srtpErrors, 0)
    }

    /// What crosses the link is SRTP: no run of 8 frame bytes (taken from the first ten frames) appears in any
    /// datagram, and every media datagram is the plain packet plus the GCM tag (RFC 7714: 16 bytes).
    func testMediaIsEncryptedOnTheWire() throws {
        let call = try InMemoryCall()
        call.recording = true
        try run(call, seconds: 2)
        let media = call.recorded.filter { DatagramKind.classify($0) == .rtp }
        XCTAssertGreaterThan(media.count, 100)
        let frames = call.framesFromTheFirstKeyframe
        XCTAssertFalse(frames.isEmpty)
        func word(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }
        let probes = Set(frames.prefix(10).flatMap { frame in stride(from: 100, to: 900, by: 100).map { word(frame.bytes[$0..<($0 + 8)]) } })
        var found = 0
        for datagram in media {
            var rolling: UInt64 = 0
            for (index, byte) in datagram.enumerated() {
                rolling = rolling << 8 | UInt64(byte)
                if index >= 7, probes.contains(rolling) { found += 1 }
            }
        }
        XCTAssertEqual(found, 0, "plain frame bytes on the wire")
        // The same search finds them in the plain packets.
        var plain = call.framesFromTheFirstKeyframe[0].bytes[...]
        plain = plain.dropFirst(100).prefix(8)
        XCTAssertTrue(probes.contains(word(plain)))
        let payloadBytes = frames.reduce(0) { $0 + $1.bytes.count }
        let packets = call.machine.senderReport.stream.packetsSent
        XCTAssertEqual(media.reduce(0) { $0 + $1.count }, payloadBytes + packets * (12 + 4 + 16))
    }

    /// A viewer that offers `a=setup:passive` makes us the DTLS client: our ClientHello starts the handshake,
    /// and the frames arrive the same.
    func testWeCanBeTheDTLSClient() throws {
        let call = try InMemoryCall(viewerSetup: .passive)
        XCTAssertEqual(call.negotiated.dtlsRole, .client)
        try run(call, seconds: 2)
        XCTAssertEqual(call.machine.state, .connected)
        assertDeliveredByteExact(call)
        XCTAssertEqual(call.machine.srtpProfile, .aeadAES128GCM)
    }

    /// 10 % of media and of RTCP lost from the second second on: the viewer's NACKs bring back every
    /// lost packet (on the RTX stream, twice on such a lossy link), so every frame still arrives byte for byte.
    func testNACKRepairsLossOverRTX() throws {
        var link = InMemoryCall.Link()
        link.lossToViewer = 0.10
        link.lossToSender = 0.10
        link.lossFromMicros = 2_000_000
        let call = try InMemoryCall(link: link)
        try run(call, seconds: 5)
        let nack = call.machine.senderReport.nack
        print("in-memory call, 10 % loss both ways: lost \(call.lost), frames \(call.viewer.frames.count), NACKs \(call.viewer.counts.nacks)"
              + " naming \(call.viewer.counts.nackedPackets), retransmitted \(nack.packetsRetransmitted) (+\(nack.duplicateRetransmissions)),"
              + " RTX received \(call.viewer.counts.rtx), media \(call.viewer.counts.rtp)")
        XCTAssertEqual(Double(call.lost.toViewer) / Double(call.exposed.toViewer), 0.10, accuracy: 0.03)
        XCTAssertGreaterThan(call.lost.toViewer, 40)
        XCTAssertGreaterThan(call.lost.toSender, 2, "lost NACKs are asked again")
        assertDeliveredByteExact(call)
        XCTAssertGreaterThan(nack.packetsRetransmitted, 30)
        XCTAssertGreaterThan(nack.duplicateRetransmissions, 0, "the loss is well above 2 %")
        XCTAssertGreaterThan(call.viewer.counts.rtx, nack.packetsRetransmitted / 2)
        XCTAssertGreaterThan(call.viewer.counts.nacks, 10)
        XCTAssertEqual(call.keyframeRequests.count, 1, "repaired by NACK, no new keyframe needed")
    }

    /// The same loss without NACK negotiated: frames are lost for good (the repair above is the NACKs' doing).
    func testWithoutNACKTheSameLossLosesFrames() throws {
        var link = InMemoryCall.Link()
        link.lossToViewer = 0.10
        link.lossFromMicros = 2_000_000
        let call = try InMemoryCall(link: link) { $0.feedback.nack = false }
        try run(call, seconds: 5)
        XCTAssertEqual(call.machine.senderReport.nack.packetsRetransmitted, 0)
        XCTAssertEqual(call.viewer.counts.rtx, 0)
        let delivered = call.viewer.frames.map(\.frame)
        XCTAssertTrue(delivered.count < call.framesFromTheFirstKeyframe.count || delivered.contains { $0.followsLoss },
                      "\(delivered.count) of \(call.framesFromTheFirstKeyframe.count) frames, none after a loss")
        XCTAssertGreaterThan(call.machine.senderReport.chain.rtcpIgnored, 10, "the viewer's NACKs, not negotiated")
    }

    /// A PLI from the viewer reaches the encoder as a keyframe request; the next frame is a keyframe, and it
    /// arrives whole.
    func testPictureLossBringsAKeyframe() throws {
        let call = try InMemoryCall()
        try call.run(until: 2_500_000)
        let before = call.viewer.frames.filter { $0.frame.isKeyframe }.count
        XCTAssertEqual(before, 1)
        try call.toSender([call.viewer.pictureLoss()])
        let asked = call.now
        try run(call, seconds: 1)
        let requests = call.keyframeRequests
        XCTAssertEqual(requests.map(\.reason), ["new viewer", "PLI/FIR"])
        XCTAssertEqual(Double(requests[1].micros - asked), 10_000, accuracy: 1, "one link delay later")
        let keyframes = call.viewer.frames.filter { $0.frame.isKeyframe }
        XCTAssertEqual(keyframes.count, 2)
        XCTAssertGreaterThan(keyframes[1].arrivalMicros, asked)
        XCTAssertLessThan(keyframes[1].arrivalMicros - asked, 100_000, "within a frame interval and the link's delay")
        XCTAssertEqual(call.machine.senderReport.keyframes.plisReceived, 1)
        assertDeliveredByteExact(call)
    }

    /// REMB becomes the estimated-bitrate event; RTCP BYE ends the connection (closed, not failed), once.
    func testREMBAndGoodbye() throws {
        let call = try InMemoryCall()
        try call.run(until: 2_000_000)
        try call.toSender([call.viewer.estimate(1_200_000)])
        try call.run(until: 2_100_000)
        XCTAssertTrue(call.events.contains { $0.event == .estimatedBitrate(1_200_000) })
        try call.toSender([call.viewer.goodbye()])
        try call.run(until: 2_200_000)
        XCTAssertEqual(call.machine.state, .closed)
        XCTAssertEqual(call.machine.endReason, "RTCP BYE from the peer")
        XCTAssertEqual(call.events.filter { if case .closed = $0.event { true } else { false } }.count, 1)
        let framesThen = call.machine.senderReport.stream.framesSent
        try call.run(until: 3_000_000)
        XCTAssertEqual(call.machine.senderReport.stream.framesSent, framesThen, "nothing is sent after the end")
    }

    /// The viewer's close_notify ends us (closed); our close sends ours and ends us once.
    func testCloseNotifyEitherWay() throws {
        let theirs = try InMemoryCall()
        try theirs.run(until: 2_000_000)
        try theirs.toSender(theirs.viewer.closeDTLS())
        try theirs.run(until: 2_100_000)
        XCTAssertEqual(theirs.machine.state, .closed)
        XCTAssertEqual(theirs.machine.endReason, "DTLS close_notify from the peer")

        let ours = try InMemoryCall()
        try ours.run(until: 2_000_000)
        let output = ours.machine.close(reason: "DELETE by the viewer", nowMicros: ours.now)
        XCTAssertEqual(output.events, [.closed(reason: "DELETE by the viewer", failed: false)])
        XCTAssertEqual(output.datagrams.count, 1, "close_notify")
        XCTAssertEqual(DatagramKind.classify(output.datagrams[0]), .dtls)
        XCTAssertNil(output.deadlineMicros)
        XCTAssertTrue(ours.machine.close(reason: "again", nowMicros: ours.now).events.isEmpty)
    }
}

/// Publishing's direction: our offer (``PeerOffer``) answered by the viewer, in both DTLS roles.
final class InMemoryOfferTests: XCTestCase {
    /// `a=setup:active` in the answer (Janus): we are the DTLS server; `passive`: we are the client. Either
    /// way every frame from the first keyframe on arrives byte for byte, RTX and the payload types are
    /// the offer's.
    func testOurOfferAnsweredActiveOrPassiveDeliversFramesByteExact() throws {
        for (setup, role) in [(DTLSSetup.active, NegotiatedVideo.DTLSRole.server), (.passive, .client)] {
            let call = try InMemoryCall(offeringTo: setup, link: .init(lossToViewer: 0.03, lossFromMicros: 1_500_000))
            XCTAssertEqual(call.negotiated.dtlsRole, role, "\(setup)")
            XCTAssertEqual(call.negotiated.direction, .sendonly)
            XCTAssertEqual(call.negotiated.vp8PayloadType, 96)
            XCTAssertEqual(call.negotiated.rtxPayloadType, 97)
            let end = call.now + 3_000_000
            try call.run(until: end)
            call.encoding = false
            try call.run(until: end + 1_000_000)
            XCTAssertEqual(call.machine.state, .connected, "\(setup)")
            let expected = call.framesFromTheFirstKeyframe
            let delivered = call.viewer.frames.map(\.frame)
            XCTAssertGreaterThan(expected.count, 80, "\(setup)")
            XCTAssertEqual(delivered.count, expected.count, "\(setup)")
            XCTAssertEqual(delivered.map(\.data), expected.map(\.bytes), "\(setup)")
            XCTAssertGreaterThan(call.viewer.counts.rtx, 0, "losses repaired by RTX (\(setup))")
        }
    }
}
