import RTP
import XCTest

/// The depayloader against the payloader, through an in-memory lossy, reordering, duplicating channel.
final class VP8DepayloaderTests: XCTestCase {
    struct SentFrame {
        var data: [UInt8]
        var timestamp: UInt32
        var packets: [[UInt8]]
    }

    /// Frames of random sizes (every 30th a large key frame), packetized from just below the wrap.
    func makeStream(frames count: Int, using generator: inout SplitMix64) throws -> [SentFrame] {
        var payloader = try VP8Payloader(ssrc: 0x1234, payloadType: 96, initialSequenceNumber: 65_400,
                                         initialPictureID: 32_700)
        return try (0..<count).map { index in
            let key = index % 30 == 0
            let size = key ? Int.random(in: 8_000...30_000, using: &generator) : Int.random(in: 1...3_000, using: &generator)
            var data = randomBytes(size, using: &generator)
            data[0] = key ? data[0] & 0xFE : data[0] | 0x01
            let timestamp = UInt32(index) &* 3000 &+ 0xFFFF_0000
            return SentFrame(data: data, timestamp: timestamp, packets: try payloader.packetize(frame: data, rtpTimestamp: timestamp))
        }
    }

    func testRoundTripWithLossReorderingAndDuplicates() throws {
        for seed: UInt64 in 1...10 {
            for lossPercent in [0, 3, 15] {
                try roundTrip(seed: seed, lossPercent: lossPercent)
            }
        }
    }

    func roundTrip(seed: UInt64, lossPercent: Int) throws {
        var generator = SplitMix64(seed: seed)
        let frames = try makeStream(frames: 120, using: &generator)
        // Send: drop (never in the first frame, so the receiver starts at a frame start), duplicate 2 %.
        var delivered: [(frame: Int, bytes: [UInt8])] = []
        var complete = Array(repeating: true, count: frames.count)
        for (index, frame) in frames.enumerated() {
            for packet in frame.packets {
                if index > 0, Int.random(in: 0..<100, using: &generator) < lossPercent {
                    complete[index] = false
                    continue
                }
                delivered.append((index, packet))
                if Int.random(in: 0..<100, using: &generator) < 2 { delivered.append((index, packet)) }
            }
        }
        // Reorder: shuffle within blocks of up to 16 packets (well inside the 128-packet window).
        var start = 0
        while start < delivered.count {
            let end = min(delivered.count, start + Int.random(in: 1...16, using: &generator))
            delivered[start..<end].shuffle(using: &generator)
            start = end
        }
        // The stream's very first packet arrives first: the receiver anchors on it. (Packets older than the
        // first packet received are indistinguishable from a join mid-stream; see the depayloader's notes.)
        let first = delivered.firstIndex { $0.bytes == frames[0].packets[0] }!
        delivered.insert(delivered.remove(at: first), at: 0)

        var depayloader = VP8Depayloader(reorderWindow: 128, maxWaitMilliseconds: 60_000)
        var received: [VP8Depayloader.Frame] = []
        for (time, item) in delivered.enumerated() {
            received += try depayloader.insert(RTPPacket(parsing: item.bytes), arrivalMilliseconds: UInt64(time))
        }
        received += depayloader.poll(nowMilliseconds: UInt64(delivered.count) + 60_000)

        let context = "seed \(seed) loss \(lossPercent)%"
        let expected = frames.indices.filter { complete[$0] }
        let got = received.map { frame in frames.firstIndex { $0.timestamp == frame.rtpTimestamp }! }
        XCTAssertEqual(got, expected, "frames emitted: \(context) \(depayloader.statistics) missing \(depayloader.missingSequenceNumbers(limit: 5))")
        var previous: Int?
        for (frame, index) in zip(received, got) {
            XCTAssertEqual(frame.data, frames[index].data, "frame \(index) bytes: \(context)")
            XCTAssertEqual(frame.isKeyframe, index % 30 == 0, "frame \(index) key: \(context)")
            XCTAssertEqual(frame.pictureID, UInt16((32_700 + index) % 32_768), context)
            let firstSequence = try RTPPacket(parsing: frames[index].packets.first!).sequenceNumber
            let lastSequence = try RTPPacket(parsing: frames[index].packets.last!).sequenceNumber
            XCTAssertEqual(frame.firstSequenceNumber, firstSequence, context)
            XCTAssertEqual(frame.lastSequenceNumber, lastSequence, context)
            if let previous {
                XCTAssertEqual(frame.followsLoss, index != previous + 1, "frame \(index) followsLoss: \(context)")
            } else {
                XCTAssertFalse(frame.followsLoss, context)
            }
            previous = index
        }
        let stats = depayloader.statistics
        let lastSequence = try RTPPacket(parsing: frames.last!.packets.last!).sequenceNumber
        XCTAssertLessThan(lastSequence, 65_400, "the stream crosses the 16-bit wrap: \(context)")
        XCTAssertEqual(stats.framesEmitted, expected.count, context)
        XCTAssertEqual(stats.packetsReceived, delivered.count, context)
        if lossPercent == 0 {
            XCTAssertEqual(stats.lost, 0, context)
            XCTAssertEqual(stats.dropped, 0, context)
        }
    }

    func packets(_ frames: [[UInt8]], start: UInt16 = 100) throws -> [RTPPacket] {
        var payloader = try VP8Payloader(ssrc: 1, payloadType: 96, initialSequenceNumber: start, initialPictureID: 0,
                                         maxPacketSize: 20)  // 4 data bytes per packet
        return try frames.enumerated().flatMap { index, frame in
            try payloader.packetize(frame: frame, rtpTimestamp: UInt32(index * 3000)).map { try RTPPacket(parsing: $0) }
        }
    }

    func testMissingPacketIsReportedAndARetransmissionCompletesTheFrame() throws {
        // Frame 0: 1 packet (seq 100); frame 1: 3 packets (101–103); frame 2: 1 packet (104).
        let all = try packets([[0x50, 0, 0, 0], Array(repeating: 0x31, count: 12), [0x31, 1, 2]])
        var depayloader = VP8Depayloader()
        XCTAssertEqual(try depayloader.insert(all[0], arrivalMilliseconds: 0).count, 1)
        XCTAssertEqual(try depayloader.insert(all[1], arrivalMilliseconds: 1), [])
        XCTAssertEqual(try depayloader.insert(all[3], arrivalMilliseconds: 2), [])
        XCTAssertEqual(try depayloader.insert(all[4], arrivalMilliseconds: 3), [])  // complete, but waits behind 102
        XCTAssertEqual(depayloader.missingSequenceNumbers(), [102])
        let frames = try depayloader.insert(all[2], arrivalMilliseconds: 40)  // the retransmission
        XCTAssertEqual(frames.map(\.firstSequenceNumber), [101, 104])
        XCTAssertEqual(frames[0].data, Array(repeating: 0x31, count: 12))
        XCTAssertFalse(frames[0].followsLoss)
        XCTAssertEqual(depayloader.missingSequenceNumbers(), [])
        // A duplicate now is late.
        XCTAssertEqual(try depayloader.insert(all[2], arrivalMilliseconds: 41), [])
        XCTAssertEqual(depayloader.statistics.late, 1)
    }

    func testGivesUpAfterTheWaitAndSkipsToTheNextFrame() throws {
        let all = try packets([[0x50, 0, 0, 0], Array(repeating: 0x31, count: 12), [0x31, 1, 2]])
        var depayloader = VP8Depayloader(reorderWindow: 128, maxWaitMilliseconds: 100)
        _ = try depayloader.insert(all[0], arrivalMilliseconds: 0)
        _ = try depayloader.insert(all[1], arrivalMilliseconds: 10)
        _ = try depayloader.insert(all[4], arrivalMilliseconds: 20)  // 102 and 103 missing
        XCTAssertEqual(depayloader.missingSequenceNumbers(), [102, 103])
        XCTAssertEqual(depayloader.poll(nowMilliseconds: 50), [])
        let frames = depayloader.poll(nowMilliseconds: 130)
        XCTAssertEqual(frames.map(\.firstSequenceNumber), [104])
        XCTAssertTrue(frames[0].followsLoss)
        XCTAssertEqual(depayloader.statistics.lost, 2)
        XCTAssertEqual(depayloader.statistics.dropped, 1)  // 101, part of the broken frame
        // 102 arriving now is late and changes nothing.
        XCTAssertEqual(try depayloader.insert(all[2], arrivalMilliseconds: 140), [])
        XCTAssertEqual(depayloader.statistics.late, 1)
    }

    func testJoiningMidFrameWaitsThenStartsAtTheNextFrame() throws {
        let all = try packets([Array(repeating: 0x50, count: 8), [0x31, 1, 2]])  // 100–101, 102
        var depayloader = VP8Depayloader(reorderWindow: 4, maxWaitMilliseconds: 1000)
        XCTAssertEqual(try depayloader.insert(all[1], arrivalMilliseconds: 0), [])  // not a frame start: wait
        let frames = try depayloader.insert(all[0], arrivalMilliseconds: 1)  // its start arrives late: fine
        XCTAssertEqual(frames.map(\.firstSequenceNumber), [100])
        // A receiver that never sees 100 gives 101 up once it is 4 behind, then emits 102.
        var late = VP8Depayloader(reorderWindow: 1, maxWaitMilliseconds: 1000)
        XCTAssertEqual(try late.insert(all[1], arrivalMilliseconds: 0), [])
        let second = try late.insert(all[2], arrivalMilliseconds: 1)
        XCTAssertEqual(second.map(\.firstSequenceNumber), [102])
        XCTAssertTrue(second[0].followsLoss)
    }

    func testFrameWithoutMarkerEndsAtTheNextFrameStart() throws {
        var all = try packets([[0x50, 0, 0, 0, 1, 1], [0x31, 1, 2]])  // 100–101, 102
        all[1].marker = false
        var depayloader = VP8Depayloader()
        var frames: [VP8Depayloader.Frame] = []
        for packet in all { frames += try depayloader.insert(packet, arrivalMilliseconds: 0) }
        XCTAssertEqual(frames.map(\.data), [[0x50, 0, 0, 0, 1, 1], [0x31, 1, 2]])
    }

    func testAJumpFarAheadRestartsTheBuffer() throws {
        let all = try packets([[0x50], [0x31]])
        var depayloader = VP8Depayloader()
        XCTAssertEqual(try depayloader.insert(all[0], arrivalMilliseconds: 0).count, 1)
        var far = all[1]
        far.sequenceNumber = all[1].sequenceNumber &+ 20_000
        XCTAssertEqual(try depayloader.insert(far, arrivalMilliseconds: 1).count, 1)
        XCTAssertEqual(depayloader.statistics.resets, 1)
    }

    func testGarbagePacketsNeverCrashOrProduceFrames() throws {
        var generator = SplitMix64(seed: 0xF00D)
        var depayloader = VP8Depayloader(reorderWindow: 16, maxWaitMilliseconds: 50)
        var emitted = 0
        for time in 0..<20_000 {
            let payload = randomBytes(Int.random(in: 0...12, using: &generator), using: &generator)
            let packet = RTPPacket(marker: Bool.random(using: &generator), payloadType: 96,
                                   sequenceNumber: UInt16.random(in: 0...UInt16.max, using: &generator),
                                   timestamp: UInt32.random(in: 0...3, using: &generator), ssrc: 1, payload: payload[...])
            if let frames = try? depayloader.insert(packet, arrivalMilliseconds: UInt64(time)) { emitted += frames.count }
            _ = depayloader.missingSequenceNumbers(limit: 8)
        }
        // Random sequence numbers rarely line up into frames; the point is that nothing traps.
        XCTAssertEqual(depayloader.statistics.packetsReceived + depayloader.statistics.malformed, 20_000)
        XCTAssertEqual(depayloader.statistics.framesEmitted, emitted)
    }

    func testMalformedDescriptorIsRefusedAndCounted() throws {
        var depayloader = VP8Depayloader()
        let packet = RTPPacket(payloadType: 96, sequenceNumber: 1, timestamp: 0, ssrc: 1, payload: [0x90, 0x80][...])
        assertThrowsRTPError(try depayloader.insert(packet, arrivalMilliseconds: 0))
        XCTAssertEqual(depayloader.statistics.malformed, 1)
        XCTAssertEqual(depayloader.statistics.packetsReceived, 0)
    }
}
