import RTPSession
import XCTest

/// ``SendLatency``: matching a frame's last packet to its capture time (injected times, no clock).
final class SendLatencyTests: XCTestCase {
    /// A plain RTP header: marker bit and timestamp as given, 4 payload bytes.
    func packet(timestamp: UInt32, marker: Bool) -> [UInt8] {
        [0x80, marker ? 0xE0 : 0x60, 0, 1,
         UInt8(timestamp >> 24), UInt8(truncatingIfNeeded: timestamp >> 16), UInt8(truncatingIfNeeded: timestamp >> 8),
         UInt8(truncatingIfNeeded: timestamp), 0, 0, 0, 1, 9, 9, 9, 9]
    }

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

    func testEmptySummaryHasNulls() {
        guard case .object(let fields) = SendLatency().json else { return XCTFail("not an object") }
        XCTAssertEqual(fields.first { $0.0 == "frames" }?.1, .int(0))
        XCTAssertEqual(fields.first { $0.0 == "p99" }?.1, .null)
    }
}
