import CongestionControl
import RTP
import RTPSession
import XCTest

/// ``TransportWideCongestionControl`` alone and in the chain: numbers on every packet that leaves (one
/// counter for media and RTX), feedback from a real ``RTP/TransportFeedbackGenerator`` driving the target and
/// the pacer, REMB and an SFU cap as ceilings, RTT from Receiver Reports, the tick, and thinning.
final class TransportWideCongestionControlTests: XCTestCase {
    static let id: UInt8 = 3

    func chain(twcc: Bool = true, first: UInt16 = 65_535) throws -> RTPSenderChain {
        try RTPSenderChain(configuration: .init(
            ssrc: Session.ssrc, payloadType: 96, rtx: RTXStream(ssrc: Session.rtxSSRC, payloadType: 97), cname: "c",
            initialSequenceNumber: 10, duplicateRetransmissionsAboveLoss: nil,
            transportWideCC: twcc ? .init(extensionID: Self.id, initialSequenceNumber: first) : nil))
    }

    func frame(_ size: Int, keyframe: Bool, at micros: UInt64) -> OutgoingVideoFrame {
        OutgoingVideoFrame(bytes: Session.frame(size), isKeyframe: keyframe, captureMicros: micros)
    }

    func number(_ bytes: [UInt8]) throws -> UInt16? {
        try TransportWideSequenceNumber.read(from: RTPPacket(parsing: bytes), id: Self.id)
    }

    func testConfigurationRefusals() {
        for (configuration, text) in [
            (TransportWideCongestionControl.Configuration(extensionID: 0), "transport-wide-cc extension ID 0 is not within 1…14"),
            (.init(extensionID: 15), "transport-wide-cc extension ID 15 is not within 1…14"),
            (.init(extensionID: 1, tickIntervalMicros: 0), "congestion tick interval is 0"),
        ] {
            XCTAssertThrowsError(try TransportWideCongestionControl(configuration: configuration)) { error in
                XCTAssertEqual(error as? RTPSessionError, .invalidConfiguration(text))
            }
        }
        let bad = TransportWideCongestionControl.Configuration(extensionID: 1, controller: .init(minBitsPerSecond: 0))
        XCTAssertThrowsError(try TransportWideCongestionControl(configuration: bad)) { error in
            guard case .invalidConfiguration(let text)? = error as? RTPSessionError else { return XCTFail("\(error)") }
            XCTAssertTrue(text.hasPrefix("congestion control: "), text)
        }
        XCTAssertNoThrow(try TransportWideCongestionControl(configuration: .init(extensionID: 14)))
    }

    /// Media and RTX share one counter, in sending order, wrapping at 2¹⁶; the history keeps the packets
    /// unnumbered (a retransmission gets a new number, not the old one).
    func testEveryPacketOnOneCounterMediaAndRTX() throws {
        var chain = try chain()
        let start = chain.start(nowMicros: 0, sendsMedia: true)
        XCTAssertEqual(start.targetBitrate, 300_000, "the controller's start rate")
        XCTAssertEqual(chain.pacer.configuration.rateBitsPerSecond, 750_000, "paced at 2.5 x the target")
        _ = try chain.send(frame(3000, keyframe: true, at: 0), nowMicros: 1_000)
        // The start probe (900 kbit/s) paces them: one 1 kB packet per 9 ms.
        var out = [1_000, 10_000, 19_000].flatMap { chain.release(nowMicros: $0) }
        XCTAssertEqual(out.count, 3)
        _ = chain.receiveRTCP(try Session.compound([Session.nack([11])]), nowMicros: 20_000, arrival: Session.anyArrival)
        out += chain.release(nowMicros: 28_000)
        XCTAssertEqual(out.map(\.kind), [.media, .media, .media, .retransmission])
        XCTAssertEqual(try out.map { try number($0.bytes) }, [65_535, 0, 1, 2])
        let rtx = try RTPPacket(parsing: out[3].bytes)
        XCTAssertEqual(rtx.ssrc, Session.rtxSSRC)
        XCTAssertEqual(chain.report.congestionCounters?.packetsNumbered, 4)
        XCTAssertEqual(chain.report.congestion?.bytesInFlight, out.reduce(0) { $0 + $1.bytes.count })
    }

    /// An extension already on the packet keeps its elements; one that does not parse is left alone and counted.
    func testOtherExtensionsAreKept() throws {
        var feature = try TransportWideCongestionControl(configuration: .init(extensionID: Self.id, initialSequenceNumber: 7))
        var packet = Session.packet(sequence: 1, size: 100)
        packet.headerExtension = try RTPHeaderExtension(elements: [RTPHeaderExtensionElement(id: 2, data: [9][...])])
        feature.willSend(&packet, kind: .media, nowMicros: 0)
        let elements = try XCTUnwrap(packet.headerExtension).elements()
        XCTAssertEqual(elements.map(\.id), [2, Self.id])
        XCTAssertEqual(try TransportWideSequenceNumber.read(from: packet, id: Self.id), 7)

        var broken = Session.packet(sequence: 2, size: 100)
        broken.headerExtension = RTPHeaderExtension(profile: RTPHeaderExtension.oneByteProfile, data: [0x1F, 0, 0, 0][...])
        let before = broken
        feature.willSend(&broken, kind: .media, nowMicros: 0)
        XCTAssertEqual(broken, before)
        XCTAssertEqual(feature.statistics.unnumberedPackets, 1)
        XCTAssertEqual(feature.statistics.packetsNumbered, 1)
    }

    /// Frames at 30 fps through a link that delivers everything 10 ms later (clean feedback every 100 ms):
    /// the target rises from 300 kbit/s and the pacer follows at 2.5 x. Then every packet queues behind the
    /// last at 200 kbit/s (a bottleneck's growing delay): over-use brings the target down.
    func testFeedbackDrivesTheTargetAndThePacer() throws {
        var chain = try chain(first: 1)
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        var receiver = TransportFeedbackGenerator(configuration: .init(senderSSRC: 7, mediaSSRC: Session.ssrc))
        var targets: [UInt64] = []
        var linkFree: UInt64 = 0
        func run(from: UInt64, to: UInt64, bottleneck: Double?) throws {
            var now = from
            var keyframe = from == 0
            while now < to {
                let size = max(500, Int((targets.last ?? 300_000) / 8 / 30))
                let outcome = try chain.send(frame(keyframe ? 6_000 : size, keyframe: keyframe, at: now), nowMicros: now)
                keyframe = outcome.keyframeRequest != nil
                for step in stride(from: now, to: now + 33_000, by: 1_000) {
                    for packet in chain.release(nowMicros: step) {
                        var arrival = step + 10_000
                        if let rate = bottleneck {
                            linkFree = max(linkFree, step) + UInt64(Double(packet.bytes.count) * 8_000_000 / rate)
                            arrival = linkFree + 10_000
                        }
                        receiver.record(sequenceNumber: try XCTUnwrap(number(packet.bytes)), arrivalMicros: Int64(arrival))
                    }
                    _ = chain.handleTimer(nowMicros: step, ntp: Session.anyArrival)
                    let feedback = receiver.feedback(nowMicros: Int64(step))
                    guard !feedback.isEmpty else { continue }
                    var compound: [UInt8] = []
                    for packet in feedback { try packet.serialize(into: &compound) }
                    if let target = chain.receiveRTCP(compound, nowMicros: step + 10_000, arrival: Session.anyArrival).targetBitrate {
                        targets.append(target)
                    }
                }
                now += 33_000
            }
        }
        try run(from: 0, to: 5_000_000, bottleneck: nil)
        let risen = try XCTUnwrap(targets.last)
        XCTAssertGreaterThan(risen, 380_000, "clean feedback raises the target: \(targets)")
        XCTAssertEqual(chain.pacer.configuration.rateBitsPerSecond, Int(2.5 * Double(risen)))
        XCTAssertGreaterThan(try XCTUnwrap(chain.report.congestion?.feedbackPackets), 40)
        try run(from: 5_000_000, to: 10_000_000, bottleneck: 200_000)
        let stats = try XCTUnwrap(chain.report.congestion)
        XCTAssertLessThan(stats.targetBitsPerSecond, Int(risen) * 3 / 4, "over-use lowers it: \(targets)")
        XCTAssertLessThan(stats.targetBitsPerSecond, 300_000)
    }

    /// REMB and an SFU's cap are ceilings (the lower applies); removing the cap leaves REMB's.
    func testREMBAndTheCapAreCeilings() throws {
        var chain = try chain()
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        let remb = RTCPPacket.estimatedBitrate(RTCPRemb(senderSSRC: 7, bitrate: 200_000, ssrcs: [Session.ssrc]))
        XCTAssertEqual(chain.receiveRTCP(try Session.compound([remb]), nowMicros: 1_000, arrival: Session.anyArrival).targetBitrate, 200_000)
        XCTAssertEqual(chain.report.congestion?.ceilingBitsPerSecond, 200_000)
        XCTAssertEqual(chain.setCap(bitsPerSecond: 150_000, nowMicros: 2_000), 150_000)
        XCTAssertEqual(chain.pacer.configuration.rateBitsPerSecond, 375_000)
        XCTAssertNil(chain.setCap(bitsPerSecond: 250_000, nowMicros: 2_500), "REMB's 200 kbit/s stays the lower ceiling")
        // Lifting a ceiling does not jump the target back: the estimators were capped and grow again from there.
        XCTAssertNil(chain.setCap(bitsPerSecond: nil, nowMicros: 3_000))
        XCTAssertEqual(chain.report.congestion?.ceilingBitsPerSecond, 200_000, "REMB's ceiling again")
        let high = RTCPPacket.estimatedBitrate(RTCPRemb(senderSSRC: 7, bitrate: 5_000_000, ssrcs: [Session.ssrc]))
        _ = chain.receiveRTCP(try Session.compound([high]), nowMicros: 4_000, arrival: Session.anyArrival)
        XCTAssertEqual(chain.report.congestion?.ceilingBitsPerSecond, 5_000_000)
        XCTAssertEqual(chain.report.congestion?.targetBitsPerSecond, 150_000)
        var plain = try self.chain(twcc: false)
        XCTAssertNil(plain.setCap(bitsPerSecond: 100_000, nowMicros: 0), "no controller, no cap")
    }

    /// The RTT measured from a Receiver Report answering our SR reaches the controller; the tick runs every 50 ms.
    func testRoundTripAndTick() throws {
        var chain = try chain()
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        XCTAssertEqual(chain.nextDeadlineMicros(nowMicros: 0), 50_000, "the controller's tick is the first deadline")
        XCTAssertEqual(chain.congestion?.nextDeadlineMicros, 50_000)
        _ = chain.handleTimer(nowMicros: 49_999, ntp: Session.anyArrival)
        XCTAssertEqual(chain.congestion?.nextDeadlineMicros, 50_000)
        _ = chain.handleTimer(nowMicros: 60_000, ntp: Session.anyArrival)
        XCTAssertEqual(chain.congestion?.nextDeadlineMicros, 110_000)
        let (report, arrival) = Session.roundTrip(rttMillis: 40)
        _ = chain.receiveRTCP(try Session.compound([report]), nowMicros: 70_000, arrival: arrival)
        XCTAssertEqual(try XCTUnwrap(chain.report.congestion?.roundTripMillis), 40, accuracy: 0.1)
    }

    /// With congestion control, a delta frame that finds more than 1 s of the target (300 kbit/s: 37.5 kB)
    /// waiting besides keyframe packets, and besides what arrives while they leave, is dropped and the lobby
    /// waits for a keyframe (asked for once); keyframes are always queued. The 40 kB keyframe (40.5 kB with
    /// headers) is paced at the target, 1.08 s, so the deltas may hold 2.08 s of it (78 kB) before one is
    /// thinned: 8 of 9.1 kB (73 kB) are not, the 10th frame finds 9 (82 kB). Without it, nothing is thinned.
    func testThinningToTheEstimate() throws {
        for twcc in [true, false] {
            var chain = try chain(twcc: twcc)
            _ = chain.start(nowMicros: 0, sendsMedia: true)
            _ = try chain.send(frame(40_000, keyframe: true, at: 0), nowMicros: 0)
            XCTAssertEqual(chain.pacer.queuedKeyframeBytes, chain.pacer.queuedBytes)
            var outcomes: [SenderOutcome] = []
            for index in 1...9 {  // 9 x 9 kB of deltas behind the 40 kB keyframe: the 9th finds 73 kB
                let at = UInt64(index) * 33_000
                outcomes.append(try chain.send(frame(9_000, keyframe: false, at: at), nowMicros: at))
            }
            let after = try chain.send(frame(1_000, keyframe: false, at: 330_000), nowMicros: 330_000)
            _ = try chain.send(frame(20_000, keyframe: true, at: 363_000), nowMicros: 363_000)
            let report = chain.report
            if twcc {
                XCTAssertEqual(outcomes.map(\.keyframeRequest), Array(repeating: nil, count: 9),
                               "the keyframe's 40 kB, and the deltas made while it leaves at the target, do not count")
                XCTAssertEqual(after.keyframeRequest, .thinned, "82 kB of deltas waiting: thinned")
                XCTAssertEqual(report.chain.framesThinned, 1)
                XCTAssertEqual(report.stream.framesSent, 12 - 1, "every frame but the thinned one; the second keyframe queued")
                XCTAssertEqual(report.keyframes.plisReceived, 0)
            } else {
                XCTAssertEqual(report.chain.framesThinned, 0)
                XCTAssertEqual(report.stream.framesSent, 12)
            }
            var now: UInt64 = 400_000
            while !chain.pacer.isEmpty, now < 60_000_000 {
                _ = chain.release(nowMicros: now)
                now += 5_000
            }
            XCTAssertEqual(chain.pacer.queuedKeyframeBytes, 0)
            XCTAssertEqual(chain.pacer.queuedBytes, 0)
        }
    }

    /// After thinning, the deltas before the next keyframe are dropped by the lobby, not counted as thinned.
    func testAfterThinningTheLobbyWaits() throws {
        var chain = try chain()
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        _ = try chain.send(frame(1_000, keyframe: true, at: 0), nowMicros: 0)
        for index in 1...6 { _ = try chain.send(frame(9_000, keyframe: false, at: UInt64(index) * 33_000), nowMicros: UInt64(index) * 33_000) }
        XCTAssertEqual(chain.report.chain.framesThinned, 1)
        let dropped = chain.report.lobbyDropped
        let next = try chain.send(frame(1_000, keyframe: false, at: 300_000), nowMicros: 300_000)
        XCTAssertNil(next.keyframeRequest, "the lobby asked already")
        XCTAssertEqual(chain.report.lobbyDropped, dropped + 1)
        XCTAssertEqual(chain.report.chain.framesThinned, 1)
        XCTAssertEqual(chain.report.lobbyState, "waiting")
    }

    /// TWCC feedback without a negotiated controller is not even parsed.
    func testFeedbackWithoutControllerIsIgnored() throws {
        var chain = try chain(twcc: false)
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        var generator = TransportFeedbackGenerator(configuration: .init(senderSSRC: 7, mediaSSRC: Session.ssrc))
        generator.record(sequenceNumber: 1, arrivalMicros: 1_000)
        let compound = try XCTUnwrap(generator.flush(nowMicros: 2_000).first).serialized()
        _ = chain.receiveRTCP(compound, nowMicros: 3_000, arrival: Session.anyArrival)
        XCTAssertEqual(chain.statistics.rtcpIgnored, 0)
        XCTAssertNil(chain.report.congestion)
        // With a controller, a malformed transport-cc packet is counted and the compound's other packets act.
        var twcc = try self.chain()
        _ = twcc.start(nowMicros: 0, sendsMedia: true)
        var damaged = compound
        damaged[15] = 0xFF  // status count 0xFF..: the chunks no longer cover it
        let remb = try Session.compound([.estimatedBitrate(RTCPRemb(senderSSRC: 7, bitrate: 200_000, ssrcs: [Session.ssrc]))])
        let outcome = twcc.receiveRTCP(remb + damaged, nowMicros: 3_000, arrival: Session.anyArrival)
        XCTAssertEqual(twcc.statistics.rtcpIgnored, 1)
        XCTAssertEqual(outcome.estimatedBitrate, 200_000)
        XCTAssertEqual(twcc.report.congestion?.feedbackPackets, 0)
    }
}
