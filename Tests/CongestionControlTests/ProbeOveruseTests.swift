@testable import CongestionControl
import CongestionSimulation
import XCTest

/// An over-use that a probe runs into is decreased from what the link delivered during the probe
/// (``ProbeDeliveryRate``), not from an application-limited sender's own rate.
final class ProbeOveruseTests: XCTestCase {
    /// Packets of `bytes` arriving every `gapMicros` from `start`, the ones in `probe` tagged with cluster 3.
    private func arrivals(_ count: Int, bytes: Int = 1200, gapMicros: Int64, start: Int64 = 1_000_000,
                          probe: Range<Int> = 0..<Int.max) -> [PacketResult] {
        (0..<count).map { index in
            PacketResult(sent: SentPacket(sequenceNumber: Int64(index), sendTimeMicros: start - 30_000 + Int64(index) * 1000,
                                          sizeBytes: bytes, probeClusterID: probe.contains(index) ? 3 : nil),
                         arrivalMicros: start + Int64(index) * gapMicros)
        }
    }

    func testTheRateFromTheFirstProbePacketOn() throws {
        // 1200-byte packets every 3.2 ms: 3 Mbit/s; the first probe packet is the third.
        let rate = try XCTUnwrap(ProbeDeliveryRate.bitsPerSecond(arrivals(20, gapMicros: 3200, probe: 2..<20)))
        XCTAssertEqual(rate, 3_000_000, accuracy: 1)
        // Media packets after the first probe packet count too: the link carried them in the same span.
        let mixed = try XCTUnwrap(ProbeDeliveryRate.bitsPerSecond(arrivals(20, gapMicros: 3200, probe: 5..<6)))
        XCTAssertEqual(mixed, 3_000_000, accuracy: 1)
        // Media arriving before the probe does not: 1 ms gaps before it would read 9.6 Mbit/s.
        var early = arrivals(10, gapMicros: 1000, start: 0, probe: 0..<0) + arrivals(10, gapMicros: 8000, probe: 0..<10)
        early.sort { $0.arrivalMicros! < $1.arrivalMicros! }
        XCTAssertEqual(try XCTUnwrap(ProbeDeliveryRate.bitsPerSecond(early)), 1_200_000, accuracy: 1)
    }

    func testNoProbeTooFewPacketsOrTooShortASpanReadNothing() {
        XCTAssertNil(ProbeDeliveryRate.bitsPerSecond([]))
        XCTAssertNil(ProbeDeliveryRate.bitsPerSecond(arrivals(20, gapMicros: 3200, probe: 0..<0)), "no probe packet")
        XCTAssertNil(ProbeDeliveryRate.bitsPerSecond(arrivals(20, gapMicros: 3200, probe: 16..<20)), "4 packets from the probe on")
        XCTAssertNotNil(ProbeDeliveryRate.bitsPerSecond(arrivals(20, gapMicros: 3200, probe: 15..<20)), "5 packets, 12.8 ms")
        XCTAssertNil(ProbeDeliveryRate.bitsPerSecond(arrivals(5, gapMicros: 2400)), "5 packets over 9.6 ms")
        XCTAssertNotNil(ProbeDeliveryRate.bitsPerSecond(arrivals(5, gapMicros: 2500)), "5 packets over 10 ms")
    }

    /// The screen sender (ALR probes at 2 × the estimate, 400 ms, every 5 s) with an encoder that makes at
    /// most 500 kbit/s, on the step profile (1 Mbit/s, 300 kbit/s from 12 s, 3 Mbit/s from 24 s) with a
    /// 5 Mbit/s max, so the ALR probes go on into the 3 Mbit/s link. Each such probe meets an over-use;
    /// decreased from the 500 kbit/s acknowledged rate the target fell to ~400 kbit/s every 5–10 s (measured
    /// before ``ProbeDeliveryRate``: 408, 395 kbit/s); decreased from what the link delivered it holds.
    func testAnApplicationLimitedSendersProbesDoNotDragTheTargetBelowTheLink() throws {
        var scenario = CongestionSimulation.Scenario.steps(downAt: 12, upAt: 24, seconds: 60)
        scenario.sender.controller = .screenSender
        scenario.sender.controller.maxBitsPerSecond = 5_000_000
        scenario.sender.maxMediaBitsPerSecond = 500_000
        var simulation = try CongestionSimulation(scenario: scenario)
        let seconds = try simulation.run()
        let trace = seconds.map { "\($0.second): \($0.targetBitsPerSecond / 1000)" }.joined(separator: ", ")
        for second in seconds[5..<12] {
            XCTAssertGreaterThan(second.targetBitsPerSecond, 600_000, "at 1 Mbit/s: \(trace)")
            XCTAssertLessThanOrEqual(second.targetBitsPerSecond, 1_000_000, "at 1 Mbit/s: \(trace)")
        }
        let reached = try XCTUnwrap(seconds[24...].first { $0.targetBitsPerSecond >= 2_100_000 }, trace)
        XCTAssertLessThanOrEqual(reached.second, 34, "70 % of 3 Mbit/s within 10 s: \(trace)")
        for second in seconds[(reached.second + 1)...] {
            XCTAssertGreaterThan(second.targetBitsPerSecond, 1_500_000, "at 3 Mbit/s: \(trace)")
            XCTAssertLessThanOrEqual(second.targetBitsPerSecond, 3_000_000, "at 3 Mbit/s: \(trace)")
        }
    }
}
