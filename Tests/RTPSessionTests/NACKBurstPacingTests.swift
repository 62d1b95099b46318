import RTP
@testable import RTPSession
import XCTest

/// What `tools/fuzz rtcp` found (Tests/Fixtures/fuzz/rtcp/nack-burst-beyond-one-release): a NACK of more
/// than one pacer burst (`PacerQueue.Configuration.burstBytes`, 12 kB) is answered over several releases,
/// not at once. Its fault was the harness's (one release after the RTCP, the rest mistaken for unasked
/// retransmissions with the next frame); the behaviour is pinned here: each release stays within the burst,
/// every NACKed packet leaves as RTX (at most twice), nothing unasked.
final class NACKBurstPacingTests: XCTestCase {
    func testANACKLargerThanOneBurstLeavesOverSeveralReleasesEachPacketOnce() throws {
        let rtx = RTXStream(ssrc: 0x0BAD_CAFE, payloadType: 97)
        var sender = try RTPSenderChain(configuration: .init(
            ssrc: 0x3A5E_91C7, payloadType: 96, rtx: rtx, cname: "burst", initialSequenceNumber: 1230,
            historyPackets: 64, historyBytes: 64 * 1200, feedback: .all))
        var now: UInt64 = 1_000_000
        _ = sender.start(nowMicros: now, sendsMedia: true)
        var sent: [UInt16] = []
        for index in 0..<4 {
            let frame = OutgoingVideoFrame(bytes: [UInt8](repeating: UInt8(index), count: 9000), isKeyframe: index == 0, captureMicros: now)
            _ = try sender.send(frame, nowMicros: now)
            now += 33_000
            for packet in sender.release(nowMicros: now) { sent.append(UInt16(packet.bytes[2]) << 8 | UInt16(packet.bytes[3])) }
        }
        XCTAssertGreaterThanOrEqual(sent.count, 28, "four 9000-byte frames in ~1200-byte packets")
        let nacked = Array(sent.prefix(24))
        let nack = Session.nack(nacked, media: 0x3A5E_91C7)
        now += 50_000
        _ = sender.receiveRTCP(try RTCPPacket.serializeCompound([nack]), nowMicros: now, arrival: NTPTimestamp(unixMicroseconds: now))
        // 24 packets of ~1.2 kB are more than one 12 kB burst: the first release holds some back.
        var releases: [[RTPSenderChain.OutgoingPacket]] = []
        for step in 0..<20 {
            let released = sender.release(nowMicros: now + UInt64(step) * 100_000)
            if released.isEmpty { break }
            releases.append(released)
        }
        XCTAssertGreaterThan(releases.count, 1, "one release let out the whole NACK")
        for released in releases {
            let bytes = released.map(\.bytes.count).reduce(0, +)
            XCTAssertLessThanOrEqual(bytes - (released.last?.bytes.count ?? 0), PacerQueue.Configuration().burstBytes,
                                     "a release beyond the burst (the packet that crosses it may leave)")
        }
        let resent = releases.flatMap { $0 }
        XCTAssertTrue(resent.allSatisfy { $0.kind == .retransmission }, "only retransmissions after a NACK")
        let originals = try resent.map { outgoing -> UInt16 in
            let packet = try RTPPacket(parsing: outgoing.bytes)
            XCTAssertEqual(packet.ssrc, rtx.ssrc)
            return try RTXPacketizer.unwrap(packet, originalSSRC: 0x3A5E_91C7, originalPayloadType: 96).sequenceNumber
        }
        // Each NACKed packet leaves once, or twice where the loss the NACK implies is above the duplication
        // threshold (here 24 of 28: every one twice), in order; nothing else.
        XCTAssertEqual(Array(Set(originals)).sorted(), nacked, "every NACKed packet, and only those")
        XCTAssertEqual(originals, originals.sorted(), "in order")
        for number in nacked { XCTAssertTrue((1...2).contains(originals.filter { $0 == number }.count), "\(number)") }
    }
}
