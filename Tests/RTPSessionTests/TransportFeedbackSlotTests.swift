import RTP
import RTPSession
import XCTest

/// The chain's slot for transport-wide congestion control (``RTPSenderChain/transportFeedback``), filled
/// here with a stand-in of the real one: it numbers every packet as it leaves (a one-byte header extension,
/// draft-holmer-rmcat-transport-wide-cc-extensions-01 §2), logs the send times, and answers the peer's
/// Receiver Reports with a target rate — what `CongestionControl` does with transport-cc feedback.
final class TransportFeedbackSlotTests: XCTestCase {
    /// The stand-in: everything it sees, and a target it gives.
    struct NumberingFeature: RTPSenderFeature {
        static let extensionID: UInt8 = 5
        var nextNumber: UInt16 = 65_534
        var sent: [(number: UInt16, micros: UInt64, kind: PacketKind)] = []
        var framesSeen = 0
        var timerRuns = 0
        var target: UInt64 = 400_000
        var deadline: UInt64? = 7_000

        mutating func packetized(_ frame: PacketizedFrame) { framesSeen += 1 }

        mutating func willSend(_ packet: inout RTPPacket, kind: PacketKind, nowMicros: UInt64) {
            let element = RTPHeaderExtensionElement(id: Self.extensionID, data: [UInt8(nextNumber >> 8), UInt8(nextNumber & 0xFF)][...])
            packet.headerExtension = try? RTPHeaderExtension(elements: [element])
            sent.append((nextNumber, nowMicros, kind))
            nextNumber &+= 1
        }

        mutating func receive(_ packet: RTCPPacket, context: inout FeedbackContext) {
            if case .receiverReport = packet { context.outcome.targetBitrate = target }
        }

        var feedback: [RTCPTransportFeedback] = []

        mutating func receive(transportFeedback: RTCPTransportFeedback, context: inout FeedbackContext) {
            feedback.append(transportFeedback)
            context.outcome.targetBitrate = 300_000
        }

        mutating func handleTimer(context: inout TimerContext) {
            timerRuns += 1
            deadline = nil
        }

        var nextDeadlineMicros: UInt64? { deadline }
    }

    func chain() throws -> RTPSenderChain {
        var chain = try RTPSenderChain(configuration: .init(
            ssrc: Session.ssrc, payloadType: 96, rtx: RTXStream(ssrc: Session.rtxSSRC, payloadType: 97), cname: "c",
            initialSequenceNumber: 10, duplicateRetransmissionsAboveLoss: nil))
        chain.transportFeedback = NumberingFeature()
        return chain
    }

    var numbering: (RTPSenderChain) -> NumberingFeature { { $0.transportFeedback as! NumberingFeature } }

    /// Every packet that leaves — media and RTX alike — carries the next transport-wide number (wrapping),
    /// in sending order, and the slot logs when it left.
    func testEveryPacketIsNumberedAsItLeaves() throws {
        var chain = try chain()
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        _ = try chain.send(OutgoingVideoFrame(bytes: Session.frame(3000), isKeyframe: true, captureMicros: 0), nowMicros: 1_000)
        XCTAssertEqual(numbering(chain).framesSeen, 1)
        var out = chain.release(nowMicros: 2_000)
        _ = chain.receiveRTCP(try Session.compound([Session.nack([11])]), nowMicros: 3_000, arrival: Session.anyArrival)
        out += chain.release(nowMicros: 3_000)
        XCTAssertEqual(out.map(\.kind), [.media, .media, .media, .retransmission])
        let parsed = try out.map { try RTPPacket(parsing: $0.bytes) }
        let numbers = try parsed.map { packet -> UInt16 in
            let data = try XCTUnwrap(packet.headerExtension?.element(id: NumberingFeature.extensionID))
            return data.u16BigEndian
        }
        XCTAssertEqual(numbers, [65_534, 65_535, 0, 1])
        XCTAssertEqual(parsed.map(\.ssrc), [Session.ssrc, Session.ssrc, Session.ssrc, Session.rtxSSRC])
        XCTAssertEqual(numbering(chain).sent.map(\.micros), [2_000, 2_000, 2_000, 3_000])
        // The RTX packet keeps the original's payload after the OSN: the extension is the only change.
        XCTAssertEqual(Array(parsed[3].payload.dropFirst(2)), Array(parsed[1].payload))
    }

    /// A target rate the slot gives comes out in the outcome and paces the chain at 2.5 × the target; the
    /// slot's deadline and timer are the chain's too.
    func testTargetRateDrivesThePacer() throws {
        var chain = try chain()
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        XCTAssertEqual(chain.nextDeadlineMicros(nowMicros: 0), 7_000, "the slot's deadline comes first")
        let timer = chain.handleTimer(nowMicros: 7_000, ntp: NTPTimestamp(rawValue: 0))
        XCTAssertNil(timer.targetBitrate)
        XCTAssertEqual(numbering(chain).timerRuns, 1)
        XCTAssertEqual(chain.nextDeadlineMicros(nowMicros: 7_000), 1_000_000)
        let outcome = chain.receiveRTCP(try Session.compound([Session.receiverReport()]), nowMicros: 10_000, arrival: Session.anyArrival)
        XCTAssertEqual(outcome.targetBitrate, 400_000)
        XCTAssertEqual(chain.pacer.configuration.rateBitsPerSecond, 1_000_000)
        // A 60 kB keyframe is paced at the 400 kbit/s target (its bytes weigh 2.5 × in the 1 Mbit/s bucket):
        // all but its last packet (1118 bytes) and the 12 kB burst take (60 816 − 1118) × 2.5 − 12 000 bytes
        // at 1 Mbit/s, about 1.1 s; at the pacing rate it was 0.38 s (the keyframe faster than the estimate).
        _ = try chain.send(OutgoingVideoFrame(bytes: Session.frame(60_000), isKeyframe: true, captureMicros: 0), nowMicros: 20_000)
        var now: UInt64 = 20_000
        var last: UInt64 = now
        while let next = chain.pacer.nextSendMicros(nowMicros: now) {
            now = max(now, next)
            if !chain.release(nowMicros: now).isEmpty { last = now }
        }
        let expected: Double = ((60_816 - 1_118) * 2.5 - 12_000) * 8 / 1_000_000
        XCTAssertEqual(Double(last - 20_000) / 1_000_000, expected, accuracy: 0.01)
        chain.setTargetBitrate(2_000_000, nowMicros: now)
        XCTAssertEqual(chain.pacer.configuration.rateBitsPerSecond, 5_000_000)
    }
}

extension TransportFeedbackSlotTests {
    /// Transport-cc feedback (RTPFB FMT 15) in a compound after a Receiver Report reaches the slot typed,
    /// after the report acted; a malformed one is counted and the rest of the compound still acts; without
    /// a slot the feedback is not even parsed.
    func testTransportFeedbackReachesTheSlot() throws {
        let feedback = try RTCPTransportFeedback(
            senderSSRC: 7, mediaSSRC: Session.ssrc, baseSequenceNumber: 65_534, referenceTime: 100, feedbackPacketCount: 3,
            statuses: [.received(delta: 4), .notReceived, .received(delta: 300)])
        let report = try Session.compound([Session.receiverReport(fractionLost: 26)])
        var chain = try chain()
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        let outcome = chain.receiveRTCP(report + (try feedback.serialized()), nowMicros: 1_000, arrival: Session.anyArrival)
        XCTAssertEqual(numbering(chain).feedback, [feedback])
        XCTAssertEqual(outcome.targetBitrate, 300_000)
        XCTAssertEqual(chain.pacer.configuration.rateBitsPerSecond, 750_000)
        XCTAssertEqual(chain.report.reports.receiverReports, 1)
        XCTAssertEqual(chain.statistics.rtcpIgnored, 0)

        var broken = try feedback.serialized()
        broken[14] = 0  // packet status count 0
        broken[15] = 0
        _ = chain.receiveRTCP(report + broken, nowMicros: 2_000, arrival: Session.anyArrival)
        XCTAssertEqual(numbering(chain).feedback.count, 1)
        XCTAssertEqual(chain.report.reports.receiverReports, 2, "the report still counts")
        XCTAssertEqual(chain.statistics.rtcpIgnored, 1)

        var plain = try RTPSenderChain(configuration: .init(ssrc: Session.ssrc, payloadType: 96, cname: "c"))
        _ = plain.start(nowMicros: 0, sendsMedia: true)
        XCTAssertNil(plain.receiveRTCP(report + broken, nowMicros: 1_000, arrival: Session.anyArrival).targetBitrate)
        XCTAssertEqual(plain.statistics.rtcpIgnored, 0, "no slot: transport-cc is not read")
    }
}

extension ArraySlice<UInt8> {
    /// The first two bytes, big-endian.
    var u16BigEndian: UInt16 { UInt16(self[startIndex]) << 8 | UInt16(self[startIndex + 1]) }
}
