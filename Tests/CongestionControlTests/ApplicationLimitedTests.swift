@testable import CongestionControl
import CongestionSimulation
import XCTest

/// Application-limited senders: the ALR detector, ALR probes, probes read past a token bucket's burst, and
/// a screen sender whose encoder sends far less than the link carries.
final class ApplicationLimitedTests: XCTestCase {
    func testDetectorEntersBelowAndLeavesAboveItsBudget() {
        // Target 1 Mbit/s: the budget fills at 650 kbit/s (81.25 B/ms) up to 500 ms of it (40 625 B).
        var detector = ApplicationLimitedDetector(targetBitsPerSecond: 1_000_000)
        XCTAssertFalse(detector.isApplicationLimited)
        // 1000 B every 20 ms (400 kbit/s): the budget after the send at t ms is 31.25 t − 1000 B, above 80 %
        // (32 500 B) first at 1080 ms.
        var started: Int64?
        for t in stride(from: Int64(0), through: 1_500, by: 20) {
            detector.onBytesSent(1000, atMicros: t * 1000)
            if started == nil, detector.isApplicationLimited { started = t }
        }
        XCTAssertEqual(started, 1080)
        XCTAssertEqual(detector.startMicros, 1_080_000)
        XCTAssertEqual(detector.level, 39_625 / 40_625, accuracy: 1e-9, "full (capped at its size) before the last send")
        // 5000 B every 20 ms (2 Mbit/s) drain 3375 B per 20 ms: 35 625 B after the first, below 50 % (20 312.5 B)
        // after the 6th (18 750 B).
        var ended: Int64?
        for t in stride(from: Int64(1_520), through: 1_700, by: 20) {
            detector.onBytesSent(5000, atMicros: t * 1000)
            if ended == nil, !detector.isApplicationLimited { ended = t }
        }
        XCTAssertEqual(ended, 1_620)
        XCTAssertNil(detector.startMicros)
    }

    func testSilenceCountsAndATargetChangeRescalesTheBudget() {
        var detector = ApplicationLimitedDetector(targetBitsPerSecond: 800_000)
        detector.onBytesSent(100_000, atMicros: 0)
        XCTAssertEqual(detector.level, -1, "overdrawn, clamped at −1 × its size")
        detector.onTick(atMicros: 500_000)
        XCTAssertEqual(detector.level, 0, accuracy: 1e-9, "500 ms of silence refill 500 ms of budget")
        XCTAssertFalse(detector.isApplicationLimited)
        detector.onTick(atMicros: 900_000)
        XCTAssertFalse(detector.isApplicationLimited, "400 ms more: level 0.8, not above it")
        detector.onTick(atMicros: 910_000)
        XCTAssertTrue(detector.isApplicationLimited)
        XCTAssertEqual(detector.startMicros, 910_000)
        // A lower target shrinks the budget: its level stays at most 1.
        detector.setTarget(bitsPerSecond: 100_000)
        XCTAssertEqual(detector.level, 1, accuracy: 1e-9)
        XCTAssertEqual(ApplicationLimitedDetector(targetBitsPerSecond: 0).level, 0, "no target, no budget")
    }

    /// A further cluster continues its chain as a burst-robust one even when the owner no longer says
    /// application-limited: the chain's own padding inflated the acknowledged rate the owner reads (Chromium
    /// behind tbf: 2.8 Mbit/s acknowledged for a 500 kbit/s encoder), and a short cluster there reads the
    /// token bucket's burst — its result was capped and the chain stopped near 1.5 Mbit/s on a 3 Mbit/s link.
    func testAFurtherClusterOfABurstRobustChainIsBurstRobustToo() {
        var probes = ProbeController(configuration: .screenSender, maxBitrate: 5_000_000)
        _ = probes.start(startBitrate: 300_000, nowMicros: 0)
        XCTAssertEqual(probes.onEstimate(400_000, nowMicros: 1_000_000), [])
        probes.applicationLimited = true
        let first = probes.onTick(nowMicros: 7_000_000, applicationLimitedSince: 1_000_000)
        XCTAssertEqual(first.map(\.bitsPerSecond), [800_000])
        XCTAssertEqual(first.map(\.measuresPastBurst), [true])
        // The owner's view flips: the probe's padding counted as acknowledged bytes.
        probes.applicationLimited = false
        let further = probes.onEstimate(780_000, nowMicros: 7_500_000)
        XCTAssertEqual(further.map(\.bitsPerSecond), [1_560_000])
        XCTAssertEqual(further.map(\.measuresPastBurst), [true], "the chain stays burst-robust")
        XCTAssertEqual(further.map(\.minBytes), [78_000], "400 ms at 1.56 Mbit/s")
        let next = probes.onEstimate(1_500_000, nowMicros: 8_000_000)
        XCTAssertEqual(next.map(\.measuresPastBurst), [true])
        // A new chain (a periodic probe) is burst-robust too, whatever the owner says (the screen sender's
        // periodicProbesMeasurePastBurst); with that off it follows the owner: short while not application-limited.
        XCTAssertEqual(probes.onEstimate(2_900_000, nowMicros: 8_500_000).map(\.bitsPerSecond), [5_000_000])
        XCTAssertEqual(probes.onEstimate(3_000_000, nowMicros: 9_000_000), [], "capped at the max: the chain ends")
        XCTAssertEqual(probes.onTick(nowMicros: 14_000_000).map(\.measuresPastBurst), [true])
        var configuration = ProbeController.Configuration.screenSender
        configuration.periodicProbesMeasurePastBurst = false
        var plain = ProbeController(configuration: configuration, maxBitrate: 5_000_000)
        _ = plain.onEstimate(3_000_000, nowMicros: 9_000_000)
        XCTAssertEqual(plain.onTick(nowMicros: 14_000_000).map(\.measuresPastBurst), [false])
    }

    func testALRProbesEveryFiveSecondsIgnoringTheOveruseQuiet() {
        var probes = ProbeController(configuration: .screenSender, maxBitrate: 3_000_000)
        probes.applicationLimited = true
        let start = probes.start(startBitrate: 300_000, nowMicros: 0)
        XCTAssertEqual(start.map(\.bitsPerSecond), [900_000], "the screen sender's one start probe: 3 × the start rate")
        XCTAssertEqual(start.map(\.minBytes), [45_000], "400 ms at 900 kbit/s")
        XCTAssertEqual(start.map(\.measuresPastBurst), [true])
        XCTAssertEqual(probes.onEstimate(900_000, nowMicros: 1_000_000).map(\.bitsPerSecond), [1_800_000], "its chain goes on at 2 ×")
        probes.onOveruse(nowMicros: 9_000_000)
        XCTAssertEqual(probes.onTick(nowMicros: 9_500_000), [], "not application-limited: the periodic probe keeps quiet")
        XCTAssertEqual(probes.onTick(nowMicros: 9_500_000, applicationLimitedSince: 5_000_000), [], "4.5 s into ALR")
        let alr = probes.onTick(nowMicros: 10_000_000, applicationLimitedSince: 5_000_000)
        XCTAssertEqual(alr.map(\.bitsPerSecond), [1_800_000], "2 × the estimate, 5 s into ALR")
        XCTAssertEqual(alr.map(\.minBytes), [90_000], "400 ms at 1.8 Mbit/s")
        XCTAssertEqual(alr.map(\.measuresPastBurst), [true])
        XCTAssertEqual(probes.alrProbes, 1)
        // A result that lifts the estimate above 0.7 × 1.8 Mbit/s probes further at 2×, capped at the max.
        XCTAssertEqual(probes.onEstimate(1_700_000, nowMicros: 10_600_000).map(\.bitsPerSecond), [3_000_000])
        // Next ALR probe: 5 s after the last probe, and none once the estimate is near the max.
        XCTAssertEqual(probes.onTick(nowMicros: 14_000_000, applicationLimitedSince: 5_000_000), [])
        XCTAssertEqual(probes.onEstimate(2_000_000, nowMicros: 14_000_000), [])
        XCTAssertEqual(probes.onTick(nowMicros: 15_600_000, applicationLimitedSince: 5_000_000).map(\.bitsPerSecond), [3_000_000])
        XCTAssertEqual(probes.onEstimate(2_800_000, nowMicros: 16_000_000), [])
        XCTAssertEqual(probes.onTick(nowMicros: 30_000_000, applicationLimitedSince: 5_000_000), [], "2.8 M is above 90 % of 3 M")
        XCTAssertEqual(probes.alrProbes, 2)
        // Off by default.
        var plain = ProbeController(maxBitrate: 3_000_000)
        _ = plain.start(startBitrate: 300_000, nowMicros: 0)
        _ = plain.onTick(nowMicros: 1_100_000)
        XCTAssertEqual(plain.onTick(nowMicros: 2_000_000, applicationLimitedSince: 0), [])
        XCTAssertEqual(plain.alrProbes, 0)
    }

    /// A 400 ms cluster at 1.9 Mbit/s (80 packets of 1187 B, 5 ms apart) through a token bucket of 1 Mbit/s
    /// with a 15 kB burst (tbf `rate 1mbit burst 15kb`): the whole cluster reads over 1.15 Mbit/s, what
    /// arrives after its first 55 % the link's 1 Mbit/s — from the first result (80 % arrived) on.
    func testABurstRobustClusterReadsTheLinkBehindATokenBucket() throws {
        let arrivals = tokenBucket(packets: 80, size: 1187, gapMicros: 5000, rateBitsPerSecond: 1_000_000, burstBytes: 15_000)
        func read(pastBurst: Bool) -> (first: Double?, last: Double?) {
            let cluster = ProbeCluster(id: 7, bitsPerSecond: 1_900_000, minPackets: 5, minBytes: 95_000, createdMicros: 0,
                                       measuresPastBurst: pastBurst)
            var estimator = ProbeBitrateEstimator()
            var first: Double?
            for (index, arrival) in arrivals.enumerated() {
                let sent = SentPacket(sequenceNumber: Int64(index), sendTimeMicros: Int64(index) * 5000, sizeBytes: 1187, probeClusterID: 7)
                let result = estimator.add(PacketResult(sent: sent, arrivalMicros: 20_000 + arrival), cluster: cluster)
                if first == nil, let result {
                    first = result
                    XCTAssertEqual(index, 64, "80 % of 95 000 bytes is the 65th packet")
                }
            }
            return (first, estimator.fetchResult())
        }
        let whole = read(pastBurst: false)
        XCTAssertGreaterThan(try XCTUnwrap(whole.first), 1_150_000, "the burst inflates a whole-cluster reading")
        let tail = read(pastBurst: true)
        XCTAssertEqual(try XCTUnwrap(tail.first), 0.95 * 1_000_000, accuracy: 10_000, "95 % of the link: the link saturated")
        XCTAssertEqual(try XCTUnwrap(tail.last), 0.95 * 1_000_000, accuracy: 10_000)
        // The tail: after the first 800 bytes, timed from the arrival before it.
        XCTAssertEqual(try XCTUnwrap(ProbeBitrateEstimator.tailRate([(0, 100), (10, 100), (20, 100), (40, 100), (60, 100), (80, 100),
                                                                        (100, 100), (120, 100), (140, 100), (160, 100), (180, 100),
                                                                        (200, 100)].shuffled(), afterBytes: 800)),
                       400 * 8 / 0.000080, accuracy: 1)
        XCTAssertNil(ProbeBitrateEstimator.tailRate([(0, 100), (10, 100), (20, 100), (30, 100), (40, 100)], afterBytes: 200),
                     "fewer than 4 after")
        XCTAssertNil(ProbeBitrateEstimator.tailRate(Array(repeating: (5, 100), count: 12), afterBytes: 100), "no time spanned")
    }

    /// Arrival times (µs after the first send) of packets sent `gapMicros` apart through a token bucket.
    private func tokenBucket(packets: Int, size: Int, gapMicros: Int64, rateBitsPerSecond: Int, burstBytes: Int) -> [Int64] {
        var tokens = Double(burstBytes), tokenTime: Int64 = 0, lastDeparture: Int64 = 0
        var out: [Int64] = []
        let perMicro = Double(rateBitsPerSecond) / 8_000_000
        for index in 0..<packets {
            let send = max(Int64(index) * gapMicros, lastDeparture)
            tokens = min(Double(burstBytes), tokens + Double(send - tokenTime) * perMicro)
            tokenTime = send
            var departure = send
            if tokens < Double(size) {
                departure = send + Int64(((Double(size) - tokens) / perMicro).rounded(.up))
                tokens = Double(size)
                tokenTime = departure
            }
            tokens -= Double(size)
            lastDeparture = departure
            out.append(departure)
        }
        return out
    }

    /// The screen sender's controller with an encoder that sends at most 400 kbit/s: the link opens from
    /// 300 kbit/s to 3 Mbit/s at 20 s. AIMD alone (≤ 1.5 × acknowledged) stops near 600 kbit/s; ALR probes and
    /// periodic probes whose results set the estimate reach 70 % of the link within 10 s, and it stays below
    /// the 300 kbit/s link before.
    func testAnApplicationLimitedScreenSenderFindsALinkThatOpened() throws {
        let seconds = try runOpeningLink(.screenSender)
        let text = seconds.map { "\($0.second): \($0.targetBitsPerSecond / 1000)" }.joined(separator: ", ")
        for second in seconds[10..<20] {
            XCTAssertLessThanOrEqual(second.targetBitsPerSecond, 330_000, text)
        }
        let up = try XCTUnwrap(seconds[20...].first { $0.targetBitsPerSecond >= 2_100_000 }, text)
        XCTAssertLessThan(up.second, 30, text)
        print("opening link, kbit/s per second: \(text)")

        // The screen sender as it was (probes of 15 ms, their results capped at 1.5 × acknowledged + 10 kbit/s
        // while application-limited, no ALR probes): still below 1 Mbit/s 10 s after the link opened.
        var before = SendSideCongestionController.Configuration.screenSender
        before.probing.alrIntervalMicros = 0
        before.probing.burstRobust = false
        let slow = try runOpeningLink(before)
        XCTAssertLessThan(slow[29].targetBitsPerSecond, 1_000_000, slow.map { "\($0.targetBitsPerSecond / 1000)" }.joined(separator: " "))
    }

    /// 35 s of an encoder that sends at most 400 kbit/s on a link of 300 kbit/s that opens to 3 Mbit/s at 20 s.
    private func runOpeningLink(_ controller: SendSideCongestionController.Configuration) throws -> [CongestionSimulation.Second] {
        var sender = CongestionSimulation.Scenario.senderConfiguration()
        sender.controller = controller
        sender.maxMediaBitsPerSecond = 400_000
        let scenario = CongestionSimulation.Scenario(
            capacity: [.init(atSeconds: 0, bitsPerSecond: 300_000), .init(atSeconds: 20, bitsPerSecond: 3_000_000)],
            link: CongestionSimulation.Scenario.link(capacityBitsPerSecond: 1_000_000), sender: sender, durationSeconds: 35)
        var simulation = try CongestionSimulation(scenario: scenario)
        return try simulation.run()
    }
}
