import RTP
import RTPSession
import TestSupport
import XCTest

/// The chain takes whatever RTCP arrives (after SRTCP authenticated it, so from the peer, but any bytes):
/// every truncation of a real compound and random garbage are counted and dropped, never a crash, never a
/// changed stream.
final class RTCPRobustnessTests: XCTestCase {
    func started() throws -> RTPSenderChain {
        var chain = try RTPSenderChain(configuration: .init(ssrc: Session.ssrc, payloadType: 96, cname: "c"))
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        _ = try chain.send(OutgoingVideoFrame(bytes: Session.frame(4000), isKeyframe: true, captureMicros: 0), nowMicros: 0)
        _ = chain.release(nowMicros: 0)
        return chain
    }

    /// A compound as Chromium sends them: RR, then REMB, NACK and PLI. Cut anywhere, it either parses as the
    /// whole packets before the cut or is ignored as a whole; cut at a packet boundary, the packets before
    /// it act.
    func testEveryTruncationOfARealCompound() throws {
        let packets: [RTCPPacket] = [
            Session.receiverReport(fractionLost: 10),
            .estimatedBitrate(.init(senderSSRC: 7, bitrate: 1_000_000, ssrcs: [Session.ssrc])),
            Session.nack([0, 1]), .pictureLossIndication(.init(senderSSRC: 7, mediaSSRC: Session.ssrc)),
        ]
        let whole = try Session.compound(packets)
        var boundaries: [Int] = [0]
        for index in packets.indices { boundaries.append(try Session.compound(Array(packets[...index])).count) }
        for length in 0...whole.count {
            var chain = try started()
            let outcome = chain.receiveRTCP(Array(whole.prefix(length)), nowMicros: 10_000, arrival: Session.anyArrival)
            if boundaries.contains(length) {
                let acted = boundaries.firstIndex(of: length)!
                XCTAssertEqual(outcome.estimatedBitrate, acted >= 2 ? 1_000_000 : nil, "cut at \(length)")
                XCTAssertEqual(outcome.keyframeRequest, acted == 4 ? .pictureLoss : nil, "cut at \(length)")
                XCTAssertEqual(chain.report.nack.nacksReceived, acted >= 3 ? 1 : 0, "cut at \(length)")
                XCTAssertEqual(chain.statistics.rtcpIgnored, 0, "cut at \(length)")
            } else {
                XCTAssertEqual(outcome, SenderOutcome(), "cut at \(length)")
                XCTAssertEqual(chain.statistics.rtcpIgnored, 1, "cut at \(length)")
                XCTAssertEqual(chain.report.reports.receiverReports, 0)
            }
        }
    }

    /// Random bytes (half of them with an RTCP-looking first two bytes) never crash the chain; what they do
    /// is counted, and the stream's own numbers stay as they were.
    func testGarbageIsCountedNotFatal() throws {
        var generator = SeededGenerator(seed: 77)
        var chain = try started()
        let before = chain.report.stream
        for _ in 0..<3000 {
            var bytes = (0..<Int.random(in: 0...120, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if bytes.count >= 2, Bool.random(using: &generator) {
                bytes[0] = 0x80 | (bytes[0] & 0x1F)
                bytes[1] = UInt8.random(in: 200...206, using: &generator)
            }
            _ = chain.receiveRTCP(bytes, nowMicros: 20_000, arrival: Session.anyArrival)
            _ = chain.release(nowMicros: 20_000)
        }
        XCTAssertGreaterThan(chain.statistics.rtcpIgnored, 2000)
        XCTAssertEqual(chain.report.stream, before)
        XCTAssertNotNil(chain.nextDeadlineMicros(nowMicros: 20_000))
    }

    /// An outcome keeps the first keyframe reason of an event.
    func testOutcomeKeepsTheFirstKeyframeReason() {
        var outcome = SenderOutcome()
        outcome.requestKeyframe(.pictureLoss)
        outcome.requestKeyframe(.pacerOverflow)
        XCTAssertEqual(outcome.keyframeRequest, .pictureLoss)
        XCTAssertEqual(KeyframeReason.stillWaiting.rawValue, "still waiting for a keyframe")
        XCTAssertEqual(KeyframeReason.newViewer.rawValue, "new viewer")
    }
}
