import RTP
import RTPSession
import XCTest

/// ``RTPSenderState``: one peer's RTP stream and its RTCP handling, in memory with injected times.
final class PeerConnectionSenderTests: XCTestCase {
    static let ssrc: UInt32 = 0x1111_1111
    static let rtxSSRC: UInt32 = 0x2222_2222

    /// Duplicate retransmissions are off unless asked for (`duplicates`: the loss threshold).
    func sender(rtx: Bool = true, feedback: RTPSenderState.Configuration.Feedback = .all, duplicates: Double? = nil) throws -> RTPSenderState {
        try RTPSenderState(configuration: .init(
            ssrc: Self.ssrc, payloadType: 96, rtx: rtx ? .init(ssrc: Self.rtxSSRC, payloadType: 97) : nil, cname: "cname-1",
            timestampOffset: 0xFFFF_FF00, initialSequenceNumber: 65_530, initialPictureID: 0x7FFE, initialRTXSequenceNumber: 100,
            feedback: feedback, duplicateRetransmissionsAboveLoss: duplicates))
    }

    func frame(_ size: Int, seed: UInt8 = 0) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) } }

    /// Packets ≤ 1200 bytes, the marker on each frame's last, sequence numbers continuous across frames and
    /// the 16-bit wrap, timestamps from capture time (offset + µs × 90 / 1000, wrapping), and the frames
    /// come back whole through the depayloader.
    func testPacketizationIsContinuousAndTimestampedFromCaptureTime() throws {
        var state = try sender()
        var depayloader = VP8Depayloader()
        var expectedSequence: UInt16 = 65_530
        let frames = [frame(30_000, seed: 1), frame(900, seed: 2), frame(2400, seed: 3)]
        let captures: [UInt64] = [1_000_000, 1_033_333, 1_066_667]
        var received: [VP8Depayloader.Frame] = []
        for (index, bytes) in frames.enumerated() {
            let packets = try state.packetize(frame: bytes, isKeyframe: index == 0, captureMicros: captures[index], nowMicros: 5_000_000)
            for (position, raw) in packets.enumerated() {
                XCTAssertLessThanOrEqual(raw.count, 1200)
                let packet = try RTPPacket(parsing: raw)
                XCTAssertEqual(packet.sequenceNumber, expectedSequence)
                expectedSequence &+= 1
                XCTAssertEqual(packet.ssrc, Self.ssrc)
                XCTAssertEqual(packet.payloadType, 96)
                XCTAssertEqual(packet.marker, position == packets.count - 1)
                XCTAssertEqual(packet.timestamp, 0xFFFF_FF00 &+ UInt32(captures[index] * 9 / 100))
                received += try depayloader.insert(packet, arrivalMilliseconds: 5000)
            }
        }
        XCTAssertEqual(received.map(\.data), frames)
        XCTAssertEqual(received.map(\.pictureID), [0x7FFE, 0x7FFF, 0])
        XCTAssertEqual(state.statistics.framesSent, 3)
        XCTAssertEqual(state.statistics.keyframesSent, 1)
        XCTAssertEqual(state.statistics.packetsSent, 26 + 1 + 3)
        XCTAssertEqual(state.nextSequenceNumber, expectedSequence)
    }

    /// The same configuration and inputs give the same bytes (everything random is injected).
    func testSameInputsGiveSameBytes() throws {
        var a = try sender(), b = try sender()
        for index in 0..<5 {
            let bytes = frame(1500 * (index + 1), seed: UInt8(index))
            let capture = UInt64(index) * 33_333
            XCTAssertEqual(try a.packetize(frame: bytes, isKeyframe: index == 0, captureMicros: capture, nowMicros: capture),
                           try b.packetize(frame: bytes, isKeyframe: index == 0, captureMicros: capture, nowMicros: capture))
        }
        let ntp = NTPTimestamp(unixMicroseconds: 1_700_000_000_000_000)
        XCTAssertEqual(try a.senderReport(nowMicros: 200_000, ntp: ntp), try b.senderReport(nowMicros: 200_000, ntp: ntp))
    }

    /// The Sender Report maps "now" to the stream's RTP clock and counts packets and payload bytes; SDES
    /// carries the CNAME.
    func testSenderReportMapsNowAndCounts() throws {
        var state = try sender()
        let packets = try state.packetize(frame: frame(5000), isKeyframe: true, captureMicros: 2_000_000, nowMicros: 2_010_000)
        let ntp = NTPTimestamp(seconds: 3_900_000_000, fraction: 0x8000_0000)
        let compound = try state.senderReport(nowMicros: 2_500_000, ntp: ntp)
        let parsed = try RTCPPacket.parseCompound(compound)
        XCTAssertEqual(parsed.count, 2)
        guard case .senderReport(let report) = parsed[0], case .sourceDescription(let sdes) = parsed[1] else {
            return XCTFail("\(parsed)")
        }
        XCTAssertEqual(report.ssrc, Self.ssrc)
        XCTAssertEqual(report.ntpTimestamp, ntp)
        XCTAssertEqual(report.rtpTimestamp, 0xFFFF_FF00 &+ UInt32(2_500_000 * 9 / 100))
        XCTAssertEqual(Int(report.packetCount), packets.count)
        XCTAssertEqual(Int(report.octetCount), packets.reduce(0) { $0 + $1.count - 12 })
        XCTAssertEqual(sdes.cname(of: Self.ssrc), "cname-1")
        XCTAssertEqual(state.statistics.senderReportsSent, 1)
    }

    /// A Receiver Report answering our SR gives the RTT (A − LSR − DLSR), the loss and the jitter; blocks
    /// about other sources are ignored.
    func testReceiverReportGivesRoundTripTimeAndLoss() throws {
        var state = try sender()
        let sentAt = NTPTimestamp(seconds: 3_900_000_000, fraction: 0)
        let delay: UInt32 = 65536 / 10  // DLSR 100 ms
        let arrival = NTPTimestamp(rawValue: sentAt.rawValue + (UInt64(0x1_0000_0000) * 125 / 1000))  // 125 ms later
        let block = RTCPReportBlock(
            ssrc: Self.ssrc, fractionLost: 64, cumulativeLost: 12, extendedHighestSequenceNumber: 1000, jitter: 900,
            lastSenderReport: sentAt.compact, delaySinceLastSenderReport: delay)
        let other = RTCPReportBlock(
            ssrc: 99, fractionLost: 255, cumulativeLost: 1000, extendedHighestSequenceNumber: 1, jitter: 1, lastSenderReport: 1,
            delaySinceLastSenderReport: 1)
        let rr = try RTCPPacket.serializeCompound([.receiverReport(RTCPReceiverReport(ssrc: 7, reports: [other, block]))])
        let outcome = state.handleRTCP(rr, nowMicros: 0, arrival: arrival)
        XCTAssertEqual(outcome, RTPSenderState.FeedbackOutcome())
        XCTAssertEqual(state.statistics.receiverReports, 1)
        XCTAssertEqual(try XCTUnwrap(state.statistics.roundTripMillis), 25, accuracy: 0.1)
        XCTAssertEqual(state.statistics.fractionLost, 0.25)
        XCTAssertEqual(state.statistics.cumulativeLost, 12)
        XCTAssertEqual(try XCTUnwrap(state.statistics.jitterMillis), 10, accuracy: 0.001)
    }

    /// NACK with RTX negotiated: each lost packet comes back once per RTT on the RTX stream (its own SSRC,
    /// payload type and sequence numbers, the original sequence number first in the payload, RFC 4588);
    /// packets no longer held are skipped.
    func testNACKIsAnsweredWithRTXOncePerRoundTrip() throws {
        var state = try sender()
        var sent: [[UInt8]] = []
        for index in 0..<3 {
            sent += try state.packetize(frame: frame(3000, seed: UInt8(index)), isKeyframe: index == 0, captureMicros: UInt64(index) * 33_000, nowMicros: 1_000_000)
        }
        let lost = [try RTPPacket(parsing: sent[2]).sequenceNumber, try RTPPacket(parsing: sent[4]).sequenceNumber]
        let nack = try RTCPPacket.serializeCompound([.nack(RTCPGenericNACK(senderSSRC: 7, mediaSSRC: Self.ssrc, sequenceNumbers: lost + [12345]))])
        let first = state.handleRTCP(nack, nowMicros: 1_050_000, arrival: NTPTimestamp(rawValue: 0))
        XCTAssertEqual(first.retransmissions.count, 2)
        for (index, raw) in first.retransmissions.enumerated() {
            let rtx = try RTPPacket(parsing: raw)
            XCTAssertEqual(rtx.ssrc, Self.rtxSSRC)
            XCTAssertEqual(rtx.payloadType, 97)
            XCTAssertEqual(rtx.sequenceNumber, 100 + UInt16(index))
            let original = try RTXPacketizer.unwrap(rtx, originalSSRC: Self.ssrc, originalPayloadType: 96)
            XCTAssertEqual(try original.serialized(), sent[index == 0 ? 2 : 4])
        }
        // Again within the (default 20 ms) interval: nothing; after it: resent.
        XCTAssertTrue(state.handleRTCP(nack, nowMicros: 1_060_000, arrival: NTPTimestamp(rawValue: 0)).retransmissions.isEmpty)
        XCTAssertEqual(state.handleRTCP(nack, nowMicros: 1_100_000, arrival: NTPTimestamp(rawValue: 0)).retransmissions.count, 2)
        XCTAssertEqual(state.statistics.nacksReceived, 3)
        XCTAssertEqual(state.statistics.packetsNacked, 9)
        XCTAssertEqual(state.statistics.packetsRetransmitted, 4)
        XCTAssertEqual(state.statistics.retransmissionsSkipped, 5)
    }

    /// Once the receiver reports ≥ 2 % loss, each retransmission goes out twice (two RTX packets of the same
    /// original, with their own RTX sequence numbers).
    func testLossyLinkGetsDuplicateRetransmissions() throws {
        var state = try sender(duplicates: 0.02)
        // NACKs alone raise the estimate: one of about 50 packets is 2 %.
        var quiet = try sender(duplicates: 0.02)
        var sent: [[UInt8]] = []
        for index in 0..<100 { sent += try quiet.packetize(frame: frame(500), isKeyframe: index == 0, captureMicros: UInt64(index), nowMicros: 0) }
        let one = try RTCPPacket.serializeCompound([
            .nack(RTCPGenericNACK(senderSSRC: 7, mediaSSRC: Self.ssrc, sequenceNumbers: [try RTPPacket(parsing: sent[99]).sequenceNumber])),
        ])
        XCTAssertEqual(quiet.handleRTCP(one, nowMicros: 0, arrival: NTPTimestamp(rawValue: 0)).retransmissions.count, 2)
        XCTAssertEqual(quiet.statistics.lossEstimate, 0.02, accuracy: 0.0001)
        for index in 0..<50 { _ = try quiet.packetize(frame: frame(500), isKeyframe: false, captureMicros: UInt64(index), nowMicros: 0) }
        XCTAssertLessThan(quiet.statistics.lossEstimate, 0.01, "it decays as packets go through unNACKed")

        let packets = try state.packetize(frame: frame(2500), isKeyframe: true, captureMicros: 0, nowMicros: 0)
        let lossy = RTCPReportBlock(
            ssrc: Self.ssrc, fractionLost: 13, cumulativeLost: 3, extendedHighestSequenceNumber: 0, jitter: 0, lastSenderReport: 0,
            delaySinceLastSenderReport: 0)
        _ = state.handleRTCP(
            try RTCPPacket.serializeCompound([.receiverReport(.init(ssrc: 7, reports: [lossy]))]), nowMicros: 0, arrival: NTPTimestamp(rawValue: 0))
        let sequence = try RTPPacket(parsing: packets[0]).sequenceNumber
        let nack = try RTCPPacket.serializeCompound([.nack(RTCPGenericNACK(senderSSRC: 7, mediaSSRC: Self.ssrc, sequenceNumbers: [sequence]))])
        let outcome = state.handleRTCP(nack, nowMicros: 50_000, arrival: NTPTimestamp(rawValue: 0))
        XCTAssertEqual(outcome.retransmissions.count, 2)
        let copies = try outcome.retransmissions.map { try RTPPacket(parsing: $0) }
        XCTAssertEqual(copies.map(\.sequenceNumber), [100, 101])
        XCTAssertEqual(copies.map { $0.payload.prefix(2) }, [copies[0].payload.prefix(2), copies[0].payload.prefix(2)])
        XCTAssertEqual(state.statistics.packetsRetransmitted, 1)
        XCTAssertEqual(state.statistics.duplicateRetransmissions, 1)
    }

    /// The NACK history is kept by time (max(1 s, 3 × RTT), as libwebrtc does): 4.7 Mbit/s at 30 fps for
    /// 5 s leaves the last second (31 frames, about 0.6 MB) held, not the whole stream.
    func testHistoryHoldsAboutOneSecond() throws {
        var state = try sender(rtx: false)
        let frameBytes = 4_700_000 / 8 / 30
        var perFrame = 0
        for index in 0..<150 {
            let now = UInt64(index) * 33_333
            let packets = try state.packetize(frame: frame(frameBytes, seed: UInt8(index & 0xFF)), isKeyframe: index == 0, captureMicros: now, nowMicros: now)
            perFrame = packets.count
        }
        // Sent at 0, 33, 66 … 4966 ms: those at 3966 ms (frame 119) and later are within a second of the last.
        XCTAssertEqual(perFrame, 17)
        XCTAssertEqual(state.historyPacketCount, 31 * perFrame)
        XCTAssertEqual(state.historyByteCount, 31 * (frameBytes + perFrame * 16))  // 12-byte header + 4-byte VP8 descriptor
        XCTAssertLessThan(state.historyByteCount, 700_000)
    }

    /// A packet 1.25 s old is gone with no RTT known (1 s window) and is resent once a Receiver Report
    /// gives an RTT of 500 ms (a 1.5 s window).
    func testRoundTripTimeFromReceiverReportsExtendsTheHistory() throws {
        func run(roundTrip: Bool) throws -> (RTPSenderState, RTPSenderState.FeedbackOutcome, [UInt8]) {
            var state = try sender(rtx: false)
            let first = try state.packetize(frame: frame(2500), isKeyframe: true, captureMicros: 0, nowMicros: 0)
            if roundTrip {
                let sentAt = NTPTimestamp(seconds: 3_900_000_000, fraction: 0)
                let block = RTCPReportBlock(
                    ssrc: Self.ssrc, fractionLost: 0, cumulativeLost: 0, extendedHighestSequenceNumber: 0, jitter: 0,
                    lastSenderReport: sentAt.compact, delaySinceLastSenderReport: 65536 / 10)  // DLSR 100 ms
                let arrival = NTPTimestamp(rawValue: sentAt.rawValue + (UInt64(0x1_0000_0000) * 600 / 1000))  // 600 ms later
                let rr = try RTCPPacket.serializeCompound([.receiverReport(RTCPReceiverReport(ssrc: 7, reports: [block]))])
                _ = state.handleRTCP(rr, nowMicros: 100_000, arrival: arrival)
                XCTAssertEqual(try XCTUnwrap(state.statistics.roundTripMillis), 500, accuracy: 0.1)
            }
            for index in 1...12 {
                let now = UInt64(index) * 100_000
                _ = try state.packetize(frame: frame(500), isKeyframe: false, captureMicros: now, nowMicros: now)
            }
            let sequence = try RTPPacket(parsing: first[0]).sequenceNumber
            let nack = try RTCPPacket.serializeCompound([.nack(RTCPGenericNACK(senderSSRC: 7, mediaSSRC: Self.ssrc, sequenceNumbers: [sequence]))])
            let outcome = state.handleRTCP(nack, nowMicros: 1_250_000, arrival: NTPTimestamp(rawValue: 0))
            return (state, outcome, first[0])
        }
        let (plain, lost, _) = try run(roundTrip: false)
        XCTAssertEqual(lost.retransmissions, [])
        XCTAssertEqual(plain.statistics.retransmissionsSkipped, 1)
        XCTAssertEqual(plain.historyPacketCount, 10, "the 500-byte frames sent at 300 … 1200 ms")
        let (extended, resent, original) = try run(roundTrip: true)
        XCTAssertEqual(resent.retransmissions, [original])
        XCTAssertEqual(extended.statistics.packetsRetransmitted, 1)
    }

    /// Without RTX, the original packet is resent byte for byte (SRTP allows the repeat for that).
    func testNACKWithoutRTXResendsTheOriginal() throws {
        var state = try sender(rtx: false)
        let packets = try state.packetize(frame: frame(2500), isKeyframe: true, captureMicros: 0, nowMicros: 0)
        let sequence = try RTPPacket(parsing: packets[1]).sequenceNumber
        let nack = try RTCPPacket.serializeCompound([.nack(RTCPGenericNACK(senderSSRC: 7, mediaSSRC: Self.ssrc, sequenceNumbers: [sequence]))])
        XCTAssertEqual(state.handleRTCP(nack, nowMicros: 10_000, arrival: NTPTimestamp(rawValue: 0)).retransmissions, [packets[1]])
    }

    /// PLI and new FIRs ask for a keyframe; a repeated FIR (same sequence number) does not ask again;
    /// feedback about another SSRC, or not negotiated, is ignored; REMB gives the estimate; BYE says goodbye.
    func testPictureLossFIRREMBAndBYE() throws {
        var state = try sender(feedback: .init(nack: false, pictureLossIndication: true, fullIntraRequest: true, estimatedBitrate: true))
        _ = try state.packetize(frame: frame(100), isKeyframe: true, captureMicros: 0, nowMicros: 0)
        func feed(_ packets: [RTCPPacket]) throws -> RTPSenderState.FeedbackOutcome {
            state.handleRTCP(try RTCPPacket.serializeCompound(packets), nowMicros: 0, arrival: NTPTimestamp(rawValue: 0))
        }
        XCTAssertTrue(try feed([.pictureLossIndication(.init(senderSSRC: 7, mediaSSRC: Self.ssrc))]).keyframeRequested)
        XCTAssertFalse(try feed([.pictureLossIndication(.init(senderSSRC: 7, mediaSSRC: 42))]).keyframeRequested)
        let fir = RTCPPacket.fullIntraRequest(.init(senderSSRC: 7, entries: [.init(ssrc: Self.ssrc, sequenceNumber: 5)]))
        XCTAssertTrue(try feed([fir]).keyframeRequested)
        XCTAssertFalse(try feed([fir]).keyframeRequested, "a repeated FIR (RFC 5104 §4.3.1.2)")
        XCTAssertTrue(try feed([.fullIntraRequest(.init(senderSSRC: 7, entries: [.init(ssrc: Self.ssrc, sequenceNumber: 6)]))]).keyframeRequested)
        XCTAssertTrue(try feed([.nack(.init(senderSSRC: 7, mediaSSRC: Self.ssrc, sequenceNumbers: [0]))]).retransmissions.isEmpty,
                      "NACK was not negotiated")
        XCTAssertEqual(try feed([.estimatedBitrate(.init(senderSSRC: 7, bitrate: 1_500_000, ssrcs: [Self.ssrc]))]).estimatedBitrate, 1_500_000)
        XCTAssertNil(try feed([.estimatedBitrate(.init(senderSSRC: 7, bitrate: 1_500_000, ssrcs: [42]))]).estimatedBitrate)
        XCTAssertTrue(try feed([.goodbye(.init(ssrcs: [7]))]).goodbye)
        XCTAssertFalse(state.handleRTCP([0x80, 0xC9, 0xFF], nowMicros: 0, arrival: NTPTimestamp(rawValue: 0)).goodbye, "garbage is ignored")
        XCTAssertEqual(state.statistics.plisReceived, 1)
        XCTAssertEqual(state.statistics.firsReceived, 3)
        XCTAssertEqual(state.statistics.rembsReceived, 1)
        XCTAssertEqual(state.statistics.estimatedBitrate, 1_500_000)
        XCTAssertEqual(state.statistics.rtcpIgnored, 4, "PLI and REMB for another SSRC, the NACK, the garbage")
    }
}
