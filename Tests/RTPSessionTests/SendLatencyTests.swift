import RTP
import RTPSession
import XCTest

/// ``SendLatency``: matching a frame's last packet to its capture time (injected times, no clock).
final class SendLatencyTests: XCTestCase {
    /// A media packet with the marker bit and timestamp as given.
    func packet(timestamp: UInt32, marker: Bool) -> RTPPacket { Session.packet(sequence: 1, size: 16, marker: marker, timestamp: timestamp) }

    func testLastPacketOfEachFrameGivesItsLatency() {
        var latency = SendLatency()
        latency.queued(lastPacket: packet(timestamp: 1000, marker: true), captureMicros: 5_000)
        latency.queued(lastPacket: packet(timestamp: 4000, marker: true), captureMicros: 38_000)
        XCTAssertNil(latency.sent(packet(timestamp: 1000, marker: false), sentMicros: 20_000), "not the last packet")
        XCTAssertEqual(latency.sent(packet(timestamp: 1000, marker: true), sentMicros: 25_000)?.latencyMicros, 20_000)
        XCTAssertEqual(latency.sent(packet(timestamp: 4000, marker: true), sentMicros: 50_000)?.captureMicros, 38_000)
        XCTAssertEqual(latency.frames, 2)
        guard case .object(let fields) = latency.json else { return XCTFail("not an object") }
        XCTAssertEqual(fields.first { $0.0 == "p50" }?.1, .double(12))
        XCTAssertEqual(fields.first { $0.0 == "max" }?.1, .double(20))
    }

    /// A frame whose packets were dropped (pacer emptied) is skipped without desynchronising later frames.
    func testSkippedFrameDoesNotShiftLaterOnes() {
        var latency = SendLatency()
        latency.queued(lastPacket: packet(timestamp: 1, marker: true), captureMicros: 100)
        latency.queued(lastPacket: packet(timestamp: 2, marker: true), captureMicros: 200)
        XCTAssertEqual(latency.sent(packet(timestamp: 2, marker: true), sentMicros: 1_200)?.latencyMicros, 1_000)
        XCTAssertNil(latency.sent(packet(timestamp: 1, marker: true), sentMicros: 1_300), "forgotten once a later frame left")
        XCTAssertEqual(latency.frames, 1)
    }

    /// `/metrics`' summary: the sum of every latency (µs) and the kept ones at a quantile (nearest rank).
    func testSumAndQuantilesForMetrics() {
        var latency = SendLatency()
        XCTAssertEqual(latency.quantilesMicros([0.5]), [nil])
        for (index, micros) in [3_000, 1_000, 2_000, 10_000].enumerated() {
            latency.queued(lastPacket: packet(timestamp: UInt32(index), marker: true), captureMicros: 100)
            _ = latency.sent(packet(timestamp: UInt32(index), marker: true), sentMicros: 100 + UInt64(micros))
        }
        XCTAssertEqual(latency.totalMicros, 16_000)
        XCTAssertEqual(latency.quantilesMicros([0.5, 0.99, 0]), [2_000, 10_000, 1_000])
    }

    func testEmptySummaryHasNulls() {
        guard case .object(let fields) = SendLatency().json else { return XCTFail("not an object") }
        XCTAssertEqual(fields.first { $0.0 == "frames" }?.1, .int(0))
        XCTAssertEqual(fields.first { $0.0 == "p99" }?.1, .null)
    }

    /// As a feature of the chain: a packetized frame waits for its last packet, whichever comes between.
    func testPacketizedFramesWaitForTheirLastPacket() {
        var latency = SendLatency()
        let packets = [packet(timestamp: 90, marker: false), packet(timestamp: 90, marker: true)]
        latency.packetized(PacketizedFrame(packets: packets, isKeyframe: true, captureMicros: 1_000, nowMicros: 1_500))
        latency.packetized(PacketizedFrame(packets: [], isKeyframe: false, captureMicros: 2_000, nowMicros: 2_000))
        XCTAssertNil(latency.sent(packets[0], sentMicros: 3_000))
        XCTAssertEqual(latency.sent(packets[1], sentMicros: 4_000)?.latencyMicros, 3_000)
        XCTAssertEqual(latency.frames, 1)
    }

    /// At most 64 frames wait (a pacer that was emptied leaves their packets unsent): the oldest go first.
    func testWaitingFramesAreBounded() {
        var latency = SendLatency()
        for index in 0..<100 { latency.queued(lastPacket: packet(timestamp: UInt32(index), marker: true), captureMicros: UInt64(index)) }
        XCTAssertNil(latency.sent(packet(timestamp: 35, marker: true), sentMicros: 1_000), "forgotten")
        XCTAssertEqual(latency.sent(packet(timestamp: 36, marker: true), sentMicros: 1_000)?.latencyMicros, 964)
        XCTAssertEqual(latency.sent(packet(timestamp: 99, marker: true), sentMicros: 1_000)?.captureMicros, 99)
    }
}
