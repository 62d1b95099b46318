import RTP
import XCTest

/// The VP8 payloader and depayloader (RFC 7741 §4) at their named limits, each at and one past the edge:
/// ``VP8Payloader/maxPacketsPerFrame`` on both sides, the smallest ``VP8Payloader/maxPacketSize``, payload
/// type 127, the 15-bit PictureID wrap, ``VP8Depayloader/maxJump`` forwards and backwards, the reorder window
/// and the wait to the packet and to the millisecond, and the NACK list's limit — with sequence numbers and
/// RTP timestamps crossing their wraps.
final class VP8FrameLimitTests: XCTestCase {
    /// A payloader carrying `dataPerPacket` bytes of VP8 per packet (12 header + 4 descriptor bytes more).
    private func payloader(dataPerPacket: Int, sequence: UInt16 = 100, pictureID: UInt16 = 0) throws -> VP8Payloader {
        try VP8Payloader(ssrc: 0xF00D, payloadType: 96, initialSequenceNumber: sequence, initialPictureID: pictureID,
                         maxPacketSize: 16 + dataPerPacket)
    }

    /// Packets for `frames`, 4 VP8 bytes per packet, frame `i` at timestamp `i × 3000`.
    private func stream(_ frames: [[UInt8]], start: UInt16 = 100) throws -> [RTPPacket] {
        var payloader = try payloader(dataPerPacket: 4, sequence: start)
        return try frames.enumerated().flatMap { index, frame in
            try payloader.packets(frame: frame[...], rtpTimestamp: UInt32(index * 3000))
        }
    }

    // MARK: - Payloader

    /// 16384 packets is the most one frame may take: such a frame is sent (across the sequence wrap), one
    /// byte more is refused and spends no sequence number or PictureID.
    func testPacketsPerFrameAtAndPastTheLimit() throws {
        XCTAssertEqual(VP8Payloader.maxPacketsPerFrame, 16_384)
        var sender = try payloader(dataPerPacket: 1, sequence: 60_000, pictureID: 7)
        let frame = [UInt8](repeating: 0x31, count: 16_384)
        let packets = try sender.packets(frame: frame[...], rtpTimestamp: 0xFFFF_FFFF)
        XCTAssertEqual(packets.count, 16_384)
        XCTAssertEqual(packets.first?.sequenceNumber, 60_000)
        XCTAssertEqual(packets.last?.sequenceNumber, UInt16(truncatingIfNeeded: 60_000 + 16_383))
        XCTAssertEqual(packets.filter(\.marker).count, 1)
        XCTAssertTrue(packets.last!.marker)
        XCTAssertTrue(packets.allSatisfy { $0.timestamp == 0xFFFF_FFFF })
        XCTAssertEqual(sender.nextSequenceNumber, UInt16(truncatingIfNeeded: 60_000 + 16_384))
        XCTAssertEqual(sender.nextPictureID, 8)

        let before = (sender.nextSequenceNumber, sender.nextPictureID)
        assertThrowsRTPError(try sender.packets(frame: (frame + [0x31])[...], rtpTimestamp: 0),
                             .unsendableFrame(bytes: 16_385, packetsNeeded: 16_385, limit: 16_384))
        var emitted = 0
        assertThrowsRTPError(try sender.packetize(frame: (frame + [0x31])[...], rtpTimestamp: 0) { _ in emitted += 1 })
        XCTAssertEqual(emitted, 0, "nothing is emitted before the refusal")
        assertThrowsRTPError(try sender.packets(frame: [][...], rtpTimestamp: 0),
                             .unsendableFrame(bytes: 0, packetsNeeded: 0, limit: 16_384))
        XCTAssertEqual(sender.nextSequenceNumber, before.0)
        XCTAssertEqual(sender.nextPictureID, before.1)
    }

    /// The smallest packet leaves one byte of VP8 after 12 header and 4 descriptor bytes; PT 127 is the
    /// largest (the marker bit sits above it); the initial PictureID is masked to 15 bits and wraps to 0.
    func testSmallestPacketLargestPayloadTypeAndPictureIDWrap() throws {
        assertThrowsRTPError(try VP8Payloader(ssrc: 1, payloadType: 96, initialSequenceNumber: 0, initialPictureID: 0, maxPacketSize: 16),
                             .packetSizeTooSmall(maxPacketSize: 16, headerSize: 16))
        assertThrowsRTPError(try VP8Payloader(ssrc: 1, payloadType: 128, initialSequenceNumber: 0, initialPictureID: 0))
        var sender = try VP8Payloader(ssrc: 1, payloadType: 127, initialSequenceNumber: 0, initialPictureID: 0xFFFF, maxPacketSize: 17)
        XCTAssertEqual(sender.maxDataPerPacket, 1)
        XCTAssertEqual(sender.nextPictureID, 0x7FFF)
        let bytes = try sender.packetize(frame: [0xAB, 0xCD], rtpTimestamp: 1)
        XCTAssertEqual(bytes, [
            hex("80 7f 00 00 00 00 00 01 00 00 00 01 90 80 ff ff ab"),  // PT 127, S, PictureID 0x7fff
            hex("80 ff 00 01 00 00 00 01 00 00 00 01 80 80 ff ff cd"),  // marker + PT 127
        ])
        XCTAssertEqual(sender.nextPictureID, 0)
        let next = try sender.packetize(frame: [0xEF], rtpTimestamp: 2)
        XCTAssertEqual(Array(next[0][12..<16]), hex("90 80 80 00"), "PictureID 0 after 0x7fff, still 15-bit (M = 1)")
    }

    /// Pieces differ by at most one byte, the longer ones first, and never exceed the packet size.
    func testPiecesAreNearEqualForEverySizeAroundTheBoundaries() throws {
        for size in [1, 2, 1183, 1184, 1185, 2367, 2368, 2369, 11_840, 11_841] {
            var sender = try VP8Payloader(ssrc: 1, payloadType: 96, initialSequenceNumber: 0, initialPictureID: 0)
            let packets = try sender.packets(frame: [UInt8](repeating: 1, count: size)[...], rtpTimestamp: 0)
            let pieces = packets.map { $0.payload.count - 4 }
            XCTAssertEqual(packets.count, (size + 1183) / 1184, "\(size)")
            XCTAssertEqual(pieces.reduce(0, +), size)
            XCTAssertLessThanOrEqual(pieces.max()! - pieces.min()!, 1, "\(size): \(pieces)")
            XCTAssertEqual(pieces, pieces.sorted(by: >), "\(size): longer pieces first")
            XCTAssertTrue(packets.allSatisfy { $0.serializedSize <= 1200 })
        }
    }

    // MARK: - Depayloader: maxJump

    /// 3000 ahead of the next expected number is a gap (given up as lost once the window passes); 3001 ahead
    /// is a restarted sender (the buffer starts over).
    func testJumpAheadAtAndPastMaxJump() throws {
        XCTAssertEqual(VP8Depayloader.maxJump, 3000)
        for (ahead, resets, lost): (UInt16, Int, Int) in [(3000, 0, 3000), (3001, 1, 0)] {
            let first = try stream([[0x50]])[0]
            var receiver = VP8Depayloader(reorderWindow: 1, maxWaitMilliseconds: 10_000)
            XCTAssertEqual(try receiver.insert(first, arrivalMilliseconds: 0).count, 1)
            var far = first
            far.sequenceNumber = first.sequenceNumber &+ 1 &+ ahead
            far.timestamp = 3000
            let frames = try receiver.insert(far, arrivalMilliseconds: 1)
            XCTAssertEqual(frames.map(\.firstSequenceNumber), [far.sequenceNumber], "\(ahead) ahead")
            XCTAssertEqual(frames.first?.followsLoss, true)
            XCTAssertEqual(receiver.statistics.resets, resets, "\(ahead) ahead")
            XCTAssertEqual(receiver.statistics.lost, lost, "\(ahead) ahead")
        }
    }

    /// Once a frame was emitted, a packet up to 3000 behind the next expected number is late; 3001 behind
    /// is a restarted sender.
    func testJumpBackAtAndPastMaxJump() throws {
        var first = try stream([[0x50]], start: 1000)[0]
        first.sequenceNumber = 5000
        var receiver = VP8Depayloader()
        XCTAssertEqual(try receiver.insert(first, arrivalMilliseconds: 0).count, 1)
        var back = first
        back.timestamp = 9000
        back.sequenceNumber = 5001 - 3000
        XCTAssertEqual(try receiver.insert(back, arrivalMilliseconds: 1), [])
        XCTAssertEqual(receiver.statistics.late, 1)
        XCTAssertEqual(receiver.statistics.resets, 0)
        back.sequenceNumber = 5001 - 3001
        let frames = try receiver.insert(back, arrivalMilliseconds: 2)
        XCTAssertEqual(frames.map(\.firstSequenceNumber), [2000])
        XCTAssertEqual(receiver.statistics.resets, 1)
        XCTAssertEqual(frames.first?.followsLoss, true)
        // Across the 16-bit wrap the distances are the same: after 65535 the next expected is 0, and 3000 is
        // exactly 3000 ahead of it (a gap, not a restart).
        var wrapped = VP8Depayloader(reorderWindow: 1)
        var start = first
        start.sequenceNumber = 65_535
        XCTAssertEqual(try wrapped.insert(start, arrivalMilliseconds: 0).count, 1)
        var ahead = start
        ahead.sequenceNumber = 3000
        ahead.timestamp = 3000
        XCTAssertEqual(try wrapped.insert(ahead, arrivalMilliseconds: 1).count, 1)
        XCTAssertEqual(wrapped.statistics.resets, 0)
        XCTAssertEqual(wrapped.statistics.lost, 3000)
    }

    // MARK: - Depayloader: waiting

    /// A missing packet is waited for while it is fewer than `reorderWindow` numbers behind the highest, and
    /// given up when it is exactly that many behind; the frame after it says so.
    func testReorderWindowToThePacket() throws {
        // Frame 0: 100; frame 1: 101–102; frames 2, 3, 4: 103, 104, 105.
        let all = try stream([[0x50], [0x31, 0, 0, 0, 1], [0x31], [0x31], [0x31]])
        XCTAssertEqual(all.map(\.sequenceNumber), [100, 101, 102, 103, 104, 105])
        var receiver = VP8Depayloader(reorderWindow: 4, maxWaitMilliseconds: 60_000)
        XCTAssertEqual(try receiver.insert(all[0], arrivalMilliseconds: 0).count, 1)
        for index in 2...4 { XCTAssertEqual(try receiver.insert(all[index], arrivalMilliseconds: 0), [], "101 missing, \(index)") }
        XCTAssertEqual(receiver.missingSequenceNumbers(), [101])
        let frames = try receiver.insert(all[5], arrivalMilliseconds: 0)  // 105 − 101 = 4: give 101 up
        XCTAssertEqual(frames.map(\.firstSequenceNumber), [103, 104, 105])
        XCTAssertEqual(frames.map(\.followsLoss), [true, false, false])
        XCTAssertEqual(receiver.statistics.lost, 1)
        XCTAssertEqual(receiver.statistics.dropped, 1, "102, the rest of the broken frame")
        XCTAssertEqual(receiver.missingSequenceNumbers(), [])
    }

    /// The wait counts from when the packet after the gap arrived: one millisecond short of
    /// `maxWaitMilliseconds` it still waits, at exactly that it gives up.
    func testMaximumWaitToTheMillisecond() throws {
        let all = try stream([[0x50], [0x31, 0, 0, 0, 1], [0x31]])  // 100; 101–102; 103
        var receiver = VP8Depayloader(reorderWindow: 128, maxWaitMilliseconds: 100)
        XCTAssertEqual(try receiver.insert(all[0], arrivalMilliseconds: 0).count, 1)
        XCTAssertEqual(try receiver.insert(all[2], arrivalMilliseconds: 10), [])  // 101 missing since 10 ms
        XCTAssertEqual(try receiver.insert(all[3], arrivalMilliseconds: 20), [])
        XCTAssertEqual(receiver.poll(nowMilliseconds: 109), [])
        let frames = receiver.poll(nowMilliseconds: 110)
        XCTAssertEqual(frames.map(\.firstSequenceNumber), [103])
        XCTAssertEqual(frames.first?.followsLoss, true)
        XCTAssertEqual(receiver.poll(nowMilliseconds: 10_000), [], "nothing left")
        // A clock that goes backwards never counts as waiting.
        var backwards = VP8Depayloader(reorderWindow: 128, maxWaitMilliseconds: 100)
        _ = try backwards.insert(all[0], arrivalMilliseconds: 1000)
        _ = try backwards.insert(all[2], arrivalMilliseconds: 1000)
        _ = try backwards.insert(all[3], arrivalMilliseconds: 1000)
        XCTAssertEqual(backwards.poll(nowMilliseconds: 0), [])
        XCTAssertEqual(backwards.poll(nowMilliseconds: 1100).count, 1)
    }

    /// The NACK list: oldest first, at most `limit`, across the sequence wrap, excluding what arrived.
    func testMissingSequenceNumbersLimitAndWrap() throws {
        var receiver = VP8Depayloader()
        var start = try stream([[0x50]])[0]
        start.sequenceNumber = 65_530
        XCTAssertEqual(try receiver.insert(start, arrivalMilliseconds: 0).count, 1)
        var later = start
        later.timestamp = 6000
        for sequence: UInt16 in [65_533, 2, 5] {
            later.sequenceNumber = sequence
            _ = try receiver.insert(later, arrivalMilliseconds: 1)
        }
        XCTAssertEqual(receiver.missingSequenceNumbers(), [65_531, 65_532, 65_534, 65_535, 0, 1, 3, 4])
        XCTAssertEqual(receiver.missingSequenceNumbers(limit: 3), [65_531, 65_532, 65_534])
        XCTAssertEqual(receiver.missingSequenceNumbers(limit: 0), [])
        XCTAssertEqual(receiver.highestSequenceNumber, 65_536 + 5)
        XCTAssertEqual(VP8Depayloader().missingSequenceNumbers(), [], "nothing received")
    }

    // MARK: - Depayloader: frame size

    /// A frame of 16384 packets (the payloader's limit), delivered last packet first and across the sequence
    /// wrap, is reassembled; one packet more and the frame is given up as a sender that never ends its frame,
    /// and the next frame follows a loss.
    func testFrameOfMaxPacketsIsReassembledAndOneMoreIsGivenUp() throws {
        var sender = try payloader(dataPerPacket: 1, sequence: 60_000)
        var frame = [UInt8](repeating: 0x77, count: 16_384)
        frame[0] = 0x50  // a key frame's first byte
        let packets = try sender.packets(frame: frame[...], rtpTimestamp: 90_000)
        var receiver = VP8Depayloader(reorderWindow: 1_000_000, maxWaitMilliseconds: .max)
        var frames: [VP8Depayloader.Frame] = []
        for packet in packets.reversed() { frames += try receiver.insert(packet, arrivalMilliseconds: 5) }
        XCTAssertEqual(frames.count, 1)
        XCTAssertEqual(frames.first?.data, frame)
        XCTAssertEqual(frames.first?.isKeyframe, true)
        XCTAssertEqual(frames.first?.firstSequenceNumber, 60_000)
        XCTAssertEqual(frames.first?.lastSequenceNumber, UInt16(truncatingIfNeeded: 60_000 + 16_383))
        XCTAssertEqual(frames.first?.followsLoss, false)

        // The same frame with one more packet: the last no longer has the marker; a 16385th carries it.
        var longer = packets
        longer[longer.count - 1].marker = false
        longer.append(RTPPacket(marker: true, payloadType: 96, sequenceNumber: longer.last!.sequenceNumber &+ 1,
                                timestamp: 90_000, ssrc: 0xF00D, payload: [0x00, 0x77][...]))  // S = 0: a continuation
        var stalled = VP8Depayloader(reorderWindow: 1_000_000, maxWaitMilliseconds: .max)
        for packet in longer.reversed() { XCTAssertEqual(try stalled.insert(packet, arrivalMilliseconds: 5), []) }
        XCTAssertEqual(stalled.statistics.dropped, 16_385)
        XCTAssertEqual(stalled.statistics.framesEmitted, 0)
        let next = RTPPacket(marker: true, payloadType: 96, sequenceNumber: longer.last!.sequenceNumber &+ 1, timestamp: 93_000,
                             ssrc: 0xF00D, payload: [0x10, 0x31][...])
        let after = try stalled.insert(next, arrivalMilliseconds: 6)
        XCTAssertEqual(after.map(\.data), [[0x31]])
        XCTAssertEqual(after.first?.followsLoss, true)
    }

    /// Frames keep their RTP timestamps across the 32-bit wrap, and a frame whose packets cross the 16-bit
    /// sequence wrap reports its first and last numbers as sent.
    func testTimestampAndSequenceWrapInsideAFrame() throws {
        var sender = try payloader(dataPerPacket: 4, sequence: 65_534)
        let first = try sender.packets(frame: [0x50, 1, 2, 3, 4, 5, 6, 7, 8, 9][...], rtpTimestamp: 0xFFFF_FFFF)  // 3 packets
        let second = try sender.packets(frame: [0x31][...], rtpTimestamp: 0xFFFF_FFFF &+ 3000)
        XCTAssertEqual(first.map(\.sequenceNumber), [65_534, 65_535, 0])
        var receiver = VP8Depayloader()
        var frames: [VP8Depayloader.Frame] = []
        for packet in [first[1], first[0], second[0], first[2]] { frames += try receiver.insert(packet, arrivalMilliseconds: 0) }
        XCTAssertEqual(frames.map(\.rtpTimestamp), [0xFFFF_FFFF, 2999])
        XCTAssertEqual(frames.map(\.firstSequenceNumber), [65_534, 1])
        XCTAssertEqual(frames.map(\.lastSequenceNumber), [0, 1])
        XCTAssertEqual(frames.first?.data, [0x50, 1, 2, 3, 4, 5, 6, 7, 8, 9])
        XCTAssertEqual(frames.map(\.pictureID), [0, 1])
        XCTAssertEqual(receiver.statistics.lost + receiver.statistics.dropped + receiver.statistics.late, 0)
    }
}
