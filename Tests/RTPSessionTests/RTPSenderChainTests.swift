import RTP
import RTPSession
import XCTest

/// ``RTPSenderChain``: the features in order around the pacer, driven by events and an injected clock.
final class RTPSenderChainTests: XCTestCase {
    func configuration(
        rtx: Bool = true, nack: Bool = true, maxQueuedBytes: Int = 2_000_000, duplicates: Double? = nil
    ) -> RTPSenderChain.Configuration {
        RTPSenderChain.Configuration(
            ssrc: Session.ssrc, payloadType: 96, rtx: rtx ? RTXStream(ssrc: Session.rtxSSRC, payloadType: 97) : nil, cname: "cname-1",
            timestampOffset: 1000, initialSequenceNumber: 500, initialPictureID: 7, initialRTXSequenceNumber: 40,
            feedback: .init(nack: nack, pictureLossIndication: true, fullIntraRequest: true, estimatedBitrate: true),
            duplicateRetransmissionsAboveLoss: duplicates, pacer: .init(maxQueuedBytes: maxQueuedBytes))
    }

    func keyframe(_ size: Int = 5000, at capture: UInt64 = 0) -> OutgoingVideoFrame {
        OutgoingVideoFrame(bytes: Session.frame(size, seed: 1), isKeyframe: true, captureMicros: capture)
    }

    func interframe(_ size: Int = 900, at capture: UInt64 = 0) -> OutgoingVideoFrame {
        OutgoingVideoFrame(bytes: Session.frame(size, seed: 2), isKeyframe: false, captureMicros: capture)
    }

    /// Everything the chain lets go up to `end`, as the peer's timer would take it, parsed back.
    func drain(_ chain: inout RTPSenderChain, from start: UInt64, until end: UInt64 = .max) throws -> [(UInt64, RTPPacket, PacketKind)] {
        var out: [(UInt64, RTPPacket, PacketKind)] = []
        var now = start
        while let next = chain.pacer.nextSendMicros(nowMicros: now), next <= end {
            now = max(now, next)
            out += try chain.release(nowMicros: now).map { (now, try RTPPacket(parsing: $0.bytes), $0.kind) }
        }
        return out
    }

    /// A new viewer waits in the lobby (a keyframe is asked for at once); interframes before the keyframe
    /// are dropped; the keyframe goes through the pacer as serialized RTP with room for the SRTP trailer, and
    /// its last packet gives the capture → sent latency.
    func testLobbyThenTheKeyframeThroughThePacer() throws {
        var chain = try RTPSenderChain(configuration: configuration())
        XCTAssertEqual(try chain.send(keyframe(), nowMicros: 0), SenderOutcome(), "not started: dropped")
        let start = chain.start(nowMicros: 1_000_000, sendsMedia: true)
        XCTAssertEqual(start.keyframeRequest, .newViewer)
        XCTAssertEqual(try chain.send(interframe(), nowMicros: 1_010_000), SenderOutcome())
        let admitted = try chain.send(keyframe(at: 1_020_000), nowMicros: 1_030_000)
        XCTAssertEqual(admitted.firstKeyframeWaitMicros, 30_000)
        XCTAssertNil(admitted.keyframeRequest)
        let released = chain.release(nowMicros: 1_040_000, reserving: 16)
        XCTAssertEqual(released.count, 5)
        for (index, out) in released.enumerated() {
            let packet = try RTPPacket(parsing: out.bytes)
            XCTAssertEqual(packet.sequenceNumber, 500 + UInt16(index))
            XCTAssertEqual(packet.timestamp, 1000 &+ UInt32(1_020_000 * 9 / 100))
            XCTAssertEqual(packet.marker, index == 4)
            XCTAssertEqual(out.kind, .media)
            XCTAssertGreaterThanOrEqual(out.bytes.capacity, out.bytes.count + 16)
            XCTAssertEqual(out.frameLatency?.latencyMicros, index == 4 ? 20_000 : nil)
        }
        XCTAssertEqual(released.reduce(0) { $0 + $1.bytes.count }, 5000 + 5 * 16)
        let report = chain.report
        XCTAssertEqual(report.stream.framesSent, 1)
        XCTAssertEqual(report.lobbyState, "open")
        XCTAssertEqual(report.lobbyDropped, 1, "the interframe (the frame before start never reached the lobby)")
        XCTAssertEqual(report.chain.keyframeRequests, 1)
        XCTAssertEqual(report.historyPackets, 5)
        XCTAssertEqual(report.latency.frames, 1)
        XCTAssertTrue(report.rtx)
    }

    /// A NACK's retransmission (on the RTX stream) leaves ahead of the media still waiting in the pacer.
    func testRetransmissionsJumpAheadOfWaitingMedia() throws {
        var chain = try RTPSenderChain(configuration: configuration())
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        _ = try chain.send(keyframe(60_000), nowMicros: 0)
        let first = chain.release(nowMicros: 0)
        XCTAssertEqual(first.count, 11, "the burst: until the debt passes 12 000 bytes")
        let lost = try RTPPacket(parsing: first[3].bytes).sequenceNumber
        let outcome = chain.receiveRTCP(try Session.compound([Session.nack([lost])]), nowMicros: 1_000, arrival: Session.anyArrival)
        XCTAssertEqual(outcome, SenderOutcome())
        let rest = try drain(&chain, from: 1_000)
        XCTAssertEqual(rest.first?.2, .retransmission)
        XCTAssertEqual(rest.first?.1.ssrc, Session.rtxSSRC)
        XCTAssertEqual(rest.first?.1.sequenceNumber, 40)
        XCTAssertEqual(rest.first?.1.payload.prefix(2).map { $0 }, [UInt8(lost >> 8), UInt8(lost & 0xFF)])
        XCTAssertEqual(rest.filter { $0.2 == .media }.count, 51 - 11)
        XCTAssertEqual(chain.report.nack.packetsRetransmitted, 1)
    }

    /// PLI asks for a keyframe (and pushes the lobby's next request out), REMB gives the estimate, BYE says
    /// goodbye; what is not for us, not negotiated, or not RTCP at all is counted as ignored.
    func testFeedbackOutcomesAndWhatIsIgnored() throws {
        var chain = try RTPSenderChain(configuration: configuration(nack: false))
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        _ = try chain.send(keyframe(), nowMicros: 10)
        let packets = try drain(&chain, from: 10)
        let feedback = chain.receiveRTCP(try Session.compound([
            Session.receiverReport(), .pictureLossIndication(.init(senderSSRC: 7, mediaSSRC: Session.ssrc)),
            .estimatedBitrate(.init(senderSSRC: 7, bitrate: 800_000, ssrcs: [Session.ssrc])),
            Session.nack([packets[0].1.sequenceNumber]), .pictureLossIndication(.init(senderSSRC: 7, mediaSSRC: 42)),
        ]), nowMicros: 500_000, arrival: Session.anyArrival)
        XCTAssertEqual(feedback.keyframeRequest, .pictureLoss)
        XCTAssertEqual(feedback.estimatedBitrate, 800_000)
        XCTAssertFalse(feedback.goodbye)
        XCTAssertNil(chain.pacer.nextSendMicros(nowMicros: 500_000), "NACK was not negotiated: nothing resent")
        XCTAssertEqual(chain.statistics.rtcpIgnored, 2, "the NACK and the PLI for another SSRC")
        XCTAssertTrue(chain.receiveRTCP([0x80, 0xC9, 0xFF], nowMicros: 500_000, arrival: Session.anyArrival) == SenderOutcome())
        XCTAssertEqual(chain.statistics.rtcpIgnored, 3, "and the garbage")
        XCTAssertTrue(chain.receiveRTCP(try Session.compound([.goodbye(.init(ssrcs: [7]))]), nowMicros: 0, arrival: Session.anyArrival).goodbye)
        let report = chain.report
        XCTAssertEqual(report.reports.receiverReports, 1)
        XCTAssertEqual(report.keyframes.plisReceived, 1)
        XCTAssertEqual(report.remb.estimatedBitrate, 800_000)
        XCTAssertEqual(report.chain.keyframeRequests, 2, "new viewer, PLI")
        XCTAssertEqual(report.historyPackets, 0, "no history without NACK")
    }

    /// The timer: the lobby asks again every second until a keyframe comes; Sender Reports every second once
    /// media was sent (an empty Receiver Report before); the deadline is the earliest of them.
    func testTimerRetriesTheKeyframeAndSendsSenderReports() throws {
        var chain = try RTPSenderChain(configuration: configuration())
        XCTAssertNil(chain.nextDeadlineMicros(nowMicros: 0))
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        XCTAssertEqual(chain.nextDeadlineMicros(nowMicros: 0), 1_000_000, "the SR and the lobby both in 1 s")
        let ntp = NTPTimestamp(seconds: 3_900_000_000, fraction: 0)
        let first = chain.handleTimer(nowMicros: 1_000_000, ntp: ntp)
        XCTAssertEqual(first.keyframeRequest, .stillWaiting)
        XCTAssertEqual(first.rtcp.count, 1, "no media yet: an empty RR + SDES, no SR")
        let firstPackets = try RTCPPacket.parseCompound(try XCTUnwrap(first.rtcp.first))
        guard case .receiverReport(let rr)? = firstPackets.first else { return XCTFail("\(firstPackets)") }
        XCTAssertEqual(rr.reports, [])
        XCTAssertEqual(firstPackets.count, 2)
        _ = try chain.send(keyframe(), nowMicros: 1_500_000)
        XCTAssertEqual(chain.nextDeadlineMicros(nowMicros: 1_500_000), 1_500_000, "the pacer has packets now")
        _ = try drain(&chain, from: 1_500_000)
        XCTAssertEqual(chain.nextDeadlineMicros(nowMicros: 1_600_000), 2_000_000, "the SR; the lobby is open")
        let second = chain.handleTimer(nowMicros: 2_000_000, ntp: ntp)
        XCTAssertNil(second.keyframeRequest)
        XCTAssertEqual(second.rtcp.count, 1)
        guard case .senderReport(let sr)? = try RTCPPacket.parseCompound(second.rtcp[0]).first else { return XCTFail("no SR") }
        XCTAssertEqual(sr.packetCount, 5)
        XCTAssertEqual(sr.octetCount, 5000 + 5 * 4)
        XCTAssertEqual(sr.rtpTimestamp, 1000 &+ 180_000)
        XCTAssertEqual(chain.report.chain.keyframeRequests, 2, "new viewer, still waiting")
    }

    /// A frame the pacer cannot take empties it; the lobby waits for a keyframe again (asked for once), and
    /// interframes are dropped until it comes.
    func testPacerOverflowSendsTheViewerBackToTheLobby() throws {
        var chain = try RTPSenderChain(configuration: configuration(maxQueuedBytes: 20_000))
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        _ = try chain.send(keyframe(15_000), nowMicros: 0)
        let overflow = try chain.send(interframe(9000), nowMicros: 0)
        XCTAssertTrue(overflow.pacerOverflowed)
        XCTAssertEqual(overflow.keyframeRequest, .pacerOverflow)
        XCTAssertEqual(chain.pacer.count, 0)
        XCTAssertEqual(chain.report.lobbyState, "waiting")
        XCTAssertEqual(try chain.send(interframe(), nowMicros: 10), SenderOutcome(), "dropped in the lobby")
        XCTAssertNil(try chain.send(keyframe(), nowMicros: 20).keyframeRequest)
        XCTAssertEqual(chain.pacer.count, 5)
        XCTAssertEqual(chain.report.pacerOverflows, 1)
    }

    /// A receiver that only sends (our direction `inactive`) gets no media and no keyframe request; a frame
    /// that cannot be packetized is a typed error and queues nothing; stop empties the pacer and the timers.
    func testInactiveStreamUnsendableFramesAndStop() throws {
        var inactive = try RTPSenderChain(configuration: configuration())
        XCTAssertNil(inactive.start(nowMicros: 0, sendsMedia: false).keyframeRequest)
        XCTAssertEqual(try inactive.send(keyframe(), nowMicros: 0), SenderOutcome())
        XCTAssertEqual(inactive.report.stream.framesSent, 0)

        var chain = try RTPSenderChain(configuration: configuration())
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        XCTAssertThrowsError(try chain.send(OutgoingVideoFrame(bytes: [], isKeyframe: true, captureMicros: 0), nowMicros: 0)) { error in
            guard case .unsendableFrame? = error as? RTPSessionError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(chain.pacer.count, 0)
        _ = try chain.send(keyframe(60_000), nowMicros: 0)
        chain.stop()
        XCTAssertEqual(chain.pacer.count, 0)
        XCTAssertNil(chain.report.reports.link.roundTripMillis)
        XCTAssertEqual(chain.handleTimer(nowMicros: 5_000_000, ntp: NTPTimestamp(rawValue: 0)).rtcp, [])
        XCTAssertEqual(try chain.send(interframe(), nowMicros: 0), SenderOutcome(), "stopped")
        XCTAssertThrowsError(try RTPSenderChain(configuration: {
            var bad = configuration()
            bad.senderReportIntervalMicros = 0
            return bad
        }()))
    }

    /// Two chains of the same configuration fed the same events give the same bytes.
    func testSameEventsGiveSameBytes() throws {
        func run() throws -> [[UInt8]] {
            var chain = try RTPSenderChain(configuration: configuration())
            var out: [[UInt8]] = []
            _ = chain.start(nowMicros: 0, sendsMedia: true)
            for index in 0..<10 {
                let now = UInt64(index) * 33_333
                _ = try chain.send(index == 0 ? keyframe(20_000, at: now) : interframe(1500 + index, at: now), nowMicros: now)
                out += chain.release(nowMicros: now + 5_000).map(\.bytes)
            }
            _ = chain.receiveRTCP(try Session.compound([Session.nack([501, 502])]), nowMicros: 400_000, arrival: Session.anyArrival)
            out += chain.release(nowMicros: 400_000).map(\.bytes)
            out += chain.handleTimer(nowMicros: 1_000_000, ntp: NTPTimestamp(seconds: 1, fraction: 2)).rtcp
            return out
        }
        let first = try run()
        XCTAssertEqual(first.count, 17 + 9 * 2 + 2 + 1)
        XCTAssertEqual(first, try run())
    }
}

/// The chain's configuration and its lobby over a long wait, on the injected clock.
final class RTPSenderChainTimingTests: XCTestCase {
    func testDefaults() {
        let configuration = RTPSenderChain.Configuration(ssrc: 1, payloadType: 96, cname: "c")
        XCTAssertEqual(configuration.maxPacketSize, 1200)
        XCTAssertEqual(configuration.senderReportIntervalMicros, 1_000_000)
        XCTAssertEqual(configuration.keyframeRetryMicros, 1_000_000)
        XCTAssertEqual(configuration.pacingFactor, 2.5)
        XCTAssertEqual(configuration.feedback, .all)
        XCTAssertEqual(configuration.duplicateRetransmissionsAboveLoss, 0.02)
        XCTAssertEqual(configuration.historyMinimumMilliseconds, 1000)
        XCTAssertEqual(configuration.historyPackets, 2048)
        XCTAssertEqual(configuration.historyBytes, 2 << 20)
        XCTAssertEqual(configuration.pacer, PacerQueue.Configuration())
        XCTAssertNil(configuration.rtx)
    }

    /// A viewer whose keyframe never comes is asked for one every retry interval (here 400 ms), and no more
    /// often however often the timer runs; the first keyframe ends the asking.
    func testTheLobbyAsksAgainAtItsInterval() throws {
        var chain = try RTPSenderChain(configuration: .init(ssrc: 1, payloadType: 96, cname: "c", keyframeRetryMicros: 400_000))
        var asked: [UInt64] = []
        if chain.start(nowMicros: 0, sendsMedia: true).keyframeRequest != nil { asked.append(0) }
        for now in stride(from: UInt64(50_000), through: 2_000_000, by: 50_000) {
            if chain.handleTimer(nowMicros: now, ntp: NTPTimestamp(rawValue: 0)).keyframeRequest != nil { asked.append(now) }
            if now == 1_250_000 { _ = try chain.send(OutgoingVideoFrame(bytes: [0x51, 1], isKeyframe: false, captureMicros: now), nowMicros: now) }
        }
        XCTAssertEqual(asked, [0, 400_000, 800_000, 1_200_000, 1_600_000, 2_000_000], "an interframe does not help")
        XCTAssertEqual(chain.report.chain.keyframeRequests, 6)
        _ = try chain.send(OutgoingVideoFrame(bytes: [0x50, 1], isKeyframe: true, captureMicros: 2_010_000), nowMicros: 2_010_000)
        for now in stride(from: UInt64(2_050_000), through: 4_000_000, by: 50_000) {
            XCTAssertNil(chain.handleTimer(nowMicros: now, ntp: NTPTimestamp(rawValue: 0)).keyframeRequest, "\(now)")
        }
        XCTAssertEqual(chain.report.lobbyWaitMicros, 2_010_000)
        XCTAssertEqual(chain.report.lobbyDropped, 1)
    }
}
