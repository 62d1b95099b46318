import CongestionControl
import XCTest

/// ``PacerBudget`` (libwebrtc's `PacingController` media budget; pion's `LeakyBucketPacer`): a debt of
/// serialization time (bytes × 8 / rate) that drains in real time; a packet may go while the debt is at most
/// the burst (5 ms). Rates: 2.5 × the target for media, 1 × for keyframes, the cluster's rate while probing.
final class PacerBudgetTests: XCTestCase {
    /// Sends `size`-byte packets as early as the pacer allows from `start` until `end`; returns their times.
    private func drain(_ pacer: inout PacerBudget, size: Int, from start: Int64, until end: Int64, keyframe: Bool = false) -> [Int64] {
        var times: [Int64] = []
        var now = start
        while true {
            now = pacer.nextSendMicros(atMicros: now)
            guard now < end else { return times }
            times.append(now)
            pacer.onPacketSent(sizeBytes: size, atMicros: now, keyframe: keyframe)
        }
    }

    /// Over any stretch a greedy sender gets the pacing rate: after the burst, packets leave exactly one
    /// serialization time apart, so n packets in (n − 1) × size × 8 / rate − burst + one packet's time.
    func testTheLongRunRateIsThePacingRate() {
        for (target, size) in [(1_000_000, 1250), (300_000, 1200), (2_000_000, 1000), (64_000, 200)] {
            var pacer = PacerBudget(targetBitsPerSecond: target)
            let perPacket = Double(size) * 8 * 1_000_000 / (2.5 * Double(target))  // µs
            let times = drain(&pacer, size: size, from: 0, until: 2_000_000)
            // The debt starts at 0: packets go while it is ≤ 5 ms, i.e. ⌊5 ms / t⌋ + 1 at once.
            let atOnce = Int((5000 / perPacket).rounded(.down)) + 1
            XCTAssertEqual(times.prefix { $0 == 0 }.count, atOnce, "target \(target)")
            // Then one every t (rounded up to the µs): the gaps between later packets are t or t + 1 µs.
            let gaps = zip(times.dropFirst(atOnce + 1), times.dropFirst(atOnce)).map { $0 - $1 }
            XCTAssertTrue(gaps.allSatisfy { Double($0) >= perPacket - 1 && Double($0) <= perPacket + 1 }, "target \(target): \(gaps.prefix(5))")
            // Bytes in the 2 s: rate × 2 s, plus what the burst let through ahead, within one packet.
            let bytes = Double(times.count * size)
            let expected = 2.5 * Double(target) * 2 / 8 + 5000 * 2.5 * Double(target) / 8 / 1_000_000
            XCTAssertEqual(bytes, expected, accuracy: Double(size), "target \(target)")
        }
    }

    /// An idle pacer does not save up: after a second of silence the burst is again 5 ms, no more.
    func testIdleTimeIsNotSaved() {
        var pacer = PacerBudget(targetBitsPerSecond: 1_000_000)  // 2.5 Mbit/s: 1250 B take 4 ms
        _ = drain(&pacer, size: 1250, from: 0, until: 100_000)
        let later = drain(&pacer, size: 1250, from: 1_100_000, until: 1_120_000)
        XCTAssertEqual(later, [1_100_000, 1_100_000, 1_103_000, 1_107_000, 1_111_000, 1_115_000, 1_119_000])
    }

    /// No burst: strict spacing from the first packet.
    func testWithoutABurstEveryPacketWaitsItsTime() {
        var pacer = PacerBudget(configuration: .init(burstMicros: 0), targetBitsPerSecond: 1_000_000)
        XCTAssertEqual(drain(&pacer, size: 1250, from: 0, until: 20_000), [0, 4000, 8000, 12_000, 16_000])
        XCTAssertEqual(pacer.sendableBytes(atMicros: 19_999), 0)
        XCTAssertEqual(pacer.sendableBytes(atMicros: 20_000), 1, "debt repaid: one packet may go (and overdraw)")
    }

    /// A new target changes the rate from the next packet on; the debt already owed (time) stays.
    func testANewTargetAppliesToTheNextPacket() {
        var pacer = PacerBudget(configuration: .init(burstMicros: 0), targetBitsPerSecond: 1_000_000)
        pacer.onPacketSent(sizeBytes: 1250, atMicros: 0)  // 4 ms owed
        pacer.setTarget(bitsPerSecond: 2_000_000)         // 5 Mbit/s: 1250 B take 2 ms
        XCTAssertEqual(pacer.nextSendMicros(atMicros: 0), 4000, "the 4 ms owed at the old rate")
        pacer.onPacketSent(sizeBytes: 1250, atMicros: 4000)
        XCTAssertEqual(pacer.nextSendMicros(atMicros: 4000), 6000)
        XCTAssertEqual(pacer.pacingBitsPerSecond, 5_000_000)
        pacer.setTarget(bitsPerSecond: 0)
        XCTAssertEqual(pacer.targetBitsPerSecond, 1, "never 0: the rate divides")
    }

    /// Keyframe packets go at 1 × the target, media at 2.5 ×; a mix owes each its own time.
    func testKeyframeAndMediaRates() {
        var pacer = PacerBudget(configuration: .init(burstMicros: 0), targetBitsPerSecond: 1_000_000)
        pacer.onPacketSent(sizeBytes: 1250, atMicros: 0, keyframe: true)   // 10 ms at 1 Mbit/s
        XCTAssertEqual(pacer.nextSendMicros(atMicros: 0), 10_000)
        pacer.onPacketSent(sizeBytes: 1250, atMicros: 10_000)              // 4 ms at 2.5 Mbit/s
        XCTAssertEqual(pacer.nextSendMicros(atMicros: 10_000), 14_000)
        var bucket = PacerBudget(targetBitsPerSecond: 1_000_000)
        XCTAssertEqual(bucket.sendableBytes(atMicros: 0, keyframe: true), 625, "5 ms at 1 Mbit/s")
        XCTAssertEqual(bucket.sendableBytes(atMicros: 0), 1562, "5 ms at 2.5 Mbit/s")
        bucket.onPacketSent(sizeBytes: 300, atMicros: 0, keyframe: true)   // 2.4 ms owed
        XCTAssertEqual(bucket.sendableBytes(atMicros: 0, keyframe: true), 325, "2.6 ms left at 1 Mbit/s")
    }

    /// Out-of-range configuration values are clamped: factors at least 0.1, the burst at least 0, padding
    /// packets at least 1 byte.
    func testConfigurationClamps() {
        let configuration = PacerBudget.Configuration(pacingFactor: 0, keyframePacingFactor: -1, burstMicros: -5, paddingPacketBytes: 0)
        XCTAssertEqual(configuration.pacingFactor, 0.1)
        XCTAssertEqual(configuration.keyframePacingFactor, 0.1)
        XCTAssertEqual(configuration.burstMicros, 0)
        XCTAssertEqual(configuration.paddingPacketBytes, 1)
        XCTAssertEqual(PacerBudget(targetBitsPerSecond: -10).targetBitsPerSecond, 1)
    }

    /// A cluster ends when both its minimum packets and bytes went out: small packets need more of them,
    /// large ones fewer (but at least the minimum count). Every packet meanwhile goes at the cluster's rate,
    /// keyframe or not, and is tagged with its id.
    func testAClusterEndsOnBothMinimums() {
        var small = PacerBudget(targetBitsPerSecond: 300_000)
        small.startProbes([ProbeCluster(id: 9, bitsPerSecond: 800_000, minPackets: 5, minBytes: 1000, createdMicros: 0)])
        let smallTags = (0..<12).map { index in small.onPacketSent(sizeBytes: 100, atMicros: Int64(index) * 1000) }
        XCTAssertEqual(smallTags, Array(repeating: 9, count: 10) + [nil, nil], "1000 bytes: 10 packets of 100")

        var large = PacerBudget(targetBitsPerSecond: 300_000)
        large.startProbes([ProbeCluster(id: 3, bitsPerSecond: 800_000, minPackets: 5, minBytes: 1000, createdMicros: 0)])
        let largeTags = (0..<6).map { index in large.onPacketSent(sizeBytes: 1200, atMicros: Int64(index) * 20_000, keyframe: true) }
        XCTAssertEqual(largeTags, [3, 3, 3, 3, 3, nil], "5 packets, though one had the bytes")

        // At the cluster's 800 kbit/s a 1000-byte packet owes 10 ms, keyframe or not.
        var timed = PacerBudget(configuration: .init(burstMicros: 0), targetBitsPerSecond: 300_000)
        timed.startProbes([ProbeCluster(id: 1, bitsPerSecond: 800_000, minPackets: 5, minBytes: 5000, createdMicros: 0)])
        timed.onPacketSent(sizeBytes: 1000, atMicros: 0, keyframe: true)
        XCTAssertEqual(timed.nextSendMicros(atMicros: 0), 10_000)
    }

    /// Padding is offered only with a cluster under way and only when a packet may go now.
    func testProbePadding() {
        var pacer = PacerBudget(configuration: .init(burstMicros: 0, paddingPacketBytes: 500), targetBitsPerSecond: 300_000)
        XCTAssertEqual(pacer.probePaddingBytes(atMicros: 0), 0, "no cluster")
        pacer.startProbes([ProbeCluster(id: 1, bitsPerSecond: 1_000_000, minPackets: 2, minBytes: 1000, createdMicros: 0)])
        XCTAssertEqual(pacer.probePaddingBytes(atMicros: 0), 500)
        pacer.onPacketSent(sizeBytes: 500, atMicros: 0)  // 4 ms at 1 Mbit/s
        XCTAssertEqual(pacer.probePaddingBytes(atMicros: 3999), 0, "the budget says wait")
        XCTAssertEqual(pacer.probePaddingBytes(atMicros: 4000), 500)
        pacer.onPacketSent(sizeBytes: 500, atMicros: 4000)
        XCTAssertNil(pacer.activeProbeClusterID, "2 packets, 1000 bytes: done")
        XCTAssertEqual(pacer.probePaddingBytes(atMicros: 100_000), 0)
    }

    /// ``PacerBudget/cancelActiveProbe()`` starts the next cluster; ``PacerBudget/cancelProbes()`` drops all.
    func testCancellingProbes() {
        var pacer = PacerBudget(targetBitsPerSecond: 300_000)
        let clusters = (1...3).map { ProbeCluster(id: $0, bitsPerSecond: 1_000_000 * $0, minPackets: 5, minBytes: 5000, createdMicros: 0) }
        pacer.startProbes(clusters)
        XCTAssertEqual(pacer.probeClusterCount, 3)
        XCTAssertEqual(pacer.activeProbeCluster, clusters[0])
        pacer.onPacketSent(sizeBytes: 1000, atMicros: 0)
        pacer.cancelActiveProbe()
        XCTAssertEqual(pacer.activeProbeClusterID, 2)
        XCTAssertEqual(pacer.onPacketSent(sizeBytes: 1000, atMicros: 10_000), 2, "the next cluster counts from zero")
        pacer.cancelProbes()
        XCTAssertEqual(pacer.probeClusterCount, 0)
        XCTAssertNil(pacer.onPacketSent(sizeBytes: 1000, atMicros: 20_000))
        pacer.cancelActiveProbe()  // nothing to cancel: no effect
        XCTAssertEqual(pacer.probeClusterCount, 0)
    }
}
