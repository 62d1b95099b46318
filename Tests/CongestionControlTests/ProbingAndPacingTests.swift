@testable import CongestionControl
import XCTest

/// Probe requests, probe results, and the pacer's budget.
final class ProbingAndPacingTests: XCTestCase {
    func testInitialFurtherPeriodicAndRecoveryProbes() {
        var probes = ProbeController(maxBitrate: 3_000_000)
        let initial = probes.start(startBitrate: 300_000, nowMicros: 0)
        XCTAssertEqual(initial.map(\.bitsPerSecond), [900_000, 1_800_000], "3× and 6× the start rate")
        XCTAssertEqual(initial.map(\.id), [1, 2])
        XCTAssertEqual(initial.map(\.minPackets), [5, 5])
        XCTAssertEqual(initial.map(\.minBytes), [1687, 3375], "15 ms at the probe rate")

        // An estimate above 0.7 × 1.8 Mbit/s probes further at 2×, capped at the max (which ends probing further).
        XCTAssertEqual(probes.onEstimate(1_200_000, nowMicros: 300_000), [], "1.2 M is below 1.26 M")
        XCTAssertEqual(probes.onEstimate(1_600_000, nowMicros: 400_000).map(\.bitsPerSecond), [3_000_000])
        XCTAssertEqual(probes.onEstimate(2_900_000, nowMicros: 500_000), [], "no further probing past the max")

        // Periodic: none while the estimate is near the max; 2× the estimate every 5 s while below 90 % of it.
        XCTAssertEqual(probes.onTick(nowMicros: 6_000_000), [])
        XCTAssertEqual(probes.onEstimate(1_000_000, nowMicros: 6_000_000), [], "a drop from 2.9 M to 1 M is remembered")
        XCTAssertEqual(probes.onTick(nowMicros: 6_100_000).map(\.bitsPerSecond), [2_000_000], "5 s after the last probe")
        XCTAssertEqual(probes.onTick(nowMicros: 6_200_000), [])
        // Recovery: back to normal after under-use within 5 s of the drop: 85 % of the rate before it — but only
        // once probing is complete (the periodic probe waits 1 s for its result).
        XCTAssertEqual(probes.onRecoveredFromOveruse(nowMicros: 6_300_000), [])
        XCTAssertEqual(probes.onTick(nowMicros: 7_200_000), [], "the periodic probe timed out")
        XCTAssertEqual(probes.onRecoveredFromOveruse(nowMicros: 7_300_000).map(\.bitsPerSecond), [2_465_000])
        XCTAssertEqual(probes.onTick(nowMicros: 8_400_000), [])
        XCTAssertEqual(probes.onRecoveredFromOveruse(nowMicros: 8_500_000), [], "at most one recovery probe per 5 s")
        XCTAssertEqual(probes.onRecoveredFromOveruse(nowMicros: 12_400_000), [], "nor after 5 s past the drop")
    }

    /// The screen sender's probing: no recovery probe after a drop (a greedy sender's drop is the link's),
    /// and no periodic probe within 2.5 s of an over-use (a full link has nothing to find).
    func testScreenSenderProbesNotIntoAFullLink() {
        var probes = ProbeController(configuration: .screenSender, maxBitrate: 3_000_000)
        _ = probes.start(startBitrate: 1_000_000, nowMicros: 0)
        _ = probes.onTick(nowMicros: 1_100_000)  // the start probes timed out
        XCTAssertEqual(probes.onEstimate(300_000, nowMicros: 2_000_000), [])
        XCTAssertEqual(probes.onRecoveredFromOveruse(nowMicros: 2_500_000), [], "recovery probes are off")
        probes.onOveruse(nowMicros: 4_000_000)
        XCTAssertEqual(probes.onTick(nowMicros: 5_100_000), [], "5 s after the last probe, but 1.1 s after an over-use")
        XCTAssertEqual(probes.onTick(nowMicros: 6_499_999), [])
        XCTAssertEqual(probes.onTick(nowMicros: 6_500_000).map(\.bitsPerSecond), [450_000], "quiet for 2.5 s: 1.5 × the estimate")
    }

    /// A cluster that found the link full ends its chain for the screen sender (``ProbeController/Configuration/endChainWhenSaturated``):
    /// the periodic probe at 1.5 × 200 kbit/s reads 270 kbit/s, above the further-probe threshold (0.7 × 300),
    /// and no cluster at 2 × 270 follows it into the full link. Without that setting the chain goes on.
    func testASaturatedResultEndsTheChain() {
        func further(endChain: Bool, saturated: Bool) -> [Int] {
            var configuration = ProbeController.Configuration.screenSender
            configuration.endChainWhenSaturated = endChain
            var probes = ProbeController(configuration: configuration, maxBitrate: 3_000_000)
            _ = probes.start(startBitrate: 200_000, nowMicros: 0)
            _ = probes.onTick(nowMicros: 1_100_000)  // the start probe timed out
            XCTAssertEqual(probes.onEstimate(200_000, nowMicros: 2_000_000), [])
            XCTAssertEqual(probes.onTick(nowMicros: 5_100_000).map(\.bitsPerSecond), [300_000], "1.5 × the estimate")
            if saturated { probes.onSaturatedResult() }
            return probes.onEstimate(270_000, nowMicros: 5_600_000).map(\.bitsPerSecond)
        }
        XCTAssertEqual(further(endChain: true, saturated: true), [])
        XCTAssertEqual(further(endChain: true, saturated: false), [540_000], "a link that opened: the chain goes on")
        XCTAssertEqual(further(endChain: false, saturated: true), [540_000])
    }

    func testDisabledPeriodicProbing() {
        var configuration = ProbeController.Configuration()
        configuration.periodicIntervalMicros = 0
        var probes = ProbeController(configuration: configuration, maxBitrate: 3_000_000)
        _ = probes.start(startBitrate: 300_000, nowMicros: 0)
        _ = probes.onEstimate(400_000, nowMicros: 100_000)
        XCTAssertEqual(probes.onTick(nowMicros: 60_000_000), [])
    }

    private func result(_ sequence: Int64, sent: Int64, arrival: Int64?, size: Int = 1000, cluster: Int = 1) -> PacketResult {
        PacketResult(sent: SentPacket(sequenceNumber: sequence, sendTimeMicros: sent, sizeBytes: size, probeClusterID: cluster),
                     arrivalMicros: arrival)
    }

    func testProbeResultIsMinOfSendAndReceiveRate() {
        let cluster = ProbeCluster(id: 1, bitsPerSecond: 8_000_000, minPackets: 5, minBytes: 7500, createdMicros: 0)
        var estimator = ProbeBitrateEstimator()
        // 10 packets of 1000 bytes sent 1 ms apart (8 Mbit/s), arriving 1.25 ms apart (6.4 Mbit/s): the link
        // saturated (6.4 < 0.9 × 8), so 95 % of the receive rate.
        var last: Double?
        for index in 0..<10 {
            last = estimator.add(result(Int64(index), sent: Int64(index) * 1000, arrival: 50_000 + Int64(index) * 1250), cluster: cluster)
            if index < 4 { XCTAssertNil(last, "too few packets yet (needs 80 % of 5)") }
        }
        XCTAssertEqual(try XCTUnwrap(last), 0.95 * 9000 * 8 / 0.01125, accuracy: 1)
        XCTAssertEqual(estimator.fetchResult(), last)
        XCTAssertNil(estimator.fetchResult(), "fetched once")

        // Unsaturated: arrivals as spaced as sends → min(send, receive).
        var unsaturated = ProbeBitrateEstimator()
        for index in 0..<6 {
            last = unsaturated.add(result(Int64(index), sent: Int64(index) * 1000, arrival: 9000 + Int64(index) * 1020, cluster: 2),
                                   cluster: .init(id: 2, bitsPerSecond: 8_000_000, minPackets: 5, minBytes: 1000, createdMicros: 0))
        }
        XCTAssertEqual(try XCTUnwrap(last), min(5000 * 8 / 0.005, 5000 * 8 / 0.0051), accuracy: 1)

        // Arrivals 3× faster than sends: broken timing, no result.
        var broken = ProbeBitrateEstimator()
        for index in 0..<10 {
            last = broken.add(result(Int64(index), sent: Int64(index) * 3000, arrival: Int64(index) * 1000, cluster: 3),
                              cluster: .init(id: 3, bitsPerSecond: 1_000_000, minPackets: 5, minBytes: 1000, createdMicros: 0))
        }
        XCTAssertNil(last)
        // Lost packets do not count.
        let tiny = ProbeCluster(id: 3, bitsPerSecond: 1, minPackets: 1, minBytes: 1, createdMicros: 0)
        XCTAssertNil(broken.add(result(20, sent: 0, arrival: nil, cluster: 3), cluster: tiny))
    }

    func testPacerSpacesPacketsAtTwoAndAHalfTimesTheTarget() {
        var pacer = PacerBudget(targetBitsPerSecond: 1_000_000)
        XCTAssertEqual(pacer.pacingBitsPerSecond, 2_500_000)
        // 1250-byte packets take 4 ms at 2.5 Mbit/s; the 5 ms bucket lets a second follow at once, then one
        // every 4 ms.
        var times: [Int64] = []
        var now: Int64 = 0
        while times.count < 6 {
            now = pacer.nextSendMicros(atMicros: now)
            times.append(now)
            pacer.onPacketSent(sizeBytes: 1250, atMicros: now)
        }
        XCTAssertEqual(times, [0, 0, 3000, 7000, 11_000, 15_000])
        XCTAssertEqual(pacer.sendableBytes(atMicros: 15_000), 0)
        XCTAssertEqual(pacer.sendableBytes(atMicros: 19_000), 1, "a packet may go (it overdraws)")
        XCTAssertEqual(pacer.sendableBytes(atMicros: 100_000), 1562, "an idle bucket holds 5 ms at 2.5 Mbit/s")

        // One second of keyframe packets goes at 1 × the target: 100 packets, not 250.
        var keyframe = PacerBudget(targetBitsPerSecond: 1_000_000)
        var sent = 0
        now = 0
        while true {
            now = keyframe.nextSendMicros(atMicros: now)
            guard now < 1_000_000 else { break }
            keyframe.onPacketSent(sizeBytes: 1250, atMicros: now, keyframe: true)
            sent += 1
        }
        XCTAssertEqual(sent, 101, "100 per second plus the one the bucket's 5 ms lets through")
    }

    func testPacerRunsProbeClustersAtTheirRate() {
        var pacer = PacerBudget(targetBitsPerSecond: 300_000)
        pacer.startProbes([ProbeCluster(id: 4, bitsPerSecond: 4_000_000, minPackets: 5, minBytes: 6000, createdMicros: 0),
                           ProbeCluster(id: 5, bitsPerSecond: 8_000_000, minPackets: 5, minBytes: 4000, createdMicros: 0)])
        XCTAssertEqual(pacer.activeProbeClusterID, 4)
        XCTAssertEqual(pacer.probePaddingBytes(atMicros: 0), 1000)
        var now: Int64 = 0
        var tags: [Int?] = []
        var times: [Int64] = []
        for _ in 0..<12 {
            now = pacer.nextSendMicros(atMicros: now)
            times.append(now)
            tags.append(pacer.onPacketSent(sizeBytes: 1000, atMicros: now))
        }
        // Cluster 4 needs 6 packets (6000 bytes) at 2 ms each; cluster 5 five at 1 ms; then the pacing rate
        // (750 kbit/s: 10.7 ms per 1000 bytes).
        XCTAssertEqual(tags, [4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, nil])
        XCTAssertEqual(Array(times.prefix(6)), [0, 0, 0, 1000, 3000, 5000])
        XCTAssertNil(pacer.activeProbeClusterID)
        XCTAssertEqual(pacer.probePaddingBytes(atMicros: now), 0)
        XCTAssertGreaterThan(pacer.nextSendMicros(atMicros: now) - now, 10_000)
    }
}
