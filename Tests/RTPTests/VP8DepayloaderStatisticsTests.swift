import RTP
import XCTest

/// The depayloader's counters (what `/stats` shows of a receiver) in one scripted session where each event
/// happens a known number of times: a malformed descriptor, a packet late after its frame was emitted, a
/// duplicate while buffered, a loss given up after the wait, the rest of the broken frame dropped, a
/// retransmission arriving after the give-up, a sender restart with a packet still buffered.
final class VP8DepayloaderStatisticsTests: XCTestCase {
    func testEveryCounterInAScriptedSession() throws {
        // Frame 0: 100; frame 1: 101–102; frame 2: 103; frame 3: 104 (4 VP8 bytes per packet).
        var payloader = try VP8Payloader(ssrc: 1, payloadType: 96, initialSequenceNumber: 100, initialPictureID: 0, maxPacketSize: 20)
        let packets = try [[0x50], [0x31, 0, 0, 0, 1], [0x31], [0x31]].enumerated().flatMap { index, frame in
            try payloader.packets(frame: frame[...], rtpTimestamp: UInt32(index) * 3000)
        }
        XCTAssertEqual(packets.map(\.sequenceNumber), [100, 101, 102, 103, 104])
        var receiver = VP8Depayloader(reorderWindow: 128, maxWaitMilliseconds: 500)
        var emitted: [UInt16] = []
        func insert(_ packet: RTPPacket, at time: UInt64) throws {
            emitted += try receiver.insert(packet, arrivalMilliseconds: time).map(\.firstSequenceNumber)
        }

        let malformed = RTPPacket(payloadType: 96, sequenceNumber: 100, timestamp: 0, ssrc: 1, payload: [0x90, 0x80][...])
        assertThrowsRTPError(try receiver.insert(malformed, arrivalMilliseconds: 0))
        XCTAssertEqual(receiver.statistics.malformed, 1)
        XCTAssertEqual(receiver.statistics.packetsReceived, 0, "a malformed packet is not received")

        try insert(packets[0], at: 0)
        try insert(packets[0], at: 1)  // late: its frame was emitted
        try insert(packets[2], at: 10)  // 101 missing
        try insert(packets[2], at: 11)  // duplicate while buffered
        try insert(packets[3], at: 12)
        XCTAssertEqual(receiver.missingSequenceNumbers(), [101])
        XCTAssertEqual(receiver.poll(nowMilliseconds: 509), [])
        emitted += receiver.poll(nowMilliseconds: 510).map(\.firstSequenceNumber)  // 500 ms after 102 arrived
        try insert(packets[1], at: 520)  // the retransmission, too late
        try insert(packets[4], at: 530)
        // 106 (a continuation, S = 0) waits for 105; then the sender restarts 5000 numbers ahead.
        try insert(RTPPacket(payloadType: 96, sequenceNumber: 106, timestamp: 9000, ssrc: 1, payload: [0x00, 0xAA][...]), at: 540)
        XCTAssertEqual(receiver.missingSequenceNumbers(), [105])
        try insert(RTPPacket(marker: true, payloadType: 96, sequenceNumber: 5104, timestamp: 99_000, ssrc: 1, payload: [0x10, 0x31][...]), at: 550)
        XCTAssertEqual(receiver.missingSequenceNumbers(), [])

        XCTAssertEqual(emitted, [100, 103, 104, 5104])
        let statistics = receiver.statistics
        XCTAssertEqual(statistics.packetsReceived, 9)
        XCTAssertEqual(statistics.malformed, 1)
        XCTAssertEqual(statistics.late, 2, "100 again, and 101 after it was given up")
        XCTAssertEqual(statistics.duplicates, 1)
        XCTAssertEqual(statistics.lost, 1, "101")
        XCTAssertEqual(statistics.dropped, 2, "102 (its frame broken) and 106 (at the restart)")
        XCTAssertEqual(statistics.resets, 1)
        XCTAssertEqual(statistics.framesEmitted, 4)
        XCTAssertEqual(receiver.highestSequenceNumber, 5104, "numbering starts over at the restart")
    }
}
